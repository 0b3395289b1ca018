package calltree

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// DisplayName turns a Bytefrog method signature, "pkg/Class.method;flags;(desc)R",
// into "pkg.Class.method(desc)R". Other text is returned as it is.
func DisplayName(sig string) string {
	i := strings.IndexByte(sig, ';')
	if i < 0 {
		return sig
	}
	j := strings.IndexByte(sig[i+1:], ';')
	if j < 0 {
		return sig
	}
	return strings.ReplaceAll(sig[:i], "/", ".") + sig[i+1+j+1:]
}

// MethodName returns the display name of method id: its mapped signature
// through DisplayName, or "method#id" when it was never mapped.
func (t *Tree) MethodName(id int32) string {
	if s, ok := t.names[id]; ok {
		return DisplayName(s)
	}
	return fmt.Sprintf("method#%d", id)
}

// Signature returns the signature method id was mapped to ("" if none).
func (t *Tree) Signature(id int32) string { return t.names[id] }

// ThreadName returns the mapped name of thread tid, or "thread-tid".
func (t *Tree) ThreadName(tid uint16) string {
	if s, ok := t.thrNames[tid]; ok {
		return s
	}
	return fmt.Sprintf("thread-%d", tid)
}

// ExceptionName returns the mapped class name of exception id, or
// "exception#id".
func (t *Tree) ExceptionName(id int32) string {
	if s, ok := t.excNames[id]; ok {
		return s
	}
	return fmt.Sprintf("exception#%d", id)
}

// Node is one call path of the tree: Method called along the path of
// Parent. Times are in milliseconds.
type Node struct {
	Index, Parent int32 // Parent is -1 for the root
	Method        int32 // -1 for the root
	Depth         int   // 0 for the root
	Calls         int64
	Total, Self   int64 // ms
	Thrown        int64 // exceptions thrown while this path was the innermost call
	Bubbled       int64 // calls that ended by an exception
}

// Len returns the number of nodes, the root included; nodes are numbered
// 0 (Root) to Len()-1, every node after its parent.
func (t *Tree) Len() int { return len(t.nodes) }

// Node returns node i. The root's totals are the sums over its children.
func (t *Tree) Node(i int32) Node {
	n := &t.nodes[i]
	out := Node{Index: i, Parent: n.parent, Method: n.method, Calls: n.calls, Total: n.total, Self: n.self,
		Thrown: n.thrown, Bubbled: n.bubbled}
	for p := n.parent; p != noNode; p = t.nodes[p].parent {
		out.Depth++
	}
	if i == Root {
		for c := n.child; c != 0; c = t.nodes[c].next {
			out.Total += t.nodes[c].total
			out.Calls += t.nodes[c].calls
		}
	}
	return out
}

// Children returns the callees of node i, in the order they were first
// called.
func (t *Tree) Children(i int32) []int32 {
	var out []int32
	for c := t.nodes[i].child; c != 0; c = t.nodes[c].next {
		out = append(out, c)
	}
	slices.Reverse(out)
	return out
}

// Path returns the methods from the outermost call down to node i.
func (t *Tree) Path(i int32) []int32 {
	var out []int32
	for ; i > Root; i = t.nodes[i].parent {
		out = append(out, t.nodes[i].method)
	}
	slices.Reverse(out)
	return out
}

// Methods returns the counters of every method that had an event, by id.
func (t *Tree) Methods() []MethodStats {
	var out []MethodStats
	add := func(s MethodStats) {
		if s.Calls != 0 || s.Thrown != 0 || s.Bubbled != 0 {
			s.Signature = t.names[s.ID]
			out = append(out, s)
		}
	}
	for _, s := range t.dense {
		add(s)
	}
	for _, s := range t.sparse {
		add(*s)
	}
	slices.SortFunc(out, func(a, b MethodStats) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// Method returns the counters of method id.
func (t *Tree) Method(id int32) MethodStats {
	var s MethodStats
	if uint32(id) < uint32(len(t.dense)) {
		s = t.dense[id]
	} else if p, ok := t.sparse[id]; ok {
		s = *p
	}
	s.ID, s.Signature = id, t.names[id]
	return s
}

// ExceptionCount counts the Exception (thrown) and ExceptionBubble events
// of one exception class.
type ExceptionCount struct {
	ID              int32
	Name            string
	Thrown, Bubbled int64
}

// Exceptions returns the exception counters, by id.
func (t *Tree) Exceptions() []ExceptionCount {
	out := make([]ExceptionCount, 0, len(t.exceptions))
	for id, c := range t.exceptions {
		out = append(out, ExceptionCount{ID: id, Name: t.ExceptionName(id), Thrown: c[0], Bubbled: c[1]})
	}
	slices.SortFunc(out, func(a, b ExceptionCount) int { return cmp.Compare(a.ID, b.ID) })
	return out
}
