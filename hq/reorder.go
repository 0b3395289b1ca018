package hq

import (
	"cmp"
	"fmt"
	"slices"
)

// Ordering. Sequence numbers are one global i32 counter that wraps; a is
// before b when int32(a-b) < 0. Each data connection normally carries
// ascending numbers, so the events of a connection queue up in arrival order
// and a k-way merge of the queue heads releases them in order: the core
// releases every event of the head it finds with the next number, then looks
// for the next head, without any per-event heap operation. An event whose
// number is not above the last one queued for its connection goes to a heap
// instead (and is counted in Report.OutOfOrder).

// segment is a run of queued events from one chunk, in one slab.
type segment struct {
	s  *slab
	ev []event
}

// source is the queue of one data connection.
type source struct {
	conn      uint16
	open      bool
	segs      []segment // segs[h:] are queued
	h         int
	last      int32 // highest number queued so far
	hasLast   bool
	backwards int64
}

func (q *source) empty() bool { return q.h == len(q.segs) }

// lateEvent is an event held in the heap, with its own slab reference.
type lateEvent struct {
	event
	s *slab
}

// reorder holds the sequenced events not yet released.
type reorder struct {
	c         *core
	next      int32 // next number to release
	held      int   // events queued
	heldBytes int64 // slab bytes kept by queued events
	heap      []lateEvent
	breaks    []int32 // pending data breaks, ascending from next
}

// hold notes one more queue entry keeping s.
func (o *reorder) hold(s *slab) {
	if s.held == 0 {
		o.heldBytes += int64(len(s.raw))
	}
	s.held++
}

// release drops a queue entry's hold and slab reference. With the last
// hold the core lets go of s: the recent markers that lie in it are copied.
func (o *reorder) release(s *slab) {
	if s.held--; s.held == 0 {
		o.heldBytes -= int64(len(s.raw))
		o.c.st.keep(s)
	}
	s.unref()
}

// enqueue queues the events of one chunk; the core's slab reference of the
// chunk goes to the queue.
func (o *reorder) enqueue(q *source, s *slab, ev []event) {
	o.held += len(ev)
	if n := len(ev); n > 0 && (!q.hasLast || int32(ev[0].Seq-q.last) > 0) {
		// Consecutive numbers, the common case, are ascending.
		i, seq := 1, ev[0].Seq
		for ; i < n && ev[i].Seq == seq+1; i++ {
			seq++
		}
		if i == n {
			q.segs = append(q.segs, segment{s: s, ev: ev})
			q.last, q.hasLast = seq, true
			o.hold(s)
			return
		}
	}
	last, has := q.last, q.hasLast
	i := 0
	for ; i < len(ev); i++ {
		if has && int32(ev[i].Seq-last) <= 0 {
			break
		}
		last, has = ev[i].Seq, true
	}
	if i == len(ev) { // ascending
		q.segs = append(q.segs, segment{s: s, ev: ev})
		q.last, q.hasLast = last, true
		o.hold(s)
		return
	}
	// Numbers went backwards inside this chunk or against the queue: keep
	// the ascending runs in the queue, the others in the heap.
	refs := int32(0)
	start := 0
	for j, e := range ev {
		if !q.hasLast || int32(e.Seq-q.last) > 0 {
			q.last, q.hasLast = e.Seq, true
			continue
		}
		if j > start {
			q.segs = append(q.segs, segment{s: s, ev: ev[start:j]})
			o.hold(s)
			refs++
		}
		o.c.backwards(q, e.Seq)
		o.push(lateEvent{event: e, s: s})
		o.hold(s)
		refs++
		start = j + 1
	}
	if start < len(ev) {
		q.segs = append(q.segs, segment{s: s, ev: ev[start:]})
		o.hold(s)
		refs++
	}
	s.ref(refs - 1) // the chunk brought one reference
}

func (c *core) backwards(q *source, seq int32) {
	q.backwards++
	c.rep.OutOfOrder++
	if q.backwards == 1 {
		c.note(fmt.Sprintf("data connection %d: seq %d arrived after seq %d", q.conn, seq, q.last))
	}
}

