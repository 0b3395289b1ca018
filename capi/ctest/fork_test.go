package ctest

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tadpole-trace/tadpole/internal/testhq"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// TestFork runs testdata/fork.c: the child of a fork is inert (the program
// checks TADPOLE_ECHILD everywhere in it), and the parent's trace is
// complete and clean: every call of the main thread and of the worker that
// recorded across the fork, nothing of the child.
func TestFork(t *testing.T) {
	lib := BuildLib(t)
	bin := filepath.Join(t.TempDir(), "fork")
	lib.Compile(t, bin, "testdata/fork.c")
	h := startHQ(t, nil)
	const calls = 5000
	res := Run(t, h.env(), bin, fmt.Sprint(calls))
	if res.Err != nil {
		t.Fatalf("fork: %v\n%s", res.Err, res.Stderr)
	}
	reps, cols := h.WaitRuns(t, 1)
	testhq.CheckClean(t, reps[0], cols[0], 2*2*calls+2*calls+2)
	threads := cols[0].ByThread()
	if got := keys(threads); !slices.Equal(got, []string{"fork-main", "fork-worker"}) {
		t.Fatalf("got threads %q; want [fork-main fork-worker]", got)
	}
	for name, n := range map[string]int{"fork-main": 2 * calls, "fork-worker": calls} {
		evs := threads[name]
		if len(evs) != 2*n {
			t.Fatalf("%s: got %d events; want %d", name, len(evs), 2*n)
		}
		for i, e := range evs {
			want := bytefrog.MsgMethodEntry
			if i%2 == 1 {
				want = bytefrog.MsgMethodExit
			}
			if e.Type != want {
				t.Fatalf("%s: event %d is %v; want %v", name, i, e.Type, want)
			}
		}
	}
	var marks []string
	for _, e := range cols[0].Events() {
		if e.Type == bytefrog.MsgMarker {
			marks = append(marks, e.Key+"="+e.Value)
		}
	}
	if want := []string{"forked=parent", "child=exited"}; !slices.Equal(marks, want) {
		t.Errorf("got markers %q; want %q", marks, want)
	}
}
