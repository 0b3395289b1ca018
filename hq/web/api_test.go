package web

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// node finds the call path methods (ids) in the nodes the page got.
func findPath(nodes map[int64][8]int64, path ...int64) ([8]int64, bool) {
	parent := int64(0)
	var found [8]int64
	for _, m := range path {
		ok := false
		for _, n := range nodes {
			if n[1] == parent && n[2] == m {
				found, parent, ok = n, n[0], true
				break
			}
		}
		if !ok {
			return found, false
		}
	}
	return found, true
}

// collect merges a delta into nodes.
func collect(nodes map[int64][8]int64, f flameJSON) {
	for _, n := range f.Nodes {
		nodes[n[0]] = n
	}
}

// TestFlameDeltas: the flame graph endpoint sends the call paths with
// their calls, total and self time, then only the paths that changed
// since the page's version, and new method names only; calls still open
// count up to their thread's last event, so that every path is at least
// as wide as its callees.
func TestFlameDeltas(t *testing.T) {
	e := newEnv(t, nil)
	g := e.gen
	// A(1) calls B(2) for 5 ms, then C(3) for 7 ms.
	g.Entry(1, 1)
	g.Entry(1, 2)
	g.RelTime = 5
	g.Exit(1, 2, 0)
	g.Entry(1, 3)
	g.RelTime = 12
	g.Exit(1, 3, 0)
	g.Exit(1, 1, 0)
	e.send()
	key := e.run().Key
	var f1 flameJSON
	e.waitData("the first calls", func() bool { f1 = e.flame(key, 0, 0, 0); return len(f1.Nodes) == 4 && f1.Nodes[0][4] == 12 })
	nodes := map[int64][8]int64{}
	collect(nodes, f1)
	for _, c := range []struct {
		path               []int64
		calls, total, self int64
	}{{[]int64{1}, 1, 12, 0}, {[]int64{1, 2}, 1, 5, 5}, {[]int64{1, 3}, 1, 7, 7}} {
		n, ok := findPath(nodes, c.path...)
		if !ok || n[3] != c.calls || n[4] != c.total || n[5] != c.self {
			t.Errorf("path %v: %v (found %v), want calls %d total %d self %d", c.path, n, ok, c.calls, c.total, c.self)
		}
	}
	if len(f1.Names) != 3 || f1.Names[0][1] != "com.example.C1.m1()V" {
		t.Errorf("names %v", f1.Names)
	}

	// A calls C again: only the root, A and A→C change.
	g.RelTime = 20
	g.Entry(1, 1)
	g.Entry(1, 3)
	g.RelTime = 23
	g.Exit(1, 3, 0)
	g.Exit(1, 1, 0)
	e.send()
	var f2 flameJSON
	e.waitData("the second calls", func() bool {
		f2 = e.flame(key, f1.Version, 0, len(f1.Names))
		return len(f2.Nodes) > 0 && f2.Nodes[0][3] == 2
	})
	var got []int64
	for _, n := range f2.Nodes {
		got = append(got, n[0])
	}
	a, _ := findPath(nodes, 1)
	ac, _ := findPath(nodes, 1, 3)
	if want := []int64{0, a[0], ac[0]}; !slices.Equal(got, want) {
		t.Errorf("delta since version %d: nodes %v, want %v (root, A, A→C)", f1.Version, got, want)
	}
	if len(f2.Names) != 0 {
		t.Errorf("names after 3: %v", f2.Names)
	}
	if f2.Version <= f1.Version {
		t.Errorf("version %d after %d", f2.Version, f1.Version)
	}

	// Open calls: A and B entered at 30, D(4) under B at 40, nothing closed.
	g.RelTime = 30
	g.Entry(1, 1)
	g.Entry(1, 2)
	g.RelTime = 40
	g.Entry(1, 4)
	e.send()
	var f3 flameJSON
	e.waitData("the open calls", func() bool {
		f3 = e.flame(key, 0, 0, 0)
		return len(f3.Nodes) == 5 && f3.Nodes[0][3] == 3
	})
	nodes = map[int64][8]int64{}
	collect(nodes, f3)
	if n, _ := findPath(nodes, 1); n[4] != 12+3+10 {
		t.Errorf("A with an open call: total %d, want 25", n[4])
	}
	if n, _ := findPath(nodes, 1, 2); n[4] != 15 || n[5] != 15 {
		t.Errorf("A→B open for 10 ms: total %d self %d, want 15 15", n[4], n[5])
	}
	sums := map[int64]int64{}
	for _, n := range nodes {
		if n[0] != 0 {
			sums[n[1]] += n[4]
		}
	}
	for i, s := range sums {
		if nodes[i][4] < s {
			t.Errorf("node %d: total %d < its callees' %d", i, nodes[i][4], s)
		}
	}
	// The same version again: nothing.
	if f := e.flame(key, f3.Version, 0, 4); len(f.Nodes) != 0 && f.Version == f3.Version {
		t.Errorf("since the current version: %d nodes", len(f.Nodes))
	}
}

