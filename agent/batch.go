package agent

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tadpole-trace/tadpole/internal/host"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// Host batches (internal/host): the JVM and C hosts do not call into Go per
// event. Each host thread encodes its events into a thread-owned buffer and
// hands the whole buffer to host.SubmitBatch, one crossing per buffer. A
// batch enters the same path as Go calls: the mode check (a pause blocks
// the submitting thread, a suspend drops the batch), one reservation of
// consecutive ring slots (so a batch's events get consecutive sequence
// numbers), and the drain, which numbers them, maps ids and threads on
// first use and queues them. The record layout is host.BatchHeaderSize's.
const (
	batchHeaderSize = host.BatchHeaderSize
	batchAlign      = host.BatchAlign

	batchEntry  = host.BatchEntry
	batchExit   = host.BatchExit
	batchThrow  = host.BatchThrow
	batchBubble = host.BatchBubble
	batchMarker = host.BatchMarker
	batchName   = host.BatchName
	batchEnd    = host.BatchEnd

	batchFlagThrown = host.BatchFlagThrown
	batchFlagMUTF8  = host.BatchFlagMUTF8
	batchFlagWire   = host.BatchFlagWire
)

var batchKinds = [...]kind{
	batchEntry:  kindEntry,
	batchExit:   kindExit,
	batchThrow:  kindThrow,
	batchBubble: kindBubble,
	batchMarker: kindMarker,
	batchName:   kindName,
	batchEnd:    kindEnd,
}

// scanBatch validates b and counts its records.
func scanBatch(b []byte) (int, error) {
	// Ids are given out before a host can put them in a batch: those
	// registered now are all a valid batch names.
	methods := uint32(methodNames.count.Load())
	n := 0
	for off := 0; off < len(b); n++ {
		if len(b)-off < batchHeaderSize {
			return 0, fmt.Errorf("%w: %d bytes left at offset %d", host.ErrBadBatch, len(b)-off, off)
		}
		k := b[off]
		if r := b[off : off+batchHeaderSize]; (k == batchEntry || k == batchExit) &&
			binary.LittleEndian.Uint32(r[12:]) == 0 && binary.LittleEndian.Uint32(r[4:])-1 < methods {
			// The bulk: an entry or exit, without strings, of a registered
			// method.
			off += batchHeaderSize
			continue
		}
		if int(k) >= len(batchKinds) || batchKinds[k] == 0 {
			return 0, fmt.Errorf("%w: kind %d at offset %d", host.ErrBadBatch, k, off)
		}
		if b[off+1]&batchFlagWire != 0 { // the agent's own batches only (hostSubmitWireBatch)
			return 0, fmt.Errorf("%w: record at offset %d claims the agent's wire flag", host.ErrBadBatch, off)
		}
		size := recordSize(b[off:])
		if size > len(b)-off {
			return 0, fmt.Errorf("%w: record at offset %d overruns the batch", host.ErrBadBatch, off)
		}
		if err := checkIDs(k, b[off:]); err != nil {
			return 0, fmt.Errorf("%w: record at offset %d: %w", host.ErrBadBatch, off, err)
		}
		off += size
	}
	return n, nil
}

// checkIDs checks that an event record names a registered method and, for
// an exception, a registered exception type: the drain sizes its tables by
// ids, so an id that was never given out must not reach it.
func checkIDs(k byte, r []byte) error {
	switch k {
	case batchEntry, batchExit, batchThrow, batchBubble:
		if m := int32(binary.LittleEndian.Uint32(r[4:])); !methodNames.known(m) {
			return fmt.Errorf("method id %d not registered", m)
		}
	}
	switch k {
	case batchThrow, batchBubble:
		if e := int32(binary.LittleEndian.Uint32(r[8:])); !exceptionNames.known(e) {
			return fmt.Errorf("exception id %d not registered", e)
		}
	}
	return nil
}

func recordSize(r []byte) int { return host.RecordSize(r) }

// monoNow is the CLOCK_MONOTONIC time in nanoseconds, the clock of batch
// records and of the run's time base.
func monoNow() int64 { return host.MonoNow() }

