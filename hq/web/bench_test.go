package web

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq/calltree"
	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// benchTraffic is a run of n events on 8 threads and 400 methods, time
// advancing 0–2 ms an event, one call in ten ending by an exception, a
// marker every 1000 events. With fanout > 0 each method calls fanout
// others (a program's call graph: some thousands of call paths); with 0 any
// method calls any (hundreds of thousands: the worst case).
func benchTraffic(n, fanout int) []benchMsg {
	const methods, threads = 400, 8
	g := hqtest.NewGen(bytefrog.FlavorBytefrog)
	rng := rand.New(rand.NewPCG(7, uint64(fanout)))
	stacks := make([][]int32, threads)
	for int(g.Seq) < n {
		g.RelTime += int32(rng.IntN(3))
		tid := rng.IntN(threads)
		st := stacks[tid]
		switch {
		case len(st) == 0 || len(st) < 10 && rng.IntN(2) == 0:
			m := int32(rng.IntN(1 + rng.IntN(methods)))
			if fanout > 0 && len(st) == 0 {
				m %= 8
			}
			if fanout > 0 && len(st) > 0 {
				m = (st[len(st)-1]*7 + 1 + int32(rng.IntN(fanout))) % methods
			}
			g.Entry(uint16(tid), m)
			stacks[tid] = append(st, m)
		case rng.IntN(10) == 0:
			exc := int32(rng.IntN(3))
			g.Throw(uint16(tid), st[len(st)-1], exc, 7)
			g.Bubble(uint16(tid), st[len(st)-1], exc)
			stacks[tid] = st[:len(st)-1]
		default:
			g.Exit(uint16(tid), st[len(st)-1], 1)
			stacks[tid] = st[:len(st)-1]
		}
		if g.Seq%1000 == 0 {
			g.Marker("log:bench", "INFO a log record of the benchmark")
		}
	}
	b := g.Take()
	d := bytefrog.Dialect{Version: bytefrog.Version1, Flavor: bytefrog.FlavorBytefrog}
	var out []benchMsg
	var m bytefrog.Msg
	for len(b) > 0 {
		k, err := d.Parse(&m, b)
		if err != nil {
			panic(err)
		}
		x := benchMsg{typ: m.Type, tid: m.ThreadID, method: m.MethodID, exc: m.ExceptionID, rel: m.RelTime, seq: m.Seq, text: -1}
		if m.Type == bytefrog.MsgMarker || m.Type >= bytefrog.MsgMapThreadName && m.Type <= bytefrog.MsgMapException {
			x.text = int32(len(benchTexts))
			benchTexts = append(benchTexts, [2][]byte{append([]byte(nil), m.Text...), append([]byte(nil), m.Value...)})
		}
		out = append(out, x)
		b = b[k:]
	}
	return out
}

// benchMsg is a decoded message, kept compact and free of pointers (a
// bytefrog.Msg is large, and the collector would scan millions of them).
type benchMsg struct {
	typ         bytefrog.MsgType
	tid         uint16
	method, exc int32
	rel, seq    int32
	text        int32 // index in benchTexts, or -1
}

// benchTexts are the texts and values of the benchmarks' messages.
var benchTexts [][2][]byte

// msg fills m with x.
func (x *benchMsg) msg(m *bytefrog.Msg) *bytefrog.Msg {
	m.Type, m.ThreadID, m.MethodID, m.ExceptionID, m.RelTime, m.Seq = x.typ, x.tid, x.method, x.exc, x.rel, x.seq
	m.Text, m.Value = nil, nil
	if x.text >= 0 {
		m.Text, m.Value = benchTexts[x.text][0], benchTexts[x.text][1]
	}
	return m
}

var benchRuns = map[string]func() []benchMsg{
	"graph":  sync.OnceValue(func() []benchMsg { return benchTraffic(2_000_000, 2) }),
	"random": sync.OnceValue(func() []benchMsg { return benchTraffic(2_000_000, 0) }),
}

func isEvent(m *benchMsg) bool {
	return m.typ >= bytefrog.MsgMethodEntry && m.typ <= bytefrog.MsgExceptionBubble || m.typ == bytefrog.MsgMarker
}

