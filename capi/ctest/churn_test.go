package ctest

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tadpole-trace/tadpole/internal/testhq"
)

// TestThreadChurn runs testdata/churn.c: many short-lived threads, each
// exiting with its events still buffered. Every event arrives, each thread
// under its default name (pthread name, else "thread-<tid>"; "main"), and
// the memory of exited threads is freed.
func TestThreadChurn(t *testing.T) {
	lib := BuildLib(t)
	bin := filepath.Join(t.TempDir(), "churn")
	lib.Compile(t, bin, "testdata/churn.c")
	h := startHQ(t, nil)
	const threads, calls = 4000, 10
	res := Run(t, h.env(), bin, fmt.Sprint(threads), fmt.Sprint(calls))
	if res.Err != nil {
		t.Fatalf("churn: %v\n%s", res.Err, res.Stderr)
	}
	var quarter, end int
	tids := make(map[int]int)
	for _, l := range strings.Split(res.Stdout, "\n") {
		var i, tid int
		switch {
		case strings.HasPrefix(l, "rss-quarter "):
			fmt.Sscanf(l, "rss-quarter %d", &quarter)
		case strings.HasPrefix(l, "rss-end "):
			fmt.Sscanf(l, "rss-end %d", &end)
		default:
			if n, _ := fmt.Sscanf(l, "tid %d %d", &i, &tid); n == 2 {
				tids[i] = tid
			}
		}
	}
	// Each thread's state holds a 128 KiB buffer: keeping the 3000 threads
	// after the first quarter would grow the process by about 280 MiB, and
	// waiting for the 50 ms timer to hand exited threads over (hundreds of
	// them) grew it by 10 MiB; a pool of 64 retired states is 8 MiB. The
	// bound leaves room for the Go heap's own swings (batches in flight are
	// capped at 1 MiB) while still catching per-thread leaks.
	const maxGrowthKiB = 16 << 10
	t.Logf("resident memory: %d KiB after %d threads, %d KiB after %d", quarter, threads/4, end, threads)
	if quarter == 0 || end-quarter > maxGrowthKiB {
		t.Errorf("resident memory grew from %d KiB to %d KiB; want at most %d KiB more", quarter, end, maxGrowthKiB)
	}
	reps, cols := h.WaitRuns(t, 1)
	testhq.CheckClean(t, reps[0], cols[0], threads*2*calls+2+1)
	names := cols[0].ByThread()
	if got := len(names["main"]); got != 2 {
		t.Errorf("main: got %d events; want 2", got)
	}
	for i := range threads {
		name := fmt.Sprintf("thread-%d", tids[i])
		if i%2 == 1 {
			name = fmt.Sprintf("churn-%d", i)
		}
		if got := len(names[name]); got != 2*calls {
			t.Fatalf("thread %d: got %d events under %q; want %d", i, got, name, 2*calls)
		}
	}
}