// Host batches travel whole: host.SubmitBatch copies the records into a pooled
// buffer and publishes it in one ring slot; the drain walks the records, so
// a batch costs the host one copy, not one slot per event. At most
// maxBatchBytes of them wait for the drain at a time; once batchWake bytes
// wait, the host that adds more wakes the drain, so that it works through
// them long before hosts have to wait for room.
const (
	maxBatchBytes = 1 << 20
	batchWake     = maxBatchBytes / 4
)

var batchPool = sync.Pool{New: func() any { b := make([]byte, 0, 32<<10); return &b }}

// hostSubmitBatch is host.SubmitBatch.
func hostSubmitBatch(thread uint64, b []byte) (int, error) {
	n, err := scanBatch(b)
	if err != nil || n == 0 {
		return 0, err
	}
	return submitBatch(thread, b, nil, n), nil
}

// submitBatch publishes the checked batch b of n records. cp, when not
// nil, is a batchPool buffer holding b, handed over (no copy is made).
func submitBatch(thread uint64, b []byte, cp *[]byte, n int) int {
	drop := func() int {
		if cp != nil {
			batchPool.Put(cp)
		}
		return 0
	}
	s := active.Load()
	if s == nil || !s.admitHost(int64(len(b))) {
		return drop()
	}
	if cp == nil {
		cp = batchPool.Get().(*[]byte)
		*cp = append((*cp)[:0], b...)
	}
	if !s.publishHost(thread, int64(len(b)), cp, nil) {
		batchPool.Put(cp)
		return 0
	}
	return n
}

// submitProbes publishes the checked probe words of pb (copyProbes, or a
// host's lent words, hostHandProbes) of n events, handed over. It returns
// n, or 0 when nothing was published (pb is then the caller's again).
func submitProbes(s *pipeline, thread uint64, pb *probeBuf, n int) int {
	size := int64(len(pb.w)) * probeWordSize
	if !s.admitHost(size) || !s.publishHost(thread, size, nil, pb) {
		return 0
	}
	return n
}

// probeWordSize is the bytes of a probe word, as batchBytes counts them.
const probeWordSize = 8

// admitHost is the mode check and the wait for room of a host's batch or
// probe buffer of size bytes: false when it is not to be recorded (not
// tracing, suspended, or the run ends while it waits). A pause blocks here.
func (s *pipeline) admitHost(size int64) bool {
	if s.mode.Load() != modeTracing && !s.gate() {
		return false
	}
	return s.batchRoom.wait(s, size)
}

// publishHost publishes a host thread's batch (bp) or probe words (pb) of
// size bytes in one slot of the calling P's lane. It reports false, with
// nothing published, when the drain has ended.
func (s *pipeline) publishHost(thread uint64, size int64, bp *[]byte, pb *probeBuf) bool {
	pending := s.batchBytes.Add(size)
	key := hostThreadBit | thread
	l, i, sl, ok := s.lanes.claim(key)
	if !ok {
		s.batchBytes.Add(-size)
		return false
	}
	sl.data = eventData(0, s.now())
	t := &l.texts[i&s.lanes.mask]
	k := kindBatch
	if pb != nil {
		t.probes, k = pb, kindProbes
	} else {
		t.batch = bp
	}
	s.lanes.commit(l, sl, i, uint64(k))
	if pending >= batchWake {
		s.lanes.nudge()
	}
	return true
}

// batchRoom is where hosts wait for the drain to take queued batches.
type batchRoom struct {
	waiting atomic.Bool
	mu      sync.Mutex
	ch      chan struct{} // closed when the drain made room; nil when nobody waits
}

// wait returns once n more bytes fit under maxBatchBytes (a batch larger
// than that goes alone), or false when the session ends first.
func (r *batchRoom) wait(s *pipeline, n int64) bool {
	for {
		q := s.batchBytes.Load()
		if q == 0 || q+n <= maxBatchBytes {
			return true
		}
		if s.lanes.closed.Load() || s.stopping.Load() {
			return false
		}
		r.mu.Lock()
		if r.ch == nil {
			r.ch = make(chan struct{})
		}
		ch := r.ch
		r.waiting.Store(true)
		r.mu.Unlock()
		// Seen after registering: the drain either made room before this
		// load or will close ch after it.
		if q = s.batchBytes.Load(); q == 0 || q+n <= maxBatchBytes {
			return true
		}
		s.lanes.nudge()
		t := roomTimers.Get().(*time.Timer)
		t.Reset(10 * time.Millisecond) // stop and closed are checked again
		select {
		case <-ch:
		case <-t.C:
		}
		t.Stop()
		roomTimers.Put(t)
	}
}

