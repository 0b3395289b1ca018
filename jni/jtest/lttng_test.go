package jtest

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/testhq"
	"github.com/tadpole-trace/tadpole/internal/testpeers"
	"github.com/tadpole-trace/tadpole/internal/testpeers/fakedaemon"
	"github.com/tadpole-trace/tadpole/transport/lttngagent"
)

// Bounds of the session daemon test.
const (
	// lttngGrace is how many JApp iterations (2 ms each at least) may pass
	// after an lttng command returned before its effect is certain: the
	// JUL sync attaches or removes handlers every 100 ms.
	lttngGrace = 100
	// lttngWait bounds every wait for the JVM, HQ or the daemon.
	lttngWait = 30 * time.Second
	// lttngPoll is the polling period of the waits.
	lttngPoll = 20 * time.Millisecond
)

// lttngLoggers are the JUL loggers JApp's "lttng" case logs on.
var lttngLoggers = []string{"shop.orders", "shop.pay"}

// waitFor polls cond every lttngPoll until it holds, failing the test with
// what after lttngWait.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(lttngWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, lttngWait)
		}
		time.Sleep(lttngPoll)
	}
}

// ticks returns the iterations of the records "<level> tick <i>" of key,
// or of the markers "tick" = "<i>", in trace order.
func ticks(t *testing.T, c *testhq.Collector, key string) []int {
	t.Helper()
	var out []int
	for _, v := range c.Markers(key) {
		i := strings.LastIndexByte(v, ' ')
		n, err := strconv.Atoi(v[i+1:])
		if err != nil {
			t.Fatalf("marker %q = %q: %v", key, v, err)
		}
		out = append(out, n)
	}
	return out
}

// lastTick is the last iteration JApp reported to HQ (-1: none).
func lastTick(t *testing.T, c *testhq.Collector) int {
	t.Helper()
	ts := ticks(t, c, "tick")
	if len(ts) == 0 {
		return -1
	}
	return ts[len(ts)-1]
}

// TestLTTngSessiond: with a session daemon running, the JVM registers
// with it (logs=lttng, the daemon found through LTTNG_HOME): `lttng list
// -j` shows its pid with its JUL loggers, enable-event -j shop.orders makes
// only that logger's records reach HQ, and disable-event -j stops them.
func TestLTTngSessiond(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test with lttng-sessiond")
	}
	e := Build(t)
	sd := testpeers.StartSessiond(t)
	h := startHQ(t)

	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	cmd := e.Java(ctx, h.env("TADPOLE_LTTNG=on", "TADPOLE_LOGS=lttng", "TADPOLE_LTTNG_RETRY=200ms",
		"LTTNG_HOME="+sd.Home), true, "", "lttng")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		stdin.Close()
		select {
		case <-exited:
		case <-time.After(lttngWait):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("java stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
		}
	}()
	pid := cmd.Process.Pid

	run, err := h.Srv.NextRun(ctx)
	if err != nil {
		t.Fatalf("no HQ run: %v", err)
	}
	var c *testhq.Collector
	waitFor(t, "HQ processor", func() bool {
		if cols := h.Collectors(); len(cols) > 0 {
			c = cols[len(cols)-1]
		}
		return c != nil
	})

	var names []string
	waitFor(t, "JVM listed by lttng list -j with its loggers", func() bool {
		var ok bool
		names, ok = sd.ListedJUL(pid)
		return ok && !slices.ContainsFunc(lttngLoggers, func(n string) bool { return !slices.Contains(names, n) })
	})
	t.Logf("lttng list -j:\n%s", sd.MustLttng("list", "-j"))

	// Nothing is enabled: no records.
	waitFor(t, "iterations at HQ", func() bool { return lastTick(t, c) >= lttngGrace })
	for _, l := range lttngLoggers {
		if got := c.Markers("log:" + l); len(got) != 0 {
			t.Fatalf("before enable-event: got %d records of %s; want 0", len(got), l)
		}
	}

	sd.MustLttng("--no-sessiond", "create", "s", "--output="+sd.MkdirAll("trace"))
	sd.MustLttng("enable-event", "-j", "shop.orders", "-s", "s")
	sd.MustLttng("start", "s")
	from := lastTick(t, c) + lttngGrace
	waitFor(t, "iterations after enable-event", func() bool { return lastTick(t, c) >= from+lttngGrace })
	upto := lastTick(t, c)
	orders := ticks(t, c, "log:shop.orders")
	for i := from; i <= upto; i++ {
		// Markers and records of an iteration reach HQ in trace order: the
		// record precedes its iteration's tick marker.
		if !slices.Contains(orders, i) {
			t.Fatalf("after enable-event: no shop.orders record of iteration %d (records %d..%d: %d)",
				i, from, upto, len(orders))
		}
	}
	if got := c.Markers("log:shop.pay"); len(got) != 0 {
		t.Fatalf("shop.pay not enabled: got %d records; want 0", len(got))
	}

	sd.MustLttng("disable-event", "-j", "shop.orders", "-s", "s")
	to := lastTick(t, c) + lttngGrace
	waitFor(t, "iterations after disable-event", func() bool { return lastTick(t, c) >= to+lttngGrace })
	for _, i := range ticks(t, c, "log:shop.orders") {
		if i >= to {
			t.Fatalf("after disable-event: got a shop.orders record of iteration %d; want none from %d", i, to)
		}
	}
	if got := c.Markers("log:shop.pay"); len(got) != 0 {
		t.Fatalf("shop.pay never enabled: got %d records; want 0", len(got))
	}
	t.Logf("listed loggers %q; shop.orders records of iterations %d..%d reached HQ; none from %d after disable",
		names, from, upto, to)

	stdin.Close()
	wctx, wcancel := context.WithTimeout(context.Background(), lttngWait)
	defer wcancel()
	rep, err := run.Wait(wctx)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	<-c.Done()
	testhq.CheckClean(t, rep, c, -1)
}

