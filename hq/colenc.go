package hq

import (
	"encoding/binary"
	"io"
	"slices"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// colThread is one thread's state in the block being built.
type colThread struct {
	tid      uint16
	cols     [colThreadCols][]byte
	lastTime int32
	stack    []int32
}

// colEncoder turns units into blocks of a columnar trace file. Its methods
// are called from one goroutine (the trace writer's); it compresses and
// writes the blocks in one of its own, which close ends.
type colEncoder struct {
	d   bytefrog.Dialect
	w   io.Writer
	zen *zstd.Encoder

	units  []byte
	nUnits int
	order  []byte
	seqs   []byte
	blob   []byte
	thr    []colThread // slot i+1
	slotOf []uint16    // tid → slot; 0: none in this block
	nev    int

	lastT     uint32
	blockT    uint32
	hasBlock  bool
	expect    int32 // next number the current run would take
	runStart  int32
	runLen    uint64
	runBase   int32 // expected start of the current run
	v         bytefrog.EventView
	parsers   [MaxDataConnsLimit + 1]*chunkParser // for data given as bytes only
	open      [MaxDataConnsLimit + 1]bool
	thrHead   []byte
	unitCount []byte

	// Blocks are compressed and written by a goroutine of their own
	// (compress), so that the next block's columns are built meanwhile:
	// full takes a payload to it, free brings payload buffers back (two,
	// so that at most one block waits), done closes when it has ended,
	// and err is its first error, read after done (or through errNow).
	full    chan []byte
	free    chan []byte
	done    chan struct{}
	err     error
	errSeen atomic.Bool
}

func newColEncoder(w io.Writer, d bytefrog.Dialect) (*colEncoder, error) {
	zen, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(colWindow))
	if err != nil {
		return nil, err
	}
	e := &colEncoder{d: d, w: w, zen: zen, slotOf: make([]uint16, 1<<16), full: make(chan []byte, 1),
		free: make(chan []byte, 2), done: make(chan struct{})}
	e.free <- nil
	e.free <- nil
	e.v.Init(nil, d)
	go e.compress()
	return e, nil
}

// compress compresses and writes the payloads flush hands it, one block
// each, until full is closed; after an error it only hands the buffers
// back.
func (e *colEncoder) compress() {
	defer close(e.done)
	var comp []byte
	for p := range e.full {
		if e.err == nil {
			comp = append(comp[:0], make([]byte, blockHeaderSize)...)
			comp = e.zen.EncodeAll(p, comp)
			binary.BigEndian.PutUint32(comp, uint32(len(p)))
			binary.BigEndian.PutUint32(comp[i32Size:], uint32(len(comp)-blockHeaderSize))
			if _, err := e.w.Write(comp); err != nil {
				e.err = err
				e.errSeen.Store(true)
			}
		}
		e.free <- p[:0]
	}
}

// colWindow is the zstd window of a block's frame: how far back a match
// may reach. Within a column, repeats are near; a larger window cost the
// encoder 16 MiB of history per file for no smaller file.
//
// The level is SpeedFastest: SpeedDefault made the file of
// BenchmarkTraceFile's random traffic 18 % smaller (1.79 against 2.18 bytes
// per event, measured before the columns were split by field) for 2–3× the
// encoder's CPU.
const colWindow = 1 << 20

// add records one unit.
func (e *colEncoder) add(u *unit) error {
	if !e.hasBlock {
		e.hasBlock, e.blockT = true, u.t
	}
	switch {
	case u.kind == RecordRecv && u.conn != controlConn:
		if u.s != nil {
			e.parsed(u, u.s, u.ev, u.un, u.perr)
			break
		}
		if int(u.conn) < len(e.open) && e.open[u.conn] {
			p := e.parsers[u.conn]
			if p == nil {
				p = newChunkParser(e.d, 1)
				e.parsers[u.conn] = p
			}
			t := u.t
			p.feed(u.raw, func(pu *unit) {
				pu.conn, pu.t = u.conn, t
				e.parsed(pu, pu.s, pu.ev, pu.un, pu.perr)
				pu.s.unref()
			})
			break
		}
		e.unitHead(u, colUnparsed)
		e.bytes(u.raw)
	case u.kind == RecordClose && u.conn != controlConn:
		pending := u.pending
		if int(u.conn) < len(e.parsers) {
			if p := e.parsers[u.conn]; p != nil {
				pending = max(pending, p.pending())
				p.close()
				e.parsers[u.conn] = nil
			}
			e.open[u.conn] = false
		}
		e.unitHead(u, -1)
		e.units = putUvarint(e.units, uint64(pending))
		e.bytes(u.raw)
	default:
		if u.kind == RecordOpen && u.conn != controlConn && int(u.conn) < len(e.open) {
			e.open[u.conn] = true
		}
		e.unitHead(u, -1)
		e.bytes(u.raw)
	}
	if e.nev >= colFlushEvents || len(e.blob)+len(e.units) >= colFlushBytes || u.t-e.blockT >= colFlushMs ||
		u.kind == RecordEnd {
		return e.flush()
	}
	return nil
}

