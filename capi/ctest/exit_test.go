package ctest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/testhq"
)

// flushDeadline bounds how long an idle thread's events may take to reach
// HQ: the 50 ms flush period plus the agent's flush interval, with a wide
// margin for a loaded machine.
const flushDeadline = 3 * time.Second

// waitThreadEvents waits until HQ released n events of the thread name.
func waitThreadEvents(t *testing.T, h *testHQ, name string, n int) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		if len(h.Collectors()) > 0 {
			if got := len(h.Collector(0).ByThread()[name]); got == n {
				return time.Since(start)
			} else if got > n {
				t.Fatalf("%s: got %d events; want %d", name, got, n)
			}
		}
		if time.Since(start) > flushDeadline {
			t.Fatalf("%s: its %d events did not reach HQ within %v", name, n, flushDeadline)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestThreadExit runs testdata/exit.c: a thread that exits without
// flushing, an idle live thread, and a thread that exits right before
// tadpole_stop all have their events delivered.
func TestThreadExit(t *testing.T) {
	lib := BuildLib(t)
	bin := filepath.Join(t.TempDir(), "exit")
	lib.Compile(t, bin, "testdata/exit.c")
	h := startHQ(t, nil)
	const calls = 100 // a buffer's worth is ~680 calls: these stay buffered
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, fmt.Sprint(calls))
	cmd.Env = h.env()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	expect := func(want string) {
		t.Helper()
		if !lines.Scan() || lines.Text() != want {
			t.Fatalf("got line %q; want %q\nstderr: %s", lines.Text(), want, stderr.String())
		}
	}
	expect("exiter joined")
	t.Logf("exited thread's events at HQ after %v", waitThreadEvents(t, h, "exiter", 2*calls))
	io.WriteString(stdin, "next\n")
	expect("idler started")
	t.Logf("idle thread's events at HQ after %v", waitThreadEvents(t, h, "idler", 2*calls))
	io.WriteString(stdin, "next\n")
	expect("done")
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v\n%s", err, stderr.String())
	}
	reps, cols := h.WaitRuns(t, 1)
	testhq.CheckClean(t, reps[0], cols[0], 3*2*calls)
	threads := cols[0].ByThread()
	for _, name := range []string{"exiter", "idler", "last"} {
		if got := len(threads[name]); got != 2*calls {
			t.Errorf("%s: got %d events; want %d", name, got, 2*calls)
		}
	}
}