// TestLTTngDialects: a JVM speaks the lttng_dialect it is given to its
// session daemon: its JUL loggers are listed, ENABLE makes shop.orders
// records reach HQ, and a daemon that sends garbage costs only its
// connection: the JVM registers again and obeys the next ENABLE.
func TestLTTngDialects(t *testing.T) {
	e := Build(t)
	for _, opt := range []string{"2.13", "rfc01"} {
		t.Run(opt, func(t *testing.T) {
			dl, err := lttngagent.ParseDialect(opt)
			if err != nil {
				t.Fatal(err)
			}
			d := fakedaemon.New(t, dl)
			h := startHQ(t)
			ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
			defer cancel()
			cmd := e.Java(ctx, h.env("TADPOLE_LTTNG=on", "TADPOLE_LOGS=lttng", "TADPOLE_LTTNG_RETRY=50ms",
				"TADPOLE_LTTNG_DIALECT="+opt, "TADPOLE_LTTNG_PORT="+strconv.Itoa(d.Port())), true, "", "lttng")
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			var out, errb strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			defer func() {
				stdin.Close()
				select {
				case <-exited:
				case <-time.After(lttngWait):
					cmd.Process.Kill()
					<-exited
				}
				if t.Failed() {
					t.Logf("java stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
				}
			}()
			if _, err := h.Srv.NextRun(ctx); err != nil {
				t.Fatalf("no HQ run: %v", err)
			}
			var c *testhq.Collector
			waitFor(t, "HQ processor", func() bool {
				if cols := h.Collectors(); len(cols) > 0 {
					c = cols[len(cols)-1]
				}
				return c != nil
			})
			pid := cmd.Process.Pid
			nc := d.Accept(pid)
			waitFor(t, "JUL loggers listed", func() bool {
				names := d.List(nc)
				return !slices.ContainsFunc(lttngLoggers, func(n string) bool { return !slices.Contains(names, n) })
			})
			if rc := d.Enable(nc, "shop.orders"); rc != lttngagent.ReplySuccess {
				t.Fatalf("ENABLE = %v", rc)
			}
			waitFor(t, "shop.orders records at HQ", func() bool { return len(c.Markers("log:shop.orders")) > 0 })
			d.Garbage(nc)
			nc = d.Accept(pid)
			before := len(c.Markers("log:shop.orders"))
			if rc := d.Enable(nc, "shop.orders"); rc != lttngagent.ReplySuccess {
				t.Fatalf("ENABLE after reconnect = %v", rc)
			}
			waitFor(t, "shop.orders records after reconnect", func() bool { return len(c.Markers("log:shop.orders")) > before })
			if got := c.Markers("log:shop.pay"); len(got) != 0 {
				t.Errorf("shop.pay never enabled: got %d records; want 0", len(got))
			}
		})
	}
}
