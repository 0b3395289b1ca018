package hq

import (
	"cmp"
	"slices"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// MethodTime is a method's share of the run's time: the milliseconds its
// calls spent in their own code, their callees' time taken out (Bytefrog
// timestamps are milliseconds, so short calls count 0).
type MethodTime struct {
	ID        int32
	Signature string
	SelfMs    int64
	Calls     int64
}

// BubblePath is how one exception travelled: the method (and line) that
// threw it, the frames it bubbled out of, in order, and the method that
// caught it (Caught 0: it left the thread's outermost traced call).
type BubblePath struct {
	Exception       string
	Thrower         string
	Line            uint16
	Bubbled         []string
	Caught          string
	throwerID       int32
	excID, caughtID int32
	bubbledIDs      []int32
}

// Bounds of the call timing: frames kept per thread, method ids timed,
// paths kept (the longest of each exception class), frames listed per path.
const (
	maxTimedDepth  = 1 << 12
	maxTimedMethod = 1 << 20
	maxPaths       = 3
	maxPathFrames  = 12
)

// callFrame is one open call on a thread.
type callFrame struct {
	method int32
	start  int32 // ms
	child  int64 // ms spent in its callees
}

// openPath is an exception on its way up a thread's stack.
type openPath struct {
	on   bool
	path BubblePath
}

// calls times each thread's calls (self time per method) and follows
// exceptions from their throw through their bubbles to the frame that
// caught them. A thread's stack that stops matching its events (a data
// break, a call entered before tracing) starts over.
type calls struct {
	stacks [][]callFrame // by thread id
	open   []openPath    // by thread id
	self   []int64       // ms by method id
	paths  []BubblePath  // the longest path of each exception id, first maxPaths ids
	nOpen  int           // paths open (open[i].on), so that most events need not look
}

func (c *calls) event(m *bytefrog.Msg) {
	switch m.Type {
	case bytefrog.MsgMethodEntry, bytefrog.MsgMethodExit, bytefrog.MsgException, bytefrog.MsgExceptionBubble:
	default:
		return
	}
	tid := int(m.ThreadID)
	for len(c.stacks) <= tid {
		c.stacks = append(c.stacks, nil)
		c.open = append(c.open, openPath{})
	}
	st := c.stacks[tid]
	var op *openPath // nil: no path open on this thread
	if c.nOpen > 0 {
		op = &c.open[tid]
		if op.on && m.Type != bytefrog.MsgExceptionBubble {
			// The exception stopped: the frame it reached caught it.
			if len(st) > 0 {
				op.path.caughtID = st[len(st)-1].method
			}
			c.closePath(op)
		}
	}
	switch m.Type {
	case bytefrog.MsgMethodEntry:
		if len(st) == maxTimedDepth {
			st = st[:0]
		}
		c.stacks[tid] = append(st, callFrame{method: m.MethodID, start: m.RelTime})
	case bytefrog.MsgMethodExit, bytefrog.MsgExceptionBubble:
		if m.Type == bytefrog.MsgExceptionBubble {
			op = &c.open[tid]
			if !op.on || op.path.excID != m.ExceptionID {
				// Thrown where no probe saw it (JDK code, or a throw before tracing).
				c.closePath(op)
				*op = openPath{on: true, path: BubblePath{excID: m.ExceptionID, throwerID: -1}}
				c.nOpen++
			}
			if len(op.path.bubbledIDs) < maxPathFrames {
				op.path.bubbledIDs = append(op.path.bubbledIDs, m.MethodID)
			} else {
				op.path.bubbledIDs[maxPathFrames-1] = -1 // stands for "more"
			}
		}
		if len(st) == 0 || st[len(st)-1].method != m.MethodID {
			c.stacks[tid] = st[:0]
			return
		}
		f := st[len(st)-1]
		st = st[:len(st)-1]
		total := int64(m.RelTime - f.start)
		if total < 0 {
			total = 0
		}
		if id := f.method; id >= 0 && id < maxTimedMethod {
			for int(id) >= len(c.self) {
				c.self = append(c.self, 0)
			}
			c.self[id] += max(total-f.child, 0)
		}
		if len(st) > 0 {
			st[len(st)-1].child += total
		}
		c.stacks[tid] = st
		if op != nil && op.on && len(st) == 0 {
			op.path.caughtID = 0
			c.closePath(op)
		}
	case bytefrog.MsgException:
		// Any path open on the thread was closed above.
		c.open[tid] = openPath{on: true, path: BubblePath{excID: m.ExceptionID, throwerID: m.MethodID, Line: m.Line}}
		c.nOpen++
	}
}

// closePath keeps the path if it is the longest of its exception so far.
func (c *calls) closePath(op *openPath) {
	if !op.on {
		return
	}
	op.on = false
	c.nOpen--
	p := op.path
	for i := range c.paths {
		if c.paths[i].excID == p.excID {
			if len(p.bubbledIDs) > len(c.paths[i].bubbledIDs) {
				p.bubbledIDs = slices.Clone(p.bubbledIDs)
				c.paths[i] = p
			}
			return
		}
	}
	if len(c.paths) < maxPaths {
		p.bubbledIDs = slices.Clone(p.bubbledIDs)
		c.paths = append(c.paths, p)
	}
}

// dataBreak drops the stacks and open paths: what came before no longer
// pairs with what follows.
func (c *calls) dataBreak() {
	for i := range c.stacks {
		c.stacks[i] = c.stacks[i][:0]
		c.open[i] = openPath{}
	}
	c.nOpen = 0
}

// fill adds the top methods by self time and the bubble paths to r, with
// names from st.
func (c *calls) fill(r *Report, st *stats, topN int) {
	for i := range c.open {
		c.closePath(&c.open[i])
	}
	name := func(t *idTable, id int32) string {
		if e := t.at(id); e != nil && e.mapped {
			return e.name
		}
		return ""
	}
	var top []MethodTime
	for id, ms := range c.self {
		if ms > 0 {
			e := st.methods.at(int32(id))
			var n int64
			if e != nil {
				n = e.n1 + e.n2
			}
			top = append(top, MethodTime{ID: int32(id), Signature: name(&st.methods, int32(id)), SelfMs: ms, Calls: n})
		}
	}
	slices.SortStableFunc(top, func(a, b MethodTime) int { return cmp.Compare(b.SelfMs, a.SelfMs) })
	r.TopByTime = top[:min(len(top), topN)]
	for _, p := range c.paths {
		p.Exception = name(&st.excs, p.excID)
		if p.throwerID >= 0 {
			p.Thrower = name(&st.methods, p.throwerID)
		}
		if p.caughtID != 0 {
			p.Caught = name(&st.methods, p.caughtID)
		}
		for _, id := range p.bubbledIDs {
			if id == -1 {
				p.Bubbled = append(p.Bubbled, "…")
				continue
			}
			p.Bubbled = append(p.Bubbled, name(&st.methods, id))
		}
		r.BubblePaths = append(r.BubblePaths, p)
	}
}
