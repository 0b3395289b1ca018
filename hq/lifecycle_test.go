package hq_test

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// recorder is a Processor that logs what it gets.
type recorder struct {
	mu       sync.Mutex
	seqs     []int32       // sequenced events, in delivery order
	breaks   map[int32]int // data break → number of events delivered before it
	types    []bytefrog.MsgType
	finished int
}

func (p *recorder) Message(m *bytefrog.Msg) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.types = append(p.types, m.Type)
	if m.Type.Sequenced() {
		p.seqs = append(p.seqs, m.Seq)
	}
}

func (p *recorder) DataBreak(seq int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.breaks == nil {
		p.breaks = map[int32]int{}
	}
	p.breaks[seq] = len(p.seqs)
}

func (p *recorder) Finish(r *hq.Report) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finished++
	r.Warnings = append(r.Warnings, "recorder finished")
}

func withRecorder(p *recorder) func(*hq.Config) {
	return func(c *hq.Config) { c.NewProcessor = func(*hq.Run) hq.Processor { return p } }
}

// pairs appends n entry/exit pairs on thread 1.
func pairs(g *hqtest.Gen, n int) []byte {
	for i := range n {
		g.Entry(1, int32(i%7))
		g.Exit(1, int32(i%7), 10)
	}
	return g.Take()
}

func commands(rep *hq.Report) []bytefrog.MsgType {
	var ts []bytefrog.MsgType
	for _, c := range rep.Commands {
		ts = append(ts, c.Type)
	}
	return ts
}

func checkCommands(t *testing.T, rep *hq.Report, want ...bytefrog.MsgType) {
	t.Helper()
	if got := commands(rep); !reflect.DeepEqual(got, want) {
		t.Errorf("commands %v; want %v", got, want)
	}
}

func checkOK(t *testing.T, rep *hq.Report, events int) {
	t.Helper()
	if !rep.OK || rep.Sequenced != int64(events) {
		t.Fatalf("%s, %d events; want completed, %d\n%s", rep.Result(), rep.Sequenced, events, rep)
	}
}

func TestStartTraceEnd(t *testing.T) {
	srv := start(t, nil)
	a := dial(t, srv, bytefrog.Version1)
	if a.Config.RunID != 0 || a.Config.HeartbeatInterval != 100 {
		t.Errorf("config runId %d, heartbeat %d; want 0, 100", a.Config.RunID, a.Config.HeartbeatInterval)
	}
	expect(t, a, bytefrog.MsgStart)
	run := nextRun(t, srv)
	must(t, a.Heartbeat(bytefrog.ModeTracing, 3))
	must(t, run.WaitMode(ctxT(t), bytefrog.ModeTracing))
	chunks, n := traffic(20000, 50, 3)
	i, err := a.OpenData()
	must(t, err)
	for _, c := range chunks {
		must(t, a.Write(i, c))
	}
	must(t, a.Class(bytefrog.MsgClassTransformed, "com/example/C1"))
	must(t, a.Class(bytefrog.MsgClassTransformFailed, "com/example/Bad"))
	must(t, a.Shutdown(false))
	rep := wait(t, run)
	checkOK(t, rep, n)
	checkCommands(t, rep, bytefrog.MsgConfiguration, bytefrog.MsgStart, bytefrog.MsgStop)
	if got, want := rep.TopMethods[0].Signature, hqtest.MethodName(0); got != want {
		t.Errorf("top method %q; want %q", got, want)
	}
	if got := rep.ThreadNames[2]; got != hqtest.ThreadName(2) {
		t.Errorf("thread 2 named %q; want %q", got, hqtest.ThreadName(2))
	}
	if rep.Classes.Transformed != 1 || rep.Classes.Failed != 1 || rep.Classes.FailedNames[0] != "com/example/Bad" {
		t.Errorf("classes %+v; want 1 transformed, 1 failed (com/example/Bad)", rep.Classes)
	}
	if rep.LastMode != bytefrog.ModeShutdown || rep.Heartbeats != 2 {
		t.Errorf("last mode %v, %d heartbeats; want Shutdown, 2", rep.LastMode, rep.Heartbeats)
	}
	if run.Health() != hq.HealthEnded {
		t.Errorf("health %v after the end; want ended", run.Health())
	}
	checkReplay(t, rep)
}

