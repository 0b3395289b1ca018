package jtest

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/testpeers"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// TestModesBusy: a JVM logging through JUL is driven by HQ through suspend
// → unsuspend → pause → unpause → stop, with 1 and 4 data connections,
// while spinning processes keep every core busy. HQ finds the sequence
// gap-free and no record stamped inside the suspend or the pause, and the
// JVM runs its loop to the end.
func TestModesBusy(t *testing.T) {
	e := Build(t)
	for _, conns := range []int{1, 4} {
		t.Run(fmt.Sprintf("conns=%d", conns), func(t *testing.T) {
			testpeers.Spin(t, runtime.NumCPU())
			h := startHQ(t)
			ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
			defer cancel()
			env := h.env(fmt.Sprintf("TADPOLE_DATA_CONNECTIONS=%d", conns))
			j := startReady(ctx, t, e.Java(ctx, env, true, "", "logloop", "5000"), "JApp looping tracing=true")
			run, err := h.Srv.NextRun(ctx)
			if err != nil {
				t.Fatal(err)
			}
			hold := func() { time.Sleep(250 * time.Millisecond) }
			hold()
			for _, step := range []struct {
				cmd  func() error
				mode bytefrog.Mode
			}{
				{run.Suspend, bytefrog.ModeSuspended}, {run.Unsuspend, bytefrog.ModeTracing},
				{run.Pause, bytefrog.ModePaused}, {run.Unpause, bytefrog.ModeTracing},
			} {
				if err := step.cmd(); err != nil {
					t.Fatal(err)
				}
				if err := run.WaitMode(ctx, step.mode); err != nil {
					t.Fatalf("waiting for %v: %v", step.mode, err)
				}
				hold()
			}
			if err := run.Stop(); err != nil {
				t.Fatal(err)
			}
			rep, err := run.Wait(ctx)
			if err != nil {
				t.Fatal(err)
			}
			out := j.wait(t)
			if !strings.Contains(out, "JApp done logloop") {
				t.Errorf("stdout %q; want the loop run to its end", out)
			}
			if !rep.OK || rep.InWindow != 0 || rep.GapCount != 0 || rep.Markers == 0 {
				t.Fatalf("run: OK %v (%s); %s; %d records; warnings %q", rep.OK, rep.Reason, rep.Checks(), rep.Markers, rep.Warnings)
			}
			t.Logf("%d records, %d data breaks; heartbeats %d, longest gap %v, %d late",
				rep.Markers, len(rep.DataBreaks), rep.Heartbeats, rep.MaxHeartbeatGap, rep.LateHeartbeats)
		})
	}
}