func (e *colEncoder) unitHead(u *unit, mode int) {
	e.nUnits++
	e.units = append(e.units, byte(u.kind))
	e.units = putUvarint(e.units, uint64(u.conn))
	e.units = putUvarint(e.units, uint64(u.t-e.lastT))
	e.lastT = u.t
	if mode >= 0 {
		e.units = append(e.units, byte(mode))
	}
}

func (e *colEncoder) bytes(b []byte) {
	e.units = putUvarint(e.units, uint64(len(b)))
	e.units = append(e.units, b...)
}

// parsed records a unit of data whose messages the connection's parser
// indexed in s.
func (e *colEncoder) parsed(u *unit, s *slab, ev []event, un []uint32, perr error) {
	e.unitHead(u, colParsed)
	wire := int64(len(u.raw))
	if u.wireSet { // a unit read back from a columnar file
		wire = u.wire
	}
	e.units = putUvarint(e.units, uint64(wire))
	e.units = putUvarint(e.units, uint64(len(un)))
	e.units = putUvarint(e.units, uint64(len(ev)))
	if perr != nil {
		e.bytes([]byte(perr.Error()))
	} else {
		e.units = append(e.units, 0)
	}
	raw := s.raw
	for _, off := range un {
		var msg []byte
		if e.v.Revisit(raw[off:]) { // else cannot happen: the parser framed it
			msg = e.v.Raw()
		}
		e.blob = putUvarint(e.blob, uint64(len(msg)))
		e.blob = append(e.blob, msg...)
	}
	e.events(raw, ev)
}

// events adds the sequenced messages ev of a unit, which lie in raw. An
// agent's buffer holds one thread's events, so that a unit of a real
// agent's traffic is mostly long stretches of one thread's entries and
// exits: those go column by column (stretches); traffic that mixes threads
// event by event goes event by event (eachEvent), which costs it less.
func (e *colEncoder) events(raw []byte, ev []event) {
	exitTID := offTIDExit
	if e.d.Flavor == bytefrog.FlavorCodePulse {
		exitTID = offTIDCP
	}
	// A unit that begins with a stretch is taken to be made of them; so is
	// one whose first run of a thread's events is short and followed by a
	// stretch: a read cuts agent buffers anywhere, so that a unit often
	// begins with the tail of one.
	for i, tries := 0, 0; tries < 2 && i <= len(ev)-minStretch && int(ev[i].Off) <= len(raw)-maxFixed; tries++ {
		tid, ok := entryExitTID((*[maxFixed]byte)(raw[ev[i].Off:]), exitTID)
		if !ok {
			break
		}
		n := extent(raw, ev[i:i+minStretch], tid, exitTID)
		if n == minStretch {
			e.stretches(raw, ev, exitTID)
			return
		}
		i += n
	}
	e.eachEvent(raw, ev)
}

// entryExitTID returns the thread of the entry or exit at h; false for
// other events.
func entryExitTID(h *[maxFixed]byte, exitTID int) (uint16, bool) {
	switch bytefrog.MsgType(h[0]) {
	case bytefrog.MsgMethodEntry:
		return binary.BigEndian.Uint16(h[offField4:]), true
	case bytefrog.MsgMethodExit:
		return binary.BigEndian.Uint16(h[exitTID:]), true
	}
	return 0, false
}

