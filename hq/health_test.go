package hq_test

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// heartbeat sends a heartbeat and waits until HQ has taken it.
func heartbeat(t *testing.T, a *hqtest.Agent, run *hq.Run, clock *fakeClock, mode bytefrog.Mode) {
	t.Helper()
	n := run.Stats().Heartbeats
	must(t, a.Heartbeat(mode, 1))
	deadline := time.Now().Add(10 * time.Second)
	for run.Stats().Heartbeats == n {
		if time.Now().After(deadline) {
			t.Fatal("heartbeat not taken")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestHealth(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1700000000, 0)}
	srv := start(t, func(c *hq.Config) { c.Now = clock.Now }) // heartbeat interval 100ms
	a := dial(t, srv, bytefrog.Version1)
	expect(t, a, bytefrog.MsgStart)
	run := nextRun(t, srv)
	heartbeat(t, a, run, clock, bytefrog.ModeTracing)
	check := func(want hq.Health) {
		t.Helper()
		if got := run.Health(); got != want {
			t.Errorf("health %v at %v; want %v", got, clock.Now().Sub(time.Unix(1700000000, 0)), want)
		}
	}
	check(hq.HealthOK)
	clock.advance(300 * time.Millisecond) // 3 intervals missed: still fine
	check(hq.HealthOK)
	clock.advance(50 * time.Millisecond) // more than 3
	check(hq.HealthUnhealthy)
	if st := run.Stats(); st.Health != hq.HealthUnhealthy || st.Buffers != 1 || st.Mode != bytefrog.ModeTracing {
		t.Errorf("stats %+v; want unhealthy, 1 buffer, Tracing", st)
	}
	heartbeat(t, a, run, clock, bytefrog.ModeTracing)
	check(hq.HealthOK)
	// The agent keeps reporting Tracing after Pause.
	must(t, run.Pause())
	expect(t, a, bytefrog.MsgPause)
	for range 9 {
		clock.advance(250 * time.Millisecond)
		heartbeat(t, a, run, clock, bytefrog.ModeTracing)
		run.Health()
	}
	check(hq.HealthConcerned)
	heartbeat(t, a, run, clock, bytefrog.ModePaused)
	check(hq.HealthOK)
	must(t, a.Shutdown(false))
	rep := wait(t, run)
	if !rep.OK || rep.UnhealthyEpisodes != 1 || rep.MaxHeartbeatGap != 350*time.Millisecond {
		t.Errorf("%s, %d unhealthy, longest silence %v; want completed, 1, 350ms", rep.Result(),
			rep.UnhealthyEpisodes, rep.MaxHeartbeatGap)
	}
	if !strings.Contains(rep.String(), "longest silence 350ms, unhealthy 1 time(s)") {
		t.Errorf("summary lacks the health line:\n%s", rep)
	}
	checkReplay(t, rep)
}

// TestForeignDataConnection: a data connection from another host cannot
// join a run.
func TestForeignDataConnection(t *testing.T) {
	srv := start(t, nil)
	a := dial(t, srv, bytefrog.Version1)
	expect(t, a, bytefrog.MsgStart)
	run := nextRun(t, srv)
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
	c, err := d.Dial("tcp", srv.Addr())
	if err != nil {
		t.Skipf("cannot dial from 127.0.0.2: %v", err)
	}
	defer c.Close()
	_, err = c.Write(bytefrog.AppendDataHello(nil, a.Config.RunID))
	must(t, err)
	if got := readRejection(t, c); got != "Failed to associate the data connection with the trace" {
		t.Errorf("foreign data connection told %q; want refused", got)
	}
	must(t, a.Shutdown(false))
	if rep := wait(t, run); !rep.OK || rep.DataConns != 0 {
		t.Errorf("%s with %d data connections; want completed, 0", rep.Result(), rep.DataConns)
	}
}
