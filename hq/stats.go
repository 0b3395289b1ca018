package hq

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// Bounds on what a run's analysis keeps, so that a hostile agent costs
// bounded memory.
const (
	denseIDs     = 1 << 18 // ids below this are counted in a slice
	maxSparseIDs = 1 << 20 // other ids tracked in a map, at most this many
	maxListed    = 1000    // entries kept in each Report list
	maxWarnings  = 100     // Report.Warnings kept
	lastMarkers  = 5       // markers kept in Report.LastMarkers
	maxExcNames  = 50      // exception classes listed
	maxClassList = 20      // class names that failed to transform, listed
)

// idEntry is what HQ knows about one method, exception or source location
// id: its mapping and two counters (methods: entries and visits;
// exceptions: thrown and bubbled).
type idEntry struct {
	name   string
	n1, n2 int64
	mapped bool
}

// idTable maps ids to entries: a slice for small non-negative ids (agents
// number from 0 or 1), a bounded map for the others.
type idTable struct {
	dense    []idEntry
	sparse   map[int32]*idEntry
	overflow int64   // uses of ids beyond maxSparseIDs
	spill    idEntry // absorbs them
}

// at returns the entry of id, creating it; the pointer is valid until the
// next call.
func (t *idTable) at(id int32) *idEntry {
	if uint32(id) < uint32(len(t.dense)) {
		return &t.dense[id]
	}
	return t.grow(id)
}

func (t *idTable) grow(id int32) *idEntry {
	if id >= 0 && id < denseIDs {
		n := min(max(int(id)+1, 2*len(t.dense), 256), denseIDs)
		t.dense = append(t.dense, make([]idEntry, n-len(t.dense))...)
		return &t.dense[id]
	}
	if e, ok := t.sparse[id]; ok {
		return e
	}
	if len(t.sparse) >= maxSparseIDs {
		t.overflow++
		t.spill.mapped = true // not reported one by one
		return &t.spill
	}
	if t.sparse == nil {
		t.sparse = make(map[int32]*idEntry)
	}
	e := &idEntry{}
	t.sparse[id] = e
	return e
}

// each calls f for every entry in id order (dense ids first).
func (t *idTable) each(f func(id int32, e *idEntry)) {
	for i := range t.dense {
		f(int32(i), &t.dense[i])
	}
	ids := make([]int32, 0, len(t.sparse))
	for id := range t.sparse {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		f(id, t.sparse[id])
	}
}

// IDKind names what an id identifies.
type IDKind uint8

// Kinds of ids an event may use before their mapping.
const (
	IDMethod IDKind = iota
	IDException
	IDThread
	IDSourceLocation
)

var idKindNames = [...]string{
	IDMethod: "method", IDException: "exception", IDThread: "thread", IDSourceLocation: "source location",
}

func (k IDKind) String() string {
	if int(k) < len(idKindNames) {
		return idKindNames[k]
	}
	return fmt.Sprintf("UNKNOWN_ID_KIND_%d", uint8(k))
}

type unmappedKey struct {
	kind IDKind
	id   int64
}

// markerSlot keeps one recent marker. Its key and value stay where they
// lie in their slab while the core holds the slab; they are copied into the
// slot's own buffers (reused) only when the core lets go of it, so that a
// run of markers costs no copy per marker.
type markerSlot struct {
	seq        int32
	s          *slab  // the slab key and value lie in; nil once copied
	key, value []byte // in s, or in kbuf and vbuf
	kbuf, vbuf []byte
}

// copyOut moves the slot's key and value into its own buffers.
func (ms *markerSlot) copyOut() {
	ms.kbuf = append(ms.kbuf[:0], ms.key...)
	ms.vbuf = append(ms.vbuf[:0], ms.value...)
	ms.key, ms.value, ms.s = ms.kbuf, ms.vbuf, nil
}

// stats is HQ's own analysis of a run, fed by the core.
type stats struct {
	counts    [256]int64
	sequenced int64
	methods   idTable
	excs      idTable
	sls       idTable

	threads      [1 << 16 / 64]uint64 // thread ids with a name
	threadNames  map[uint16]string
	checkThreads bool // Code Pulse agents send no MapThreadName

	unmapped         map[unmappedKey]int // index in unmappedList
	unmappedList     []UnmappedID
	unmappedOverflow int64

	markers     int64
	ring        [lastMarkers]markerSlot
	exitsThrown int64
	classes     ClassCounts

	mappingBytes    int64
	maxMappingBytes int64
	remapped        int64
}