// stretches adds ev, which lie in raw: each stretch of at least minStretch
// entries and exits of one thread already in the block, with consecutive
// numbers, through stretch; the rest through eachEvent.
func (e *colEncoder) stretches(raw []byte, ev []event, exitTID int) {
	cp := e.d.Flavor == bytefrog.FlavorCodePulse
	for i := 0; i < len(ev); {
		n := 1
		if off := int(ev[i].Off); off <= len(raw)-maxFixed {
			if tid, ok := entryExitTID((*[maxFixed]byte)(raw[off:]), exitTID); ok {
				if e.slotOf[tid] == 0 {
					// A thread new in the block: its first event makes
					// its slot, so that the rest of its stretch is one.
					e.event(raw[off:], ev[i].Seq)
					i++
					continue
				}
				// A stretch when its first minStretch events are one
				// (stretch finds where it ends as it goes).
				if slot := e.slotOf[tid]; slot != 0 && slot < 0x80 && len(ev)-i >= minStretch &&
					extent(raw, ev[i:i+minStretch], tid, exitTID) == minStretch {
					seq := ev[i].Seq
					if e.runLen == 0 || seq != e.expect {
						e.endRun()
						e.runStart, e.runLen = seq, 0
					}
					n = e.stretch(raw, ev[i:], &e.thr[slot-1], slot, tid, exitTID, cp)
					e.runLen += uint64(n)
					e.expect = seq + int32(n)
					e.nev += n
					i += n
					continue
				}
				n = extent(raw, ev[i:], tid, exitTID)
			}
		}
		e.eachEvent(raw, ev[i:i+n])
		i += n
	}
}

// eachEvent adds the sequenced messages ev, which lie in raw, one by one:
// entries and exits of threads already in the block in one loop from their
// bytes; the others through event.
func (e *colEncoder) eachEvent(raw []byte, ev []event) {
	exitTID, cp := offTIDExit, e.d.Flavor == bytefrog.FlavorCodePulse
	if cp {
		exitTID = offTIDCP
	}
	n := 0
	for i := range ev {
		off := int(ev[i].Off)
		if off > len(raw)-maxFixed {
			e.event(raw[off:], ev[i].Seq)
			continue
		}
		h := (*[maxFixed]byte)(raw[off:])
		var tid uint16
		switch bytefrog.MsgType(h[0]) {
		case bytefrog.MsgMethodEntry:
			tid = binary.BigEndian.Uint16(h[offField4:])
		case bytefrog.MsgMethodExit:
			tid = binary.BigEndian.Uint16(h[exitTID:])
		default:
			e.event(raw[off:], ev[i].Seq)
			continue
		}
		slot := e.slotOf[tid]
		if slot == 0 || slot >= 0x80 {
			e.event(raw[off:], ev[i].Seq)
			continue
		}
		if seq := ev[i].Seq; e.runLen == 0 || seq != e.expect {
			e.endRun()
			e.runStart, e.runLen, e.expect = seq, 1, seq+1
		} else {
			e.runLen++
			e.expect++
		}
		n++
		e.order = append(e.order, byte(slot))
		th := &e.thr[slot-1]
		rel := int32(binary.BigEndian.Uint32(h[offRelTime:]))
		method := int32(binary.BigEndian.Uint32(h[offMethod:]))
		code := byte(colEntry)
		if h[0] == byte(bytefrog.MsgMethodExit) {
			code = byte(colExit)
			if k := len(th.stack); k > 0 && th.stack[k-1] == method {
				code |= colTop
			}
		}
		if rel != th.lastTime {
			code |= colTime
			th.cols[colTimes] = putUvarint(th.cols[colTimes], zigzag(rel-th.lastTime))
			th.lastTime = rel
		}
		th.cols[colKinds] = append(th.cols[colKinds], code)
		if code&colTop == 0 {
			th.cols[colMethods], th.cols[colMethodsHi] = putSplit(th.cols[colMethods], th.cols[colMethodsHi],
				uint64(uint32(method)))
		}
		if colKind(code)&colMask == colEntry {
			if len(th.stack) < maxStack {
				th.stack = append(th.stack, method)
			}
			continue
		}
		if cp {
			th.cols[colExtras] = putUvarint(th.cols[colExtras], uint64(h[offField4])) // the flag's byte as sent
		} else {
			th.cols[colExtras] = putUvarint(th.cols[colExtras], uint64(binary.BigEndian.Uint16(h[offField4:]))+1)
		}
		th.pop()
	}
	e.nev += n
}

// minStretch is the shortest stretch of a thread's events that stretches
// takes column by column: below it, the passes' set-up costs more than
// they save.
const minStretch = 8

