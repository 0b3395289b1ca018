package agent

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/internal/testhq"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

func startHQ(t testing.TB, tweak func(*hq.Config)) *testhq.HQ { return testhq.Start(t, tweak) }

// marks returns the markers HQ released, as "key=value", in order.
func marks(c *testhq.Collector) []string {
	var out []string
	for _, e := range c.Events() {
		if e.Type == bytefrog.MsgMarker {
			out = append(out, e.Key+"="+e.Value)
		}
	}
	return out
}

func testConfig(addr string) Config {
	c := DefaultConfig()
	c.HQ = addr
	c.ConnectTimeout = 2 * time.Second
	c.StartTimeout = 5 * time.Second
	c.FlushInterval = 5 * time.Millisecond
	c.Log = "none"
	c.LTTng = false
	return c
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// startAgent starts an agent against h and returns it with its HQ run.
func startAgent(t testing.TB, h *testhq.HQ, cfg Config) (*Agent, *hq.Run) {
	t.Helper()
	type res struct {
		a   *Agent
		err error
	}
	ch := make(chan res, 1)
	go func() {
		a, err := Start(ctxT(t), cfg)
		ch <- res{a, err}
	}()
	run, err := h.Srv.NextRun(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r.a.Shutdown(ctx)
	})
	return r.a, run
}

// finish shuts the agent down and returns HQ's report of the run.
func finish(t testing.TB, a *Agent, run *hq.Run) *hq.Report {
	t.Helper()
	if err := a.Shutdown(ctxT(t)); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	rep, err := run.Wait(ctxT(t))
	if err != nil {
		t.Fatalf("run.Wait: %v", err)
	}
	return rep
}

