package agent

import (
	"math"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// drain is the single consumer of the ring. It alone assigns Bytefrog
// sequence numbers (so they are gap-free by construction), thread ids and
// first-use mappings, and encodes events into send buffers. Because it is
// single-threaded its caches need no locks.
type drain struct {
	p   *pipeline
	seq int32 // next sequence number

	tids    map[uint64]uint16 // thread key → wire thread id
	nextTid uint16
	// lastKey and lastTid cache the latest lookup: runs of events from one
	// thread are the common case.
	lastKey uint64
	lastTid uint16
	lastOK  bool
	counted int64             // events not yet added to pipeline.events
	names   map[uint64]string // thread key → name given by the host

	methodSent []bool // indexed by method id
	excSent    []bool // indexed by exception id

	codePulse bool // MethodExit in the Code Pulse layout
	full      int  // ship the current buffer once it holds this many bytes

	cur       *sendBuf
	curSince  time.Time
	lastBreak int32
	broke     bool
	heads     []uint64    // next index to consume, by lane
	threads   []uint64    // thread key of the latest kindThread slot consumed, by lane
	brk       []uint64    // the pending data break's lane positions; nil when none
	discard   bool        // the run failed: consume slots without sending
	timer     *time.Timer // park's, made on first use
	held      []*probeBuf // lent probe buffers read, not yet given back (done)
}

// Bounds on the drain's thread caches; past them the cache starts over and
// threads are re-announced on next use.
const maxThreads = 1 << 16

func newDrain(p *pipeline) *drain {
	return &drain{
		p:         p,
		tids:      make(map[uint64]uint16),
		names:     make(map[uint64]string),
		codePulse: p.cfg.Flavor == bytefrog.FlavorCodePulse,
		full:      p.pool.full,
		held:      make([]*probeBuf, 0, releaseBatch),
	}
}

// run consumes the lanes until the pipeline stops and every reserved slot
// that will be published has been handled.
func (d *drain) run() {
	s := d.p
	defer s.wg.Done()
	defer d.finish()
	for {
		if d.brk == nil && s.brk.pending.Load() {
			d.brk = s.brk.first()
		}
		if d.step() {
			continue
		}
		if d.brk != nil && d.passed(d.brk) {
			d.dataBreak()
			s.brk.pop()
			d.brk = nil
			continue
		}
		d.releaseHeld()
		d.saveHeads()
		d.shipIfDue()
		if s.stopping.Load() {
			// Let producers that passed the mode check just before the stop
			// publish, then finish.
			if d.settled(2 * time.Millisecond) {
				return
			}
			continue
		}
		d.park(d.wait())
	}
}

// maxRun is the most slots the drain takes from one lane before it looks
// at the others again.
const maxRun = 4096

// step consumes a run of slots from the lane whose next published slot is
// the earliest, up to the first that is later than every other lane's
// next one. It reports false when no lane has a published slot it may
// take.
func (d *drain) step() bool {
	ls := d.p.lanes
	all := d.lanes()
	best, bestRel, next := -1, int32(0), int32(math.MaxInt32)
	for q, l := range all {
		if l == nil {
			continue
		}
		h := d.heads[q]
		if d.brk != nil && h >= d.limit(q) {
			continue
		}
		sl := &l.slots[h&ls.mask]
		v := atomic.LoadUint64(&sl.hdr)
		if !ls.current(v, h) {
			continue
		}
		if kind(v&hdrKind) == kindThread {
			// It takes no time: take it now, with what it comes after.
			d.take(l, q, h)
			return true
		}
		switch r := int32(sl.data >> 32); {
		case best < 0:
			best, bestRel = q, r
		case r < bestRel:
			next = min(next, bestRel)
			best, bestRel = q, r
		default:
			next = min(next, r)
		}
	}
	if best < 0 {
		return false
	}
	end := d.heads[best] + maxRun
	if d.brk != nil {
		end = min(end, d.limit(best))
	}
	d.consume(all[best], best, next, end)
	return true
}

// consume processes lane q's published slots from its head, before index
// end, while they are not later than until.
func (d *drain) consume(l *lane, q int, until int32, end uint64) {
	ls := d.p.lanes
	h := d.heads[q]
	pending := &d.p.brk.pending
	for h < end {
		sl := &l.slots[h&ls.mask]
		v := atomic.LoadUint64(&sl.hdr)
		if !ls.current(v, h) || d.brk == nil && pending.Load() {
			// A new break: the run loop takes it and limits the lanes.
			break
		}
		k := kind(v & hdrKind)
		if k != kindThread && int32(sl.data>>32) > until {
			break
		}
		if (k == kindEntry || k == kindExit) && d.cur != nil && d.lastOK && d.lastKey == d.threads[q] {
			if next := d.encode(l, h, until, end); next != h {
				h = next
				continue
			}
		}
		d.take(l, q, h)
		h++
	}
	d.heads[q] = h
}

// encode writes out lane l's slots from index h, before end, while they are
// entries and exits not later than until, of methods already mapped, and
// the buffer has room. They are the lane's thread's, which is the thread
// of the previous event: the bulk of any trace, written here with what it
// needs in locals. It returns the index of the first slot it left.
func (d *drain) encode(l *lane, h uint64, until int32, end uint64) uint64 {
	ls := d.p.lanes
	slots, mask, shift := l.slots, ls.mask, ls.shift
	sent, tid, seq, codePulse := d.methodSent, d.lastTid, d.seq, d.codePulse
	pending, watch := &d.p.brk.pending, d.brk == nil
	buf := d.cur.b
	n := len(buf)
	// Every message, and the scratch after it, fits below stop.
	stop := min(d.full, cap(buf)-bytefrog.EntryOrExitRoom+1)
	buf = buf[:cap(buf)]
	for ; h < end && n < stop; h++ {
		sl := &slots[h&mask]
		v := atomic.LoadUint64(&sl.hdr)
		if !onLap(v, h, shift) || watch && pending.Load() {
			break
		}
		data := sl.data
		m, rel := int32(uint32(data)), int32(data>>32)
		// exit is 0 for an entry, 1 for an exit: one path for both, as
		// they alternate without a pattern. The Code Pulse flavour's exits
		// take the general path.
		exit := uint64(kind(v&hdrKind) - kindEntry)
		if rel > until || uint(m) >= uint(len(sent)) || !sent[m] || exit > 1 || codePulse && exit != 0 {
			break
		}
		n += bytefrog.PutEntryOrExit(buf[n:n+bytefrog.EntryOrExitRoom], bytefrog.EventWord0(bytefrog.MsgMethodEntry, rel),
			seq, m, exit, uint16(v>>8), tid)
		seq++
		if (h+1)&63 == 0 {
			l.head.Store(h + 1)
		}
	}
	d.ranTo(seq, buf[:n])
	return h
}

// ranTo ends a run of events written straight into the send buffer: the
// sequence numbers up to seq were used, b is the buffer's content now,
// which ships once full.
func (d *drain) ranTo(seq int32, b []byte) {
	d.counted += int64(seq - d.seq)
	d.seq = seq
	d.cur.b = b
	if len(b) >= d.full {
		d.ship()
	}
}

// take processes the published slot h of lane l (lane q). A kindThread
// slot makes its thread the lane's, once the events of that thread it
// must come after are processed.
func (d *drain) take(l *lane, q int, h uint64) {
	ls := d.p.lanes
	sl, t := &l.slots[h&ls.mask], &l.texts[h&ls.mask]
	v := atomic.LoadUint64(&sl.hdr)
	if k := kind(v & hdrKind); k == kindMarker {
		d.marker(int32(sl.data>>32), t)
	} else if k != kindThread {
		var ev event
		ev.unpack(v, sl.data, d.threads[q])
		d.process(k, &ev, t)
	} else {
		if v&hdrAfter != 0 {
			a := t.after
			t.after = behind{}
			d.heads[q] = h
			d.pass(a)
		}
		d.threads[q] = sl.data
	}
	d.heads[q] = h + 1
	if (h+1)&63 == 0 {
		l.head.Store(h + 1)
	}
}

// pass processes the lanes an event comes after up to their positions:
// the events its thread recorded on other lanes before. Those positions
// were read before that event was reserved, and so were the positions
// their own events name: pass never reaches the event it runs for, or any
// later one of its lane.
func (d *drain) pass(b behind) {
	if b.all == nil {
		d.advance(int(b.lane), b.pos)
		return
	}
	for j := 0; j+1 < len(*b.all); j += 2 {
		d.advance(int((*b.all)[j]), (*b.all)[j+1])
	}
}

// advance processes lane q up to position pos.
func (d *drain) advance(q int, pos uint64) {
	ls := d.p.lanes
	all := d.lanes()
	if q < 0 || q >= len(all) || all[q] == nil {
		return
	}
	l := all[q]
	for d.heads[q] < pos {
		h := d.heads[q]
		if !ls.ready(l, h) && !d.await(l, h) {
			return
		}
		d.take(l, q, h)
	}
}

// await waits for slot h of lane l, reserved by a producer that is filling
// it. It reports false if the run fails first.
func (d *drain) await(l *lane, h uint64) bool {
	ls := d.p.lanes
	for spin := 0; !ls.ready(l, h); spin++ {
		if d.p.failed() {
			return false
		}
		backoff(spin)
	}
	return true
}

// backoff waits a little, longer once spin grows: a poll loop's pause.
func backoff(spin int) {
	if spin < 16 {
		runtime.Gosched()
	} else {
		time.Sleep(20 * time.Microsecond)
	}
}

// lanes returns the lanes made so far, indexed by P id with nil holes,
// and makes sure each has a head and a thread.
func (d *drain) lanes() []*lane {
	all := d.p.lanes.list()
	if n := len(all) - len(d.heads); n > 0 {
		d.heads = append(d.heads, make([]uint64, n)...)
		d.threads = append(d.threads, make([]uint64, n)...)
	}
	return all
}

// limit is how far lane q may be consumed before the pending data break.
// A lane made after the suspension holds only later events.
func (d *drain) limit(q int) uint64 {
	if q < len(d.brk) {
		return d.brk[q]
	}
	return 0
}

// passed reports whether every lane has reached the break at positions
// pos.
func (d *drain) passed(pos []uint64) bool {
	d.lanes() // pos has no more lanes than the list
	for q, p := range pos {
		if d.heads[q] < p {
			return false
		}
	}
	return true
}

// saveHeads tells producers how far each lane has been consumed.
func (d *drain) saveHeads() {
	for q, l := range d.lanes() {
		if l != nil {
			l.head.Store(d.heads[q])
		}
	}
}

// anyReady reports whether some lane has a published slot at its head.
func (d *drain) anyReady() bool {
	ls := d.p.lanes
	for q, l := range d.lanes() {
		if l != nil && ls.ready(l, d.heads[q]) {
			return true
		}
	}
	return false
}

// settled waits up to grace for a slot to be published and reports whether
// every lane is consumed as far as it was reserved, with none published in
// the meantime.
func (d *drain) settled(grace time.Duration) bool {
	deadline := time.Now().Add(grace)
	for spin := 0; ; spin++ {
		if d.anyReady() {
			return false
		}
		if time.Now().After(deadline) {
			break
		}
		backoff(spin)
	}
	for q, l := range d.lanes() {
		if l != nil && d.heads[q] != l.published() {
			return false
		}
	}
	return true
}

// park is how the drain waits once it has caught up with the producers: it
// sleeps until the producer of the last slot of a lane's batch wakes it, a
// producer waits for room, stop closes, or d elapses (d ≤ 0: no limit).
// Sleeping until a batch is complete, rather than polling the slot a
// producer is writing, moves each cache line between the cores once.
func (d *drain) park(wait time.Duration) {
	ls := d.p.lanes
	ls.sleeping.Store(1)
	for q, l := range d.lanes() {
		if l != nil && ls.ready(l, d.heads[q]|(ls.batch-1)) {
			ls.sleeping.Store(0)
			return
		}
	}
	if (d.cur == nil || len(d.cur.b) == 0) && d.brk == nil && d.p.clock.Load() < 0 {
		// Nothing was recorded since the clock fell asleep (read after
		// sleeping is set): the next recording call wakes the clock
		// goroutine, which nudges. The bound only covers a producer that
		// read the clock just before it fell asleep.
		wait = idleWait
	}
	var timeout <-chan time.Time
	if wait > 0 {
		// One timer for the drain's life: parking allocates nothing. Reset
		// and Stop leave no stale tick in its channel (Go 1.23 timers).
		if d.timer == nil {
			d.timer = time.NewTimer(wait)
		} else {
			d.timer.Reset(wait)
		}
		defer d.timer.Stop()
		timeout = d.timer.C
	}
	select {
	case <-ls.wake:
	case <-timeout:
	case <-d.p.shutdown:
	}
	ls.sleeping.Store(0)
}

// idleWait bounds the drain's sleep while nothing records.
const idleWait = time.Second

// shipIfDue ships the current buffer once it has waited the flush interval.
func (d *drain) shipIfDue() {
	if d.cur != nil && len(d.cur.b) > 0 && time.Since(d.curSince) >= d.p.cfg.FlushInterval {
		d.ship()
	}
}

// wait is how long the drain may sleep: until the current buffer is due,
// or a flush interval when it has none.
func (d *drain) wait() time.Duration {
	w := d.p.cfg.FlushInterval
	if d.cur != nil && len(d.cur.b) > 0 {
		w -= time.Since(d.curSince)
		if w <= 0 {
			w = time.Microsecond
		}
	}
	return w
}

func (d *drain) finish() {
	d.releaseHeld()
	d.ship()
	d.p.lanes.closed.Store(true)
	close(d.p.pool.queue)
}

// buf returns the buffer being filled, taking a free one if needed. It
// blocks while every buffer is in use (back-pressure) unless the run has
// failed, in which case it returns nil and the drain discards.
func (d *drain) buf() *sendBuf {
	if d.cur != nil {
		return d.cur
	}
	return d.next()
}

// next takes a free buffer as the current one; see buf.
func (d *drain) next() *sendBuf {
	if d.discard {
		return nil
	}
	if len(d.held) > 0 && len(d.p.pool.free) == 0 {
		d.releaseHeld() // it may wait for the writers
	}
	if !d.p.pool.token(d.p.shutdown) {
		// A stop still sends what is recorded: the writers recycle every
		// buffer, also after a failure.
		if d.p.failed() {
			d.discard = true
			return nil
		}
		d.p.pool.token(nil)
	}
	b := d.p.pool.take()
	if d.p.failed() {
		d.p.pool.recycle(b)
		d.discard = true
		return nil
	}
	d.cur, d.curSince = b, time.Now()
	return b
}

// ship queues the current buffer for the data writers.
func (d *drain) ship() {
	b := d.cur
	if b == nil {
		return
	}
	d.cur = nil
	d.p.events.Add(d.counted)
	d.counted = 0
	if len(b.b) == 0 || d.discard {
		d.p.pool.recycle(b)
		return
	}
	d.p.pool.shipped.Add(int64(len(b.b)))
	d.p.pool.waiting.Add(1)
	d.p.pool.queue <- b // never blocks: the queue holds every buffer
}

// process handles one event; t holds its strings, cleared here so
// the ring keeps no string alive.
func (d *drain) process(k kind, ev *event, t *text) {
	if !k.sequenced() {
		d.unsequenced(k, ev, t)
		return
	}
	if k == kindMarker {
		d.marker(ev.rel, t)
		return
	}
	b := d.buf()
	if b == nil {
		*t = text{}
		return
	}
	var tid uint16
	if d.lastOK && ev.thread == d.lastKey {
		tid = d.lastTid
	} else {
		tid = d.tid(b, ev.thread, ev.rel)
	}
	if m := ev.method; m > 0 && (int(m) >= len(d.methodSent) || !d.methodSent[m]) {
		d.mapMethod(b, m)
	}
	if e := ev.exc; e > 0 && (int(e) >= len(d.excSent) || !d.excSent[e]) {
		d.mapException(b, e)
	}
	seq := d.seq
	d.seq++
	p := b.b
	switch k {
	case kindEntry:
		p = bytefrog.AppendMethodEntry(p, ev.rel, seq, ev.method, tid)
	case kindExit:
		if d.codePulse {
			p = bytefrog.AppendMethodExitCodePulse(p, ev.rel, seq, ev.method, ev.thrown, tid)
		} else {
			p = bytefrog.AppendMethodExit(p, ev.rel, seq, ev.method, ev.line, tid)
		}
	case kindThrow:
		p = bytefrog.AppendException(p, ev.rel, seq, ev.method, ev.exc, ev.line, tid)
	case kindBubble:
		p = bytefrog.AppendExceptionBubble(p, ev.rel, seq, ev.method, ev.exc, tid)
	}
	b.b = p
	d.counted++
	if len(p) >= d.full {
		d.ship()
	}
}

// marker handles a Marker: it carries no thread id and names no method.
// t holds its key and value, cleared here.
func (d *drain) marker(rel int32, t *text) {
	b := d.buf()
	if b == nil {
		*t = text{}
		return
	}
	b.b = bytefrog.AppendMarker(b.b, rel, d.seq, t.key, t.value)
	*t = text{}
	d.appended(b)
}

// appended counts the sequenced message just appended to b, and ships b
// once full.
func (d *drain) appended(b *sendBuf) {
	d.seq++
	d.counted++
	if len(b.b) >= d.full {
		d.ship()
	}
}

// unsequenced handles the slots that take no sequence number: host
// batches and probe buffers, thread names and thread ends.
func (d *drain) unsequenced(k kind, ev *event, t *text) {
	switch k {
	case kindBatch:
		d.batch(ev.thread, t)
	case kindProbes:
		d.probes(ev.thread, t)
	case kindName:
		d.rename(ev.thread, t.key, ev.rel)
		*t = text{}
	case kindEnd:
		d.forget(ev.thread)
	}
}

// tid returns the wire thread id of a thread key, announcing the thread
// with MapThreadName on first use.
func (d *drain) tid(b *sendBuf, key uint64, rel int32) uint16 {
	if d.lastOK && key == d.lastKey {
		return d.lastTid
	}
	if t, ok := d.tids[key]; ok {
		d.lastKey, d.lastTid, d.lastOK = key, t, true
		return t
	}
	if len(d.tids) >= maxThreads {
		clear(d.tids)
		d.lastOK = false
	}
	t := d.nextTid
	d.nextTid++
	d.tids[key] = t
	d.lastKey, d.lastTid, d.lastOK = key, t, true
	b.b = bytefrog.AppendMapThreadName(b.b, t, rel, d.threadName(key))
	return t
}

func (d *drain) threadName(key uint64) string {
	if n, ok := d.names[key]; ok {
		return n
	}
	if key&hostThreadBit != 0 {
		return "thread-" + strconv.FormatUint(key&^hostThreadBit, 10)
	}
	return "goroutine-" + strconv.FormatUint(key, 10)
}

// forget drops an ended host thread from the thread caches. Its wire id is
// not given to another thread: events of the thread may still be on their
// way to HQ on another data connection, after a new mapping would arrive.
func (d *drain) forget(key uint64) {
	delete(d.tids, key)
	delete(d.names, key)
	if d.lastKey == key {
		d.lastOK = false
	}
}

// rename records a thread's new name and announces it at once, so that HQ
// knows every named thread, and sees a rename at this point of the trace.
func (d *drain) rename(key uint64, name string, rel int32) {
	if len(d.names) >= maxThreads {
		clear(d.names)
	}
	d.names[key] = name
	if d.discard {
		return
	}
	b := d.buf()
	if b == nil {
		return
	}
	if t, ok := d.tids[key]; ok {
		b.b = bytefrog.AppendMapThreadName(b.b, t, rel, name)
		return
	}
	d.tid(b, key, rel)
}

func (d *drain) mapMethod(b *sendBuf, id int32) {
	if int(id) < len(d.methodSent) && d.methodSent[id] {
		return
	}
	d.methodSent = growMarks(d.methodSent, id)
	d.methodSent[id] = true
	b.b = bytefrog.AppendMapMethodSignature(b.b, id, methodNames.name(id))
}

func (d *drain) mapException(b *sendBuf, id int32) {
	if int(id) < len(d.excSent) && d.excSent[id] {
		return
	}
	d.excSent = growMarks(d.excSent, id)
	d.excSent[id] = true
	b.b = bytefrog.AppendMapException(b.b, id, exceptionNames.name(id))
}

func growMarks(m []bool, id int32) []bool {
	if int(id) < len(m) {
		return m
	}
	n := 2 * len(m)
	if n <= int(id) {
		n = int(id) + 64
	}
	g := make([]bool, n)
	copy(g, m)
	return g
}

// dataBreak reports to HQ that events before the next sequence number are
// cut off from those after it. A number is reported once.
func (d *drain) dataBreak() {
	if d.broke && d.lastBreak == d.seq {
		return
	}
	d.broke, d.lastBreak = true, d.seq
	if d.p.onBreak != nil {
		d.p.onBreak(d.seq)
	}
}
