package hq

import (
	"encoding/binary"
	"fmt"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// The core's work per released event. A run of events released together
// (consecutive numbers, one slab, no data break between them) goes through
// events: the common events, an entry or an exit of the innermost call of
// a named thread while no exception path is open and no mode window was
// opened, are counted, checked and timed in fastRun's loop, from their
// bytes, against the thread's one stack and its bounds (calls.go); each
// stretch of them is then handed to the processors that take single
// events, if any. Every other event goes through event, which does the
// same work and all the rest from the decoded message. Both make the same
// findings in the same order.

// Offsets of the fields events reads; every method event starts with
// i32 relTime, i32 seq, i32 methodId.
const (
	evTime   = 1
	evSeq    = 5
	evMethod = 9
	evTID    = 13 // MethodEntry
	evFlagCP = 13 // MethodExit (Code Pulse): exceptionThrown
)

// events processes evs, which lie in s, in order: runs of common events
// through fastRun, each other event through emit.
func (c *core) events(s *slab, evs []event) {
	if s.cols {
		c.colEvents(s, evs)
		return
	}
	raw := s.raw
	for i := 0; i < len(evs); i++ {
		if c.fastOK() && raw[evs[i].Off] != byte(bytefrog.MsgMarker) {
			n := c.fastRun(raw, evs[i:])
			if len(c.evs) > 0 {
				for _, e := range evs[i : i+n] {
					c.deliver(raw[e.Off:])
				}
			}
			if i += n; i == len(evs) {
				return
			}
		}
		if raw[evs[i].Off] == byte(bytefrog.MsgMarker) {
			i += c.markers(s, evs[i:]) - 1
			continue
		}
		c.emit(s, raw[evs[i].Off:])
	}
}

// markers releases the markers at the front of evs, which lie in s, and
// returns how many it took (at least one: the caller has seen the first).
// It does for each what emit does for a marker, without emit's dispatch on
// the type: a run of log records is the usual traffic of a JVM that logs.
// Of a run, only the last lastMarkers go into the report's ring, and with
// no processor and no mode window to see them the others are not read.
func (c *core) markers(s *slab, evs []event) int {
	raw, m, st := s.raw, &c.m, &c.st
	n := 1
	for n < len(evs) && raw[evs[n].Off] == byte(bytefrog.MsgMarker) {
		n++
	}
	windows := len(c.disc.windows) > 0
	i := 0
	if len(c.evs) == 0 && !windows {
		i = max(n-lastMarkers, 0)
		st.markers += int64(i)
	}
	bad := 0
	for ; i < n; i++ {
		if !c.v.Load(m, raw[evs[i].Off:]) { // cannot happen: the parser framed it
			c.note(fmt.Sprintf("event at seq %d does not parse again", evs[i].Seq))
			bad++
			continue
		}
		if i >= n-lastMarkers {
			st.marker(m, s)
		} else {
			st.markers++
		}
		if windows { // markers and log records are collected too
			c.disc.timed(m, &c.rep)
		}
		for _, p := range c.evs {
			p.Message(m)
		}
	}
	st.counts[bytefrog.MsgMarker] += int64(n - bad)
	st.sequenced += int64(n - bad)
	return n
}

// fastRun takes the entries and exits of the innermost call at the front of
// evs, which lie in raw, and returns how many it took: it stops at the first
// event the general way must take (another type, an unmapped id, a thread
// whose stack must grow, lost track or hit the timing's depth, an exit that
// does not match, or one whose Code Pulse flag says an exception was thrown).
// The caller has checked fastOK.
func (c *core) fastRun(raw []byte, evs []event) int {
	st, cl := &c.st, &c.call
	dense := st.methods.dense
	if len(cl.self) < len(dense) {
		cl.growSelf(len(dense))
	}
	self := cl.self[:len(dense)]
	thr := cl.thr
	// The exit's thread id lies at offset exitTID (below 16 in either
	// flavour); cpFlag masks the Code Pulse exit's exceptionThrown byte.
	exitTID, cpFlag := c.exitTID&15, byte(0)
	if c.exitSize == bytefrog.MethodExitCodePulseSize {
		cpFlag = 0xff
	}
	entries := 0
	i := 0
loop:
	for ; i < len(evs); i++ {
		off := int(evs[i].Off)
		if off > len(raw)-maxFixed {
			break
		}
		h := (*[maxFixed]byte)(raw[off:])
		method := int32(binary.BigEndian.Uint32(h[evMethod:]))
		mi := uint(uint32(method))
		switch bytefrog.MsgType(h[0]) {
		case bytefrog.MsgMethodEntry:
			tid := binary.BigEndian.Uint16(h[evTID:])
			if mi >= uint(len(dense)) || !dense[mi].mapped || int(tid) >= len(thr) {
				break loop
			}
			th := &thr[tid]
			n := len(th.stack)
			if n >= th.room { // (the general way grows the stack)
				break loop
			}
			dense[mi].n1++
			entries++
			th.stack[:n+1][n] = frame{method: method, start: int32(binary.BigEndian.Uint32(h[evTime:]))}
			th.stack = th.stack[:n+1] // (a store of the length alone)
		case bytefrog.MsgMethodExit:
			tid := uint16(h[exitTID])<<8 | uint16(h[exitTID+1])
			if h[evFlagCP]&cpFlag != 0 || // exceptionThrown
				mi >= uint(len(dense)) || !dense[mi].mapped || int(tid) >= len(thr) {
				break loop
			}
			th := &thr[tid]
			n := len(th.stack)
			if n <= th.floor || th.stack[n-1].method != method {
				break loop
			}
			f := th.stack[n-1]
			th.stack = th.stack[:n-1]
			total := max(int64(int32(binary.BigEndian.Uint32(h[evTime:]))-f.start), 0)
			self[mi] += max(total-f.child, 0)
			if n-1 > th.floor {
				th.stack[n-2].child += total
			}
		default:
			break loop
		}
	}
	c.flushCounts(int64(entries), int64(i-entries))
	return i
}

// flushCounts adds the entries and exits events took on its fast path.
func (c *core) flushCounts(entries, exits int64) {
	c.st.counts[bytefrog.MsgMethodEntry] += entries
	c.st.counts[bytefrog.MsgMethodExit] += exits
	c.st.sequenced += entries + exits
}

// fastOK reports whether events may take entries and exits on its fast
// path: no exception path is open and no mode window was opened.
func (c *core) fastOK() bool {
	return c.call.nOpen == 0 && len(c.disc.windows) == 0
}

// deliver hands an event events took on its fast path to the processors
// that take single events.
func (c *core) deliver(b []byte) {
	m := &c.m
	if !c.v.Load(m, b) { // cannot happen: the parser framed it
		return
	}
	for _, p := range c.evs {
		p.Message(m)
	}
}

// emit releases one sequenced event, which lies in s, the general way.
func (c *core) emit(s *slab, raw []byte) {
	m := &c.m
	if !c.v.Load(m, raw) { // cannot happen: the parser framed it
		c.note(fmt.Sprintf("event at seq %d does not parse again", c.next))
		return
	}
	c.st.event(m, s, c.onUnmapped)
	c.event(m)
	for _, p := range c.evs {
		p.Message(m)
	}
}

// event checks and times one released event against its thread's calls.
func (c *core) event(m *bytefrog.Msg) {
	d, r := &c.disc, &c.rep
	switch m.Type {
	case bytefrog.MsgMethodEntry, bytefrog.MsgMethodExit, bytefrog.MsgException, bytefrog.MsgExceptionBubble:
	case bytefrog.MsgMarker:
		if len(d.windows) > 0 {
			d.timed(m, r) // markers and log records are collected too
		}
		return
	default:
		return
	}
	if len(d.windows) > 0 { // else no event can be stamped inside one
		d.timed(m, r)
	}
	cl := &c.call
	th := cl.thread(m.ThreadID)
	defer th.settle()
	var op *openPath // nil: no path open on this thread
	if cl.nOpen > 0 {
		op = cl.path(m.ThreadID)
		if op.on && m.Type != bytefrog.MsgExceptionBubble {
			// The exception stopped: the frame it reached caught it.
			if n := len(th.stack); n > th.timed {
				op.path.caughtID = th.stack[n-1].method
			}
			cl.closePath(op)
		}
	}
	switch m.Type {
	case bytefrog.MsgMethodEntry:
		if !th.lost && len(th.stack) == maxStackDepth {
			// Too deep to check: the thread is given up until the next
			// break, and only the calls the timing follows are kept.
			th.lost = true
			r.DeepStacks++
			n := copy(th.stack, th.stack[th.timed:])
			th.stack, th.timed = th.stack[:n], 0
		}
		if len(th.stack)-th.timed == maxTimedDepth { // the timing starts over
			if th.lost {
				th.stack = th.stack[:0]
			} else {
				th.timed = len(th.stack)
			}
		}
		th.stack = append(th.stack, frame{method: m.MethodID, start: m.RelTime})
	case bytefrog.MsgMethodExit, bytefrog.MsgExceptionBubble:
		if m.Type == bytefrog.MsgExceptionBubble {
			op = cl.path(m.ThreadID)
			if !op.on || op.path.excID != m.ExceptionID {
				// Thrown where no probe saw it (JDK code, or a throw before tracing).
				cl.closePath(op)
				cl.open1(op, BubblePath{excID: m.ExceptionID, throwerID: -1})
			}
			if len(op.path.bubbledIDs) < maxPathFrames {
				op.path.bubbledIDs = append(op.path.bubbledIDs, m.MethodID)
			} else {
				op.path.bubbledIDs[maxPathFrames-1] = -1 // stands for "more"
			}
		}
		n := len(th.stack)
		timed := n > th.timed && th.stack[n-1].method == m.MethodID
		if timed {
			f := th.stack[n-1]
			total := max(int64(m.RelTime-f.start), 0)
			cl.addSelf(f.method, max(total-f.child, 0))
			if n-1 > th.timed {
				th.stack[n-2].child += total
			}
		}
		switch {
		case th.lost:
			// Only the timing's calls are kept: an exit that does not
			// match makes it start over.
			if !timed {
				th.stack = th.stack[:0]
				return
			}
		case n == 0:
			// Entered before tracing began, or before the last break.
			r.UnmatchedExits++
			return
		default:
			if top := th.stack[n-1].method; top != m.MethodID {
				d.finding(r, &r.StackFaults, &d.listed.stack, fmt.Sprintf("seq %d thread %d: %s of method %d while method %d is the innermost call",
					m.Seq, m.ThreadID, m.Type, m.MethodID, top))
			}
			if !timed {
				th.timed = n - 1 // the timing starts over
			}
		}
		th.stack = th.stack[:n-1]
		if timed && op != nil && op.on && n-1 == th.timed {
			op.path.caughtID = 0
			cl.closePath(op)
		}
	case bytefrog.MsgException:
		if n := len(th.stack); !th.lost && n > 0 && th.stack[n-1].method != m.MethodID {
			d.finding(r, &r.StackFaults, &d.listed.stack, fmt.Sprintf("seq %d thread %d: exception thrown in method %d while method %d is the innermost call",
				m.Seq, m.ThreadID, m.MethodID, th.stack[n-1].method))
		}
		// Any path open on the thread was closed above.
		cl.open1(cl.path(m.ThreadID), BubblePath{excID: m.ExceptionID, throwerID: m.MethodID, Line: m.Line})
	}
}