// onUnmapped is called for the first use of each unmapped id.
type onUnmapped func(kind IDKind, id int64, seq int32)

// event accounts one sequenced message, released in order; its bytes lie
// in s (nil: only valid during the call).
func (st *stats) event(m *bytefrog.Msg, s *slab, first onUnmapped) {
	st.counts[m.Type]++
	st.sequenced++
	switch m.Type {
	case bytefrog.MsgMethodEntry:
		e := st.methods.at(m.MethodID)
		e.n1++
		if !e.mapped {
			st.use(IDMethod, int64(m.MethodID), m.Seq, first)
		}
	case bytefrog.MsgMethodExit:
		if !st.methods.at(m.MethodID).mapped {
			st.use(IDMethod, int64(m.MethodID), m.Seq, first)
		}
		if m.ExceptionThrown {
			st.exitsThrown++
		}
	case bytefrog.MsgException, bytefrog.MsgExceptionBubble:
		if !st.methods.at(m.MethodID).mapped {
			st.use(IDMethod, int64(m.MethodID), m.Seq, first)
		}
		x := st.excs.at(m.ExceptionID)
		if m.Type == bytefrog.MsgException {
			x.n1++
		} else {
			x.n2++
		}
		if !x.mapped {
			st.use(IDException, int64(m.ExceptionID), m.Seq, first)
		}
	case bytefrog.MsgMethodVisit:
		e := st.methods.at(m.MethodID)
		e.n2++
		if !e.mapped {
			st.use(IDMethod, int64(m.MethodID), m.Seq, first)
		}
		if !st.sls.at(m.SourceLocationID).mapped {
			st.use(IDSourceLocation, int64(m.SourceLocationID), m.Seq, first)
		}
	case bytefrog.MsgMarker:
		st.marker(m, s)
		return
	}
	if st.checkThreads && st.threads[m.ThreadID>>6]&(1<<(m.ThreadID&63)) == 0 {
		st.use(IDThread, int64(m.ThreadID), m.Seq, first)
	}
}

// use counts an event that used an unmapped id.
func (st *stats) use(kind IDKind, id int64, seq int32, first onUnmapped) {
	k := unmappedKey{kind, id}
	if i, ok := st.unmapped[k]; ok {
		st.unmappedList[i].Count++
		return
	}
	if len(st.unmappedList) >= maxListed {
		st.unmappedOverflow++
		return
	}
	if st.unmapped == nil {
		st.unmapped = make(map[unmappedKey]int)
	}
	st.unmapped[k] = len(st.unmappedList)
	st.unmappedList = append(st.unmappedList, UnmappedID{Kind: kind, ID: id, Count: 1, FirstSeq: seq})
	if first != nil {
		first(kind, id, seq)
	}
}

func (st *stats) marker(m *bytefrog.Msg, s *slab) {
	slot := &st.ring[st.markers%lastMarkers]
	st.markers++
	slot.seq, slot.s, slot.key, slot.value = m.Seq, s, m.Text, m.Value
	if s == nil {
		slot.copyOut()
	}
}

// keep copies the recent markers that lie in s, which the core lets go of.
func (st *stats) keep(s *slab) {
	for i := range st.ring {
		if st.ring[i].s == s {
			st.ring[i].copyOut()
		}
	}
}

// name returns the Go form of a mapped name, reusing old when unchanged.
func name(old string, text []byte) string {
	if old == string(text) {
		return old
	}
	return bytefrog.String(text)
}

