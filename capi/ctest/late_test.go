package ctest

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/internal/testhq"
	"github.com/tadpole-trace/tadpole/internal/testpeers"
)

// TestHQLate runs testdata/late.c with an HQ that refuses at first:
// tadpole_start returns within 50 ms, calls find tracing off, and once HQ
// listens the program traces into it.
func TestHQLate(t *testing.T) {
	lib := BuildLib(t)
	bin := filepath.Join(t.TempDir(), "late")
	lib.Compile(t, bin, "testdata/late.c")
	addr := testpeers.FreeAddr(t)
	const calls = 500
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, fmt.Sprint(calls))
	cmd.Env = Env("TADPOLE_HQ="+addr, "TADPOLE_HQ_RETRY=100ms", "TADPOLE_LTTNG=off", "TADPOLE_FLUSH_INTERVAL=5ms")
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		cmd.Wait()
		t.Fatalf("no output; stderr:\n%s", stderr.String())
	}
	var rc int
	var ms float64
	if _, err := fmt.Sscanf(lines.Text(), "start_rc %d start_ms %f", &rc, &ms); err != nil || rc != 0 {
		t.Fatalf("first line %q (%v); want a successful start", lines.Text(), err)
	}
	t.Logf("tadpole_start took %.1f ms with HQ refusing", ms)
	if ms > 100 {
		t.Errorf("tadpole_start took %.1f ms with HQ refusing; want about 50 ms at most", ms)
	}
	time.Sleep(300 * time.Millisecond)
	h := testhq.Start(t, func(c *hq.Config) { c.Listen = addr })
	run, err := h.Srv.NextRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for lines.Scan() {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("late: %v\nstderr:\n%s", err, stderr.String())
	}
	rep, err := run.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	testhq.CheckClean(t, rep, h.Collector(0), 2*calls)
	if n := strings.Count(stderr.String(), "trying again every"); n != 1 {
		t.Errorf("stderr says %d times that the agent tries again; want once:\n%s", n, stderr.String())
	}
}
