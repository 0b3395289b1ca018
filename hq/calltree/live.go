package calltree

// NodeValues are the counters of one call path, as Snapshot copies them.
// Times are in milliseconds.
type NodeValues struct {
	Parent, Method int32 // -1 for the root
	Calls          int64
	Total, Self    int64
	Thrown         int64
	Bubbled        int64
}

// Snapshot copies the counters of the first limit nodes (all when limit
// is negative or beyond Len), by index (the root first), into dst (reused
// when large enough) and returns it. Calls still open are
// counted as if they ended at their thread's last timestamp, so a live
// run's outer calls have their time so far and every node's total is at
// least the sum of its callees'. The root's values are the sums over its
// children. The tree is not changed: a live page takes snapshots while the
// run goes on (with the tree's user holding off its Message calls).
func (t *Tree) Snapshot(dst []NodeValues, limit int) []NodeValues {
	n := len(t.nodes)
	if limit >= 0 && limit < n {
		n = max(limit, 1) // the root at least
	}
	if cap(dst) < n {
		dst = make([]NodeValues, n, n+n/4)
	}
	dst = dst[:n]
	for i := range n {
		nd := &t.nodes[i]
		dst[i] = NodeValues{Parent: nd.parent, Method: nd.method, Calls: nd.calls, Total: nd.total, Self: nd.self,
			Thrown: nd.thrown, Bubbled: nd.bubbled}
	}
	for _, th := range t.threads {
		if th == nil {
			continue
		}
		for i := range th.stack {
			f := &th.stack[i]
			if f.node == noNode || int(f.node) >= n {
				continue
			}
			open := int64(th.last) - int64(f.start)
			self := open - (f.inner - f.merged)
			if i+1 < len(th.stack) && th.stack[i+1].node != noNode && int(th.stack[i+1].node) < n {
				self -= int64(th.last) - int64(th.stack[i+1].start)
			}
			v := &dst[f.node]
			v.Total += open
			v.Self += self
		}
	}
	root := &dst[Root]
	root.Calls, root.Total, root.Self = 0, 0, 0
	for c := t.nodes[Root].child; c != 0; c = t.nodes[c].next {
		if int(c) >= n {
			continue
		}
		root.Calls += dst[c].Calls
		root.Total += dst[c].Total
	}
	return dst
}

// Last returns the latest timestamp the tree has seen (ms since the run
// started).
func (t *Tree) Last() int32 { return t.last }
