package hq_test

import (
	"context"
	"io"
	"log/slog"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// testLog sends log records to t.Log until the test ends.
type testLog struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.t.Logf("%s", strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func (l *testLog) stop() {
	l.mu.Lock()
	l.done = true
	l.mu.Unlock()
}

// start runs a server on a loopback port (or at the cfg.Listen mod sets)
// with a fast heartbeat and a trace directory; mod changes the
// configuration first. Cleanup closes the
// server and checks that no HQ goroutine is left.
func start(t testing.TB, mod func(*hq.Config)) *hq.Server {
	t.Helper()
	cfg := hq.DefaultConfig()
	cfg.Agent.HeartbeatInterval = 100
	cfg.TraceDir = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	lw := &testLog{t: t}
	var w io.Writer = lw
	if _, ok := t.(*testing.B); ok {
		w = io.Discard
	}
	cfg.Logger = slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if mod != nil {
		mod(cfg)
	}
	srv, err := hq.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := srv.Listen(cfg.Listen); err != nil {
		t.Fatalf("Listen: %v", err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve() }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-served; err != hq.ErrClosed {
			t.Errorf("Serve returned %v; want ErrClosed", err)
		}
		lw.stop()
		checkNoHQGoroutines(t)
	})
	return srv
}

// checkNoHQGoroutines fails when goroutines of package hq are still alive.
func checkNoHQGoroutines(t testing.TB) {
	t.Helper()
	var stacks string
	for range 100 {
		buf := make([]byte, 1<<20)
		stacks = string(buf[:runtime.Stack(buf, true)])
		leaked := false
		for _, g := range strings.Split(stacks, "\n\n") {
			if strings.Contains(g, "tadpole/hq.") && !strings.Contains(g, "hq_test.") {
				leaked = true
			}
		}
		if !leaked {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("HQ goroutines left after Close:\n%s", stacks)
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func dial(t testing.TB, srv *hq.Server, version uint8) *hqtest.Agent {
	t.Helper()
	a, err := hqtest.Dial(srv.Addr(), version, bytefrog.FlavorBytefrog)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(a.Close)
	return a
}

func expect(t testing.TB, a *hqtest.Agent, types ...bytefrog.MsgType) {
	t.Helper()
	for _, ty := range types {
		if _, err := a.Expect(ty); err != nil {
			t.Fatal(err)
		}
	}
}

// started connects a protocol v1 agent to srv, waits for HQ's Start and
// opens a data connection: the agent, its run and the data connection's
// index.
func started(t testing.TB, srv *hq.Server) (*hqtest.Agent, *hq.Run, int) {
	t.Helper()
	a := dial(t, srv, bytefrog.Version1)
	expect(t, a, bytefrog.MsgStart)
	run := nextRun(t, srv)
	i, err := a.OpenData()
	must(t, err)
	return a, run, i
}

// sendAll runs one agent of protocol version on srv that sends per[i] on
// data connection i, all at once, then shuts down; it returns the report.
func sendAll(t testing.TB, srv *hq.Server, version uint8, per [][]byte) *hq.Report {
	t.Helper()
	return sendAllAt(t, srv, srv.Addr(), version, per)
}

// sendAllAt is sendAll through srv's listening address addr.
func sendAllAt(t testing.TB, srv *hq.Server, addr string, version uint8, per [][]byte) *hq.Report {
	t.Helper()
	a, err := hqtest.Dial(addr, version, bytefrog.FlavorBytefrog)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(a.Close)
	expect(t, a, bytefrog.MsgStart)
	run := nextRun(t, srv)
	for range per {
		_, err := a.OpenData()
		must(t, err)
	}
	var wg sync.WaitGroup
	for i := range per {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := a.Write(i, per[i]); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	must(t, a.Shutdown(false))
	return wait(t, run)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func nextRun(t testing.TB, srv *hq.Server) *hq.Run {
	t.Helper()
	r, err := srv.NextRun(ctxT(t))
	if err != nil {
		t.Fatalf("NextRun: %v", err)
	}
	return r
}

func wait(t testing.TB, r *hq.Run) *hq.Report {
	t.Helper()
	rep, err := r.Wait(ctxT(t))
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	return rep
}

// checkReplay replays the run's trace file and compares the reports.
// Processors, if any, see the replay.
func checkReplay(t testing.TB, rep *hq.Report, procs ...hq.Processor) {
	t.Helper()
	if rep.TraceFile == "" {
		t.Fatalf("no trace file; warnings %q", rep.Warnings)
	}
	got, err := hq.ReplayFile(rep.TraceFile, &hq.ReplayOptions{Processors: procs})
	if err != nil {
		t.Fatalf("ReplayFile: %v", err)
	}
	gv, wv := reflect.ValueOf(got).Elem(), reflect.ValueOf(rep).Elem()
	for i := range gv.NumField() {
		if g, w := gv.Field(i).Interface(), wv.Field(i).Interface(); !reflect.DeepEqual(g, w) {
			t.Errorf("replay: %s = %v; want %v", gv.Type().Field(i).Name, g, w)
		}
	}
}

// traffic returns w's buffers and event count.
func traffic(events, methods, threads int) ([][]byte, int) {
	return hqtest.Generate(hqtest.Workload{Events: events, Methods: methods, Threads: threads, Chunk: 2048, Seed: 1})
}