// extent returns how many events at the front of ev, which lie in raw, are
// entries and exits of thread tid with consecutive sequence numbers (the
// first one is): a stretch of one agent buffer.
func extent(raw []byte, ev []event, tid uint16, exitTID int) int {
	seq, limit := ev[0].Seq, len(raw)-maxFixed
	n := 1
	for ; n < len(ev); n++ {
		off := int(ev[n].Off)
		if ev[n].Seq != seq+int32(n) || off > limit {
			break
		}
		h := (*[maxFixed]byte)(raw[off:])
		var t uint16
		switch bytefrog.MsgType(h[0]) {
		case bytefrog.MsgMethodEntry:
			t = binary.BigEndian.Uint16(h[offField4:])
		case bytefrog.MsgMethodExit:
			t = binary.BigEndian.Uint16(h[exitTID:])
		default:
			return n
		}
		if t != tid {
			break
		}
	}
	return n
}

// stretch adds the stretch at the front of ev, which lie in raw, the
// entries and exits of the thread tid in slot th, column by column, and
// returns its length: the first pass finds where it ends (as extent does)
// while it builds the kinds, times and call stack; then one pass for the
// order, one for the method ids and one for the exits' extras. A pass
// keeps few values live, where one loop doing all of it per event spent
// much of its time spilling them. The caller has checked that the first
// minStretch events are of the stretch.
func (e *colEncoder) stretch(raw []byte, ev []event, th *colThread, slot, tid uint16, exitTID int, cp bool) int {
	// Kinds (one byte each), times and the stack.
	kinds := slices.Grow(th.cols[colKinds], len(ev))
	k := kinds[len(kinds) : len(kinds)+len(ev)]
	times, last := th.cols[colTimes], th.lastTime
	// The stack as an array and a depth: fewer values live in the pass.
	if cap(th.stack) < maxStack {
		th.stack = slices.Grow(th.stack, maxStack-len(th.stack))
	}
	stack, d := (*[maxStack]int32)(th.stack[:maxStack]), len(th.stack)
	seq, limit := ev[0].Seq, len(raw)-maxFixed
	xt := exitTID & 15 // below 16 in either flavour: no bounds check on h
	n := 0
pass:
	for ; n < len(k); n++ {
		off := int(ev[n].Off)
		if ev[n].Seq != seq+int32(n) || off > limit {
			break
		}
		h := (*[maxFixed]byte)(raw[off:])
		rel := int32(binary.BigEndian.Uint32(h[offRelTime:]))
		code := byte(colEntry)
		switch bytefrog.MsgType(h[0]) {
		case bytefrog.MsgMethodExit:
			if uint16(h[xt])<<8|uint16(h[xt+1]) != tid {
				break pass
			}
			code = byte(colExit)
			if d > 0 {
				d--
				if stack[d&(maxStack-1)] == int32(binary.BigEndian.Uint32(h[offMethod:])) {
					code |= colTop
				}
			}
		case bytefrog.MsgMethodEntry:
			if binary.BigEndian.Uint16(h[offField4:]) != tid {
				break pass
			}
			if d < maxStack {
				stack[d&(maxStack-1)] = int32(binary.BigEndian.Uint32(h[offMethod:]))
				d++
			}
		default:
			break pass
		}
		if rel != last {
			code |= colTime
			if z := zigzag(rel - last); z < 0x80 {
				times = append(times, byte(z))
			} else {
				times = binary.AppendUvarint(times, z)
			}
			last = rel
		}
		k[n] = code
	}
	k, ev = k[:n], ev[:n]
	th.cols[colKinds] = kinds[:len(kinds)+n]
	th.cols[colTimes], th.stack, th.lastTime = times, stack[:d], last

	order := slices.Grow(e.order, n)
	if o := order[len(order) : len(order)+n]; n > 0 {
		o[0] = byte(slot)
		for j := 1; j < n; j *= 2 { // memmove, where a byte loop took 4 instructions a byte
			copy(o[j:], o[:j])
		}
	}
	e.order = order[:len(order)+n]

	// Method ids, unless the kind says the top of the stack.
	lo, hi := th.cols[colMethods], th.cols[colMethodsHi]
	for i, code := range k {
		if code&colTop != 0 {
			continue
		}
		m := uint64(binary.BigEndian.Uint32(raw[ev[i].Off+offMethod:]))
		if m < 0x80 {
			lo = append(lo, byte(m))
		} else {
			lo = append(lo, byte(m)|0x80)
			hi = binary.AppendUvarint(hi, m>>7)
		}
	}
	th.cols[colMethods], th.cols[colMethodsHi] = lo, hi

	// The exits' lines (Code Pulse: the flag's byte as sent).
	x := th.cols[colExtras]
	for i, code := range k {
		if colKind(code)&colMask != colExit {
			continue
		}
		var v uint64
		if cp {
			v = uint64(raw[ev[i].Off+offField4])
		} else {
			v = uint64(binary.BigEndian.Uint16(raw[ev[i].Off+offField4:])) + 1
		}
		if v < 0x80 {
			x = append(x, byte(v))
		} else {
			x = binary.AppendUvarint(x, v)
		}
	}
	th.cols[colExtras] = x
	return n
}