// mapping accounts an unsequenced data message; an error means the run's
// name tables are over their limit.
func (st *stats) mapping(m *bytefrog.Msg) error {
	st.counts[m.Type]++
	var e *idEntry
	switch m.Type {
	case bytefrog.MsgMapMethodSignature:
		e = st.methods.at(m.MethodID)
	case bytefrog.MsgMapException:
		e = st.excs.at(m.ExceptionID)
	case bytefrog.MsgMapSourceLocation:
		st.sls.at(m.SourceLocationID).mapped = true
		return nil
	case bytefrog.MsgMapThreadName:
		tid := m.ThreadID
		st.threads[tid>>6] |= 1 << (tid & 63)
		if st.threadNames == nil {
			st.threadNames = make(map[uint16]string)
		}
		old := st.threadNames[tid]
		n := name(old, m.Text)
		st.threadNames[tid] = n
		return st.account(len(old), len(n))
	default:
		return nil
	}
	if e.mapped && e.name != string(m.Text) {
		st.remapped++
	}
	old := e.name
	e.name, e.mapped = name(old, m.Text), true
	return st.account(len(old), len(e.name))
}

func (st *stats) account(old, now int) error {
	st.mappingBytes += int64(now - old)
	if st.mappingBytes > st.maxMappingBytes {
		return fmt.Errorf("mapped names exceed %d bytes", st.maxMappingBytes)
	}
	return nil
}

// class accounts a ClassTransformed/Ignored/TransformFailed report.
func (st *stats) class(m *bytefrog.Msg) {
	switch m.Type {
	case bytefrog.MsgClassTransformed:
		st.classes.Transformed++
	case bytefrog.MsgClassIgnored:
		st.classes.Ignored++
	case bytefrog.MsgClassTransformFailed:
		st.classes.Failed++
		if len(st.classes.FailedNames) < maxClassList {
			st.classes.FailedNames = append(st.classes.FailedNames, bytefrog.String(m.Text))
		}
	}
}

// fill copies the analysis into r.
func (st *stats) fill(r *Report, topN int) {
	r.Events = make(map[bytefrog.MsgType]int64)
	for t, n := range st.counts {
		if n != 0 {
			r.Events[bytefrog.MsgType(t)] = n
		}
	}
	r.Sequenced = st.sequenced

	var top []MethodCalls
	st.methods.each(func(id int32, e *idEntry) {
		if e.mapped {
			r.Methods++
		}
		if calls := e.n1 + e.n2; calls > 0 {
			top = append(top, MethodCalls{ID: id, Signature: e.name, Calls: calls})
		}
	})
	slices.SortStableFunc(top, func(a, b MethodCalls) int { return cmp.Compare(b.Calls, a.Calls) })
	r.TopMethods = top[:min(len(top), topN)]

	byName := map[string]*ExceptionCount{}
	var excs []*ExceptionCount
	st.excs.each(func(id int32, e *idEntry) {
		if e.n1+e.n2 == 0 {
			return
		}
		n := e.name
		if !e.mapped {
			n = fmt.Sprintf("<unmapped exception id %d>", id)
		}
		x := byName[n]
		if x == nil {
			x = &ExceptionCount{Name: n}
			byName[n] = x
			excs = append(excs, x)
		}
		x.Thrown += e.n1
		x.Bubbled += e.n2
	})
	slices.SortStableFunc(excs, func(a, b *ExceptionCount) int {
		return cmp.Compare(b.Thrown+b.Bubbled, a.Thrown+a.Bubbled)
	})
	for _, x := range excs[:min(len(excs), maxExcNames)] {
		r.Exceptions = append(r.Exceptions, *x)
	}
	r.ExitsThrown = st.exitsThrown

	r.Unmapped = slices.Clone(st.unmappedList)
	r.UnmappedOverflow = st.unmappedOverflow + st.methods.overflow + st.excs.overflow + st.sls.overflow
	r.Markers = st.markers
	for i := max(st.markers-lastMarkers, 0); i < st.markers; i++ {
		s := &st.ring[i%lastMarkers]
		if s.s != nil {
			s.copyOut()
		}
		r.LastMarkers = append(r.LastMarkers, Marker{Seq: s.seq, Key: bytefrog.String(s.key), Value: bytefrog.String(s.value)})
	}
	r.ThreadNames = make(map[uint16]string, len(st.threadNames))
	for tid, n := range st.threadNames {
		r.ThreadNames[tid] = n
	}
	r.Classes = st.classes
	r.Classes.FailedNames = slices.Clone(st.classes.FailedNames)
	r.Remapped = st.remapped
}