// advance releases every held event that is next in sequence.
func (o *reorder) advance() {
	for {
		q, fromHeap := o.findNext()
		switch {
		case fromHeap:
			e := o.pop()
			o.held--
			o.releaseOne(e.s, e.event)
			o.release(e.s)
		case q != nil:
			o.releaseFrom(q)
		default:
			return
		}
	}
}

// findNext returns the queue, or the heap, whose head carries the next
// number, dropping heads whose number has already been released.
func (o *reorder) findNext() (*source, bool) {
	for len(o.heap) > 0 {
		d := o.heap[0].Seq - o.next
		if d == 0 {
			return nil, true
		}
		if d > 0 {
			break
		}
		e := o.pop()
		o.held--
		o.c.behind(e.Seq)
		o.release(e.s)
	}
	for _, q := range o.c.srcs {
		if q == nil {
			continue
		}
		for !q.empty() {
			d := q.segs[q.h].ev[0].Seq - o.next
			if d == 0 {
				return q, false
			}
			if d > 0 {
				break
			}
			o.c.behind(q.segs[q.h].ev[0].Seq)
			o.dropHead(q)
		}
	}
	return nil, false
}

// releaseFrom releases the events of q's head while they are next in
// sequence: each run of them up to the next data break in one go.
func (o *reorder) releaseFrom(q *source) {
	c := o.c
	for !q.empty() {
		seg := &q.segs[q.h]
		ev := seg.ev
		n := consecutive(ev, o.next)
		for i := 0; i < n; {
			j := n
			if len(o.breaks) > 0 {
				d := int(int32(o.breaks[0] - o.next))
				if d == 0 {
					c.deliverBreak(o.next)
					o.breaks = o.breaks[1:]
					continue
				}
				if d > 0 && d < j-i {
					j = i + d // the break goes between
				}
			}
			c.events(seg.s, ev[i:j])
			if len(c.blks) > 0 {
				c.block(seg.s, ev[i:j])
			}
			o.next += int32(j - i)
			i = j
		}
		o.held -= n
		if n < len(ev) {
			seg.ev = ev[n:]
			return
		}
		o.popSeg(q)
	}
}