// roomTimers are the stopped timers of hosts waiting for room, reused so
// that back-pressure allocates nothing (Go 1.23 timers: Reset and Stop
// leave no stale tick).
var roomTimers = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}}

// made tells waiting hosts that the drain took a batch.
func (r *batchRoom) made() {
	if !r.waiting.Load() {
		return
	}
	r.mu.Lock()
	if r.ch != nil {
		close(r.ch)
		r.ch = nil
	}
	r.waiting.Store(false)
	r.mu.Unlock()
}

// batch handles a published host batch: each record goes through the same
// path as a slot of its own.
func (d *drain) batch(thread uint64, t *text) {
	bp := t.batch
	t.batch = nil
	b := *bp
	defer func() {
		d.p.batchBytes.Add(-int64(len(b)))
		d.p.batchRoom.made()
		if cap(b) <= 1<<20 {
			batchPool.Put(bp)
		}
	}()
	var ev event
	var rt text
	ev.thread = thread
	for off := 0; off < len(b); {
		if next := d.batchRun(b, off, thread); next != off { // runs of entries and exits (jvmdrain.go)
			off = next
			continue
		}
		if b[off] == batchMarker && b[off+1]&batchFlagWire != 0 { // the JUL converter's (wirebatch.go)
			off = d.markerRun(b, off)
			continue
		}
		r := b[off:]
		ev.thrown = r[1]&batchFlagThrown != 0
		ev.line = binary.LittleEndian.Uint16(r[2:])
		k := batchKinds[r[0]]
		// scanBatch checked the ids of the kinds that carry them; the
		// fields of the other kinds are whatever the host left there.
		ev.method, ev.exc = 0, 0
		switch k {
		case kindThrow, kindBubble:
			ev.exc = int32(binary.LittleEndian.Uint32(r[8:]))
			fallthrough
		case kindEntry, kindExit:
			ev.method = int32(binary.LittleEndian.Uint32(r[4:]))
		}
		ev.rel = d.p.relMillis(int64(binary.LittleEndian.Uint64(r[16:])))
		if k == kindMarker || k == kindName {
			l1 := int(binary.LittleEndian.Uint16(r[12:]))
			l2 := int(binary.LittleEndian.Uint16(r[14:]))
			p := r[batchHeaderSize:]
			key, value := p[:l1], p[l1:l1+l2]
			mutf := r[1]&batchFlagMUTF8 != 0
			if k == kindMarker && wireReady(p[:l1+l2], l1, mutf) {
				// The bytes are already what the wire carries.
				d.markerMUTF8(ev.rel, key, value)
				off += recordSize(r)
				continue
			}
			if mutf {
				rt.key, rt.value = bytefrog.String(key), bytefrog.String(value)
			} else {
				rt.key, rt.value = string(key), string(value)
			}
		}
		d.process(k, &ev, &rt)
		off += recordSize(r)
	}
}

// markerMUTF8 records a marker whose key and value are modified UTF-8, as
// they go on the wire, without making strings of them.
func (d *drain) markerMUTF8(rel int32, key, value []byte) {
	b := d.buf()
	if b == nil {
		return
	}
	b.b = bytefrog.AppendMarkerMUTF8(b.b, rel, d.seq, key, value)
	d.appended(b)
}

// wireReady reports whether a marker's key and value, adjacent in kv with
// the key's n bytes first, can go to the wire as they are: valid modified
// UTF-8, or UTF-8 that is ASCII without NUL (the same bytes in both).
// Anything else is converted, so that a host's bad bytes cost it a
// replacement character, not HQ's refusal of the run. One pass checks
// both: when the value does not start with a continuation byte, no
// sequence can straddle them, so both are valid exactly when kv is.
func wireReady(kv []byte, n int, mutf bool) bool {
	if !mutf {
		return wireASCII(kv)
	}
	return (n == len(kv) || kv[n]&0xC0 != 0x80) && bytefrog.ValidUTF(kv) == nil
}

// wireASCII reports whether b is the same in UTF-8 and modified UTF-8:
// ASCII without NUL.
func wireASCII(b []byte) bool {
	for _, c := range b {
		if c-1 >= 0x7F { // 0 wraps to 0xFF
			return false
		}
	}
	return true
}
