package hq

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"

	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// fileBenchEvents is the size of the run the trace file benchmarks write.
const fileBenchEvents = 2_000_000

// fileBenchTraffic is BenchmarkIngest's traffic: entry/exit pairs over 300
// methods on 8 threads, in 4 KiB agent buffers, dealt to 4 connections.
var fileBenchTraffic = sync.OnceValues(func() ([][]byte, int) {
	chunks, n := hqtest.Generate(hqtest.Workload{Events: fileBenchEvents, Methods: 300, Threads: 8, Chunk: 4096, Seed: 7})
	return hqtest.Spread(chunks, 4), n
})

// fileFormats are the layouts compared side by side.
var fileFormats = []Compression{CompressColumns, CompressS2, CompressZstd, CompressNone}

// writeBenchTrace writes one run of per's traffic through the trace writer
// in format c, as HQ's core hands it units (reads of 64 KiB), and returns
// the Bytefrog bytes.
func writeBenchTrace(b testing.TB, path string, per [][]byte, c Compression, us []unit) {
	h := header(bytefrog.Version1, bytefrog.FlavorBytefrog)
	w, err := createTrace(path, &h, c)
	if err != nil {
		b.Fatal(err)
	}
	w.record(&unit{kind: RecordSent, raw: cmd(bytefrog.MsgStart)})
	for i := range per {
		w.record(&unit{kind: RecordOpen, conn: uint16(i + 1), raw: []byte("192.0.2.7:40001")})
	}
	for i := range us {
		w.record(&us[i])
	}
	for i := range per {
		w.record(&unit{kind: RecordClose, conn: uint16(i + 1), t: 1})
	}
	w.record(&unit{kind: RecordRecv, t: 1, raw: hb(bytefrog.ModeShutdown)})
	w.record(&unit{kind: RecordSent, t: 1, raw: cmd(bytefrog.MsgStop)})
	w.record(&unit{kind: RecordClose, t: 1})
	w.record(&unit{kind: RecordEnd, t: 1, raw: appendEnd(nil, true, "")})
	if err := w.close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkTraceFile writes the same 2 M events (the Bytefrog bytes HQ
// received, parsed as HQ's readers parse them) in each layout: MB/s of
// Bytefrog bytes written, file bytes per event, and how many times smaller
// than the Bytefrog bytes the file is.
func BenchmarkTraceFile(b *testing.B) {
	per, n := fileBenchTraffic()
	total := 0
	for _, p := range per {
		total += len(p)
	}
	d := bytefrog.Dialect{Version: bytefrog.Version1}
	for _, c := range fileFormats {
		b.Run("write/"+c.String(), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "bench"+c.Ext())
			b.SetBytes(int64(total))
			b.ReportAllocs()
			var size int64
			var cpu int64
			for range b.N {
				b.StopTimer()
				os.Remove(path)
				us := units(d, per, 64<<10)
				b.StartTimer()
				cpu0 := processCPU()
				writeBenchTrace(b, path, per, c, us)
				cpu += processCPU() - cpu0
				b.StopTimer()
				fi, err := os.Stat(path)
				if err != nil {
					b.Fatal(err)
				}
				size = fi.Size()
				b.StartTimer()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(size)/float64(n), "file-B/event")
			b.ReportMetric(float64(total)/float64(size), "x-smaller")
			b.ReportMetric(float64(cpu)/float64(n)/float64(b.N), "cpu-ns/event")
		})
	}
	for _, c := range fileFormats {
		b.Run("replay/"+c.String(), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "bench"+c.Ext())
			writeBenchTrace(b, path, per, c, units(d, per, 64<<10))
			data, err := os.ReadFile(path)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(total))
			b.ReportAllocs()
			// The core runs in this goroutine, alone on its thread: its
			// thread's CPU is the core's, the rest the reader's.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ResetTimer()
			cpu0, core0 := processCPU(), threadCPU()
			for range b.N {
				rep, err := Replay(bytes.NewReader(data), nil)
				if err != nil || !rep.OK || rep.Sequenced != int64(n) {
					b.Fatalf("replay: %v, %v; want %d events", rep, err, n)
				}
			}
			cpu := float64(processCPU() - cpu0)
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(cpu/float64(b.Elapsed().Nanoseconds()), "cores")
			reportStages(b, cpu, float64(threadCPU()-core0), float64(n)*float64(b.N))
		})
	}
}

