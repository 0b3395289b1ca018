package calltree_test

import (
	"bytes"
	"os"
	"sync"
	"syscall"
	"testing"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/calltree"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// benchEvents is the size of the benchmarks' generated trace.
const benchEvents = 1_000_000

// benchMsg is a decoded message, kept compact.
type benchMsg struct {
	typ    bytefrog.MsgType
	tid    uint16
	method int32
	exc    int32
	rel    int32
	text   string
}

// benchTraffic is a 1M-event run of 8 threads and 200 methods, depth up to
// 10, one call in ten ending by an exception; in "graph" each method calls
// 2 others from 8 entry points (a few thousand call paths), in "random" any method calls any (half
// a million paths: the worst case).
var benchTraffic = map[string]func() []benchMsg{
	"graph":  sync.OnceValue(func() []benchMsg { return decodeTraffic(timedGraphTraffic(11, benchEvents, 200, 8, 2)) }),
	"random": sync.OnceValue(func() []benchMsg { return decodeTraffic(timedTraffic(11, benchEvents, 200, 8)) }),
}

func decodeTraffic(chunks [][]byte, _ int) []benchMsg {
	d := bytefrog.Dialect{Version: bytefrog.Version1, Flavor: bytefrog.FlavorBytefrog}
	var out []benchMsg
	var m bytefrog.Msg
	for _, c := range chunks {
		for len(c) > 0 {
			n, err := d.Parse(&m, c)
			if err != nil {
				panic(err)
			}
			c = c[n:]
			x := benchMsg{m.Type, m.ThreadID, m.MethodID, m.ExceptionID, m.RelTime, ""}
			if m.Type >= bytefrog.MsgMapThreadName && m.Type <= bytefrog.MsgMapException {
				x.text = string(m.Text) // Parse leaves Text as it was for other types
			}
			out = append(out, x)
		}
	}
	return out
}

// BenchmarkBuild feeds a 1M-event run (benchTraffic) to a Tree, with and
// without its timeline: the cost a Tree adds to HQ per event.
func BenchmarkBuild(b *testing.B) {
	for _, work := range []string{"graph", "random"} {
		for _, tc := range []struct {
			name string
			cfg  calltree.Config
		}{{"timeline", calltree.Config{}}, {"tree-only", calltree.Config{MaxTimeline: -1}}} {
			b.Run(work+"/"+tc.name, func(b *testing.B) { benchBuild(b, benchTraffic[work](), tc.cfg) })
		}
	}
}

func benchBuild(b *testing.B, msgs []benchMsg, cfg calltree.Config) {
	events := 0
	for _, m := range msgs {
		if m.typ >= bytefrog.MsgMethodEntry && m.typ <= bytefrog.MsgExceptionBubble {
			events++
		}
	}
	{
		tc := struct{ cfg calltree.Config }{cfg}
		{
			b.ReportAllocs()
			var m bytefrog.Msg
			for range b.N {
				tr, err := calltree.New(&tc.cfg)
				if err != nil {
					b.Fatal(err)
				}
				for i := range msgs {
					x := &msgs[i]
					m.Type, m.ThreadID, m.MethodID, m.ExceptionID, m.RelTime = x.typ, x.tid, x.method, x.exc, x.rel
					if x.text != "" {
						m.Text = []byte(x.text)
					}
					tr.Message(&m)
				}
				tr.Finish(nil)
				b.ReportMetric(float64(tr.Stats().Paths), "paths")
			}
			b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		}
	}
}

// BenchmarkExport writes the 1M-event run in each format.
func BenchmarkExport(b *testing.B) {
	msgs := benchTraffic["graph"]()
	tr, err := calltree.New(nil)
	if err != nil {
		b.Fatal(err)
	}
	var m bytefrog.Msg
	for i := range msgs {
		x := &msgs[i]
		m.Type, m.ThreadID, m.MethodID, m.ExceptionID, m.RelTime = x.typ, x.tid, x.method, x.exc, x.rel
		m.Text = []byte(x.text)
		tr.Message(&m)
	}
	tr.Finish(nil)
	for _, f := range []calltree.Format{calltree.FormatSpeedscope, calltree.FormatChrome, calltree.FormatFlameSVG} {
		b.Run(f.String(), func(b *testing.B) {
			b.ReportAllocs()
			var n countingWriter
			for range b.N {
				if err := tr.Write(&n, f, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(n.n / int64(b.N))
		})
	}
}

type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// BenchmarkReplay replays a 1M-event trace file (columns) through HQ, without
// and with a Tree: the tree's share of "tadpole-hq export".
func BenchmarkReplay(b *testing.B) {
	chunks, n := timedGraphTraffic(11, benchEvents, 200, 8, 2)
	rep, _ := liveRun(b, chunks)
	data, err := os.ReadFile(rep.TraceFile)
	if err != nil {
		b.Fatal(err)
	}
	for _, withTree := range []bool{false, true} {
		name := "hq-only"
		if withTree {
			name = "with-tree"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := processCPU()
			for range b.N {
				opt := &hq.ReplayOptions{}
				if withTree {
					tr, _ := calltree.New(nil)
					opt.Processors = []hq.Processor{tr}
				}
				if _, err := hq.Replay(bytes.NewReader(data), opt); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(processCPU()-cpu0)/float64(n)/float64(b.N), "cpu-ns/event")
		})
	}
}

// processCPU is the process's user and system CPU time in nanoseconds: a
// busy machine changes it far less than events/s.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