// consecutive returns how many events at the front of ev carry the numbers
// next, next+1, …. A queue's segment is strictly ascending (enqueue), so
// event i carries next+i exactly when every one before it does too: a
// binary search finds the end of the run.
func consecutive(ev []event, next int32) int {
	if len(ev) == 0 || ev[0].Seq != next {
		return 0
	}
	last := len(ev) - 1
	if ev[last].Seq-next == int32(last) {
		return len(ev)
	}
	lo, hi := 0, last // ev[lo] is in the run, ev[hi] is not
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if ev[mid].Seq-next == int32(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + 1
}

// releaseOne delivers the data breaks due before the next event, then the
// event, which lies in s.
func (o *reorder) releaseOne(s *slab, e event) {
	if len(o.breaks) > 0 && o.breaks[0] == o.next {
		o.c.deliverBreak(o.next)
		o.breaks = o.breaks[1:]
	}
	one := [1]event{e}
	o.c.events(s, one[:])
	if len(o.c.blks) > 0 {
		o.c.block(s, []event{e})
	}
	o.next++
}

func (o *reorder) dropHead(q *source) {
	seg := &q.segs[q.h]
	o.held--
	if len(seg.ev) > 1 {
		seg.ev = seg.ev[1:]
		return
	}
	o.popSeg(q)
}

func (o *reorder) popSeg(q *source) {
	o.release(q.segs[q.h].s)
	q.segs[q.h] = segment{}
	q.h++
	switch {
	case q.h == len(q.segs):
		q.segs, q.h = q.segs[:0], 0
	case q.h >= 64 && q.h*2 >= len(q.segs):
		n := copy(q.segs, q.segs[q.h:])
		clear(q.segs[n:])
		q.segs, q.h = q.segs[:n], 0
	}
}

// behind counts an event whose number was already released or given up.
func (c *core) behind(seq int32) {
	if gaps := c.rep.Gaps; len(gaps) > 0 {
		// Gaps are recorded in ascending order from the first one.
		base := gaps[0].From
		k := uint32(seq - base)
		i, _ := slices.BinarySearchFunc(gaps, k, func(g SeqRange, k uint32) int {
			return cmp.Compare(uint32(g.To-base), k)
		})
		if i < len(gaps) && uint32(gaps[i].From-base) <= k {
			c.rep.Late++
			return
		}
	}
	c.rep.DuplicateCount++
	if len(c.rep.Duplicates) < maxListed {
		c.rep.Duplicates = append(c.rep.Duplicates, seq)
	}
	if c.rep.DuplicateCount == 1 {
		c.note(fmt.Sprintf("duplicate seq %d", seq))
	}
}

// skipGap gives up the missing numbers before the nearest held event; it
// reports false when nothing is held.
func (o *reorder) skipGap() bool {
	best, found := uint32(0), false
	consider := func(seq int32) {
		if d := uint32(seq - o.next); !found || d < best {
			best, found = d, true
		}
	}
	if len(o.heap) > 0 {
		consider(o.heap[0].Seq)
	}
	for _, q := range o.c.srcs {
		if q != nil && !q.empty() {
			consider(q.segs[q.h].ev[0].Seq)
		}
	}
	if !found || best == 0 {
		return found
	}
	g := SeqRange{From: o.next, To: o.next + int32(best) - 1}
	r := &o.c.rep
	r.GapCount++
	r.Missing += g.Len()
	if len(r.Gaps) < maxListed {
		r.Gaps = append(r.Gaps, g)
	}
	if r.GapCount == 1 {
		o.c.note(fmt.Sprintf("gap: seq %v never arrived", g))
	}
	// Breaks inside the gap come before the next event that exists.
	for len(o.breaks) > 0 && int32(o.breaks[0]-g.To) <= 0 {
		o.c.deliverBreak(o.breaks[0])
		o.breaks = o.breaks[1:]
	}
	o.next += int32(best)
	return true
}

// drainAll releases everything held, giving up missing numbers.
func (o *reorder) drainAll() {
	for {
		o.advance()
		if !o.skipGap() {
			return
		}
	}
}

// dataBreak takes DataBreak(seq) from the control connection: "HQ calls
// processDataBreak() on its processors right before it processes the event
// that carries seq", and must accept seq >= nextExpected.
func (c *core) dataBreak(seq int32) {
	o := &c.reorder
	if int32(seq-o.next) < 0 {
		c.rep.LateBreaks = appendCapped(c.rep.LateBreaks, seq)
		c.note(fmt.Sprintf("data break for seq %d arrived after events up to seq %d were processed", seq, o.next-1))
		for _, p := range c.procs {
			p.DataBreak(seq)
		}
		return
	}
	i, found := slices.BinarySearchFunc(o.breaks, seq, func(b, s int32) int {
		return int(int32(b-o.next)) - int(int32(s-o.next))
	})
	if found {
		c.note(fmt.Sprintf("data break for seq %d received twice", seq))
		return
	}
	o.breaks = slices.Insert(o.breaks, i, seq)
}

func (c *core) deliverBreak(seq int32) {
	c.rep.DataBreaks = appendCapped(c.rep.DataBreaks, seq)
	c.call.dataBreak()
	for _, p := range c.procs {
		p.DataBreak(seq)
	}
}

func appendCapped(s []int32, v int32) []int32 {
	if len(s) < maxListed {
		s = append(s, v)
	}
	return s
}

// The heap of out-of-order events, ordered by number relative to next.

func (o *reorder) less(i, j int) bool { return int32(o.heap[i].Seq-o.heap[j].Seq) < 0 }

func (o *reorder) push(e lateEvent) {
	o.heap = append(o.heap, e)
	for i := len(o.heap) - 1; i > 0; {
		p := (i - 1) / 2
		if !o.less(i, p) {
			break
		}
		o.heap[i], o.heap[p] = o.heap[p], o.heap[i]
		i = p
	}
}

func (o *reorder) pop() lateEvent {
	h := o.heap
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h[n] = lateEvent{}
	o.heap = h[:n]
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && o.less(r, l) {
			m = r
		}
		if !o.less(m, i) {
			break
		}
		o.heap[i], o.heap[m] = o.heap[m], o.heap[i]
		i = m
	}
	return top
}
