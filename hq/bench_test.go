package hq_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

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
	for _, file := range []string{"columns", "s2", "zstd", "none", "nofile"} {
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
		rep := sendAll(b, srv, bytefrog.Version1, per)
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

// benchMarkers is the size of one run of BenchmarkIngestMarkers.
const benchMarkers = 500_000

// markerTraffic is what the JVM agent sends for java.util.logging records:
// markers "log:<logger>" = "<level> <message>" (60–100 bytes on the wire)
// from a few loggers and threads, in agent buffers of about 64 KiB.
var markerTraffic = sync.OnceValue(func() []byte {
	g := hqtest.NewGen(bytefrog.FlavorBytefrog)
	loggers := []string{"log:bench.jul", "log:com.example.orders", "log:com.example.http.server", "log:app"}
	levels := []string{"INFO", "WARNING", "FINE", "SEVERE"}
	var b []byte
	for i := range benchMarkers {
		if i%1000 == 0 {
			g.RelTime++
		}
		g.Marker(loggers[i%len(loggers)], fmt.Sprintf("%s benchmark record %d of the run", levels[i%7%len(levels)], i))
		if g.Len() >= 64<<10 {
			b = append(b, g.Take()...)
		}
	}
	return append(b, g.Take()...)
})

// BenchmarkIngestMarkers measures HQ's cost per marker (the JVM agent's
// log records) through the whole ingest path over loopback: parse,
// reorder, analysis (counts, last markers) and the trace file (s2, or
// nofile: none written, as the JVM benchmarks run HQ). One iteration is one
// run of benchMarkers markers; cpu-ns/marker is the process's CPU time
// (HQ's goroutines and the in-process sender) per marker.
func BenchmarkIngestMarkers(b *testing.B) {
	for _, file := range []string{"s2", "nofile"} {
		b.Run(file, func(b *testing.B) { benchMarkerRuns(b, file) })
	}
}

func benchMarkerRuns(b *testing.B, file string) {
	data := markerTraffic()
	srv := start(b, func(c *hq.Config) {
		if file == "nofile" {
			c.TraceDir = ""
		}
	})
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var ms0, ms1 runtime.MemStats
	b.ResetTimer()
	runtime.ReadMemStats(&ms0)
	cpu0 := cpuTime()
	for range b.N {
		rep := sendAll(b, srv, bytefrog.Version1, [][]byte{data})
		if !rep.OK || rep.Markers != benchMarkers {
			b.Fatalf("run: %s, %d markers; want %d", rep.Result(), rep.Markers, benchMarkers)
		}
		if rep.TraceFile != "" {
			os.Remove(rep.TraceFile)
		}
	}
	n := float64(b.N * benchMarkers)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/marker")
	b.ReportMetric(float64(cpuTime()-cpu0)/n, "cpu-ns/marker")
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/n, "allocs/marker")
	b.ReportMetric(0, "ns/op")
}

// cpuTime is the process's user and system CPU time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// switches returns the process's context switches so far, voluntary (a
// thread waiting for work or for the kernel) and not, and its page faults
// (memory touched for the first time, or again after the runtime gave it
// back).
func switches() (csw, faults int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return ru.Nvcsw + ru.Nivcsw, ru.Minflt + ru.Majflt
}

// ceilingCores is the number of cores BenchmarkIngestProcess's
// ceiling-events/s is figured for: this machine's two.
const ceilingCores = 2

// processEvents is the size of one run of BenchmarkIngestProcess.
const processEvents = 8_000_000

// BenchmarkIngestProcess measures ingest end to end: an agent process
// (testdata/e2eagent, the Go agent recording nested calls from 2
// goroutines) sends its events over loopback TCP (net=tcp) or a Unix-domain
// socket (net=unix) to HQ in this process, which
// reorders, checks and writes them (file: the trace file's layout, nofile:
// none). events/s is the run's events over the time from starting the
// agent process to HQ's report, the trace file closed: the agent's
// recording, drain and encoder, the socket, HQ's parse, reorder, checks and
// file writer are all inside it (and the process's start, a few ms). One
// iteration is one run of processEvents events; start-ms/run is the time
// from starting the agent process to its Hello at HQ, and hello-events/s
// the rate without it. hq-cpu-ns/event and
// agent-cpu-ns/event are each process's CPU time per event (getrusage),
// which a busy machine changes far less than events/s; ceiling-events/s
// is what they allow on two cores. hq-switches/run and hq-faults/run are
// HQ's context switches (its goroutines waiting for each other, or
// preempted) and page faults per run: the first run of a process faults its
// buffers in, the later ones reuse them.
func BenchmarkIngestProcess(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "e2eagent")
	build := exec.Command("go", "build", "-o", bin, "./testdata/e2eagent")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	for _, file := range []string{"columns", "s2", "nofile"} {
		for _, k := range []int{1, 2} {
			for _, network := range []string{"tcp", "unix"} {
				b.Run(fmt.Sprintf("conns=%d/%s/net=%s", k, file, network), func(b *testing.B) { benchProcess(b, bin, k, file, network) })
			}
		}
	}
}

