package agent

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/internal/testhq"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// fakeClock is a Clock that moves only when a test advances it.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []*fakeTimer
	added   chan struct{} // signalled when a timer is armed
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Unix(1700000000, 0), added: make(chan struct{}, 1)}
}

type fakeTimer struct {
	clk    *fakeClock
	c      chan time.Time
	when   time.Time
	period time.Duration // 0: a timer
	armed  bool
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) NewTimer(d time.Duration) Timer   { return f.arm(d, 0) }
func (f *fakeClock) NewTicker(d time.Duration) Ticker { return fakeTicker{f.arm(d, d)} }

func (f *fakeClock) arm(d, period time.Duration) *fakeTimer {
	t := &fakeTimer{clk: f, c: make(chan time.Time, 1), period: period}
	t.reset(d)
	return t
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) reset(d time.Duration) bool {
	f := t.clk
	f.mu.Lock()
	was := t.armed
	t.when, t.armed = f.now.Add(d), true
	if !was {
		f.waiters = append(f.waiters, t)
	}
	f.mu.Unlock()
	select {
	case f.added <- struct{}{}:
	default:
	}
	return was
}

func (t *fakeTimer) Stop() bool {
	f := t.clk
	f.mu.Lock()
	defer f.mu.Unlock()
	was := t.armed
	t.armed = false
	for i, w := range f.waiters {
		if w == t {
			f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
			break
		}
	}
	return was
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	if t.period > 0 {
		t.period = d
	}
	return t.reset(d)
}

// fakeTicker adapts fakeTimer's Stop and Reset to Ticker's.
type fakeTicker struct{ *fakeTimer }

func (t fakeTicker) Stop()                 { t.fakeTimer.Stop() }
func (t fakeTicker) Reset(d time.Duration) { t.fakeTimer.Reset(d) }

// Advance moves the clock by d and fires what is due, a ticker at most
// once (its channel holds one tick, as time.Ticker's).
func (f *fakeClock) Advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	now := f.now
	var keep []*fakeTimer
	for _, t := range f.waiters {
		if t.when.After(now) {
			keep = append(keep, t)
			continue
		}
		select {
		case t.c <- now:
		default:
		}
		if t.period > 0 {
			for !t.when.After(now) {
				t.when = t.when.Add(t.period)
			}
			keep = append(keep, t)
		} else {
			t.armed = false
		}
	}
	f.waiters = keep
	f.mu.Unlock()
}

// waitTimers waits until at least n timers are armed.
func (f *fakeClock) waitTimers(t testing.TB, n int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		f.mu.Lock()
		k := len(f.waiters)
		f.mu.Unlock()
		if k >= n {
			return
		}
		select {
		case <-f.added:
		case <-time.After(time.Millisecond):
		case <-deadline:
			t.Fatalf("%d timers armed after 10s; want %d", k, n)
		}
	}
}

var _ Clock = (*fakeClock)(nil)

// TestStartTimeoutFakeClock: the start timeout is the clock's, so an HQ
// that never sends Start makes Start fail as soon as the clock passes the
// timeout, however long it is, with no wait in real time.
func TestStartTimeoutFakeClock(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // greets, configures, never starts
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		var m bytefrog.Msg
		if bytefrog.NewDecoder(c, bytefrog.Dialect{Version: bytefrog.Version1}).Next(&m) != nil {
			return
		}
		cfg := bytefrog.DefaultConfig()
		b, _ := bytefrog.AppendConfig(nil, bytefrog.Version1, &cfg)
		c.Write(b)
		discard(c)
	}()
	clk := newFakeClock()
	cfg := testConfig(ln.Addr().String())
	cfg.Clock = clk
	cfg.StartTimeout = time.Hour
	cfg.HQRetry = 0
	type result struct {
		a   *Agent
		err error
	}
	res := make(chan result, 1)
	go func() {
		a, err := Start(context.Background(), cfg)
		res <- result{a, err}
	}()
	clk.waitTimers(t, 2) // the heartbeat ticker and the start timeout
	select {
	case r := <-res:
		t.Fatalf("Start returned before the timeout: %v, %v", r.a, r.err)
	default:
	}
	t0 := time.Now()
	clk.Advance(time.Hour)
	select {
	case r := <-res:
		if !errors.Is(r.err, ErrStartTimeout) {
			t.Fatalf("Start = %v, %v; want ErrStartTimeout", r.a, r.err)
		}
		t.Logf("Start failed %v after the clock passed the timeout", time.Since(t0).Round(time.Millisecond))
	case <-time.After(10 * time.Second):
		t.Fatal("Start still waiting 10s after the clock passed the start timeout")
	}
}

// TestHeartbeatsFollowClock: heartbeats leave when the agent's clock says
// an interval has passed, not before.
func TestHeartbeatsFollowClock(t *testing.T) {
	h := startHQ(t, func(c *hq.Config) { c.Agent.HeartbeatInterval = 60000 })
	clk := newFakeClock()
	cfg := testConfig(h.Srv.Addr())
	cfg.Clock = clk
	a, run := startAgent(t, h, cfg)
	s := a.session()
	clk.waitTimers(t, 1)
	if n := s.hbTicks.Load(); n != 0 {
		t.Fatalf("%d heartbeats before the agent's clock moved", n)
	}
	const beats = 5
	for i := range beats {
		clk.Advance(time.Minute)
		deadline := time.Now().Add(10 * time.Second)
		// Each tick is taken before the next is sent: a ticker holds one.
		for s.hbTicks.Load() <= int64(i) {
			if time.Now().After(deadline) {
				t.Fatalf("%d heartbeats 10s after %d intervals of the agent's clock", s.hbTicks.Load(), i+1)
			}
			time.Sleep(time.Millisecond)
		}
	}
	if n := s.hbTicks.Load(); n != beats {
		t.Errorf("%d heartbeats after %d intervals of the agent's clock; want %d", n, beats, beats)
	}
	rep := finish(t, a, run)
	// Start and Stop send a heartbeat each; the clock added the rest.
	if rep.Heartbeats < beats {
		t.Errorf("HQ got %d heartbeats after %d intervals of the agent's clock; want at least %d", rep.Heartbeats, beats, beats)
	}
	if gap := time.Duration(s.hbMaxGap.Load()); gap != time.Minute {
		t.Errorf("longest gap between heartbeats by the agent's clock %v; want %v", gap, time.Minute)
	}
	testhq.CheckClean(t, rep, h.Collector(0), 0)
}