// event adds one sequenced message, which starts b.
func (e *colEncoder) event(b []byte, seq int32) {
	e.nev++
	if e.runLen > 0 && seq == e.expect {
		e.runLen++
	} else {
		e.endRun()
		e.runStart, e.runLen = seq, 1
	}
	e.expect = seq + 1
	var ev bytefrog.Event
	var k colKind
	if !e.v.LoadEvent(&ev, b) {
		// A Marker, which the parser framed and checked: kept as it is
		// (empty if b held no message, which cannot happen).
		var raw []byte
		if e.v.Revisit(b) {
			raw = e.v.Raw()
		}
		e.order = append(e.order, 0)
		e.blob = putUvarint(e.blob, uint64(len(raw)))
		e.blob = append(e.blob, raw...)
		return
	}
	switch ev.Type {
	case bytefrog.MsgMethodEntry:
		k = colEntry
	case bytefrog.MsgMethodExit:
		k = colExit
	case bytefrog.MsgException:
		k = colException
	case bytefrog.MsgExceptionBubble:
		k = colBubble
	default:
		k = colVisit
	}
	tid := ev.ThreadID
	slot := e.slotOf[tid]
	if slot == 0 {
		if n := len(e.thr); n < cap(e.thr) {
			e.thr = e.thr[:n+1]
			th := &e.thr[n]
			th.tid, th.stack, th.lastTime = tid, th.stack[:0], 0
			for i := range th.cols {
				th.cols[i] = th.cols[i][:0]
			}
		} else {
			e.thr = append(e.thr, colThread{tid: tid})
		}
		slot = uint16(len(e.thr))
		e.slotOf[tid] = slot
	}
	e.order = putUvarint(e.order, uint64(slot))
	th := &e.thr[slot-1]
	rel, method := ev.RelTime, ev.MethodID
	code := byte(k)
	top := len(th.stack) > 0 && th.stack[len(th.stack)-1] == method && k != colEntry && k != colVisit
	if top {
		code |= colTop
	}
	if rel != th.lastTime {
		code |= colTime
		th.cols[colTimes] = putUvarint(th.cols[colTimes], zigzag(rel-th.lastTime))
		th.lastTime = rel
	}
	th.cols[colKinds] = append(th.cols[colKinds], code)
	if !top {
		th.cols[colMethods], th.cols[colMethodsHi] = putSplit(th.cols[colMethods], th.cols[colMethodsHi],
			uint64(uint32(method)))
	}
	x := th.cols[colExtras]
	switch k {
	case colEntry:
		if len(th.stack) < maxStack {
			th.stack = append(th.stack, method)
		}
	case colExit:
		if e.d.Flavor == bytefrog.FlavorCodePulse {
			x = putUvarint(x, uint64(ev.Flag)) // the flag's byte as sent
		} else {
			x = putUvarint(x, uint64(ev.Line)+1)
		}
		th.pop()
	case colException:
		x = putUvarint(x, uint64(uint32(ev.ExceptionID)))
		x = putUvarint(x, uint64(ev.Line)+1)
	case colBubble:
		x = putUvarint(x, uint64(uint32(ev.ExceptionID)))
		th.pop()
	case colVisit:
		x = putUvarint(x, uint64(uint32(ev.SourceLocationID)))
	}
	th.cols[colExtras] = x
}

func (th *colThread) pop() {
	if len(th.stack) > 0 {
		th.stack = th.stack[:len(th.stack)-1]
	}
}

