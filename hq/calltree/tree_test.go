package calltree_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/calltree"
	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

func newTree(t testing.TB, cfg *calltree.Config) *calltree.Tree {
	t.Helper()
	tr, err := calltree.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// find returns the node of path (method ids from the outermost call).
func find(t *testing.T, tr *calltree.Tree, path ...int32) calltree.Node {
	t.Helper()
	n := int32(calltree.Root)
next:
	for _, m := range path {
		for _, c := range tr.Children(n) {
			if tr.Node(c).Method == m {
				n = c
				continue next
			}
		}
		t.Fatalf("no node for path %v", path)
	}
	return tr.Node(n)
}

type counts struct{ calls, total, self, thrown, bubbled int64 }

func checkNode(t *testing.T, tr *calltree.Tree, want counts, path ...int32) {
	t.Helper()
	n := find(t, tr, path...)
	if got := (counts{n.Calls, n.Total, n.Self, n.Thrown, n.Bubbled}); got != want {
		t.Errorf("path %v: got %+v; want %+v", path, got, want)
	}
}

// TestTreeByHand feeds a few threads' events and checks every count.
func TestTreeByHand(t *testing.T) {
	tr := newTree(t, nil)
	f := &feeder{t: tr}
	f.name(1, "a/A.run;1;()V")
	f.name(2, "a/B.work;1;(I)I")
	// Thread 1: A calls B twice; the second B throws and the exception
	// bubbles out of it; then an exit with nothing open.
	f.entry(1, 1, 0)
	f.entry(1, 2, 2)
	f.exit(1, 2, 5)
	f.entry(1, 2, 6)
	f.throw(1, 2, -4, 7)
	f.bubble(1, 2, -4, 7)
	f.exit(1, 1, 10)
	f.exit(1, 1, 11)
	// Thread 2: B calls A, stamped earlier (made monotonic), then a data
	// break closes both; then an exit of a call entered before the break.
	f.entry(2, 2, 3)
	f.entry(2, 1, 1)
	tr.DataBreak(f.sq)
	f.exit(2, 2, 4)
	// Thread 3: A calls B; the exit names A while B is innermost.
	f.entry(3, 1, 0)
	f.entry(3, 2, 1)
	f.exit(3, 1, 4)
	f.exit(3, 1, 5)

	checkNode(t, tr, counts{calls: 2, total: 15, self: 8}, 1)
	checkNode(t, tr, counts{calls: 3, total: 7, self: 7, thrown: 1, bubbled: 1}, 1, 2)
	checkNode(t, tr, counts{calls: 1}, 2)
	checkNode(t, tr, counts{calls: 1}, 2, 1)
	st := tr.Stats()
	if st.UnmatchedExits != 2 || st.Mismatched != 1 || st.ClosedByBreak != 2 || st.DataBreaks != 1 || st.Calls != 7 || st.Threads != 3 {
		t.Errorf("stats %+v", st)
	}

	// Thread 4: still open when the run finishes.
	f.entry(4, 1, 20)
	f.entry(4, 2, 25)
	rep := &hq.Report{}
	tr.Finish(rep)
	checkNode(t, tr, counts{calls: 3, total: 20, self: 13}, 1)
	checkNode(t, tr, counts{calls: 4, total: 7, self: 7, thrown: 1, bubbled: 1}, 1, 2)
	if st := tr.Stats(); st.OpenAtEnd != 2 || st.Paths != 5 {
		t.Errorf("after Finish: stats %+v", st)
	}
	if len(rep.Warnings) != 0 {
		t.Errorf("warnings %q; want none", rep.Warnings)
	}
	for _, c := range []struct {
		id                           int32
		calls, self, thrown, bubbled int64
	}{{1, 4, 13, 0, 0}, {2, 5, 7, 1, 1}} {
		m := tr.Method(c.id)
		if m.Calls != c.calls || m.Self != c.self || m.Thrown != c.thrown || m.Bubbled != c.bubbled {
			t.Errorf("method %d: %+v; want calls %d self %d thrown %d bubbled %d", c.id, m, c.calls, c.self, c.thrown, c.bubbled)
		}
	}
	if got := tr.MethodName(2); got != "a.B.work(I)I" {
		t.Errorf("MethodName(2) = %q", got)
	}
	if got := tr.MethodName(9); got != "method#9" {
		t.Errorf("MethodName(9) = %q", got)
	}
	if ex := tr.Exceptions(); len(ex) != 1 || ex[0].ID != -4 || ex[0].Thrown != 1 || ex[0].Bubbled != 1 {
		t.Errorf("exceptions %+v", ex)
	}

	// Thread 2's timeline: both calls at 3 ms, closed by the break in order.
	var buf bytes.Buffer
	if err := tr.WriteSpeedscope(&buf, nil); err != nil {
		t.Fatal(err)
	}
	doc := decodeSpeedscope(t, buf.Bytes())
	var p2 *ssProfile
	for i := range doc.Profiles {
		if strings.Contains(doc.Profiles[i].Name, "(thread 2)") {
			p2 = &doc.Profiles[i]
		}
	}
	if p2 == nil {
		t.Fatal("no profile for thread 2")
	}
	var got []string
	for _, e := range p2.Events {
		got = append(got, fmt.Sprintf("%s %s %g", e.Type, doc.Shared.Frames[e.Frame].Name, e.At))
	}
	want := []string{"O a.B.work(I)I 3", "O a.A.run()V 3", "C a.A.run()V 3", "C a.B.work(I)I 3"}
	if !slices.Equal(got, want) {
		t.Errorf("thread 2 events %q; want %q", got, want)
	}
}

func TestDisplayName(t *testing.T) {
	for _, c := range [][2]string{
		{"com/example/C3.m3;9;()V", "com.example.C3.m3()V"},
		{"example/Shop.serve;1;(I)V", "example.Shop.serve(I)V"},
		{"plain", "plain"},
		{"a;b", "a;b"},
	} {
		if got := calltree.DisplayName(c[0]); got != c[1] {
			t.Errorf("DisplayName(%q) = %q; want %q", c[0], got, c[1])
		}
	}
}

func TestConfig(t *testing.T) {
	for _, c := range []calltree.Config{{MaxPaths: -1}, {MaxDepth: -2}, {MaxTimeline: -2}} {
		if _, err := calltree.New(&c); !errors.Is(err, calltree.ErrConfig) {
			t.Errorf("New(%+v): %v; want ErrConfig", c, err)
		}
	}
	c := calltree.Config{}
	if err := c.Verify(); err != nil || c != *calltree.DefaultConfig() {
		t.Errorf("zero Config verifies to %+v, %v; want the defaults", c, err)
	}
	for _, s := range []string{"speedscope", "chrome", "flame", "flame-html"} {
		f, err := calltree.ParseFormat(s)
		if err != nil || f.String() != s {
			t.Errorf("ParseFormat(%q) = %v, %v", s, f, err)
		}
	}
	if _, err := calltree.ParseFormat("pprof"); !errors.Is(err, calltree.ErrFormat) {
		t.Errorf("ParseFormat(pprof): %v; want ErrFormat", err)
	}
}

// checkTree checks the tree's own sums: each node's total is its self
// time plus its callees' totals, self ≤ total, calls add up.
func checkTree(t *testing.T, tr *calltree.Tree) {
	t.Helper()
	var calls int64
	for i := int32(1); i < int32(tr.Len()); i++ {
		n := tr.Node(i)
		calls += n.Calls
		var inner int64
		for _, c := range tr.Children(i) {
			inner += tr.Node(c).Total
		}
		if n.Self < 0 || n.Self > n.Total || n.Self+inner != n.Total {
			t.Fatalf("node %d (path %v): total %d, self %d, callees %d", i, tr.Path(i), n.Total, n.Self, inner)
		}
	}
	st := tr.Stats()
	if calls+st.MergedCalls+st.DeepCalls != st.Calls {
		t.Errorf("nodes hold %d calls, %d merged, %d deep; want %d in all", calls, st.MergedCalls, st.DeepCalls, st.Calls)
	}
}

// checkCounts compares the tree's per-method and per-exception counts with
// HQ's report of the same run.
func checkCounts(t *testing.T, tr *calltree.Tree, rep *hq.Report) {
	t.Helper()
	if len(rep.TopMethods) == 0 || len(rep.TopMethods) >= 1000 {
		t.Fatalf("report lists %d methods", len(rep.TopMethods))
	}
	var calls int64
	for _, m := range tr.Methods() {
		calls += m.Calls
	}
	if want := rep.Events[bytefrog.MsgMethodEntry]; calls != want || tr.Stats().Calls != want {
		t.Errorf("tree has %d calls (stats %d); HQ counted %d MethodEntry events", calls, tr.Stats().Calls, want)
	}
	for _, m := range rep.TopMethods {
		got := tr.Method(m.ID)
		if got.Calls != m.Calls || got.Signature != m.Signature {
			t.Errorf("method %d: tree %d calls of %q; HQ %d calls of %q", m.ID, got.Calls, got.Signature, m.Calls, m.Signature)
		}
	}
	if len(tr.Methods()) != len(rep.TopMethods) {
		t.Errorf("tree has %d methods, HQ %d", len(tr.Methods()), len(rep.TopMethods))
	}
	byName := map[string][2]int64{}
	for _, e := range tr.Exceptions() {
		byName[e.Name] = [2]int64{e.Thrown, e.Bubbled}
	}
	for _, e := range rep.Exceptions {
		if got := byName[e.Name]; got != [2]int64{e.Thrown, e.Bubbled} {
			t.Errorf("exception %s: tree thrown/bubbled %v; HQ %d/%d", e.Name, got, e.Thrown, e.Bubbled)
		}
	}
	if len(byName) != len(rep.Exceptions) || len(byName) == 0 {
		t.Errorf("tree has %d exception classes, HQ %d", len(byName), len(rep.Exceptions))
	}
	var thrown, bubbled int64
	for i := int32(1); i < int32(tr.Len()); i++ {
		thrown += tr.Node(i).Thrown
		bubbled += tr.Node(i).Bubbled
	}
	// Calls beyond the bounds are in no path: they hold fewer.
	exact := tr.Stats().MergedCalls == 0 && tr.Stats().DeepCalls == 0
	if thrown > rep.Events[bytefrog.MsgException] || bubbled > rep.Events[bytefrog.MsgExceptionBubble] ||
		exact && (thrown != rep.Events[bytefrog.MsgException] || bubbled != rep.Events[bytefrog.MsgExceptionBubble]) {
		t.Errorf("paths hold %d thrown, %d bubbled; HQ counted %d, %d", thrown, bubbled,
			rep.Events[bytefrog.MsgException], rep.Events[bytefrog.MsgExceptionBubble])
	}
}

// TestLiveAndReplay runs traffic through HQ with a live tree, replays the
// trace file into another, and checks both against HQ's report.
func TestLiveAndReplay(t *testing.T) {
	chunks, n := timedTraffic(1, 60000, 40, 4)
	rep, live := liveRun(t, chunks)
	if rep.Sequenced != int64(n) {
		t.Fatalf("HQ released %d events; want %d", rep.Sequenced, n)
	}
	rrep, replayed := replayTree(t, rep.TraceFile, nil)
	for name, tr := range map[string]*calltree.Tree{"live": live, "replay": replayed} {
		t.Run(name, func(t *testing.T) {
			checkTree(t, tr)
			checkCounts(t, tr, rep)
			st := tr.Stats()
			if st.UnmatchedExits != 0 || st.Mismatched != 0 || st.OpenAtEnd != 0 || st.Threads != 4 {
				t.Errorf("stats %+v", st)
			}
			if root := tr.Node(calltree.Root); root.Total == 0 {
				t.Error("no time in the tree")
			}
		})
	}
	checkCounts(t, replayed, rrep)
	// The same run gives the same exports, live or replayed.
	for _, f := range []calltree.Format{calltree.FormatSpeedscope, calltree.FormatChrome, calltree.FormatFlameSVG} {
		var a, b bytes.Buffer
		if err := live.Write(&a, f, nil); err != nil {
			t.Fatal(err)
		}
		if err := replayed.Write(&b, f, nil); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%v: live export (%d bytes) differs from the replayed one (%d bytes)", f, a.Len(), b.Len())
		}
	}
}

