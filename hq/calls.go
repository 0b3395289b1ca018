package hq

import (
	"cmp"
	"math"
	"slices"
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

// frame is one open call on a thread: the method, when it was entered
// and the time its callees took (ms).
type frame struct {
	method int32
	start  int32 // ms
	child  int64 // ms spent in its callees
}

// thread is one thread's calls, kept once for both the nesting check
// (discipline.go) and the call timing: stack holds every open call the
// check knows, and the timing follows stack[timed:] only, the calls
// entered since it last lost track (an exit that did not match, or
// maxTimedDepth reached). When the stack grows past maxStackDepth the
// check gives the thread up until the next data break (lost); stack then
// holds the timing's calls only (timed 0).
type thread struct {
	stack []frame
	timed int
	lost  bool
	named bool // the thread's name is mapped, or need not be (calls.anyThread)
	// What the core's fast path (fastRun) may do without looking at the
	// above: push while the stack is shorter than room (0 when lost or
	// not named; else at most its capacity, maxStackDepth and
	// timed+maxTimedDepth), pop a timed call while it is longer than floor
	// (timed; when lost or not named, never). settle sets them after every
	// change of the others.
	room, floor int
}

// settle sets th.room and th.floor from the rest of th.
func (th *thread) settle() {
	if th.lost || !th.named {
		th.room, th.floor = 0, math.MaxInt
		return
	}
	th.room = min(cap(th.stack), maxStackDepth, th.timed+maxTimedDepth)
	th.floor = th.timed
}

// openPath is an exception on its way up a thread's stack.
type openPath struct {
	on   bool
	path BubblePath
}

// calls holds the threads' calls, times them (self time per method) and
// follows exceptions from their throw through their bubbles to the frame
// that caught them. The core's events.go feeds it.
type calls struct {
	thr   []thread     // by thread id
	open  []openPath   // by thread id, grown when a path opens
	self  []int64      // ms by method id
	paths []BubblePath // the longest path of each exception id, first maxPaths ids
	nOpen int          // paths open (open[i].on), so that most events need not look
	// anyThread: events of threads whose name was never mapped are
	// expected (Code Pulse agents send no MapThreadName).
	anyThread bool
}

// thread returns the state of thread tid.
func (c *calls) thread(tid uint16) *thread {
	if int(tid) < len(c.thr) {
		return &c.thr[tid]
	}
	return c.grow(tid)
}

func (c *calls) grow(tid uint16) *thread {
	n := min(max(int(tid)+1, 2*len(c.thr), 16), 1<<16)
	k := len(c.thr)
	c.thr = append(c.thr, make([]thread, n-k)...)
	for i := k; i < n; i++ {
		c.thr[i].named = c.anyThread
		c.thr[i].settle()
	}
	return &c.thr[tid]
}

// name notes that thread tid's name is mapped.
func (c *calls) name(tid uint16) {
	th := c.thread(tid)
	th.named = true
	th.settle()
}

// path returns the open-path slot of thread tid.
func (c *calls) path(tid uint16) *openPath {
	if int(tid) >= len(c.open) {
		n := min(max(int(tid)+1, 2*len(c.open), 16), 1<<16)
		c.open = append(c.open, make([]openPath, n-len(c.open))...)
	}
	return &c.open[tid]
}

// growSelf makes room for the self time of n method ids.
func (c *calls) growSelf(n int) {
	n = min(max(n, 2*len(c.self), 256), maxTimedMethod)
	c.self = append(c.self, make([]int64, n-len(c.self))...)
}

// addSelf adds ms to the self time of method id.
func (c *calls) addSelf(id int32, ms int64) {
	if uint32(id) < uint32(len(c.self)) {
		c.self[id] += ms
		return
	}
	if id >= 0 && id < maxTimedMethod {
		n := min(max(int(id)+1, 2*len(c.self), 256), maxTimedMethod)
		c.self = append(c.self, make([]int64, n-len(c.self))...)
		c.self[id] += ms
	}
}

// open1 opens path p in slot op, whose path is closed, reusing its list
// of frames (closePath keeps a copy of what it keeps).
func (c *calls) open1(op *openPath, p BubblePath) {
	p.bubbledIDs = op.path.bubbledIDs[:0]
	*op = openPath{on: true, path: p}
	c.nOpen++
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
	for i := range c.thr {
		th := &c.thr[i]
		th.stack, th.timed, th.lost = th.stack[:0], 0, false
		th.settle()
	}
	clear(c.open)
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