// BenchmarkColumnsEncode measures the trace writer's work per event in the
// columnar layout, without the file: column encoding and zstd.
func BenchmarkColumnsEncode(b *testing.B) {
	per, n := fileBenchTraffic()
	benchColumnsEncode(b, per, n)
}

// benchColumnsEncode measures the trace writer's work per event of per, n
// events, in the columnar layout, without the file: the columns built
// (columns-cpu-ns/event, the calling goroutine's thread) and compressed
// (cpu-ns/event: the process, zstd's goroutine included).
func benchColumnsEncode(b *testing.B, per [][]byte, n int) {
	d := bytefrog.Dialect{Version: bytefrog.Version1}
	us := units(d, per, 64<<10)
	e, err := newColEncoder(io.Discard, d)
	if err != nil {
		b.Fatal(err)
	}
	defer e.close()
	b.ReportAllocs()
	// The columns are built in this goroutine, alone on its thread, and
	// compressed in the encoder's own.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	cpu0, enc0 := processCPU(), threadCPU()
	for range b.N {
		for i := range us {
			if err := e.add(&us[i]); err != nil {
				b.Fatal(err)
			}
		}
		e.flush()
	}
	if err := e.sync(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n)/float64(b.N), "ns/event")
	b.ReportMetric(float64(processCPU()-cpu0)/float64(n)/float64(b.N), "cpu-ns/event")
	b.ReportMetric(float64(threadCPU()-enc0)/float64(n)/float64(b.N), "columns-cpu-ns/event")
}

// reportStages reports the CPU of a two-stage pipeline over events: all
// of it, the first stage's (one goroutine's thread), and the rate the two
// allow on stageCores cores, where the one-goroutine stage is the
// critical path unless the whole exceeds the cores: a figure a busy
// machine changes far less than events/s.
func reportStages(b *testing.B, all, stage, events float64) {
	b.ReportMetric(all/events, "cpu-ns/event")
	b.ReportMetric(stage/events, "core-cpu-ns/event")
	b.ReportMetric(1e9/max(stage/events, all/events/stageCores), "ceiling-events/s")
}

// stageCores is the number of cores reportStages figures its
// ceiling-events/s for: this machine's two.
const stageCores = 2

// threadCPU is the calling thread's user and system CPU time in
// nanoseconds (RUSAGE_THREAD).
func threadCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// rusageThread is Linux's RUSAGE_THREAD.
const rusageThread = 1

// processCPU is the process's user and system CPU time in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkColumnsDecode measures the replay's reader per event, without
// the core: zstd and the columns turned back into Bytefrog events (what
// TraceReader.Next and a replay with a BlockProcessor use), or into the
// records replay feeds the core (colcore.go).
func BenchmarkColumnsDecode(b *testing.B) {
	per, n := fileBenchTraffic()
	d := bytefrog.Dialect{Version: bytefrog.Version1}
	path := filepath.Join(b.TempDir(), "bench"+CompressColumns.Ext())
	writeBenchTrace(b, path, per, CompressColumns, units(d, per, 64<<10))
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	for _, recs := range []bool{false, true} {
		b.Run(map[bool]string{false: "bytefrog", true: "records"}[recs], func(b *testing.B) {
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := processCPU()
			for range b.N {
				tr, err := NewTraceReader(bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				tr.col.recs = recs
				events := 0
				for {
					var u unit
					err := tr.col.next(&u)
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					events += len(u.ev)
					if u.s != nil {
						u.s.unref()
					}
				}
				tr.Close()
				if events != n {
					b.Fatalf("%d events; want %d", events, n)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(processCPU()-cpu0)/float64(n)/float64(b.N), "cpu-ns/event")
		})
	}
}