// TestHQAbsent: with hq_retry=0 (the seed's blocking start) Start tries
// for the connect timeout, then fails; recording calls are no-ops.
func TestHQAbsent(t *testing.T) {
	cfg := testConfig("127.0.0.1:1")
	cfg.ConnectTimeout = 300 * time.Millisecond
	cfg.HQRetry = 0
	start := time.Now()
	a, err := Start(context.Background(), cfg)
	if a != nil || err == nil {
		t.Fatalf("Start against no HQ = %v, %v; want an error", a, err)
	}
	if !strings.Contains(err.Error(), "HQ not reachable") {
		t.Errorf("error %q does not say HQ is not reachable", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Start took %v with a 300ms connect timeout", d)
	}
	// Recording calls are no-ops.
	m := NewMethod("t.absent")
	m.Enter().Exit()
	Mark("k", "v")
}

// TestHQLate: an HQ that refuses at start holds Start at most 50 ms; the
// agent runs untraced, tries again every hq_retry, and traces once HQ
// listens and starts it.
func TestHQLate(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // refused until HQ listens there
	cfg := testConfig(addr)
	clk := newFakeClock()
	cfg.Clock = clk
	cfg.HQRetry = time.Hour // by clk: the attempt comes when the test says
	t0 := time.Now()
	a, err := Start(ctxT(t), cfg)
	took := time.Since(t0)
	if err != nil {
		t.Fatalf("Start with a refusing HQ: %v; want an agent trying in the background", err)
	}
	defer a.Shutdown(context.Background())
	t.Logf("Start returned in %v", took)
	if took > firstDial+50*time.Millisecond {
		t.Errorf("Start took %v with HQ refusing; want about %v at most", took, firstDial)
	}
	if a.Mode() != bytefrog.ModeInitializing {
		t.Errorf("mode %v while HQ is away", a.Mode())
	}
	m := NewMethod("t/Late.call;1;()V")
	m.Enter().Exit() // untraced: no HQ yet
	clk.waitTimers(t, 1)
	clk.Advance(time.Hour) // an attempt while HQ still refuses
	clk.waitTimers(t, 1)   // the next one is due
	traceOnceHQListens(t, a, clk, m, addr)
}

// traceOnceHQListens starts HQ on listen for an agent trying to reach it
// every hour of clk, lets the next attempt through, and checks that ten
// calls of m come out clean.
func traceOnceHQListens(t *testing.T, a *Agent, clk *fakeClock, m *Method, listen string) {
	t.Helper()
	h := testhq.Start(t, func(c *hq.Config) { c.Listen = listen })
	clk.Advance(time.Hour)
	run, err := h.Srv.NextRun(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	waitMode(t, a, bytefrog.ModeTracing)
	for range 10 {
		m.Enter().Exit()
	}
	testhq.CheckClean(t, finish(t, a, run), h.Collector(0), 20)
}

// TestHQLateShutdown: Shutdown of an agent still trying to reach HQ ends
// the attempts at once.
func TestHQLateShutdown(t *testing.T) {
	cfg := testConfig("127.0.0.1:1")
	clk := newFakeClock()
	cfg.Clock = clk
	cfg.HQRetry = time.Minute
	a, err := Start(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // two attempts in the background
		clk.waitTimers(t, 1)
		clk.Advance(time.Minute)
	}
	clk.waitTimers(t, 1)
	t0 := time.Now()
	if err := a.Shutdown(ctxT(t)); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if d := time.Since(t0); d > time.Second {
		t.Errorf("Shutdown took %v", d)
	}
	select {
	case <-a.Done():
	default:
		t.Error("Done still open after Shutdown")
	}
}

func TestTraceAndShutdown(t *testing.T) {
	h := startHQ(t, nil)
	a, run := startAgent(t, h, testConfig(h.Srv.Addr()))
	m := NewMethod("t/T.trace;1;()V")
	for i := 0; i < 1000; i++ {
		m.Enter().Exit()
	}
	Mark("k", "v")
	rep := finish(t, a, run)
	c := h.Collector(0)
	testhq.CheckClean(t, rep, c, 2001)
	if m := marks(c); m[0] != "k=v" {
		t.Errorf("marker = %q; want k=v", m[0])
	}
	if got := rep.Events[bytefrog.MsgMethodEntry]; got != 1000 {
		t.Errorf("HQ counted %d entries; want 1000", got)
	}
}

func TestManyGoroutinesManyConnections(t *testing.T) {
	h := startHQ(t, func(c *hq.Config) { c.Agent.NumDataSenders = 8 })
	cfg := testConfig(h.Srv.Addr())
	cfg.RingSize = 1024 // force the ring to wrap and producers to wait
	a, run := startAgent(t, h, cfg)
	const goroutines, calls = 16, 5000
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			SetThreadName("g" + string(rune('a'+g)))
			m := NewMethod("t/T.g" + string(rune('a'+g)) + ";1;()V")
			for i := 0; i < calls; i++ {
				m.Enter().Exit()
			}
		}()
	}
	wg.Wait()
	rep := finish(t, a, run)
	c := h.Collector(0)
	testhq.CheckClean(t, rep, c, goroutines*calls*2)
	// Per thread, entries and exits alternate.
	last := map[uint16]bytefrog.MsgType{}
	for _, e := range c.Events() {
		if e.Type == last[e.Thread] {
			t.Fatalf("thread %d: two %v in a row at seq %d", e.Thread, e.Type, e.Seq)
		}
		last[e.Thread] = e.Type
	}
	named := 0
	names := c.Names()
	for _, n := range names {
		if len(n) == 2 && n[0] == 'g' {
			named++
		}
	}
	if named != goroutines {
		t.Errorf("%d goroutines named in the trace; want %d (%v)", named, goroutines, names)
	}
}

func TestPauseBlocksAndLosesNothing(t *testing.T) {
	h := startHQ(t, nil)
	a, run := startAgent(t, h, testConfig(h.Srv.Addr()))
	m := NewMethod("t/T.pause;1;()V")
	m.Enter().Exit()
	if err := run.Pause(); err != nil {
		t.Fatal(err)
	}
	waitMode(t, a, bytefrog.ModePaused)
	if err := run.WaitMode(ctxT(t), bytefrog.ModePaused); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		m.Enter().Exit()
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("an instrumented call went through while paused")
	case <-time.After(200 * time.Millisecond):
	}
	if err := run.Unpause(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("instrumented call still blocked after unpause")
	}
	testhq.CheckClean(t, finish(t, a, run), h.Collector(0), 4)
}

func TestSuspendDropsWithDataBreak(t *testing.T) {
	h := startHQ(t, nil)
	a, run := startAgent(t, h, testConfig(h.Srv.Addr()))
	m := NewMethod("t/T.suspend;1;()V")
	for i := 0; i < 10; i++ {
		m.Enter().Exit()
	}
	if err := run.Suspend(); err != nil {
		t.Fatal(err)
	}
	waitMode(t, a, bytefrog.ModeSuspended)
	for i := 0; i < 100; i++ {
		m.Enter().Exit() // dropped, taking no sequence number
	}
	if err := run.Unsuspend(); err != nil {
		t.Fatal(err)
	}
	waitMode(t, a, bytefrog.ModeTracing)
	for i := 0; i < 10; i++ {
		m.Enter().Exit()
	}
	rep := finish(t, a, run)
	c := h.Collector(0)
	testhq.CheckClean(t, rep, c, 40)
	if b := c.Breaks(); len(b) != 1 || b[0] != 20 {
		t.Errorf("data breaks %v; want [20]", b)
	}
}

