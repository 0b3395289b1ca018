package jtest

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/internal/testhq"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Cleanup()
	os.Exit(code)
}

// testHQ is the in-test reference HQ, with the environment of a JVM
// tracing into it.
type testHQ struct{ *testhq.HQ }

func startHQ(t testing.TB) *testHQ { return &testHQ{testhq.Start(t, nil)} }

// env is the environment of a JVM tracing into h.
func (h *testHQ) env(extra ...string) []string {
	return append(baseEnv(), append([]string{
		"TADPOLE_HQ=" + h.Addr(),
		"TADPOLE_FLUSH_INTERVAL=5ms",
		"TADPOLE_LTTNG=off",
	}, extra...)...)
}

// baseEnv is the test's environment without TADPOLE_, LTTNG_ and JAVA tool
// variables.
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TADPOLE_") && !strings.HasPrefix(kv, "LTTNG_") &&
			!strings.HasPrefix(kv, "JAVA_TOOL_OPTIONS=") && !strings.HasPrefix(kv, "LD_PRELOAD=") {
			env = append(env, kv)
		}
	}
	return env
}

// waitRun waits for the next run to end and returns its report and
// collector.
func (h *testHQ) waitRun(t testing.TB) (*hq.Report, *testhq.Collector) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := h.Srv.NextRun(ctx)
	if err != nil {
		t.Fatalf("no HQ run: %v", err)
	}
	rep, err := r.Wait(ctx)
	if err != nil {
		t.Fatalf("run %d: %v", r.ID(), err)
	}
	cols := h.Collectors()
	c := cols[len(cols)-1]
	<-c.Done()
	return rep, c
}
