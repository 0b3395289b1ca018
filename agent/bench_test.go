package agent

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/internal/host"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// discardConn is a data connection that accepts and drops every write.
type discardConn struct{ net.Conn }

func (discardConn) Write(b []byte) (int, error) { return len(b), nil }
func (discardConn) Close() error                { return nil }

func (discardConn) SetWriteDeadline(time.Time) error { return nil }

// sinkSession makes an active pipeline whose data connections discard:
// the whole agent pipeline (ring, drain, encoding, pool, writers) without
// a network or an HQ. It ends at cleanup.
func sinkSession(tb testing.TB, conns int) *pipeline {
	tb.Helper()
	cs := make([]net.Conn, conns)
	for i := range cs {
		cs[i] = discardConn{}
	}
	s, end := pipelineSession(tb, DefaultConfig().RingSize, 4<<20, cs...)
	tb.Cleanup(end)
	return s
}

// pipelineSession makes an active pipeline with ring slots and a buffer
// budget, writing to conns, without a control connection or an HQ; end
// stops it and waits for it.
func pipelineSession(tb testing.TB, slots, budget int, conns ...net.Conn) (p *pipeline, end func()) {
	tb.Helper()
	return pipelineBreaks(tb, slots, budget, nil, conns...)
}

// pipelineBreaks is pipelineSession with onBreak called for each data
// break.
func pipelineBreaks(tb testing.TB, slots, budget int, onBreak func(int32), conns ...net.Conn) (p *pipeline, end func()) {
	tb.Helper()
	log, _ := newLogger("none", LevelOff)
	cfg := testConfig("sink")
	pc := pipeConfig{RingSize: slots, Budget: budget, Flavor: cfg.Flavor,
		FlushInterval: cfg.FlushInterval, StallTimeout: cfg.StallTimeout}
	p = newPipeline(pc, log, conns, time.Now(), monoNow(), onBreak, nil)
	p.Start()
	p.setMode(bytefrog.ModeTracing)
	if !active.CompareAndSwap(nil, p) {
		tb.Fatal("another session is active")
	}
	return p, func() {
		p.Stop(context.Background())
		active.CompareAndSwap(p, nil)
	}
}

func TestRecordingDoesNotAllocate(t *testing.T) {
	sinkSession(t, 1)
	m := NewMethod("t/T.allocs;1;()V")
	e := NewExceptionType("t.E")
	var err error = io.EOF
	cases := map[string]func(){
		"Enter+Exit": func() { m.Enter().Exit() },
		"ExitLine":   func() { m.ExitLine(12) },
		"Throw":      func() { m.Throw(e, 3) },
		"ExitErr":    func() { m.Enter().ExitErr(&err) },
		"Mark":       func() { Mark("key", "value") },
	}
	for name, f := range cases {
		f() // first use registers the error type
		if n := testing.AllocsPerRun(1000, f); n != 0 {
			t.Errorf("%s allocates %.1f times per call", name, n)
		}
	}
}

func TestNoAgentDoesNotAllocate(t *testing.T) {
	m := NewMethod("t/T.noagent;1;()V")
	if n := testing.AllocsPerRun(1000, func() { m.Enter().Exit(); Mark("k", "v") }); n != 0 {
		t.Errorf("no-op calls allocate %.1f times", n)
	}
}

// BenchmarkEnterExit is the cost of one traced call (MethodEntry and
// MethodExit) through the whole agent pipeline into a discarding sink.
func BenchmarkEnterExit(b *testing.B) {
	sinkSession(b, 2)
	m := NewMethod("t/T.bench;1;()V")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Enter().Exit()
	}
}

