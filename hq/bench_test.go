package hq_test

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// benchEvents is the size of one benchmarked run.
const benchEvents = 2_000_000

var benchTraffic = sync.OnceValues(func() ([][]byte, int) {
	return hqtest.Generate(hqtest.Workload{Events: benchEvents, Methods: 300, Threads: 8, Chunk: 4096, Seed: 7})
})

// BenchmarkIngest measures a whole run through HQ over loopback: k data
// connections, reorder, analysis and the trace file in each compression
// (nofile: none written). Each iteration is one run of about 2 M events
// (entry/exit pairs over 300 methods); file-B/event is the trace file's
// size per event.
func BenchmarkIngest(b *testing.B) {
	chunks, n := benchTraffic()
	for _, file := range []string{"s2", "zstd", "none", "nofile"} {
		for _, k := range []int{1, 4, 8} {
			name := fmt.Sprintf("conns=%d/%s", k, file)
			b.Run(name, func(b *testing.B) { benchIngest(b, chunks, n, k, file) })
		}
	}
}

func benchIngest(b *testing.B, chunks [][]byte, n, k int, file string) {
	per := hqtest.Spread(chunks, k)
	total := 0
	for _, p := range per {
		total += len(p)
	}
	srv := start(b, func(c *hq.Config) {
		c.Agent.NumDataSenders = int32(k)
		if file == "nofile" {
			c.TraceDir = ""
			return
		}
		comp, err := hq.ParseCompression(file)
		if err != nil {
			b.Fatal(err)
		}
		c.Compression = comp
	})
	var fileSize int64
	b.SetBytes(int64(total))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		a := dial(b, srv, bytefrog.Version1)
		expect(b, a, bytefrog.MsgStart)
		run := nextRun(b, srv)
		for range k {
			if _, err := a.OpenData(); err != nil {
				b.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		for i := range k {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := a.Write(i, per[i]); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
		must(b, a.Shutdown(false))
		rep := wait(b, run)
		if !rep.OK || rep.Sequenced != int64(n) {
			b.Fatalf("run: %s, %d events; want %d", rep.Result(), rep.Sequenced, n)
		}
		if rep.TraceFile != "" {
			b.StopTimer()
			fi, err := os.Stat(rep.TraceFile)
			if err != nil {
				b.Fatal(err)
			}
			fileSize = fi.Size()
			os.Remove(rep.TraceFile)
			b.StartTimer()
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	if fileSize > 0 {
		b.ReportMetric(float64(fileSize)/float64(n), "file-B/event")
	}
}
