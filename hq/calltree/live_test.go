package calltree_test

import (
	"testing"

	"github.com/tadpole-trace/tadpole/hq/calltree"
)

// TestSnapshot: a snapshot of a tree holds its nodes' counters, with the
// calls still open counted up to their thread's last event (self time
// less their open callees'); once the run is finished it equals Node for
// every node; a limit keeps the first nodes only.
func TestSnapshot(t *testing.T) {
	tr := newTree(t, nil)
	f := &feeder{t: tr}
	// Thread 1: A(1) calls B(2) for 3 ms, then C(3) from 4, still open at 10.
	f.entry(1, 1, 0)
	f.entry(1, 2, 1)
	f.exit(1, 2, 4)
	f.entry(1, 3, 4)
	f.entry(2, 1, 5) // thread 2: A open since 5, its last event at 9
	f.entry(2, 2, 9)
	f.exit(2, 2, 9)
	f.entry(1, 2, 10) // C calls B at 10: thread 1's last event
	s := tr.Snapshot(nil, -1)
	if len(s) != tr.Len() {
		t.Fatalf("%d values for %d nodes", len(s), tr.Len())
	}
	byPath := map[[3]int32]calltree.NodeValues{}
	for i := range s {
		var k [3]int32
		p := tr.Path(int32(i))
		copy(k[:], p)
		byPath[k] = s[i]
	}
	for _, c := range []struct {
		path               [3]int32
		calls, total, self int64
	}{
		{[3]int32{1}, 2, 10 + 4, 10 - 3 - 6 + 4 - 0}, // thread 1: 10 ms, B 3, C 6 open; thread 2: 4 ms, B 0
		{[3]int32{1, 3}, 1, 6, 6},                    // C open since 4; its callee B opened at 10 (0 ms)
		{[3]int32{1, 3, 2}, 1, 0, 0},                 // open, 0 ms so far
		{[3]int32{1, 2}, 2, 3, 3},                    // closed calls only
	} {
		v, ok := byPath[c.path]
		if !ok || v.Calls != c.calls || v.Total != c.total || v.Self != c.self {
			t.Errorf("path %v: %+v (found %v), want calls %d total %d self %d", c.path, v, ok, c.calls, c.total, c.self)
		}
	}
	if s[calltree.Root].Total != 14 || s[calltree.Root].Calls != 2 {
		t.Errorf("root %+v", s[calltree.Root])
	}
	if tr.Last() != 10 {
		t.Errorf("Last %d", tr.Last())
	}
	// Nothing changed in the tree: the same snapshot again.
	if again := tr.Snapshot(s[:0], -1); again[1] != byPath[[3]int32{1}] {
		t.Errorf("second snapshot %+v", again[1])
	}
	if lim := tr.Snapshot(nil, 2); len(lim) != 2 {
		t.Errorf("limit 2: %d values", len(lim))
	}
	if lim := tr.Snapshot(nil, 0); len(lim) != 1 {
		t.Errorf("limit 0: %d values (the root at least)", len(lim))
	}

	tr.Finish(nil)
	s = tr.Snapshot(s, -1)
	for i := range s {
		n := tr.Node(int32(i))
		if v := s[i]; v.Calls != n.Calls || v.Total != n.Total || (i != calltree.Root && v.Self != n.Self) ||
			v.Parent != n.Parent || v.Method != n.Method {
			t.Errorf("node %d after Finish: snapshot %+v, Node %+v", i, v, n)
		}
	}
}
