package hq

import (
	"strings"
	"testing"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

func TestCallsSelfTimeAndPaths(t *testing.T) {
	var st stats
	for id, n := range map[int32]string{1: "a/A.main;9;()V", 2: "a/A.f;8;()V", 3: "a/A.g;8;()V"} {
		e := st.methods.at(id)
		e.name, e.mapped = n, true
	}
	e := st.excs.at(1)
	e.name, e.mapped = "java.lang.IllegalStateException", true
	core := newCore(testCoreConfig(bytefrog.Dialect{Version: bytefrog.Version1}), nil, nil)
	ev := func(typ bytefrog.MsgType, rel int32, method int32, exc int32, line uint16) {
		core.event(&bytefrog.Msg{Type: typ, RelTime: rel, MethodID: method, ExceptionID: exc, Line: line, ThreadID: 4})
	}
	ev(bytefrog.MsgMethodEntry, 0, 1, 0, 0)  // main
	ev(bytefrog.MsgMethodEntry, 10, 2, 0, 0) // f
	ev(bytefrog.MsgMethodEntry, 12, 3, 0, 0) // g
	ev(bytefrog.MsgException, 15, 3, 1, 42)  // g throws at line 42
	ev(bytefrog.MsgExceptionBubble, 15, 3, 1, 0)
	ev(bytefrog.MsgExceptionBubble, 16, 2, 1, 0)
	ev(bytefrog.MsgMethodExit, 30, 1, 0, 7) // main caught it and returns
	var r Report
	core.call.fill(&r, &st, 10)
	self := map[string]int64{}
	for _, m := range r.TopByTime {
		self[m.Signature] = m.SelfMs
	}
	// main: 30 ms, f: 6 ms (10–16) of which g 3 (12–15).
	if self["a/A.main;9;()V"] != 24 || self["a/A.f;8;()V"] != 3 || self["a/A.g;8;()V"] != 3 {
		t.Errorf("self times %v; want main 24, f 3, g 3", self)
	}
	if len(r.BubblePaths) != 1 {
		t.Fatalf("paths %+v; want 1", r.BubblePaths)
	}
	got := r.BubblePaths[0].Path()
	want := "java.lang.IllegalStateException thrown in a/A.g;8;()V line 42, bubbled out of a/A.g;8;()V → a/A.f;8;()V, caught in a/A.main;9;()V"
	if got != want {
		t.Errorf("path %q; want %q", got, want)
	}
	if s := r.String(); !strings.Contains(s, "exception path: "+want) || !strings.Contains(s, "top methods by self time") {
		t.Errorf("summary lacks the time or path section:\n%s", s)
	}
}