// BenchmarkEnterExitAdded measures what a traced call adds to a goroutine
// that works between calls (≈100 ns here), as a service does, so that the
// drain keeps up instead of setting the pace: blocks of plain work and of
// traced work alternate, and ns/added is their difference per call.
func BenchmarkEnterExitAdded(b *testing.B) {
	sinkSession(b, 2)
	m := NewMethod("t/T.benchAdded;1;()V")
	var acc uint64
	work := func() {
		for j := uint64(0); j < 48; j++ {
			acc = acc*0x9E3779B97F4A7C15 + j
		}
	}
	var plain, traced time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(1024, b.N-done)
		t0 := time.Now()
		for i := 0; i < n; i++ {
			work()
		}
		t1 := time.Now()
		for i := 0; i < n; i++ {
			f := m.Enter()
			work()
			f.Exit()
		}
		plain += t1.Sub(t0)
		traced += time.Since(t1)
		done += n
	}
	b.ReportMetric(float64(traced-plain)/float64(b.N), "ns/added")
	b.ReportMetric(float64(plain)/float64(b.N), "ns/work")
	if acc == 1 {
		b.Log(acc)
	}
}

func BenchmarkEnterExitDefer(b *testing.B) {
	sinkSession(b, 2)
	m := NewMethod("t/T.benchDefer;1;()V")
	f := func() { defer m.Enter().Exit() }
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f()
	}
}

func BenchmarkEnterExitParallel(b *testing.B) {
	sinkSession(b, 2)
	m := NewMethod("t/T.benchParallel;1;()V")
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.Enter().Exit()
		}
	})
}

func BenchmarkEnterExitNoAgent(b *testing.B) {
	m := NewMethod("t/T.benchNoAgent;1;()V")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		m.Enter().Exit()
	}
}

func BenchmarkMark(b *testing.B) {
	sinkSession(b, 2)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Mark("request", "GET /index.html")
	}
}

func BenchmarkSubmitBatch(b *testing.B) {
	p := sinkSession(b, 2)
	m := NewMethod("t/T.batch;1;()V")
	var batch []byte
	now := monoNow()
	for i := 0; i < 128; i++ {
		batch = host.AppendBatchRecord(batch, batchEntry, 0, 0, m.ID(), 0, now, "", "")
		batch = host.AppendBatchRecord(batch, batchExit, 0, 9, m.ID(), 0, now, "", "")
	}
	host.SubmitBatch(7, batch) // maps the method
	b.ReportAllocs()
	b.ResetTimer()
	done := pathCPU(b, p)
	for i := 0; i < b.N; i++ {
		host.SubmitBatch(7, batch)
	}
	done(int64(b.N) * 256)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*256), "ns/event")
}

// pathCPU starts measuring the process's CPU time for a benchmark of the
// pipeline p; done, given the events recorded since, waits until they are
// shipped and reports the CPU ns per event (every goroutine: recording,
// drain, writers).
func pathCPU(b *testing.B, p *pipeline) (done func(events int64)) {
	waitEvents(b, p, p.events.Load())
	base, cpu0 := p.events.Load(), processCPU()
	return func(events int64) {
		waitEvents(b, p, base+events)
		b.ReportMetric(float64(processCPU()-cpu0)/float64(events), "cpu-ns/event")
	}
}

// BenchmarkSubmitBatchMarkers is the drain's share of a JVM log record: a
// batch of 64 markers in modified UTF-8, as the JUL handler writes them.
func BenchmarkSubmitBatchMarkers(b *testing.B) {
	sinkSession(b, 2)
	var batch []byte
	now := monoNow()
	for i := 0; i < 64; i++ {
		batch = host.AppendBatchRecord(batch, batchMarker, batchFlagMUTF8, 0, 0, 0, now,
			"log:shop.orders", "INFO order 1234 paid by card, 3 items")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		host.SubmitBatch(7, batch)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*64), "ns/record")
}

// BenchmarkEndToEnd traces calls from 4 goroutines into the reference HQ on
// loopback over 2 data connections and reports the events/s HQ received in
// order.
func BenchmarkEndToEnd(b *testing.B) {
	h := startHQ(b, func(c *hq.Config) { c.Agent.NumDataSenders = 2 })
	a, run := startAgent(b, h, testConfig(h.Srv.Addr()))
	m := NewMethod("t/T.e2e;1;()V")
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.SetParallelism(2)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.Enter().Exit()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := a.Shutdown(ctx); err != nil {
		b.Fatal(err)
	}
	rep, err := run.Wait(ctx)
	if err != nil || !rep.OK {
		b.Fatalf("run: %v %v", err, rep)
	}
	b.StopTimer()
	b.ReportMetric(float64(rep.Sequenced)/time.Since(start).Seconds(), "events/s")
}
