package agent

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// TestAllModesBusy drives the agent through start → suspend → unsuspend →
// pause → unpause → stop, with 1 and 4 data connections, while workers
// record nested calls and spinners keep every core busy, a few times over.
// HQ checks every event: numbers without gaps, each thread's calls nesting
// between data breaks, and no timestamp inside a window in which HQ had
// told the agent not to collect.
//
// Its spinners would slow other packages' timed tests: build.sh runs the
// tests named *Busy apart from the rest.
func TestAllModesBusy(t *testing.T) {
	if testing.Short() {
		t.Skip("drives several runs")
	}
	for _, conns := range []int{1, 4} {
		for round := range 3 {
			t.Run(fmt.Sprintf("conns=%d/round=%d", conns, round), func(t *testing.T) {
				allModes(t, conns)
			})
		}
	}
}

func allModes(t *testing.T, conns int) {
	// HQ keeps no copy of the events (its report is what is checked): a
	// collector's gigabyte of them would make this process's garbage
	// collector, not the agent, hold the heartbeats back.
	h := startHQ(t, func(c *hq.Config) { c.Agent.HeartbeatInterval = 100; c.NewProcessor = nil })
	cfg := testConfig(h.Srv.Addr())
	cfg.DataConnections = conns
	a, run := startAgent(t, h, cfg)

	var stop atomic.Bool
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() { // a spinner: keeps a core busy
			defer wg.Done()
			for n := 0; !stop.Load(); n++ {
				if n%(1<<16) == 0 {
					runtime.Gosched()
				}
			}
		}()
	}
	outer, inner := NewMethod("t/Modes.outer;1;()V"), NewMethod("t/Modes.inner;1;(I)V")
	var calls atomic.Int64
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			SetThreadName(fmt.Sprintf("modes-%d", w))
			for n := 0; !stop.Load(); n++ {
				if n%64 == 63 {
					time.Sleep(200 * time.Microsecond) // a host that does more than call
				}
				f := outer.Enter()
				for i := range 8 {
					g := inner.Enter()
					if i == 3 {
						Mark("step", "3")
					}
					g.Exit()
				}
				f.Exit()
				calls.Add(1)
			}
		}()
	}
	defer func() {
		stop.Store(true)
		// A worker held by a pause waits for the agent to end.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		a.Shutdown(ctx)
		wg.Wait()
	}()

	hold := func() { time.Sleep(150 * time.Millisecond) }
	step := func(what string, cmd func() error, mode bytefrog.Mode) {
		t.Helper()
		if err := cmd(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		waitMode(t, a, mode)
		hold()
	}
	hold()
	step("suspend", run.Suspend, bytefrog.ModeSuspended)
	step("unsuspend", run.Unsuspend, bytefrog.ModeTracing)
	step("pause", run.Pause, bytefrog.ModePaused)
	step("unpause", run.Unpause, bytefrog.ModeTracing)
	if err := run.Stop(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("agent still running 10 s after Stop")
	}
	sess := a.session()
	rep, err := run.Wait(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK || rep.GapCount != 0 || rep.StackFaults != 0 || rep.InWindow != 0 {
		t.Fatalf("run: OK %v (%s); %s; warnings %q", rep.OK, rep.Reason, rep.Checks(), rep.Warnings)
	}
	if rep.Sequenced < 1000 || len(rep.DataBreaks) == 0 {
		t.Fatalf("%d events, data breaks %v; want a busy run with the suspend's break", rep.Sequenced, rep.DataBreaks)
	}
	t.Logf("%d events, %d calls, %d unmatched exits, heartbeats %d (longest gap %v, %d late; sent: longest gap %v, %d late)",
		rep.Sequenced, calls.Load(), rep.UnmatchedExits, rep.Heartbeats, rep.MaxHeartbeatGap, rep.LateHeartbeats,
		time.Duration(sess.hbMaxGap.Load()), sess.hbLate.Load())
	// Every core busy, the shutdown drain included: each heartbeat leaves
	// within 1.5 intervals of the one before.
	if n := sess.hbLate.Load(); n != 0 {
		t.Errorf("%d heartbeats left more than 1.5 intervals after the one before (longest gap %v)",
			n, time.Duration(sess.hbMaxGap.Load()))
	}
}