// TestFlameCap: an answer holds at most DeltaNodes call paths; the page
// pages through them with resume, and gets every path once; MaxNodes caps
// the paths it gets at all.
func TestFlameCap(t *testing.T) {
	e := newEnv(t, &Config{Tick: DefaultTick / 10, DeltaNodes: 7, MaxNodes: 30})
	for m := int32(1); m <= 40; m++ { // 40 paths under A
		e.gen.Entry(2, 100)
		e.gen.Entry(2, m)
		e.gen.Exit(2, m, 0)
		e.gen.Exit(2, 100, 0)
	}
	e.send()
	key := e.run().Key
	var f flameJSON
	e.waitData("41 paths", func() bool { f = e.flame(key, 0, 0, 0); return f.Paths == 42 })
	if f.Shown != 30 {
		t.Errorf("shown %d, want the cap 30", f.Shown)
	}
	nodes := map[int64][8]int64{}
	pages := 0
	for after := 0; ; pages++ {
		f := e.flame(key, 0, after, 0)
		if len(f.Nodes) > 7 {
			t.Fatalf("an answer of %d nodes (cap 7)", len(f.Nodes))
		}
		for _, n := range f.Nodes {
			if _, dup := nodes[n[0]]; dup {
				t.Errorf("node %d sent twice", n[0])
			}
		}
		collect(nodes, f)
		if !f.More {
			break
		}
		after = f.Resume
	}
	if len(nodes) != 30 || pages != 4 {
		t.Errorf("%d nodes in %d more pages, want 30 in 4", len(nodes), pages)
	}
}

// TestControlButtons: the page's pause, unpause and stop reach the agent
// as HQ's commands, through the run's control path; the page shows the
// mode the agent reports and HQ's control log; the run's report lists the
// commands. An ended run refuses them.
func TestControlButtons(t *testing.T) {
	e := newEnv(t, nil)
	key := e.run().Key
	ctl := func(action string) (int, string) {
		return e.request("POST", fmt.Sprintf("/api/runs/%d/control?action=%s", key, action), map[string]string{ControlHeader: "1"})
	}
	for _, step := range []struct {
		action string
		msg    bytefrog.MsgType
		mode   bytefrog.Mode
	}{{"pause", bytefrog.MsgPause, bytefrog.ModePaused}, {"unpause", bytefrog.MsgUnpause, bytefrog.ModeTracing},
		{"suspend", bytefrog.MsgSuspend, bytefrog.ModeSuspended}, {"unsuspend", bytefrog.MsgUnsuspend, bytefrog.ModeTracing}} {
		if code, body := ctl(step.action); code != 200 {
			t.Fatalf("%s: %d %s", step.action, code, body)
		}
		if _, err := e.agent.Expect(step.msg); err != nil {
			t.Fatalf("%s: %v", step.action, err)
		}
		e.heartbeat(step.mode)
		e.waitFor("mode "+step.mode.String(), func() bool {
			ri := e.run()
			return ri.Mode == step.mode.String() && contains(ri.Commands, step.msg.String())
		})
	}
	if code, body := ctl("unpause"); code != 409 {
		t.Errorf("unpause while tracing: %d %s, want 409 (HQ's lifecycle refuses it)", code, body)
	}
	if code, body := ctl("stop"); code != 200 {
		t.Fatalf("stop: %d %s", code, body)
	}
	if _, err := e.agent.Expect(bytefrog.MsgStop); err != nil {
		t.Fatal(err)
	}
	rep := e.shutdown(true)
	var types []string
	for _, c := range rep.Commands {
		types = append(types, c.Type.String())
	}
	if want := "Configuration Start Pause Unpause Suspend Unsuspend Stop"; strings.Join(types, " ") != want {
		t.Errorf("report commands %v, want %s", types, want)
	}
	e.waitFor("the run ended on the page", func() bool { ri := e.run(); return ri.Ended && ri.OK })
	if code, _ := ctl("pause"); code != 410 {
		t.Errorf("pause after the end: %d, want 410", code)
	}
}

