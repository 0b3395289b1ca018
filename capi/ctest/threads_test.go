package ctest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/internal/testhq"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// parseMethods reads the "method I ID" lines a test program prints.
func parseMethods(t testing.TB, stdout string) map[int]int32 {
	t.Helper()
	out := make(map[int]int32)
	for _, line := range strings.Split(stdout, "\n") {
		var i int
		var id int32
		if n, _ := fmt.Sscanf(line, "method %d %d", &i, &id); n == 2 {
			out[i] = id
		}
	}
	return out
}

// checkCalls checks one thread's events: calls of m, each an entry then an
// exit at line k%100, or (every 1000th) an entry, an exception at line 42
// and a bubble.
func checkCalls(t testing.TB, name string, evs []testhq.Event, m int32, calls int) {
	t.Helper()
	i := 0
	next := func(k int, typ bytefrog.MsgType) testhq.Event {
		if i >= len(evs) {
			t.Fatalf("%s: call %d: trace ends; want %v", name, k, typ)
		}
		e := evs[i]
		i++
		if e.Type != typ || e.Method != m {
			t.Fatalf("%s: call %d: got %v of method %d; want %v of method %d", name, k, e.Type, e.Method, typ, m)
		}
		return e
	}
	for k := 0; k < calls; k++ {
		next(k, bytefrog.MsgMethodEntry)
		if k%1000 == 999 {
			if e := next(k, bytefrog.MsgException); e.Line != 42 || e.Exception <= 0 {
				t.Fatalf("%s: call %d: exception at line %d, type %d; want line 42", name, k, e.Line, e.Exception)
			}
			next(k, bytefrog.MsgExceptionBubble)
			continue
		}
		if e := next(k, bytefrog.MsgMethodExit); int(e.Line) != k%100 {
			t.Fatalf("%s: call %d: exit at line %d; want %d", name, k, e.Line, k%100)
		}
	}
	if i != len(evs) {
		t.Fatalf("%s: got %d events; want %d", name, len(evs), i)
	}
}

// TestThreads runs 8 threads recording concurrently: the trace must be
// gap-free, each thread's events in program order under its own name.
func TestThreads(t *testing.T) { testThreads(t, nil) }

// TestThreadsUnix is TestThreads with the program reaching HQ through a
// Unix socket file (hq=unix:/path) and one in the abstract namespace
// (hq=@name), over two data connections.
func TestThreadsUnix(t *testing.T) {
	dir, err := os.MkdirTemp("", "ctest") // short: sun_path has 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for _, addr := range []string{"unix:" + filepath.Join(dir, "hq.sock"), fmt.Sprintf("@tadpole-ctest-%d", os.Getpid())} {
		t.Run(addr, func(t *testing.T) {
			testThreads(t, func(c *hq.Config) {
				c.Listen = addr
				c.Agent.NumDataSenders = 2
			})
		})
	}
}

func testThreads(t *testing.T, tweak func(*hq.Config)) {
	lib := BuildLib(t)
	bin := filepath.Join(t.TempDir(), "threads")
	lib.Compile(t, bin, "testdata/threads.c")
	h := startHQ(t, tweak)
	const threads, calls = 8, 20000
	res := Run(t, h.env(), bin, fmt.Sprint(threads), fmt.Sprint(calls))
	if res.Err != nil {
		t.Fatalf("threads: %v\n%s", res.Err, res.Stderr)
	}
	methods := parseMethods(t, res.Stdout)
	reps, cols := h.WaitRuns(t, 1)
	perThread := 2*calls + calls/1000
	testhq.CheckClean(t, reps[0], cols[0], threads*(perThread+1))
	if a, _ := bytefrog.ParseAddr(h.Addr()); a.Net == bytefrog.NetUnix {
		if want := fmt.Sprintf("pid %d ", res.Pid); !strings.HasPrefix(reps[0].Agent, want) || reps[0].DataConns != 2 {
			t.Errorf("agent %q over %d data connections; want %q… over 2", reps[0].Agent, reps[0].DataConns, want)
		}
	}
	groups := cols[0].ByThread()
	for i := range threads {
		name := fmt.Sprintf("worker-%d", i)
		evs, ok := groups[name]
		if !ok {
			t.Fatalf("no events under the thread name %q; names: %v", name, keys(groups))
		}
		checkCalls(t, name, evs, methods[i], calls)
		if sig := cols[0].Methods()[methods[i]]; sig != fmt.Sprintf("ctest/Worker%d.run;1;()V", i) {
			t.Errorf("method %d mapped to %q", methods[i], sig)
		}
	}
	done := cols[0].Markers("done")
	slices.Sort(done)
	var want []string
	for i := range threads {
		want = append(want, fmt.Sprintf("worker-%d", i))
	}
	slices.Sort(want)
	if !slices.Equal(done, want) {
		t.Errorf("got done markers %q; want %q", done, want)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