func TestStartSuspended(t *testing.T) {
	srv := start(t, func(c *hq.Config) { c.StartSuspended = true })
	a := dial(t, srv, bytefrog.Version2)
	expect(t, a, bytefrog.MsgSuspend, bytefrog.MsgStart)
	run := nextRun(t, srv)
	if err := run.Suspend(); !errors.Is(err, hq.ErrTransition) {
		t.Errorf("Suspend while suspended: %v; want ErrTransition", err)
	}
	if err := run.Pause(); !errors.Is(err, hq.ErrTransition) {
		t.Errorf("Pause while suspended: %v; want ErrTransition", err)
	}
	must(t, a.Heartbeat(bytefrog.ModeSuspended, 0))
	must(t, run.WaitMode(ctxT(t), bytefrog.ModeSuspended))
	must(t, run.Unsuspend())
	expect(t, a, bytefrog.MsgUnsuspend)
	must(t, a.Heartbeat(bytefrog.ModeTracing, 0))
	i, err := a.OpenData()
	must(t, err)
	g := hqtest.NewGen(bytefrog.FlavorBytefrog)
	must(t, a.Write(i, pairs(g, 100)))
	must(t, a.Shutdown(false))
	rep := wait(t, run)
	checkOK(t, rep, 200)
	checkCommands(t, rep, bytefrog.MsgConfiguration, bytefrog.MsgSuspend, bytefrog.MsgStart, bytefrog.MsgUnsuspend,
		bytefrog.MsgStop)
	checkReplay(t, rep)
}

func TestManualStart(t *testing.T) {
	srv := start(t, func(c *hq.Config) { c.AutoStart = false })
	a := dial(t, srv, bytefrog.Version1)
	run := nextRun(t, srv)
	must(t, a.Heartbeat(bytefrog.ModeInitializing, 0))
	for _, tc := range []struct {
		op   func() error
		name string
	}{{run.Pause, "Pause"}, {run.Unpause, "Unpause"}, {run.Unsuspend, "Unsuspend"}} {
		if err := tc.op(); !errors.Is(err, hq.ErrTransition) {
			t.Errorf("%s before Start: %v; want ErrTransition", tc.name, err)
		}
	}
	must(t, run.Suspend()) // start suspended
	must(t, run.Unsuspend())
	must(t, run.Start())
	if err := run.Start(); !errors.Is(err, hq.ErrTransition) {
		t.Errorf("second Start: %v; want ErrTransition", err)
	}
	expect(t, a, bytefrog.MsgSuspend, bytefrog.MsgUnsuspend, bytefrog.MsgStart)
	must(t, run.Stop())
	expect(t, a, bytefrog.MsgStop)
	if err := run.Stop(); !errors.Is(err, hq.ErrTransition) {
		t.Errorf("second Stop: %v; want ErrTransition", err)
	}
	must(t, a.Shutdown(true))
	rep := wait(t, run)
	checkOK(t, rep, 0)
	// The 'X' heartbeat after HQ's Stop does not make HQ send another.
	checkCommands(t, rep, bytefrog.MsgConfiguration, bytefrog.MsgSuspend, bytefrog.MsgUnsuspend, bytefrog.MsgStart,
		bytefrog.MsgStop)
	if err := run.Pause(); !errors.Is(err, hq.ErrRunEnded) {
		t.Errorf("Pause after the end: %v; want ErrRunEnded", err)
	}
	checkReplay(t, rep)
}

func TestPauseUnpause(t *testing.T) {
	srv := start(t, nil)
	a, run, i := started(t, srv)
	g := hqtest.NewGen(bytefrog.FlavorBytefrog)
	must(t, a.Write(i, pairs(g, 10)))
	must(t, run.Pause())
	if err := run.Pause(); !errors.Is(err, hq.ErrTransition) {
		t.Errorf("Pause while paused: %v; want ErrTransition", err)
	}
	if err := run.Suspend(); !errors.Is(err, hq.ErrTransition) {
		t.Errorf("Suspend while paused: %v; want ErrTransition", err)
	}
	expect(t, a, bytefrog.MsgPause)
	must(t, a.Heartbeat(bytefrog.ModePaused, 0))
	must(t, run.WaitMode(ctxT(t), bytefrog.ModePaused))
	if run.Mode() != bytefrog.ModePaused {
		t.Errorf("mode %v; want Paused", run.Mode())
	}
	must(t, run.Unpause())
	if err := run.Unpause(); !errors.Is(err, hq.ErrTransition) {
		t.Errorf("Unpause while tracing: %v; want ErrTransition", err)
	}
	expect(t, a, bytefrog.MsgUnpause)
	must(t, a.Heartbeat(bytefrog.ModeTracing, 0))
	must(t, a.Write(i, pairs(g, 10)))
	must(t, a.Shutdown(false))
	rep := wait(t, run)
	checkOK(t, rep, 40)
	checkCommands(t, rep, bytefrog.MsgConfiguration, bytefrog.MsgStart, bytefrog.MsgPause, bytefrog.MsgUnpause,
		bytefrog.MsgStop)
	if len(rep.DataBreaks) != 0 {
		t.Errorf("data breaks %v; want none (Pause produces no break)", rep.DataBreaks)
	}
	checkReplay(t, rep)
}

