package jtest

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Cleanup()
	os.Exit(code)
}

// marker is one marker as HQ released it, with its thread's name.
type marker struct {
	seq        int32
	key, value string
}

// collector is an HQ processor keeping what the tests check.
type collector struct {
	mu      sync.Mutex
	seqs    []int32
	markers []marker
	names   map[uint16]string
	named   []string // every thread name announced, in order
	done    chan struct{}
}

func (c *collector) Message(m *bytefrog.Msg) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case m.Type == bytefrog.MsgMapThreadName:
		n := bytefrog.String(m.Text)
		c.names[m.ThreadID] = n
		c.named = append(c.named, n)
	case m.Type.Sequenced():
		c.seqs = append(c.seqs, m.Seq)
		if m.Type == bytefrog.MsgMarker {
			c.markers = append(c.markers, marker{m.Seq, bytefrog.String(m.Text), bytefrog.String(m.Value)})
		}
	}
}

func (c *collector) DataBreak(int32)   {}
func (c *collector) Finish(*hq.Report) { close(c.done) }

// values returns the values of the markers with key, in trace order.
func (c *collector) values(key string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, m := range c.markers {
		if m.key == key {
			out = append(out, m.value)
		}
	}
	return out
}

// testHQ is a reference HQ on loopback.
type testHQ struct {
	srv  *hq.Server
	mu   sync.Mutex
	cols []*collector
}

func startHQ(t testing.TB) *testHQ {
	t.Helper()
	h := &testHQ{}
	cfg := hq.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.Agent.HeartbeatInterval = 100
	cfg.Agent.BufferMemoryBudget = 1 << 20
	cfg.NewProcessor = func(*hq.Run) hq.Processor {
		c := &collector{names: make(map[uint16]string), done: make(chan struct{})}
		h.mu.Lock()
		h.cols = append(h.cols, c)
		h.mu.Unlock()
		return c
	}
	srv, err := hq.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	h.srv = srv
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return h
}

// env is the environment of a JVM tracing into h.
func (h *testHQ) env(extra ...string) []string {
	return append(baseEnv(), append([]string{
		"TADPOLE_HQ=" + h.srv.Addr(),
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
func (h *testHQ) waitRun(t testing.TB) (*hq.Report, *collector) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := h.srv.NextRun(ctx)
	if err != nil {
		t.Fatalf("no HQ run: %v", err)
	}
	rep, err := r.Wait(ctx)
	if err != nil {
		t.Fatalf("run %d: %v", r.ID(), err)
	}
	h.mu.Lock()
	c := h.cols[len(h.cols)-1]
	h.mu.Unlock()
	<-c.done
	return rep, c
}

// checkClean fails unless the run completed gap-free with sequence numbers
// ascending from 0.
func checkClean(t testing.TB, rep *hq.Report, c *collector) {
	t.Helper()
	if !rep.OK {
		t.Fatalf("run failed: %s", rep.Reason)
	}
	if rep.GapCount != 0 || rep.DuplicateCount != 0 || len(rep.Unmapped) != 0 || rep.OutOfOrder != 0 {
		t.Fatalf("run problems: gaps %v, duplicates %v, unmapped %v, out of order %d",
			rep.Gaps, rep.Duplicates, rep.Unmapped, rep.OutOfOrder)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, s := range c.seqs {
		if s != int32(i) {
			t.Fatalf("event %d has seq %d", i, s)
		}
	}
}
