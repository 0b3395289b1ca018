// Package testhq runs the reference HQ inside a test and collects what its
// runs release, for the tests of every host (Go, C, JVM) to check traces
// the same way. It is for tests only.
package testhq

import (
	"context"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// Event is one sequenced message as HQ released it.
type Event struct {
	Seq       int32
	Type      bytefrog.MsgType
	Thread    uint16
	Method    int32
	Exception int32
	Line      uint16
	Key       string // marker
	Value     string // marker
}

// Collector is an HQ processor keeping what tests check. Its methods are
// safe for concurrent use and return copies.
type Collector struct {
	mu      sync.Mutex
	events  []Event
	breaks  []int32
	names   map[uint16]string // latest name of each thread id
	methods map[int32]string
	done    chan struct{}
}

// NewCollector returns an empty collector.
func NewCollector() *Collector {
	return &Collector{names: make(map[uint16]string), methods: make(map[int32]string), done: make(chan struct{})}
}

// Message implements hq.Processor.
func (c *Collector) Message(m *bytefrog.Msg) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case m.Type == bytefrog.MsgMapThreadName:
		c.names[m.ThreadID] = bytefrog.String(m.Text)
	case m.Type == bytefrog.MsgMapMethodSignature:
		c.methods[m.MethodID] = bytefrog.String(m.Text)
	case m.Type.Sequenced():
		e := Event{Seq: m.Seq, Type: m.Type, Thread: m.ThreadID, Method: m.MethodID, Exception: m.ExceptionID, Line: m.Line}
		if m.Type == bytefrog.MsgMarker {
			e.Key, e.Value = bytefrog.String(m.Text), bytefrog.String(m.Value)
		}
		c.events = append(c.events, e)
	}
}

// DataBreak implements hq.Processor.
func (c *Collector) DataBreak(seq int32) {
	c.mu.Lock()
	c.breaks = append(c.breaks, seq)
	c.mu.Unlock()
}

// Finish implements hq.Processor.
func (c *Collector) Finish(*hq.Report) { close(c.done) }

// Done is closed when the run has ended.
func (c *Collector) Done() <-chan struct{} { return c.done }

// Events returns the sequenced events released so far, in order.
func (c *Collector) Events() []Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Event(nil), c.events...)
}

// Breaks returns the data breaks delivered so far.
func (c *Collector) Breaks() []int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int32(nil), c.breaks...)
}

// Names returns the latest name of each thread id.
func (c *Collector) Names() map[uint16]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.names)
}

// Methods returns the signature of each method id.
func (c *Collector) Methods() map[int32]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.methods)
}

// Markers returns the values of the markers with key, in trace order.
func (c *Collector) Markers(key string) []string {
	var out []string
	for _, e := range c.Events() {
		if e.Type == bytefrog.MsgMarker && e.Key == key {
			out = append(out, e.Value)
		}
	}
	return out
}

// HQ is a reference HQ on loopback whose runs feed collectors.
type HQ struct {
	Srv  *hq.Server
	mu   sync.Mutex
	cols []*Collector
}

// Start starts an HQ with quick heartbeats and a 1 MiB buffer budget,
// changed by tweak if not nil, and shuts it down at cleanup.
func Start(t testing.TB, tweak func(*hq.Config)) *HQ {
	t.Helper()
	h := &HQ{}
	cfg := hq.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.Agent.HeartbeatInterval = 100
	cfg.Agent.BufferMemoryBudget = 1 << 20
	cfg.NewProcessor = func(*hq.Run) hq.Processor {
		c := NewCollector()
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
	h.Srv = srv
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return h
}

// Addr is the HQ's address.
func (h *HQ) Addr() string { return h.Srv.Addr() }

// Collector returns the collector of the i-th run, counted from 0.
func (h *HQ) Collector(i int) *Collector {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cols[i]
}

// Collectors returns the collectors of every run so far.
func (h *HQ) Collectors() []*Collector {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*Collector(nil), h.cols...)
}

// CheckClean fails t unless the run completed with no gap, duplicate,
// unmapped id, out-of-order event or late break, and its sequence numbers
// run from 0 without a hole; want ≥ 0 is the expected event count.
func CheckClean(t testing.TB, rep *hq.Report, c *Collector, want int) {
	t.Helper()
	if !rep.OK {
		t.Fatalf("run failed: %s", rep.Reason)
	}
	if rep.GapCount != 0 || rep.DuplicateCount != 0 || len(rep.Unmapped) != 0 || rep.OutOfOrder != 0 || len(rep.LateBreaks) != 0 {
		t.Fatalf("run problems: gaps %v, duplicates %v, unmapped %v, out of order %d, late breaks %v",
			rep.Gaps, rep.Duplicates, rep.Unmapped, rep.OutOfOrder, rep.LateBreaks)
	}
	<-c.Done()
	ev := c.Events()
	for i, e := range ev {
		if e.Seq != int32(i) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
	if want >= 0 && len(ev) != want {
		t.Fatalf("got %d sequenced events; want %d", len(ev), want)
	}
}

// WaitRuns waits for the first n runs to end and returns their reports and
// collectors in order; it fails t if they do not come within 20 s or more
// runs came.
func (h *HQ) WaitRuns(t testing.TB, n int) ([]*hq.Report, []*Collector) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var reps []*hq.Report
	for i := range n {
		r, err := h.Srv.NextRun(ctx)
		if err != nil {
			t.Fatalf("got %d HQ runs; want %d: %v", i, n, err)
		}
		rep, err := r.Wait(ctx)
		if err != nil {
			t.Fatalf("run %d: %v", r.ID(), err)
		}
		reps = append(reps, rep)
	}
	cols := h.Collectors()
	if len(cols) != n {
		t.Fatalf("got %d HQ runs; want %d", len(cols), n)
	}
	for _, c := range cols {
		<-c.Done()
	}
	return reps, cols
}

// ByThread groups the events other than markers (which carry no thread) by
// the latest name of their thread.
func (c *Collector) ByThread() map[string][]Event {
	names := c.Names()
	out := make(map[string][]Event)
	for _, e := range c.Events() {
		if e.Type == bytefrog.MsgMarker {
			continue
		}
		out[names[e.Thread]] = append(out[names[e.Thread]], e)
	}
	return out
}