// TestSuspendDataBreak checks that the break is delivered right before the
// event carrying its number, whichever connection is ahead.
func TestSuspendDataBreak(t *testing.T) {
	for _, early := range []bool{true, false} {
		t.Run(fmt.Sprintf("breakFirst=%v", early), func(t *testing.T) {
			rec := &recorder{}
			srv := start(t, withRecorder(rec))
			a, run, i := started(t, srv)
			g := hqtest.NewGen(bytefrog.FlavorBytefrog)
			first := pairs(g, 50) // seq 0..99
			if !early {
				must(t, a.Write(i, first))
				waitEvents(t, run, 100)
			}
			must(t, run.Suspend())
			expect(t, a, bytefrog.MsgSuspend)
			must(t, a.DataBreak(g.Seq))
			must(t, a.Heartbeat(bytefrog.ModeSuspended, 0))
			must(t, run.WaitMode(ctxT(t), bytefrog.ModeSuspended))
			if early {
				must(t, a.Write(i, first))
			}
			must(t, run.Unsuspend())
			expect(t, a, bytefrog.MsgUnsuspend)
			must(t, a.Write(i, pairs(g, 50))) // seq 100..199
			must(t, a.Shutdown(false))
			rep := wait(t, run)
			checkOK(t, rep, 200)
			if !reflect.DeepEqual(rep.DataBreaks, []int32{100}) || len(rep.LateBreaks) != 0 {
				t.Errorf("breaks %v, late %v; want [100], none", rep.DataBreaks, rep.LateBreaks)
			}
			rec.mu.Lock()
			at, ok := rec.breaks[100]
			rec.mu.Unlock()
			if !ok || at != 100 {
				t.Errorf("break delivered after %d events (%v); want right before the 101st", at, ok)
			}
			checkReplay(t, rep, &recorder{})
		})
	}
}

// waitEvents waits until the run has released n events.
func waitEvents(t *testing.T, run *hq.Run, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for run.Stats().Events < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d events released; want %d", run.Stats().Events, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestStopFromHQ(t *testing.T) {
	srv := start(t, nil)
	a, run, i := started(t, srv)
	g := hqtest.NewGen(bytefrog.FlavorBytefrog)
	must(t, a.Write(i, pairs(g, 5)))
	must(t, run.Stop())
	expect(t, a, bytefrog.MsgStop)
	// After HQ's Stop, closing without 'X' is no failure.
	a.Close()
	rep := wait(t, run)
	checkOK(t, rep, 10)
	checkCommands(t, rep, bytefrog.MsgConfiguration, bytefrog.MsgStart, bytefrog.MsgStop)
	checkReplay(t, rep)
}

func TestSeveralDataConnections(t *testing.T) {
	rec := &recorder{}
	srv := start(t, withRecorder(rec))
	a := dial(t, srv, bytefrog.Version1)
	expect(t, a, bytefrog.MsgStart)
	run := nextRun(t, srv)
	const k = 4
	chunks, n := traffic(50000, 100, 5)
	per := hqtest.Spread(chunks, k)
	for range k {
		_, err := a.OpenData()
		must(t, err)
	}
	var wg sync.WaitGroup
	for i := range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Small writes make the connections interleave.
			for b := per[i]; len(b) > 0; {
				m := min(len(b), 3000+i*500)
				if err := a.Write(i, b[:m]); err != nil {
					t.Error(err)
					return
				}
				b = b[m:]
			}
		}()
	}
	wg.Wait()
	must(t, a.Shutdown(false))
	rep := wait(t, run)
	checkOK(t, rep, n)
	if rep.DataConns != k || rep.OutOfOrder != 0 {
		t.Errorf("%d data connections, %d out of order; want %d, 0", rep.DataConns, rep.OutOfOrder, k)
	}
	rec.mu.Lock()
	for i, s := range rec.seqs {
		if s != int32(i) {
			t.Fatalf("event %d delivered with seq %d", i, s)
		}
	}
	if rec.finished != 1 {
		t.Errorf("Finish called %d times; want 1", rec.finished)
	}
	rec.mu.Unlock()
	again := &recorder{}
	checkReplay(t, rep, again)
	if !reflect.DeepEqual(again.types, rec.types) {
		t.Errorf("replay gave processors %d messages; want the same %d as live", len(again.types), len(rec.types))
	}
}