func (e *colEncoder) endRun() {
	if e.runLen == 0 {
		return
	}
	e.seqs = putUvarint(e.seqs, zigzag(e.runStart-e.runBase))
	e.seqs = putUvarint(e.seqs, e.runLen)
	e.runBase = e.runStart + int32(e.runLen)
	e.runLen = 0
}

// flush writes the block being built, if any.
func (e *colEncoder) flush() error {
	if e.nUnits == 0 {
		return nil
	}
	e.endRun()
	thr := putUvarint(e.thrHead[:0], uint64(len(e.thr)))
	var colLen [colThreadCols]int
	for i := range e.thr {
		thr = putUvarint(thr, uint64(e.thr[i].tid))
		for j, c := range e.thr[i].cols {
			thr = putUvarint(thr, uint64(len(c)))
			colLen[j] += len(c)
		}
	}
	e.thrHead = thr
	units := putUvarint(e.unitCount[:0], uint64(e.nUnits))
	e.unitCount = units
	p := <-e.free
	if err := e.errNow(); err != nil {
		e.free <- p
		return err
	}
	p = putUvarint(p, uint64(len(units)+len(e.units)))
	if len(e.thr) <= maxNibbleSlots {
		p = putUvarint(p, uint64((len(e.order)+1)/2))
	} else {
		p = putUvarint(p, uint64(len(e.order)))
	}
	p = putUvarint(p, uint64(len(e.seqs)))
	p = putUvarint(p, uint64(len(thr)))
	for _, l := range colLen {
		p = putUvarint(p, uint64(l))
	}
	p = putUvarint(p, uint64(len(e.blob)))
	p = append(p, units...)
	p = append(p, e.units...)
	p = append(p, e.order...)
	if len(e.thr) <= maxNibbleSlots {
		// Slots fit in a nibble: two per byte, the first in the low half.
		o := p[len(p)-len(e.order):]
		p = p[:len(p)-len(o)+packNibbles(o)]
	}
	p = append(p, e.seqs...)
	p = append(p, thr...)
	for j := range colLen {
		for i := range e.thr {
			p = append(p, e.thr[i].cols[j]...)
		}
	}
	p = append(p, e.blob...)
	e.full <- p

	// Reset for the next block, keeping the buffers.
	for i := range e.thr {
		e.slotOf[e.thr[i].tid] = 0
	}
	e.thr = e.thr[:0]
	e.units, e.order, e.seqs, e.blob = e.units[:0], e.order[:0], e.seqs[:0], e.blob[:0]
	e.nUnits, e.nev, e.hasBlock = 0, 0, false
	e.expect, e.runBase, e.runLen = 0, 0, 0
	return nil
}

// packNibbles packs o, bytes below 16, in place two to a byte, the first
// in the low half (a last odd one alone), and returns the packed length.
// Eight bytes at a time: within a word, x | x>>4 puts each pair in its even
// byte, and two more folds gather the four even bytes.
func packNibbles(o []byte) int {
	n := (len(o) + 1) / 2
	i := 0
	for ; 2*i+8 <= len(o); i += 4 {
		// The word read lies at or past the bytes written so far.
		x := binary.LittleEndian.Uint64(o[2*i:])
		x = (x | x>>4) & 0x00ff00ff00ff00ff
		x = (x | x>>8) & 0x0000ffff0000ffff
		x = x | x>>16
		binary.LittleEndian.PutUint32(o[i:], uint32(x))
	}
	for ; i < n; i++ {
		hi := byte(0)
		if 2*i+1 < len(o) {
			hi = o[2*i+1]
		}
		o[i] = o[2*i] | hi<<4
	}
	return n
}

// sync waits until every block flushed so far is written, and returns the
// first error in writing one.
func (e *colEncoder) sync() error {
	a, b := <-e.free, <-e.free // both buffers back: nothing is being written
	e.free <- a
	e.free <- b
	return e.errNow()
}

// errNow returns the first error in writing a block so far.
func (e *colEncoder) errNow() error {
	if e.errSeen.Load() {
		return e.err
	}
	return nil
}

// close writes the last block and releases the encoder.
func (e *colEncoder) close() error {
	err := e.flush()
	close(e.full)
	<-e.done
	for i, p := range e.parsers {
		if p != nil {
			p.close()
			e.parsers[i] = nil
		}
	}
	e.zen.Close()
	if err == nil {
		err = e.err
	}
	return err
}