// benchProcess runs BenchmarkIngestProcess's runs: the agent reaches HQ
// over network, loopback TCP or a Unix-domain socket (hq=unix:/path).
func benchProcess(b *testing.B, bin string, k int, file, network string) {
	srv := start(b, func(c *hq.Config) {
		if network == "unix" {
			dir, err := os.MkdirTemp("", "hqbench") // b.TempDir's path can outgrow sun_path
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { os.RemoveAll(dir) })
			c.Listen = "unix:" + filepath.Join(dir, "hq.sock")
		}
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
	var busy, startup time.Duration
	var events, agentCPU, agentCsw, agentSys int64
	var fileSize, wire int64
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	csw0, flt0 := switches()
	for range b.N {
		args := []string{"-events", fmt.Sprint(processEvents), "-g", "2"}
		if p := os.Getenv("TADPOLE_BENCH_AGENT_PROFILE"); p != "" {
			args = append(args, "-cpuprofile", p) // the agent process's CPU profile
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "TADPOLE_HQ="+srv.Addr(), "TADPOLE_LOG=none")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		var exitErr error
		exited := make(chan struct{})
		go func() { exitErr = cmd.Wait(); close(exited) }()
		// The run, unless the agent process ends without one.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		go func() {
			select {
			case <-exited:
				time.Sleep(time.Second) // a run that began just before the exit still comes
				cancel()
			case <-ctx.Done():
			}
		}()
		run, err := srv.NextRun(ctx)
		cancel()
		if err != nil {
			b.Fatalf("no run from the agent process: %v\n%s", err, stderr.String())
		}
		rep, err := run.Wait(ctxT(b)) // the trace file is closed
		took := time.Since(t0)
		if err != nil {
			b.Fatalf("run: %v", err)
		}
		if <-exited; exitErr != nil {
			b.Fatalf("agent: %v\n%s", exitErr, stderr.String())
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			agentCPU += ru.Utime.Nano() + ru.Stime.Nano()
			agentCsw += ru.Nvcsw + ru.Nivcsw
			agentSys += ru.Stime.Nano()
		}
		if !rep.OK || rep.GapCount != 0 || rep.Sequenced < processEvents*9/10 {
			b.Fatalf("run: %s, %d events, %d gaps", rep.Result(), rep.Sequenced, rep.GapCount)
		}
		busy += took
		startup += rep.Start.Sub(t0)
		events += rep.Sequenced
		if rep.TraceFile != "" {
			b.StopTimer()
			if fi, err := os.Stat(rep.TraceFile); err == nil {
				fileSize, wire = fi.Size(), rep.Bytes
			}
			os.Remove(rep.TraceFile)
			b.StartTimer()
		}
	}
	hqCPU := cpuTime() - cpu0
	csw, flt := switches()
	b.ReportMetric(float64(csw-csw0)/float64(b.N), "hq-switches/run")
	b.ReportMetric(float64(flt-flt0)/float64(b.N), "hq-faults/run")
	b.ReportMetric(float64(events)/busy.Seconds(), "events/s")
	// The agent process's start, up to its Hello at HQ, is inside
	// events/s; hello-events/s leaves it out.
	b.ReportMetric(startup.Seconds()*1e3/float64(b.N), "start-ms/run")
	b.ReportMetric(float64(events)/(busy-startup).Seconds(), "hello-events/s")
	// CPU time per event of each process: what the run would need of a
	// machine to itself, whatever else this one runs.
	hqNs, agentNs := float64(hqCPU)/float64(events), float64(agentCPU)/float64(events)
	b.ReportMetric(hqNs, "hq-cpu-ns/event")
	b.ReportMetric(agentNs, "agent-cpu-ns/event")
	// The agent's kernel time (its socket writes, mostly) and its context
	// switches: what the transport (net=) changes.
	b.ReportMetric(float64(agentSys)/float64(events), "agent-sys-ns/event")
	b.ReportMetric(float64(agentCsw)/float64(b.N), "agent-ctxsw/run")
	// What the two CPU figures allow on a machine of ceilingCores cores
	// to itself, every stage overlapped: the rate the whole path cannot
	// beat however the work is spread over the cores.
	b.ReportMetric(ceilingCores*1e9/(hqNs+agentNs), "ceiling-events/s")
	if fileSize > 0 {
		b.ReportMetric(float64(fileSize)*float64(b.N)/float64(events), "file-B/event")
		b.ReportMetric(float64(wire)/float64(fileSize), "x-smaller") // than the Bytefrog bytes received
	}
}
