package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// fedServer is a page with one run fed by hand (no HQ): calls, an
// exception, markers.
func fedServer(t testing.TB) *Server {
	s, err := New(&Config{Tick: time.Minute, DeltaNodes: 3, DeltaSpans: 2, DeltaMarkers: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	tr := s.add(nil)
	g := hqtest.NewGen(bytefrog.FlavorBytefrog)
	for i := range int32(20) {
		g.RelTime = i * 3
		g.Entry(1, 1)
		g.Entry(1, 2+i%4)
		g.RelTime++
		if i%5 == 0 {
			g.Throw(1, 2+i%4, 9, 1)
			g.Bubble(1, 2+i%4, 9)
		} else {
			g.Exit(1, 2+i%4, 0)
		}
		g.Exit(1, 1, 0)
		g.Marker("log:x", "INFO <script>alert(1)</script> \"quoted\"")
	}
	b := g.Take()
	d := bytefrog.Dialect{Version: bytefrog.Version1, Flavor: bytefrog.FlavorBytefrog}
	var m bytefrog.Msg
	for len(b) > 0 {
		n, err := d.Parse(&m, b)
		if err != nil {
			t.Fatal(err)
		}
		tr.Message(&m)
		b = b[n:]
	}
	tr.Finish(&hq.Report{OK: true})
	return s
}

// FuzzAPI: any path and query, with any method and headers a page could
// send, gets an answer of a known status; a 200 carries valid JSON (or the
// page) and no command reaches a run without the control header.
func FuzzAPI(f *testing.F) {
	for _, seed := range []string{
		"/api/runs", "/api/runs/1/flame?since=0", "/api/runs/1/flame?since=1&after=2&names=1",
		"/api/runs/1/timeline?since=3", "/api/runs/1/exceptions", "/api/runs/1/markers?q=script&kind=log&from=oldest&limit=1",
		"/api/runs/1/control?action=pause", "/", "/app.js", "/api/runs/%2e%2e/flame", "/api/runs/1/markers?q=%ff%fe",
		"/api/runs/18446744073709551616/flame", "/api/runs/1/flame?since=99999999999999999999",
	} {
		f.Add("GET", seed, false)
		f.Add("POST", seed, true)
	}
	s := fedServer(f)
	h := s.Handler()
	f.Fuzz(func(t *testing.T, method, target string, header bool) {
		if !strings.HasPrefix(target, "/") || strings.ContainsAny(target, " \r\n\t#") || len(method) == 0 || len(method) > 10 ||
			strings.ContainsAny(method, " \r\n\t/()<>@,;:\\\"[]?={}") {
			return
		}
		req, err := http.NewRequest(method, "http://127.0.0.1:1"+target, nil)
		if err != nil {
			return
		}
		if header {
			req.Header.Set(ControlHeader, "1")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		switch w.Code {
		case 200:
			ct := w.Header().Get("Content-Type")
			if strings.HasPrefix(ct, "application/json") && !json.Valid(w.Body.Bytes()) {
				t.Fatalf("%s %s: invalid JSON %q", method, target, w.Body.String())
			}
			if strings.Contains(target, "control") && !header && method == "POST" {
				t.Fatalf("%s %s: a command without the control header", method, target)
			}
		case 301, 307, 308, 400, 403, 404, 405, 409, 410:
		default:
			t.Fatalf("%s %s: status %d %q", method, target, w.Code, w.Body.String())
		}
		if w.Header().Get("Content-Security-Policy") == "" && w.Code != 301 && w.Code != 307 && w.Code != 308 {
			t.Fatalf("%s %s: no Content-Security-Policy", method, target)
		}
	})
}

// TestFedRun: a run fed by hand shows on the page with its data, texts
// escaped as JSON strings.
func TestFedRun(t *testing.T) {
	s := fedServer(t)
	h := s.Handler()
	get := func(target string, v any) {
		t.Helper()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1:1"+target, nil))
		if w.Code != 200 {
			t.Fatalf("%s: %d %s", target, w.Code, w.Body.String())
		}
		if err := json.Unmarshal(w.Body.Bytes(), v); err != nil {
			t.Fatalf("%s: %v", target, err)
		}
	}
	var runs runsJSON
	get("/api/runs", &runs)
	if len(runs.Runs) != 1 || !runs.Runs[0].Ended || !runs.Runs[0].OK || runs.Runs[0].Calls != 40 {
		t.Fatalf("runs %+v", runs.Runs)
	}
	var mk struct {
		Markers []MarkerInfo `json:"markers"`
	}
	get("/api/runs/1/markers?kind=log", &mk)
	if len(mk.Markers) != 2 || mk.Markers[1].Value != "INFO <script>alert(1)</script> \"quoted\"" {
		t.Errorf("markers %+v", mk.Markers)
	}
	var ex struct {
		Paths []BubbleInfo `json:"paths"`
	}
	get("/api/runs/1/exceptions", &ex)
	if len(ex.Paths) != 4 || ex.Paths[0].Count != 1 || ex.Paths[0].Caught != "com.example.C1.m1()V" || ex.Paths[0].Thrower != ex.Paths[0].Path[0] {
		t.Errorf("bubble paths %+v", ex.Paths)
	}
}

// TestHookChains: Hook keeps a NewProcessor already set; both get the
// run's messages.
func TestHookChains(t *testing.T) {
	w, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cfg := hq.DefaultConfig()
	var other counter
	cfg.NewProcessor = func(*hq.Run) hq.Processor { return &other }
	w.Hook(cfg)
	p := cfg.NewProcessor(nil)
	p.Message(&bytefrog.Msg{Type: bytefrog.MsgMethodEntry, ThreadID: 1, MethodID: 1})
	p.DataBreak(1)
	p.Finish(&hq.Report{})
	if other != (counter{1, 1, 1}) {
		t.Errorf("the other processor got %+v", other)
	}
	if trs := w.trackers(); len(trs) != 1 || trs[0].tree.Stats().Calls != 1 {
		t.Errorf("the page's processor did not get the call")
	}
	w.Close()
	cfg.NewProcessor = func(*hq.Run) hq.Processor { return nil }
	w.Hook(cfg)
	if p := cfg.NewProcessor(nil); p != nil {
		t.Errorf("after Close, with no other processor: %v", p)
	}
}

type counter struct{ msgs, breaks, finish int }

func (c *counter) Message(*bytefrog.Msg) { c.msgs++ }
func (c *counter) DataBreak(int32)       { c.breaks++ }
func (c *counter) Finish(*hq.Report)     { c.finish++ }

// TestEndedRunsPruned: the page keeps the last EndedRuns ended runs, and
// no more than EndedPaths call paths of ended runs; live runs stay.
func TestEndedRunsPruned(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want []int
	}{
		{Config{EndedRuns: 2}, []int{1, 3, 4}},
		{Config{EndedPaths: 5}, []int{1, 4}}, // 3 paths each: root, A, A→B
	} {
		s, err := New(&c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		live := s.add(nil)
		for range 3 {
			tr := s.add(nil)
			tr.Message(&bytefrog.Msg{Type: bytefrog.MsgMethodEntry, ThreadID: 1, MethodID: 1})
			tr.Message(&bytefrog.Msg{Type: bytefrog.MsgMethodEntry, ThreadID: 1, MethodID: 2})
			tr.Finish(&hq.Report{OK: true})
		}
		s.mu.Lock()
		s.pruneLocked()
		var keys []int
		for _, tr := range s.runs {
			keys = append(keys, tr.key)
		}
		s.mu.Unlock()
		if !slices.Equal(keys, c.want) {
			t.Errorf("%+v: runs %v, want %v", c.cfg, keys, c.want)
		}
		live.Finish(nil)
		s.Close()
	}
}

// TestNoGoroutineLeft: once its runs ended and it is closed, a page leaves
// no goroutine behind (publisher, workers, HTTP server).
func TestNoGoroutineLeft(t *testing.T) {
	e := newEnv(t, nil)
	e.gen.Entry(1, 1)
	e.gen.Exit(1, 1, 0)
	e.send()
	e.run()
	e.shutdown(false)
	e.hq.Close()
	e.web.Close()
	e.web.Close() // idempotent
	deadline := time.Now().Add(5 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		st := string(buf[:runtime.Stack(buf, true)])
		left := strings.Contains(st, "web.(*tracker).work") || strings.Contains(st, "web.(*Server).publisher") ||
			strings.Contains(st, "net/http.(*Server).Serve")
		if !left {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines left:\n%s", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPageFallsBehind: when the worker is a full queue behind, the run's
// core does not wait: the page leaves calls out (counted), keeps every
// mapping, makes a data break of its own, and its tree stays consistent.
func TestPageFallsBehind(t *testing.T) {
	s, err := New(&Config{Batch: 4, DeltaNodes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tr := s.add(nil)
	g := hqtest.NewGen(bytefrog.FlavorBytefrog)
	for i := range int32(200) {
		g.Entry(1, 1+i%50) // 50 methods: each mapped before its first use
		g.Entry(1, 100)
		g.Exit(1, 100, 0)
		g.Exit(1, 1+i%50, 0)
		g.Marker("m", "v")
	}
	b := g.Take()
	d := bytefrog.Dialect{Version: bytefrog.Version1, Flavor: bytefrog.FlavorBytefrog}
	var m bytefrog.Msg
	tr.mu.Lock() // the worker takes one batch in and waits
	done := make(chan struct{})
	go func() {
		defer close(done)
		for len(b) > 0 {
			n, err := d.Parse(&m, b)
			if err != nil {
				panic(err)
			}
			tr.Message(&m)
			b = b[n:]
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the run's core waited for the page")
	}
	tr.mu.Unlock()
	tr.Finish(&hq.Report{OK: true})
	dropped := tr.dropped.Load()
	st := tr.tree.Stats()
	if dropped == 0 || tr.breaks.Load() == 0 {
		t.Fatalf("dropped %d, breaks %d: the page never fell behind", dropped, tr.breaks.Load())
	}
	if st.Events+dropped != 800 {
		t.Errorf("tree events %d + dropped %d, want 800", st.Events, dropped)
	}
	if len(tr.names) != 51 {
		t.Errorf("%d method names, want 51: a mapping was lost", len(tr.names))
	}
	if int64(tr.nmarkers)+tr.droppedMarkers.Load() != 200 {
		t.Errorf("markers %d + dropped %d, want 200", tr.nmarkers, tr.droppedMarkers.Load())
	}
	var runs runsJSON
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1:1/api/runs", nil))
	json.Unmarshal(w.Body.Bytes(), &runs)
	if len(runs.Runs) != 1 || runs.Runs[0].PageDropped != dropped {
		t.Errorf("runs %+v", runs.Runs)
	}
	// Every path's total is still at least its callees'.
	sums := map[int32]int64{}
	for i, v := range tr.pub.vals {
		if i > 0 {
			sums[v.Parent] += v.Total
		}
	}
	for i, s := range sums {
		if tr.pub.vals[i].Total < s {
			t.Errorf("node %d: total %d < callees' %d", i, tr.pub.vals[i].Total, s)
		}
	}
}

// TestDeepStack: the timeline follows at most maxStack open calls of a
// thread; deeper calls are counted out and back.
func TestDeepStack(t *testing.T) {
	s, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tr := s.add(nil)
	const depth = maxStack + 1000
	var m bytefrog.Msg
	for i := range int32(depth) {
		m = bytefrog.Msg{Type: bytefrog.MsgMethodEntry, ThreadID: 3, MethodID: i % 10, RelTime: i}
		tr.Message(&m)
	}
	tr.sync()
	tr.mu.Lock()
	th := tr.threads[3]
	if len(th.stack) != maxStack || th.deep != 1000 {
		t.Errorf("stack %d deep %d, want %d and 1000", len(th.stack), th.deep, maxStack)
	}
	tr.mu.Unlock()
	for i := int32(depth - 1); i >= 0; i-- {
		m = bytefrog.Msg{Type: bytefrog.MsgMethodExit, ThreadID: 3, MethodID: i % 10, RelTime: depth}
		tr.Message(&m)
	}
	rep := &hq.Report{OK: true}
	tr.Finish(rep)
	if len(th.stack) != 0 || th.deep != 0 || tr.tree.Stats().Calls != depth {
		t.Errorf("after the exits: stack %d deep %d calls %d", len(th.stack), th.deep, tr.tree.Stats().Calls)
	}
	// The tree's bound (MaxDepth) shows on the page, not in HQ's report.
	if len(rep.Warnings) != 0 {
		t.Errorf("HQ's report got the page's warnings: %q", rep.Warnings)
	}
	if ri := tr.info(); len(ri.Warnings) != 1 || !strings.Contains(ri.Warnings[0], "MaxDepth") {
		t.Errorf("the page's warnings: %q", ri.Warnings)
	}
}
