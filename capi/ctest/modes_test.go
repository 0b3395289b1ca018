package ctest

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/internal/testhq"
	"github.com/tadpole-trace/tadpole/internal/testpeers"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// Durations of the pause and the suspend of TestPauseSuspend.
const (
	pauseFor   = 400 * time.Millisecond
	suspendFor = 300 * time.Millisecond
)

// awaitMode waits until the agent's heartbeats report mode m.
func awaitMode(t *testing.T, run *hq.Run, m bytefrog.Mode) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for run.Mode() != m {
		if time.Now().After(deadline) {
			t.Fatalf("agent mode %v; want %v", run.Mode(), m)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestPauseSuspend runs testdata/modes.c while HQ pauses, then suspends
// tracing: recording calls block during the pause, return without recording
// during the suspend, and the trace stays gap-free with one data break and
// every thread's name.
func TestPauseSuspend(t *testing.T) { pauseSuspend(t, 0) }

// TestPauseSuspendBusy is TestPauseSuspend with 1 and 4 data connections
// while spinning processes keep every core busy, a few times over: HQ
// finds no event out of sequence, out of call nesting or stamped inside
// the pause or the suspend.
func TestPauseSuspendBusy(t *testing.T) {
	for _, conns := range []int{1, 4} {
		for round := range 2 {
			t.Run(fmt.Sprintf("conns=%d/round=%d", conns, round), func(t *testing.T) {
				testpeers.Spin(t, runtime.NumCPU())
				pauseSuspend(t, conns)
			})
		}
	}
}

// pauseSuspend runs testdata/modes.c through a pause and a suspend; conns,
// when not 0, is the number of data connections.
func pauseSuspend(t *testing.T, conns int) {
	lib := BuildLib(t)
	bin := filepath.Join(t.TempDir(), "modes")
	lib.Compile(t, bin, "testdata/modes.c")
	h := startHQ(t, nil)
	const threads = 4
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, fmt.Sprint(threads))
	var extra []string
	if conns > 0 {
		extra = append(extra, fmt.Sprintf("TADPOLE_DATA_CONNECTIONS=%d", conns))
	}
	// At info level the agent says when a heartbeat of its own left more
	// than 1.5 intervals after the one before.
	cmd.Env = h.env(append(extra, "TADPOLE_LOG_LEVEL=info")...)
	stdin, _ := cmd.StdinPipe()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			t.Logf("modes stderr:\n%s", stderr.String())
		}
	}()
	run, err := h.Srv.NextRun(ctx)
	if err != nil {
		stdin.Close()
		cmd.Wait()
		t.Fatal(err)
	}
	step := func(what string, cmd func() error, mode bytefrog.Mode, hold time.Duration) {
		t.Helper()
		if err := cmd(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		awaitMode(t, run, mode)
		time.Sleep(hold)
	}
	awaitMode(t, run, bytefrog.ModeTracing)
	time.Sleep(100 * time.Millisecond)
	step("pause", run.Pause, bytefrog.ModePaused, pauseFor)
	step("unpause", run.Unpause, bytefrog.ModeTracing, 100*time.Millisecond)
	step("suspend", run.Suspend, bytefrog.ModeSuspended, suspendFor)
	step("unsuspend", run.Unsuspend, bytefrog.ModeTracing, 100*time.Millisecond)
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("modes: %v", err)
	}
	rep, err := run.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cols := []*testhq.Collector{h.Collector(0)}
	<-cols[0].Done()
	testhq.CheckClean(t, rep, cols[0], -1)
	t.Logf("%d events, %d unmatched exits; heartbeats %d, longest gap %v, %d late",
		rep.Sequenced, rep.UnmatchedExits, rep.Heartbeats, rep.MaxHeartbeatGap, rep.LateHeartbeats)
	// HQ shares the busy cores and may read a heartbeat late; the agent
	// must have sent each on time, the exit's drain included.
	if i := strings.Index(stderr.String(), "heartbeat sent"); i >= 0 {
		t.Errorf("the agent sent a heartbeat late: %s", strings.SplitN(stderr.String()[i:], "\n", 2)[0])
	}
	if got := len(cols[0].Breaks()); got != 1 {
		t.Errorf("got %d data breaks; want 1", got)
	}
	for i := range threads {
		var calls, untraced, stall int
		line := fmt.Sprintf("thread %d ", i)
		for _, l := range strings.Split(stdout.String(), "\n") {
			if strings.HasPrefix(l, line) {
				fmt.Sscanf(l[len(line):], "calls %d untraced %d max_stall_ms %d", &calls, &untraced, &stall)
			}
		}
		t.Logf("thread %d: %d calls, %d untraced, longest call %d ms", i, calls, untraced, stall)
		if time.Duration(stall)*time.Millisecond < pauseFor*3/4 {
			t.Errorf("thread %d: longest call %d ms; want one blocked by the %v pause", i, stall, pauseFor)
		}
		if untraced == 0 {
			t.Errorf("thread %d: no call found tracing off during the suspend", i)
		}
	}
	threadsSeen := cols[0].ByThread()
	for i := range threads {
		name := fmt.Sprintf("mode-%d", i)
		if len(threadsSeen[name]) == 0 {
			t.Errorf("no events under %q; names %q", name, keys(threadsSeen))
		}
	}
	if len(threadsSeen) != threads {
		t.Errorf("got threads %q; want %d named mode-N", keys(threadsSeen), threads)
	}
}
