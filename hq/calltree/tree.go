package calltree

import (
	"fmt"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// Root is the index of the tree's root node, the parent of every thread's
// outermost calls. It stands for no method.
const Root = 0

// Timeline events are packed in a uint64: the time (ms) in the high 32
// bits, then the frame, then two flags.
const (
	evClose      = 1
	evBubbled    = 2
	evFrameShift = 2
	maxFrames    = 1 << (32 - evFrameShift)
)

// eventLog holds a thread's timeline events, each at<<32 | frame<<2 |
// bubbled<<1 | close, in blocks that are never copied as it grows.
type eventLog struct {
	blocks [][]uint64
	n      int
}

const eventBlock = 8192

func (l *eventLog) add(ev uint64) {
	if k := len(l.blocks); k == 0 || len(l.blocks[k-1]) == eventBlock {
		l.blocks = append(l.blocks, make([]uint64, 0, eventBlock))
	}
	k := len(l.blocks) - 1
	l.blocks[k] = append(l.blocks[k], ev)
	l.n++
}

// noNode marks a frame placed in no node (the path cap was reached).
const noNode = -1

// Bounds of the per-method tables.
const (
	denseMethods     = 1 << 16 // method ids below this are counted in a slice
	maxSparseMethods = 1 << 20 // other ids kept in a map, at most this many
)

// node is one call path: a method called from its parent's path.
type node struct {
	method  int32
	parent  int32
	child   int32 // first callee, or 0
	next    int32 // next sibling, or 0
	hot     int32 // the callee found last, or 0
	kids    int32 // callees
	calls   int64
	total   int64 // ms
	self    int64 // ms
	thrown  int64 // Exception events while this path was innermost
	bubbled int64 // calls on this path that ended by an exception
}

// frame is one open call of a thread.
type frame struct {
	node   int32 // or noNode
	method int32
	start  int32 // ms
	inner  int64 // total ms of the callees
	merged int64 // the part of inner spent in callees placed in no node
	tl     int32 // its timeline frame, or -1 when its open is not in the timeline
}

// thread is the state of one thread.
type thread struct {
	stack  []frame
	deep   int   // calls entered beyond MaxDepth, still open
	last   int32 // last timestamp (monotonic)
	seen   bool
	events eventLog // timeline
}

// MethodStats are the counters of one method over all its call paths.
type MethodStats struct {
	ID        int32
	Signature string // as mapped; "" when never mapped
	Calls     int64  // MethodEntry events
	Self      int64  // ms
	Thrown    int64  // Exception events in this method
	Bubbled   int64  // calls that ended by an exception
}

// Stats are the counts a Tree keeps besides the tree.
type Stats struct {
	Events         int64 // MethodEntry, MethodExit, Exception and ExceptionBubble events seen
	Calls          int64 // MethodEntry events
	Paths          int   // nodes of the tree, the root included
	Threads        int   // threads that had events
	UnmatchedExits int64 // exits and bubbles on an empty stack
	Mismatched     int64 // exits and bubbles that named another method than the innermost call
	Unattributed   int64 // exceptions thrown on an empty stack
	DataBreaks     int
	ClosedByBreak  int64 // frames a data break closed
	OpenAtEnd      int64 // frames Finish closed
	MergedCalls    int64 // calls beyond MaxPaths, counted in their caller's self time
	DeepCalls      int64 // calls beyond MaxDepth, counted per method only
	UntimedCalls   int64 // calls left out of the timeline (MaxTimeline)
	SparseOverflow int64 // events of method ids beyond the per-method table
}

// Tree is a call tree built from a run's events; see the package doc. It
// implements hq.Processor.
type Tree struct {
	cfg Config

	nodes   []node
	edges   map[uint64]int32 // parent<<32 | method → node, for paths of more than smallFanout callees
	threads []*thread        // by thread id; nil until seen

	names      map[int32]string  // method signatures
	excNames   map[int32]string  // exception class names
	thrNames   map[uint16]string // thread names
	dense      []MethodStats
	sparse     map[int32]*MethodStats
	spill      MethodStats
	exceptions map[int32]*[2]int64 // exception id → thrown, bubbled

	frameOf  map[int32]int32 // method id → timeline frame
	frames   []int32         // timeline frame → method id
	reserved int             // timeline slots used or promised

	st       Stats
	last     int32 // latest timestamp seen
	finished bool
	report   *hq.Report
}

var _ hq.Processor = (*Tree)(nil)

// New returns an empty tree bounded by cfg (nil: DefaultConfig). It
// returns an error wrapping ErrConfig for a bad cfg.
func New(cfg *Config) (*Tree, error) {
	c := DefaultConfig()
	if cfg != nil {
		c = new(Config)
		*c = *cfg
	}
	if err := c.Verify(); err != nil {
		return nil, err
	}
	t := &Tree{
		cfg:        *c,
		nodes:      make([]node, 1, 1024),
		edges:      make(map[uint64]int32, 1024),
		names:      map[int32]string{},
		excNames:   map[int32]string{},
		thrNames:   map[uint16]string{},
		sparse:     map[int32]*MethodStats{},
		exceptions: map[int32]*[2]int64{},
		frameOf:    map[int32]int32{},
	}
	t.nodes[Root] = node{method: -1, parent: noNode}
	return t, nil
}

// Message takes one message of the run (hq.Processor).
func (t *Tree) Message(m *bytefrog.Msg) {
	switch m.Type {
	case bytefrog.MsgMethodEntry:
		t.entry(m.ThreadID, m.MethodID, m.RelTime)
	case bytefrog.MsgMethodExit:
		t.exit(m.ThreadID, m.MethodID, m.RelTime, false, 0)
	case bytefrog.MsgExceptionBubble:
		t.exit(m.ThreadID, m.MethodID, m.RelTime, true, m.ExceptionID)
	case bytefrog.MsgException:
		t.throw(m.ThreadID, m.MethodID, m.ExceptionID, m.RelTime)
	case bytefrog.MsgMapMethodSignature:
		t.names[m.MethodID] = bytefrog.String(m.Text)
	case bytefrog.MsgMapException:
		t.excNames[m.ExceptionID] = bytefrog.String(m.Text)
	case bytefrog.MsgMapThreadName:
		t.thrNames[m.ThreadID] = bytefrog.String(m.Text)
	}
}

// thread returns the state of tid and the event's time made monotonic.
func (t *Tree) thread(tid uint16, at int32) (*thread, int32) {
	var th *thread
	if int(tid) < len(t.threads) {
		th = t.threads[tid]
	}
	if th == nil {
		th = t.newThread(tid)
	}
	if !th.seen {
		th.seen = true
		th.last = at
		t.st.Threads++
	}
	if at < th.last {
		at = th.last
	}
	th.last = at
	if at > t.last {
		t.last = at
	}
	return th, at
}

func (t *Tree) newThread(tid uint16) *thread {
	if int(tid) >= len(t.threads) {
		n := min(max(int(tid)+1, 2*len(t.threads), 16), maxThreads)
		t.threads = append(t.threads, make([]*thread, n-len(t.threads))...)
	}
	th := &thread{}
	t.threads[tid] = th
	return th
}

// method returns the counters of id.
func (t *Tree) method(id int32) *MethodStats {
	if uint32(id) < uint32(len(t.dense)) {
		return &t.dense[id]
	}
	if id >= 0 && id < denseMethods {
		n := min(max(int(id)+1, 2*len(t.dense), 256), denseMethods)
		for i := len(t.dense); i < n; i++ {
			t.dense = append(t.dense, MethodStats{ID: int32(i)})
		}
		return &t.dense[id]
	}
	if s, ok := t.sparse[id]; ok {
		return s
	}
	if len(t.sparse) >= maxSparseMethods {
		t.st.SparseOverflow++
		return &t.spill
	}
	s := &MethodStats{ID: id}
	t.sparse[id] = s
	return s
}

// smallFanout is the number of callees a path looks up by walking its
// list; a path with more has them in the edges map.
const smallFanout = 8

func edgeKey(parent, method int32) uint64 { return uint64(uint32(parent))<<32 | uint64(uint32(method)) }

// child returns the node of method called from parent, creating it; noNode
// when the tree is full.
func (t *Tree) child(parent, method int32) int32 {
	p := &t.nodes[parent]
	if h := p.hot; h != 0 && t.nodes[h].method == method {
		return h
	}
	if p.kids <= smallFanout {
		for c := p.child; c != 0; c = t.nodes[c].next {
			if t.nodes[c].method == method {
				p.hot = c
				return c
			}
		}
	} else if n, ok := t.edges[edgeKey(parent, method)]; ok {
		p.hot = n
		return n
	}
	if len(t.nodes) >= t.cfg.MaxPaths {
		return noNode
	}
	n := int32(len(t.nodes))
	t.nodes = append(t.nodes, node{method: method, parent: parent, next: p.child})
	p = &t.nodes[parent] // append may have moved it
	p.child, p.hot = n, n
	p.kids++
	switch {
	case p.kids == smallFanout+1:
		for c := p.child; c != 0; c = t.nodes[c].next {
			t.edges[edgeKey(parent, t.nodes[c].method)] = c
		}
	case p.kids > smallFanout+1:
		t.edges[edgeKey(parent, method)] = n
	}
	return n
}

func (t *Tree) entry(tid uint16, method int32, rel int32) {
	t.st.Events++
	t.st.Calls++
	th, at := t.thread(tid, rel)
	t.method(method).Calls++
	if th.deep > 0 || len(th.stack) >= t.cfg.MaxDepth {
		th.deep++
		t.st.DeepCalls++
		return
	}
	parent := int32(Root)
	if n := len(th.stack); n > 0 {
		parent = th.stack[n-1].node
	}
	nd := int32(noNode)
	if parent != noNode {
		nd = t.child(parent, method)
	}
	if nd == noNode {
		t.st.MergedCalls++
	} else {
		t.nodes[nd].calls++
	}
	f := frame{node: nd, method: method, start: at, tl: -1}
	if t.cfg.MaxTimeline > 0 && t.reserved+2 <= t.cfg.MaxTimeline && t.hasFrame(method) {
		t.reserved += 2 // its close is promised a slot
		f.tl = int32(t.frame(method))
		th.events.add(uint64(uint32(at))<<32 | uint64(f.tl)<<evFrameShift)
	} else {
		t.st.UntimedCalls++
	}
	th.stack = append(th.stack, f)
}

// hasFrame reports whether method has a timeline frame or one can be made.
func (t *Tree) hasFrame(method int32) bool {
	if len(t.frames) < maxFrames {
		return true
	}
	_, ok := t.frameOf[method]
	return ok
}

// frame returns the timeline frame of method.
func (t *Tree) frame(method int32) uint32 {
	if f, ok := t.frameOf[method]; ok {
		return uint32(f)
	}
	f := int32(len(t.frames))
	t.frames = append(t.frames, method)
	t.frameOf[method] = f
	return uint32(f)
}

// exit ends the innermost call of tid; bubbled when it ended by exception
// exc.
func (t *Tree) exit(tid uint16, method int32, rel int32, bubbled bool, exc int32) {
	t.st.Events++
	th, at := t.thread(tid, rel)
	if bubbled {
		t.method(method).Bubbled++
		t.exception(exc)[1]++
	}
	if th.deep > 0 {
		th.deep--
		return
	}
	n := len(th.stack)
	if n == 0 {
		t.st.UnmatchedExits++
		return
	}
	if th.stack[n-1].method != method {
		t.st.Mismatched++
	}
	t.pop(th, at, bubbled)
}

// pop closes the innermost frame of th at time at.
func (t *Tree) pop(th *thread, at int32, bubbled bool) {
	n := len(th.stack)
	f := &th.stack[n-1]
	dur := int64(at) - int64(f.start)
	self := dur - f.inner
	if f.node != noNode {
		nd := &t.nodes[f.node]
		nd.total += dur
		nd.self += self + f.merged // merged callees count as this path's self time
		if bubbled {
			nd.bubbled++
		}
	}
	t.method(f.method).Self += self
	if f.tl >= 0 {
		ev := uint64(uint32(at))<<32 | uint64(f.tl)<<evFrameShift | evClose
		if bubbled {
			ev |= evBubbled
		}
		th.events.add(ev)
	}
	th.stack = th.stack[:n-1]
	if n > 1 {
		p := &th.stack[n-2]
		p.inner += dur
		if f.node == noNode {
			p.merged += dur
		}
	}
}

func (t *Tree) throw(tid uint16, method, exc int32, rel int32) {
	t.st.Events++
	th, _ := t.thread(tid, rel)
	t.method(method).Thrown++
	t.exception(exc)[0]++
	if th.deep > 0 {
		return
	}
	n := len(th.stack)
	if n == 0 {
		t.st.Unattributed++
		return
	}
	if nd := th.stack[n-1].node; nd != noNode {
		t.nodes[nd].thrown++
	}
}

// exception returns the thrown and bubbled counters of exception id.
func (t *Tree) exception(id int32) *[2]int64 {
	c, ok := t.exceptions[id]
	if !ok {
		if len(t.exceptions) >= maxSparseMethods {
			return new([2]int64)
		}
		c = new([2]int64)
		t.exceptions[id] = c
	}
	return c
}

// closeAll closes every open frame of every thread at its thread's last
// timestamp; it returns how many it closed.
func (t *Tree) closeAll() int64 {
	var closed int64
	for _, th := range t.threads {
		if th == nil {
			continue
		}
		closed += int64(len(th.stack))
		for len(th.stack) > 0 {
			t.pop(th, th.last, false)
		}
		th.deep = 0
	}
	return closed
}

// DataBreak drops the open stacks (hq.Processor): the calls in them end at
// their thread's last timestamp.
func (t *Tree) DataBreak(seq int32) {
	t.st.DataBreaks++
	t.st.ClosedByBreak += t.closeAll()
}

// Finish closes what is still open (hq.Processor) and, when a bound of
// Config was reached, says so in r's warnings.
func (t *Tree) Finish(r *hq.Report) {
	if t.finished {
		return
	}
	t.finished = true
	t.st.OpenAtEnd += t.closeAll()
	t.report = r
	if r == nil {
		return
	}
	for _, w := range t.Warnings() {
		r.Warnings = append(r.Warnings, w)
	}
}

// Warnings lists the bounds of Config the tree reached.
func (t *Tree) Warnings() []string {
	var w []string
	if t.st.MergedCalls > 0 {
		w = append(w, fmt.Sprintf("call tree: %d distinct call paths kept (MaxPaths); %d call(s) on further paths counted as their caller's self time",
			len(t.nodes), t.st.MergedCalls))
	}
	if t.st.DeepCalls > 0 {
		w = append(w, fmt.Sprintf("call tree: %d call(s) deeper than %d frames counted per method only (MaxDepth)",
			t.st.DeepCalls, t.cfg.MaxDepth))
	}
	if t.st.UntimedCalls > 0 && t.cfg.MaxTimeline > 0 {
		w = append(w, fmt.Sprintf("call tree: timeline full (%d events, MaxTimeline); %d later call(s) left out of the per-thread exports",
			t.cfg.MaxTimeline, t.st.UntimedCalls))
	}
	if t.st.SparseOverflow > 0 {
		w = append(w, fmt.Sprintf("call tree: %d event(s) of method ids beyond the per-method table", t.st.SparseOverflow))
	}
	return w
}

// Stats returns the tree's counters.
func (t *Tree) Stats() Stats {
	s := t.st
	s.Paths = len(t.nodes)
	return s
}

// Report returns the report Finish received (nil before).
func (t *Tree) Report() *hq.Report { return t.report }