// BenchmarkTrack feeds a 2M-event run to what the page keeps of it (the
// call tree in batches, the timeline, bubble paths, markers), against the
// call tree alone: the cost the page adds to HQ per event. The feeding
// goroutine waits for the page's worker here (lossless), so the rate is
// the page's own; live, a page that falls behind leaves calls out instead.
func BenchmarkTrack(b *testing.B) {
	for _, work := range []string{"graph", "random"} {
		msgs := benchRuns[work]()
		events := 0
		for i := range msgs {
			if isEvent(&msgs[i]) {
				events++
			}
		}
		b.Run(work+"/page", func(b *testing.B) {
			b.ReportAllocs()
			start := time.Now()
			for range b.N {
				t, err := newTracker(1, nil, DefaultConfig())
				if err != nil {
					b.Fatal(err)
				}
				t.lossless = true
				var m bytefrog.Msg
				for i := range msgs {
					t.Message(msgs[i].msg(&m))
				}
				t.Finish(nil)
			}
			b.ReportMetric(float64(events)*float64(b.N)/time.Since(start).Seconds(), "events/s")
		})
		b.Run(work+"/tree-only", func(b *testing.B) {
			b.ReportAllocs()
			start := time.Now()
			for range b.N {
				t, err := calltree.New(&calltree.Config{MaxTimeline: -1})
				if err != nil {
					b.Fatal(err)
				}
				var m bytefrog.Msg
				for i := range msgs {
					t.Message(msgs[i].msg(&m))
				}
				t.Finish(nil)
			}
			b.ReportMetric(float64(events)*float64(b.N)/time.Since(start).Seconds(), "events/s")
		})
	}
}

// BenchmarkDelta is one tick of the page on a large live run: 20,000 more
// events (0.1 to 2 ms of a fast agent), then the snapshot of the tree, the
// versions of the changed call paths and the flame graph and timeline
// answers since the page's last versions. It reports the bytes of those
// answers and the call paths. (Time advances 1 ms an event on average, so
// the 20,000 events span 20 s of the run: most calls last a millisecond or
// more and each gets a timeline span.)
func BenchmarkDelta(b *testing.B) {
	const step = 20_000
	for _, work := range []string{"graph", "random"} {
		b.Run(work, func(b *testing.B) {
			msgs := benchRuns[work]()
			cfg := DefaultConfig()
			var t *tracker
			var next int
			var ver, spans uint64
			var buf []byte
			var m bytefrog.Msg
			reset := func() {
				if t != nil {
					t.Finish(nil)
				}
				t, _ = newTracker(1, nil, cfg)
				t.lossless = true
				// The first half of the run is already there.
				for next = 0; next < len(msgs)/2; next++ {
					t.Message(msgs[next].msg(&m))
				}
				t.sync()
				t.publish(time.Now())
				ver, spans = t.pub.version, t.nspans
			}
			reset()
			var fbytes, tbytes, nodes int64
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				if next+step > len(msgs) {
					reset()
				}
				for end := next + step; next < end; next++ {
					t.Message(msgs[next].msg(&m))
				}
				t.sync()
				b.StartTimer()
				t.publish(time.Now())
				buf = t.flameDelta(buf[:0], ver, 0, 0, cfg.DeltaNodes)
				fbytes += int64(len(buf))
				buf = t.timelineDelta(buf[:0], spans, cfg.DeltaSpans)
				tbytes += int64(len(buf))
				ver, spans = t.pub.version, t.nspans
				nodes += int64(t.pub.paths)
			}
			b.ReportMetric(float64(fbytes)/float64(b.N), "flame-bytes/delta")
			b.ReportMetric(float64(tbytes)/float64(b.N), "timeline-bytes/delta")
			b.ReportMetric(float64(nodes)/float64(b.N), "paths")
			t.Finish(nil)
		})
	}
}

// BenchmarkTrackMarkers feeds a run of 500,000 log records (markers
// "log:<logger>" = "INFO benchmark record <n>", what the JVM agent sends
// for java.util.logging) to the page: the cost of its log view per record,
// on the run's core goroutine and the page's worker together (lossless:
// Finish waits for the worker). cpu-ns/marker is the process's CPU time.
func BenchmarkTrackMarkers(b *testing.B) {
	const n = 500_000
	loggers := [][]byte{[]byte("log:bench.jul"), []byte("log:com.example.orders"), []byte("log:app")}
	values := make([][]byte, n)
	for i := range values {
		values[i] = []byte(fmt.Sprintf("INFO benchmark record %d", i))
	}
	b.ReportAllocs()
	var m bytefrog.Msg
	cpu0 := cpuNanos()
	b.ResetTimer()
	for range b.N {
		t, err := newTracker(1, nil, DefaultConfig())
		if err != nil {
			b.Fatal(err)
		}
		t.lossless = true
		for i := range n {
			m = bytefrog.Msg{Type: bytefrog.MsgMarker, Seq: int32(i), RelTime: int32(i / 1000),
				Text: loggers[i%len(loggers)], Value: values[i]}
			t.Message(&m)
		}
		t.Finish(nil)
		if t.nmarkers != n {
			b.Fatalf("%d markers; want %d", t.nmarkers, n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*b.N), "ns/marker")
	b.ReportMetric(float64(cpuNanos()-cpu0)/float64(n*b.N), "cpu-ns/marker")
	b.ReportMetric(0, "ns/op")
}

// cpuNanos is the process's user and system CPU time.
func cpuNanos() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