// TestTwoAgents runs two agents at once: distinct run ids, both complete.
func TestTwoAgents(t *testing.T) {
	srv := start(t, nil)
	chunks, n := traffic(30000, 40, 2)
	reports := make([]*hq.Report, 2)
	var wg sync.WaitGroup
	var agents []*hqtest.Agent
	var runs []*hq.Run
	for range 2 {
		agents = append(agents, dial(t, srv, bytefrog.Version1))
		runs = append(runs, nextRun(t, srv))
		if got, want := runs[len(runs)-1].ID(), agents[len(agents)-1].Config.RunID; got != want {
			t.Fatalf("NextRun gave run %d to the agent with id %d", got, want)
		}
	}
	for j, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := a.Expect(bytefrog.MsgStart); err != nil {
				t.Error(err)
				return
			}
			i, err := a.OpenData()
			if err != nil {
				t.Error(err)
				return
			}
			for _, c := range chunks {
				if err := a.Write(i, c); err != nil {
					t.Error(err)
					return
				}
			}
			if err := a.Shutdown(false); err != nil {
				t.Error(err)
			}
			reports[j], _ = runs[j].Wait(ctxT(t))
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if agents[0].Config.RunID == agents[1].Config.RunID {
		t.Errorf("both agents got run id %d", agents[0].Config.RunID)
	}
	for _, rep := range reports {
		checkOK(t, rep, n)
		checkReplay(t, rep)
	}
	// Ids go round-robin: the next run gets 2, not a freed 0.
	a := dial(t, srv, bytefrog.Version1)
	if a.Config.RunID != 2 {
		t.Errorf("third run id %d; want 2", a.Config.RunID)
	}
}

func TestProjectHello(t *testing.T) {
	srv := start(t, func(c *hq.Config) { c.Flavor = bytefrog.FlavorCodePulse })
	a, err := hqtest.DialProject(srv.Addr(), bytefrog.Version4, 42, bytefrog.FlavorCodePulse)
	must(t, err)
	t.Cleanup(a.Close)
	expect(t, a, bytefrog.MsgStart)
	run := nextRun(t, srv)
	i, err := a.OpenData()
	must(t, err)
	g := hqtest.NewGen(bytefrog.FlavorCodePulse)
	must(t, a.Write(i, pairs(g, 20)))
	must(t, a.Shutdown(false))
	rep := wait(t, run)
	checkOK(t, rep, 40)
	if !rep.HasProjectID || rep.ProjectID != 42 || rep.Version != 4 || rep.Flavor != bytefrog.FlavorCodePulse {
		t.Errorf("project %v %d, version %d, flavor %v; want 42, 4, codepulse", rep.HasProjectID, rep.ProjectID,
			rep.Version, rep.Flavor)
	}
	checkReplay(t, rep)
}

func TestScript(t *testing.T) {
	srv := start(t, func(c *hq.Config) {
		c.Script = "wait 20ms; unpause; pause; await P; unpause\nsuspend; wait 10ms; unsuspend; stop"
	})
	a := dial(t, srv, bytefrog.Version1)
	run := nextRun(t, srv)
	expect(t, a, bytefrog.MsgStart, bytefrog.MsgPause)
	must(t, a.Heartbeat(bytefrog.ModePaused, 0))
	expect(t, a, bytefrog.MsgUnpause, bytefrog.MsgSuspend, bytefrog.MsgUnsuspend, bytefrog.MsgStop)
	must(t, a.Shutdown(true))
	rep := wait(t, run)
	checkOK(t, rep, 0)
	found := false
	for _, w := range rep.Warnings {
		found = found || w == "script: unpause: hq: invalid lifecycle transition: run 0: bytefrog: command not allowed in this mode: Unpause while Tracing"
	}
	if !found {
		t.Errorf("warnings %q; want the refused unpause", rep.Warnings)
	}
	checkReplay(t, rep)
}

func TestParseScript(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want string
		ok   bool
	}{
		{"wait 200ms; pause; wait 1s; unpause; suspend; wait 500ms; unsuspend; wait 2s; stop",
			"[wait 200ms pause wait 1s unpause suspend wait 500ms unsuspend wait 2s stop]", true},
		{" start ;\n\n await tracing; AWAIT x ", "[start await Tracing await ShuttingDown]", true},
		{"", "[]", true},
		{"wait", "", false},
		{"wait -1s", "", false},
		{"jump", "", false},
		{"await Q", "", false},
		{"pause now", "", false},
	} {
		steps, err := hq.ParseScript(tc.src)
		if (err == nil) != tc.ok {
			t.Errorf("ParseScript(%q) error %v; want ok %v", tc.src, err, tc.ok)
			continue
		}
		if err != nil {
			if !errors.Is(err, hq.ErrScript) {
				t.Errorf("ParseScript(%q) error %v; want ErrScript", tc.src, err)
			}
			continue
		}
		if got := fmt.Sprint(steps); got != tc.want {
			t.Errorf("ParseScript(%q) got %s; want %s", tc.src, got, tc.want)
		}
	}
}