func TestStartSuspended(t *testing.T) {
	h := startHQ(t, func(c *hq.Config) { c.StartSuspended = true })
	a, run := startAgent(t, h, testConfig(h.Srv.Addr()))
	if a.Mode() != bytefrog.ModeSuspended {
		t.Fatalf("mode %v after a suspended start", a.Mode())
	}
	m := NewMethod("t/T.startSuspended;1;()V")
	m.Enter().Exit()
	run.Unsuspend()
	waitMode(t, a, bytefrog.ModeTracing)
	m.Enter().Exit()
	testhq.CheckClean(t, finish(t, a, run), h.Collector(0), 2)
}

func TestStopFromHQ(t *testing.T) {
	h := startHQ(t, nil)
	a, run := startAgent(t, h, testConfig(h.Srv.Addr()))
	var hooked atomic.Int32
	defer AddErrorHook(func(error) { hooked.Add(1) })()
	m := NewMethod("t/T.stop;1;()V")
	m.Enter().Exit()
	if err := run.Stop(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("agent still running after Stop")
	}
	if err := a.Err(); err != nil {
		t.Fatalf("Err after Stop = %v", err)
	}
	m.Enter().Exit() // the host keeps running, untraced
	rep, err := run.Wait(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	testhq.CheckClean(t, rep, h.Collector(0), 2)
	if n := hooked.Load(); n != 0 {
		t.Errorf("error hook called %d times after a stop; want 0", n)
	}
}

func TestHQKilledMidTrace(t *testing.T) {
	h := startHQ(t, nil)
	logf, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(h.Srv.Addr())
	cfg.Log = logf.Name()
	a, _ := startAgent(t, h, cfg)
	hooked := make(chan error, 1)
	defer AddErrorHook(func(err error) { hooked <- err })()
	m := NewMethod("t/T.killed;1;()V")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					m.Enter().Exit()
				}
			}
		}()
	}
	time.Sleep(100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	h.Srv.Shutdown(ctx) // closes every connection
	cancel()
	select {
	case <-a.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("agent did not notice HQ going away")
	}
	if a.Err() == nil {
		t.Error("Err() = nil after HQ went away")
	}
	select {
	case err := <-hooked:
		if err != a.Err() {
			t.Errorf("error hook got %v; want %v", err, a.Err())
		}
	case <-time.After(5 * time.Second):
		t.Error("the error hook was not called")
	}
	time.Sleep(50 * time.Millisecond) // the host goes on calling
	close(stop)
	wg.Wait()
	b, _ := os.ReadFile(logf.Name())
	if n := strings.Count(string(b), "\n"); n != 1 {
		t.Errorf("agent logged %d lines; want 1:\n%s", n, b)
	}
}

func waitMode(t testing.TB, a *Agent, m bytefrog.Mode) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for a.Mode() != m {
		if time.Now().After(deadline) {
			t.Fatalf("agent mode %v; want %v", a.Mode(), m)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestInternalPanicEndsRunNotHost makes the drain panic (a batch slot
// without its batch, which only a bug could publish) and checks that the
// run ends with ErrInternal while the process and its recording calls go
// on.
func TestInternalPanicEndsRunNotHost(t *testing.T) {
	h := startHQ(t, nil)
	a, _ := startAgent(t, h, testConfig(h.Srv.Addr()))
	s := active.Load()
	l, i, sl, _ := s.lanes.claim(7)
	s.lanes.commit(l, sl, i, uint64(kindBatch))
	select {
	case <-a.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not end after the drain panicked")
	}
	if err := a.Err(); !errors.Is(err, ErrInternal) {
		t.Errorf("Err() = %v; want ErrInternal", err)
	}
	m := NewMethod("t/T.afterPanic;1;()V")
	done := make(chan struct{})
	go func() {
		for i := 0; i < 100000; i++ {
			m.Enter().Exit()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("recording calls blocked after the run failed")
	}
}
