package ctest

import (
	"context"
	"os"
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

// event is one sequenced message as HQ released it.
type event struct {
	seq    int32
	typ    bytefrog.MsgType
	tid    uint16
	method int32
	exc    int32
	line   uint16
	key    string // marker
	value  string // marker
}

// collector is an HQ processor keeping what the tests check.
type collector struct {
	mu      sync.Mutex
	events  []event
	breaks  []int32
	names   map[uint16]string // latest name of each thread id
	methods map[int32]string
	done    chan struct{}
}

func newCollector() *collector {
	return &collector{names: make(map[uint16]string), methods: make(map[int32]string), done: make(chan struct{})}
}

func (c *collector) Message(m *bytefrog.Msg) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case m.Type == bytefrog.MsgMapThreadName:
		c.names[m.ThreadID] = bytefrog.String(m.Text)
	case m.Type == bytefrog.MsgMapMethodSignature:
		c.methods[m.MethodID] = bytefrog.String(m.Text)
	case m.Type.Sequenced():
		e := event{seq: m.Seq, typ: m.Type, tid: m.ThreadID, method: m.MethodID, exc: m.ExceptionID, line: m.Line}
		if m.Type == bytefrog.MsgMarker {
			e.key, e.value = bytefrog.String(m.Text), bytefrog.String(m.Value)
		}
		c.events = append(c.events, e)
	}
}

func (c *collector) DataBreak(seq int32) {
	c.mu.Lock()
	c.breaks = append(c.breaks, seq)
	c.mu.Unlock()
}

func (c *collector) Finish(*hq.Report) { close(c.done) }

// snapshot copies the events released so far.
func (c *collector) snapshot() []event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]event(nil), c.events...)
}

// markers returns the values of the markers with key, in trace order.
func (c *collector) markers(key string) []string {
	var out []string
	for _, e := range c.snapshot() {
		if e.typ == bytefrog.MsgMarker && e.key == key {
			out = append(out, e.value)
		}
	}
	return out
}

// testHQ is a reference HQ on loopback whose runs feed collectors.
type testHQ struct {
	srv  *hq.Server
	mu   sync.Mutex
	cols []*collector
}

func startHQ(t testing.TB, tweak func(*hq.Config)) *testHQ {
	t.Helper()
	h := &testHQ{}
	cfg := hq.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.Agent.HeartbeatInterval = 100
	cfg.Agent.BufferMemoryBudget = 1 << 20
	cfg.NewProcessor = func(*hq.Run) hq.Processor {
		c := newCollector()
		h.mu.Lock()
		h.cols = append(h.cols, c)
		h.mu.Unlock()
		return c
	}
	if tweak != nil {
		tweak(cfg)
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

// env is the environment of a program tracing into h: quick flushes, no
// LTTng registration, agent warnings on stderr.
func (h *testHQ) env(extra ...string) []string {
	return Env(append([]string{
		"TADPOLE_HQ=" + h.srv.Addr(),
		"TADPOLE_FLUSH_INTERVAL=5ms",
		"TADPOLE_LTTNG=off",
	}, extra...)...)
}

func (h *testHQ) collector(i int) *collector {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cols[i]
}

func (h *testHQ) runs() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.cols)
}

// waitRuns waits for n runs to have ended and returns their reports and
// collectors in order.
func (h *testHQ) waitRuns(t testing.TB, n int) ([]*hq.Report, []*collector) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var reps []*hq.Report
	var cols []*collector
	for i := range n {
		r, err := h.srv.NextRun(ctx)
		if err != nil {
			t.Fatalf("got %d HQ runs; want %d: %v", i, n, err)
		}
		rep, err := r.Wait(ctx)
		if err != nil {
			t.Fatalf("run %d: %v", r.ID(), err)
		}
		reps = append(reps, rep)
	}
	if got := h.runs(); got != n {
		t.Fatalf("got %d HQ runs; want %d", got, n)
	}
	for i := range n {
		c := h.collector(i)
		<-c.done
		cols = append(cols, c)
	}
	return reps, cols
}

// checkClean fails unless the run completed with no gap, duplicate or
// unmapped id and its sequence numbers ascend from 0 without a hole; want
// >= 0 is the number of sequenced events expected.
func checkClean(t testing.TB, rep *hq.Report, c *collector, want int) {
	t.Helper()
	if !rep.OK {
		t.Fatalf("run failed: %s", rep.Reason)
	}
	if rep.GapCount != 0 || rep.DuplicateCount != 0 || len(rep.Unmapped) != 0 || rep.OutOfOrder != 0 || len(rep.LateBreaks) != 0 {
		t.Fatalf("run problems: gaps %v, duplicates %v, unmapped %v, out of order %d, late breaks %v",
			rep.Gaps, rep.Duplicates, rep.Unmapped, rep.OutOfOrder, rep.LateBreaks)
	}
	evs := c.snapshot()
	for i, e := range evs {
		if e.seq != int32(i) {
			t.Fatalf("event %d has seq %d", i, e.seq)
		}
	}
	if want >= 0 && len(evs) != want {
		t.Fatalf("got %d sequenced events; want %d", len(evs), want)
	}
}

// byThread groups events by the name of their thread (markers carry none).
func byThread(c *collector) map[string][]event {
	c.mu.Lock()
	names := make(map[uint16]string, len(c.names))
	for k, v := range c.names {
		names[k] = v
	}
	c.mu.Unlock()
	out := make(map[string][]event)
	for _, e := range c.snapshot() {
		if e.typ == bytefrog.MsgMarker {
			continue
		}
		out[names[e.tid]] = append(out[names[e.tid]], e)
	}
	return out
}
