package jtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/testhq"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// TestJULQuietThread: no class is traced (the probes are bound, the JUL
// records go into the probe buffers); a thread logs once and then waits.
// Its record reaches HQ while it waits (the agent hands quiet threads'
// buffers over), then the run ends clean with both its records in order.
func TestJULQuietThread(t *testing.T) {
	e := Build(t)
	h := startHQ(t)
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	j := startReady(ctx, t, e.Java(ctx, h.env(), true, "trace=zz/**", "quiet"), "JApp quiet logged")
	deadline := time.Now().Add(3 * time.Second)
	arrived := false
	for !arrived && time.Now().Before(deadline) {
		for _, c := range h.Collectors() {
			if slices.Contains(c.Markers("log:quiet"), "INFO alone") {
				arrived = true
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	out := j.wake(t)
	if !strings.Contains(out, "JApp done quiet tracing=true") {
		t.Fatalf("stdout %q; want tracing=true", out)
	}
	rep, c := h.waitRun(t)
	testhq.CheckClean(t, rep, c, -1)
	if !arrived {
		t.Errorf("the quiet thread's record did not reach HQ within 3 s while it waited")
	}
	if got, want := c.Markers("log:quiet"), []string{"INFO alone", "INFO after"}; !slices.Equal(got, want) {
		t.Errorf("log:quiet markers %q; want %q", got, want)
	}
}

// TestTraceJULOrderFree: without jul_order, JUL records logged between
// traced calls reach HQ between them too: they go into the same probe
// buffer as the calls.
func TestTraceJULOrderFree(t *testing.T) {
	e := Build(t)
	h := startHQ(t)
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	r := Run(e.traceCmd(ctx, h.env(), true, "trace=jt/**", "log"))
	if r.Err != nil || !strings.Contains(r.Stdout, "JTrace log done") {
		t.Fatalf("JTrace log: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	rep, c := h.waitRun(t)
	testhq.CheckClean(t, rep, c, -1)
	var logged int32 = -1
	for id, sig := range c.Methods() {
		if strings.HasPrefix(sig, "jt/Work.logged;") {
			logged = id
		}
	}
	entered, left, records := 0, 0, 0
	for _, ev := range c.Events() {
		switch {
		case ev.Type == bytefrog.MsgMethodEntry && ev.Method == logged:
			entered++
		case ev.Type == bytefrog.MsgMethodExit && ev.Method == logged:
			left++
		case ev.Type == bytefrog.MsgMarker && ev.Key == "log:jtrace":
			if want := fmt.Sprintf("INFO rec %d", records); ev.Value != want || entered != records+1 || left != records {
				t.Fatalf("record %q at seq %d after %d entries and %d exits of Work.logged; want %q after %d and %d",
					ev.Value, ev.Seq, entered, left, want, records+1, records)
			}
			records++
		}
	}
	if records != 200 || entered != 200 || left != 200 {
		t.Fatalf("%d records, %d entries, %d exits of Work.logged; want 200 each", records, entered, left)
	}
}
