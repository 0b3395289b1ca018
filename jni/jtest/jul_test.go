package jtest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/testhq"
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
func TestTraceJULOrderFree(t *testing.T) { traceJULOrder(t, "trace=jt/**") }