// TestLoopbackOnly: Listen refuses addresses beyond loopback unless
// AllowRemote is set.
func TestLoopbackOnly(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "[::1]:80": true, "localhost:1": true, "127.9.9.9:1": true,
		"0.0.0.0:8080": false, ":8080": false, "192.0.2.1:80": false, "[::]:80": false, "example.com:80": false, "junk": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v", addr, got)
		}
	}
	w, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, addr := range []string{"0.0.0.0:0", ":0", ""} {
		if err := w.Listen(addr); !errors.Is(err, ErrNotLoopback) {
			t.Errorf("Listen(%q): %v, want ErrNotLoopback", addr, err)
		}
	}
	r, err := New(&Config{AllowRemote: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Listen("0.0.0.0:0"); err != nil {
		t.Errorf("with AllowRemote: %v", err)
	}
}

// TestHostile: requests a page would not make are refused before they do
// anything: another Host (DNS rebinding), control without the page's
// header or from another origin, wrong methods, bad numbers and filters,
// unknown runs and files.
func TestHostile(t *testing.T) {
	e := newEnv(t, nil)
	key := e.run().Key
	ctl := fmt.Sprintf("/api/runs/%d/control?action=pause", key)
	for _, c := range []struct {
		method, path string
		hdr          map[string]string
		want         int
	}{
		{"GET", "/api/runs", map[string]string{"Host": "evil.example:80"}, 421},
		{"GET", "/", map[string]string{"Host": "evil.example"}, 421},
		{"POST", ctl, map[string]string{"Host": "attacker.test", ControlHeader: "1"}, 421},
		{"POST", ctl, nil, 403},
		{"POST", ctl, map[string]string{ControlHeader: "yes"}, 403},
		{"POST", ctl, map[string]string{ControlHeader: "1", "Origin": "http://evil.example"}, 403},
		{"GET", ctl, map[string]string{ControlHeader: "1"}, 405},
		{"PUT", "/api/runs", nil, 405},
		{"POST", fmt.Sprintf("/api/runs/%d/control?action=exit", key), map[string]string{ControlHeader: "1"}, 400},
		{"POST", fmt.Sprintf("/api/runs/%d/control", key), map[string]string{ControlHeader: "1"}, 400},
		{"POST", "/api/runs/999/control?action=pause", map[string]string{ControlHeader: "1"}, 404},
		{"GET", "/api/runs/-1/flame", nil, 400},
		{"GET", "/api/runs/0x1/flame", nil, 400},
		{"GET", "/api/runs/99999999999999999999999/flame", nil, 400},
		{"GET", fmt.Sprintf("/api/runs/%d/flame?since=-1", key), nil, 400},
		{"GET", fmt.Sprintf("/api/runs/%d/flame?since=1e9", key), nil, 400},
		{"GET", fmt.Sprintf("/api/runs/%d/flame?after=%s", key, strings.Repeat("9", 40)), nil, 400},
		{"GET", fmt.Sprintf("/api/runs/%d/flame?since=18446744073709551615&after=18446744073709551615&names=18446744073709551615", key), nil, 200},
		{"GET", fmt.Sprintf("/api/runs/%d/timeline?since=x", key), nil, 400},
		{"GET", fmt.Sprintf("/api/runs/%d/timeline?since=18446744073709551615", key), nil, 200},
		{"GET", fmt.Sprintf("/api/runs/%d/markers?q=%s", key, strings.Repeat("a", maxQueryLen+1)), nil, 400},
		{"GET", fmt.Sprintf("/api/runs/%d/markers?kind=evil", key), nil, 400},
		{"GET", fmt.Sprintf("/api/runs/%d/markers?limit=0", key), nil, 400},
		{"GET", fmt.Sprintf("/api/runs/%d/markers?from=middle", key), nil, 400},
		{"GET", fmt.Sprintf("/api/runs/%d/markers?since=18446744073709551615&limit=18446744073709551615", key), nil, 200},
		{"GET", "/../../etc/passwd", nil, 404},
		{"GET", "/static/app.js", nil, 404},
		{"GET", "/index.html", nil, 404},
	} {
		code, body := e.request(c.method, c.path, c.hdr)
		if code != c.want {
			t.Errorf("%s %s %v: %d %q, want %d", c.method, c.path, c.hdr, code, strings.TrimSpace(body), c.want)
		}
	}
	if m := e.hq.Runs()[0].Mode(); m != bytefrog.ModeTracing {
		t.Errorf("mode %v after the refused requests", m)
	}
	if cmds := e.hq.Runs()[0].Commands(); len(cmds) != 2 {
		t.Errorf("commands %v after the refused requests, want Configuration and Start only", cmds)
	}
	// The page itself, with the headers that keep it to itself.
	code, body := e.request("GET", "/", nil)
	if code != 200 || !strings.Contains(body, `<script src="app.js"`) || strings.Contains(body, "http://") && strings.Contains(body, "<script src=\"http") {
		t.Errorf("page: %d", code)
	}
	req, _ := e.request("GET", "/app.js", nil)
	if req != 200 {
		t.Errorf("app.js: %d", req)
	}
}

// TestTimelineExceptionsMarkers: the timeline gets each call's span
// (merged when short calls follow each other), the open calls and the
// thread names; the exceptions endpoint gives each class's counts and the
// path each exception took, up to the method that caught it; markers and
// log records come with a cursor and a filter.
func TestTimelineExceptionsMarkers(t *testing.T) {
	e := newEnv(t, &Config{Tick: DefaultTick / 10, DeltaMarkers: 3})
	g := e.gen
	// thread 1: main(1) calls work(2) three times in a row (short), then
	// slow(3) for 20 ms, which throws exception 7 from fail(4); it
	// leaves fail and slow and main catches it.
	g.Entry(1, 1)
	for range 3 {
		g.Entry(1, 2)
		g.Exit(1, 2, 0)
	}
	g.Entry(1, 3)
	g.Entry(1, 4)
	g.RelTime = 20
	g.Throw(1, 4, 7, 9)
	g.Bubble(1, 4, 7)
	g.Bubble(1, 3, 7)
	g.RelTime = 25
	g.Entry(1, 2) // main goes on: caught in main
	g.Exit(1, 2, 0)
	g.Marker("log:app.db", "WARN slow query")
	g.Marker("phase", "warmup done")
	for i := range 5 {
		g.Marker("log:app.web", fmt.Sprintf("INFO request %d", i))
	}
	e.send()
	key := e.run().Key

	type tlJSON struct {
		Next    uint64     `json:"next"`
		Skipped uint64     `json:"skipped"`
		Threads [][2]any   `json:"threads"`
		Spans   [][7]int64 `json:"spans"`
		Pending [][7]int64 `json:"pending"`
		Open    [][4]int64 `json:"open"`
	}
	// The markers came last: once HQ has them all, every span has settled
	// as far as these events let it, and a later read adds none.
	e.waitData("every event", func() bool {
		var mk struct {
			Total uint64 `json:"total"`
		}
		e.get(fmt.Sprintf("/api/runs/%d/markers?from=oldest", key), &mk)
		return mk.Total == 7
	})
	var tl tlJSON
	e.waitData("the spans", func() bool {
		e.get(fmt.Sprintf("/api/runs/%d/timeline?since=0", key), &tl)
		return len(tl.Spans)+len(tl.Pending) >= 3
	})
	all := append(append([][7]int64{}, tl.Spans...), tl.Pending...)
	want := map[[7]int64]bool{
		{1, 1, 2, 0, 0, 3, 0}:  false, // work ×3, merged
		{1, 1, 3, 0, 20, 1, 1}: false, // slow, ended by the exception
		{1, 2, 4, 0, 20, 1, 1}: false, // fail
	}
	for _, s := range all {
		if _, ok := want[s]; ok {
			want[s] = true
		}
	}
	for s, seen := range want {
		if !seen {
			t.Errorf("span %v missing from %v", s, all)
		}
	}
	if len(tl.Open) != 1 || tl.Open[0] != [4]int64{1, 0, 1, 0} {
		t.Errorf("open %v, want main on thread 1 since 0", tl.Open)
	}
	if len(tl.Threads) != 1 || tl.Threads[0][1] != "worker-1" {
		t.Errorf("threads %v", tl.Threads)
	}
	var tl2 tlJSON
	e.get(fmt.Sprintf("/api/runs/%d/timeline?since=%d", key, tl.Next), &tl2)
	if len(tl2.Spans) != 0 || tl2.Next != tl.Next {
		t.Errorf("since %d: %v", tl.Next, tl2.Spans)
	}

	var ex struct {
		Exceptions []ExceptionInfo `json:"exceptions"`
		Paths      []BubbleInfo    `json:"paths"`
	}
	e.get(fmt.Sprintf("/api/runs/%d/exceptions", key), &ex)
	if len(ex.Exceptions) != 1 || ex.Exceptions[0].Name != hqtest.ExceptionName(7) || ex.Exceptions[0].Thrown != 1 || ex.Exceptions[0].Bubbled != 2 {
		t.Errorf("exceptions %+v", ex.Exceptions)
	}
	name := func(id int32) string {
		return strings.ReplaceAll(strings.Split(hqtest.MethodName(id), ";")[0], "/", ".") + "()V"
	}
	if len(ex.Paths) != 1 || ex.Paths[0].Thrower != name(4) || !slices.Equal(ex.Paths[0].Path, []string{name(4), name(3)}) ||
		ex.Paths[0].Caught != name(1) || ex.Paths[0].Count != 1 {
		t.Errorf("bubble paths %+v", ex.Paths)
	}

	type mkJSON struct {
		Next    uint64       `json:"next"`
		Skipped uint64       `json:"skipped"`
		Total   uint64       `json:"total"`
		Markers []MarkerInfo `json:"markers"`
	}
	var mk mkJSON
	e.waitData("markers", func() bool { e.get(fmt.Sprintf("/api/runs/%d/markers?from=oldest", key), &mk); return mk.Total == 7 })
	if len(mk.Markers) != 3 || !mk.Markers[0].Log || mk.Markers[0].Key != "log:app.db" || mk.Markers[1].Log || mk.Next != 3 {
		t.Errorf("the oldest (cap 3): %+v next %d", mk.Markers, mk.Next)
	}
	var rest mkJSON
	e.get(fmt.Sprintf("/api/runs/%d/markers?from=oldest&since=%d&limit=100", key, mk.Next), &rest)
	if len(rest.Markers) != 3 || rest.Markers[0].Value != "INFO request 1" || rest.Next != 6 {
		t.Errorf("the next oldest: %+v", rest.Markers)
	}
	var newest mkJSON
	e.get(fmt.Sprintf("/api/runs/%d/markers?since=1", key), &newest)
	if len(newest.Markers) != 3 || newest.Markers[2].Value != "INFO request 4" || newest.Next != 7 || newest.Skipped != 3 {
		t.Errorf("the newest since 1: %+v next %d skipped %d", newest.Markers, newest.Next, newest.Skipped)
	}
	for q, want := range map[string]int{"kind=log": 6, "kind=marker": 1, "q=" + url.QueryEscape("REQUEST 3"): 1, "q=slow&kind=marker": 0, "q=warmup": 1} {
		var f mkJSON
		n := 0
		for since := uint64(0); since < 7; since = f.Next {
			e.get(fmt.Sprintf("/api/runs/%d/markers?from=oldest&limit=100&since=%d&%s", key, since, q), &f)
			n += len(f.Markers)
		}
		if n != want {
			t.Errorf("%s: %d markers, want %d", q, n, want)
		}
	}
}

// TestMarkerKeys: the page keeps each marker's key and value as their Go
// strings, clipped, whether the key was made before (a logger's, shared)
// or not (past maxKeys distinct keys), for keys not plain ASCII and keys
// longer than the page keeps.
func TestMarkerKeys(t *testing.T) {
	tr, err := newTracker(1, nil, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	tr.lossless = true
	long := strings.Repeat("é", maxTextLen) // 2 bytes a rune: clipped
	var want []marker
	for i := range 3 * maxKeys {
		key := fmt.Sprintf("log:logger.%d", i%(maxKeys+50))
		switch i % 7 {
		case 3:
			key = "log:\x00é😀" // C0 80 and a surrogate pair in modified UTF-8
		case 5:
			key = long
		}
		value := fmt.Sprintf("INFO record %d", i)
		m := bytefrog.Msg{Type: bytefrog.MsgMarker, Seq: int32(i), RelTime: int32(i),
			Text: bytefrog.AppendUTF(nil, key)[2:], Value: bytefrog.AppendUTF(nil, value)[2:]} // (no length prefix)
		tr.Message(&m)
		want = append(want, marker{seq: int32(i), at: int32(i), key: clip(key), value: value})
	}
	tr.Finish(nil)
	if len(tr.keys) != maxKeys {
		t.Errorf("%d keys kept; want %d", len(tr.keys), maxKeys)
	}
	if len(tr.markers) != len(want) {
		t.Fatalf("%d markers; want %d", len(tr.markers), len(want))
	}
	for i, mk := range tr.markers {
		if mk != want[i] {
			t.Fatalf("marker %d: %+v; want %+v", i, mk, want[i])
		}
	}
}