// TestGenTraffic checks the tree against HQ over hqtest's own workload,
// whose calls all take 0 ms.
func TestGenTraffic(t *testing.T) {
	chunks, _ := hqtest.Generate(hqtest.Workload{Events: 30000, Methods: 50, Threads: 3, Chunk: 2048, Seed: 7})
	rep, live := liveRun(t, chunks)
	checkTree(t, live)
	var calls int64
	for _, m := range rep.TopMethods {
		if got := live.Method(m.ID).Calls; got != m.Calls {
			t.Errorf("method %d: %d calls; HQ %d", m.ID, got, m.Calls)
		}
		calls += m.Calls
	}
	if calls != live.Stats().Calls {
		t.Errorf("HQ lists %d calls; tree %d", calls, live.Stats().Calls)
	}
}

// TestBounds caps paths, depth and timeline: counts per method stay
// exact, the tree's sums hold, the exports stay well-formed, and the
// report says what was capped.
func TestBounds(t *testing.T) {
	chunks, _ := timedTraffic(3, 40000, 60, 3)
	rep, _ := liveRun(t, chunks)
	cfg := &calltree.Config{MaxPaths: 50, MaxDepth: 4, MaxTimeline: 1000}
	rrep, tr := replayTree(t, rep.TraceFile, cfg)
	checkTree(t, tr)
	checkCounts(t, tr, rep)
	st := tr.Stats()
	if st.Paths != 50 || st.MergedCalls == 0 || st.DeepCalls == 0 || st.UntimedCalls == 0 {
		t.Errorf("stats %+v; want every bound reached", st)
	}
	for _, w := range []string{"MaxPaths", "MaxDepth", "MaxTimeline"} {
		if !strings.Contains(strings.Join(rrep.Warnings, "\n"), w) {
			t.Errorf("report warnings %q do not mention %s", rrep.Warnings, w)
		}
	}
	var buf bytes.Buffer
	if err := tr.WriteSpeedscope(&buf, nil); err != nil {
		t.Fatal(err)
	}
	doc := checkSpeedscope(t, buf.Bytes())
	events := 0
	for _, p := range doc.Profiles {
		events += len(p.Events)
	}
	if events > 1000 || events < 900 {
		t.Errorf("speedscope holds %d events; want up to MaxTimeline (1000), nearly all of it", events)
	}
	buf.Reset()
	if err := tr.WriteChrome(&buf, nil); err != nil {
		t.Fatal(err)
	}
	checkChrome(t, buf.Bytes(), tr)
}
