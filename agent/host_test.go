package agent

import (
	"go/parser"
	"go/token"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tadpole-trace/tadpole/transport/lttngagent"
)

// TestHostIsSacred checks the agent's sources for calls that would harm the
// host: exiting it, or writing to its stdout.
func TestHostIsSacred(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	forbidden := []string{"os.Exit(", "os.Stdout", "fmt.Print(", "fmt.Printf(", "fmt.Println(", "log.Fatal", "println(", "print("}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "C" {
				t.Errorf("%s imports C: the agent core is pure Go", f)
			}
		}
		for _, line := range strings.Split(string(src), "\n") {
			code, _, _ := strings.Cut(line, "//")
			for _, bad := range forbidden {
				if strings.Contains(code, bad) && !strings.Contains(code, "fmt.S") {
					t.Errorf("%s: %q: %s", f, bad, strings.TrimSpace(line))
				}
			}
		}
	}
}

// TestNothingOnStdout runs a whole trace with stdout redirected and checks
// the agent wrote nothing there, even when failing.
func TestNothingOnStdout(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	defer func() { os.Stdout = saved }()

	h := startHQ(t, nil)
	cfg := testConfig(h.Srv.Addr())
	cfg.Log = "stderr"
	cfg.LogLevel = LevelDebug
	a, run := startAgent(t, h, cfg)
	m := NewMethod("t/T.stdout;1;()V")
	m.Enter().Exit()
	finish(t, a, run)
	cfg.HQ = "127.0.0.1:1"
	cfg.ConnectTimeout = 100 * 1e6
	Start(ctxT(t), cfg) // fails: HQ absent

	os.Stdout = saved
	w.Close()
	out, _ := io.ReadAll(r)
	if len(out) != 0 {
		t.Errorf("agent wrote to stdout: %q", out)
	}
}

// TestLoggerAccept: the summary hosts copy agrees with what Log records.
func TestLoggerAccept(t *testing.T) {
	ev := func(name string, typ lttngagent.LogLevelType, level int32, f string) lttngagent.Event {
		return lttngagent.Event{Name: name, LogLevelType: typ, LogLevel: level, Filter: f}
	}
	const name = "acc.a"
	for _, tt := range []struct {
		what string
		evs  []lttngagent.Event
		want LogAccept
	}{
		{"no daemon: auto records all", nil, LogAccept{Kind: AcceptAll}},
		{"enable by name", []lttngagent.Event{ev(name, lttngagent.LogLevelAll, math.MinInt32, `logger_name == "acc.a"`)},
			LogAccept{Kind: AcceptAll}},
		{"range", []lttngagent.Event{ev(name, lttngagent.LogLevelRange, 800, `(logger_name == "acc.a") && (int_loglevel >= 800)`)},
			LogAccept{Kind: AcceptRange, Level: 800}},
		{"star range", []lttngagent.Event{ev("*", lttngagent.LogLevelRange, 900, `int_loglevel >= 900`)},
			LogAccept{Kind: AcceptRange, Level: 900}},
		{"single", []lttngagent.Event{ev("acc.*", lttngagent.LogLevelSingle, 500, `(logger_name == "acc.*") && (int_loglevel == 500)`)},
			LogAccept{Kind: AcceptSingle, Level: 500}},
		{"two ranges merge", []lttngagent.Event{ev(name, lttngagent.LogLevelRange, 900, ""), ev("acc.*", lttngagent.LogLevelRange, 700, "")},
			LogAccept{Kind: AcceptRange, Level: 700}},
		{"single under a range", []lttngagent.Event{ev(name, lttngagent.LogLevelRange, 900, ""), ev(name, lttngagent.LogLevelSingle, 1000, "")},
			LogAccept{Kind: AcceptRange, Level: 900}},
		{"single below a range", []lttngagent.Event{ev(name, lttngagent.LogLevelRange, 900, ""), ev(name, lttngagent.LogLevelSingle, 500, "")},
			LogAccept{Kind: AcceptLog}},
		{"user filter", []lttngagent.Event{ev(name, lttngagent.LogLevelAll, math.MinInt32, `(msg == "x") && (logger_name == "acc.a")`)},
			LogAccept{Kind: AcceptLog}},
		{"all beats a filter", []lttngagent.Event{ev(name, lttngagent.LogLevelAll, math.MinInt32, `msg == "x"`), ev("*", lttngagent.LogLevelAll, math.MinInt32, "")},
			LogAccept{Kind: AcceptAll}},
		{"other logger only", []lttngagent.Event{ev("acc.b", lttngagent.LogLevelAll, math.MinInt32, "")},
			LogAccept{Kind: AcceptNone}},
	} {
		t.Run(tt.what, func(t *testing.T) {
			resetLogControl(t)
			h := lttngHandler{log: &logger{level: LevelOff}}
			c := &lttngagent.Conn{}
			l := RegisterLogger(name)
			for _, e := range tt.evs {
				h.Enable(c, e)
			}
			if got := l.Accept(); got != tt.want {
				t.Errorf("got %+v; want %+v", got, tt.want)
			}
			// The summary decides like the rules for every JUL level.
			if k := tt.want.Kind; k != AcceptLog && k != AcceptNone {
				for _, lv := range []int32{math.MinInt32, 300, 400, 500, 700, 800, 900, 1000, math.MaxInt32} {
					if got, want := l.Accept().Accepts(lv), l.accepts(lv, "m"); got != want {
						t.Errorf("level %d: summary accepts %v; rules %v", lv, got, want)
					}
				}
			}
			h.Closed(c)
		})
	}
}

// TestCLIFilterIsRedundant: the filter the lttng client generates from the
// name and level is dropped, a user's filter kept.
func TestCLIFilterIsRedundant(t *testing.T) {
	for _, tt := range []struct {
		ev   lttngagent.Event
		want string
	}{
		{lttngagent.Event{Name: "org.example.A", LogLevelType: lttngagent.LogLevelAll, LogLevel: math.MinInt32,
			Filter: `logger_name == "org.example.A"`}, ""},
		{lttngagent.Event{Name: "org.*", LogLevelType: lttngagent.LogLevelRange, LogLevel: 800,
			Filter: `(logger_name == "org.*") && (int_loglevel >= 800)`}, ""},
		{lttngagent.Event{Name: "*", LogLevelType: lttngagent.LogLevelSingle, LogLevel: 1000,
			Filter: `int_loglevel == 1000`}, ""},
		{lttngagent.Event{Name: "org.example.B", LogLevelType: lttngagent.LogLevelSingle, LogLevel: 1000,
			Filter: `((msg == "x") && (logger_name == "org.example.B")) && (int_loglevel == 1000)`},
			`((msg == "x") && (logger_name == "org.example.B")) && (int_loglevel == 1000)`},
		{lttngagent.Event{Name: "a", LogLevelType: lttngagent.LogLevelRange, LogLevel: 800,
			Filter: `(logger_name == "a") && (int_loglevel >= 900)`}, `(logger_name == "a") && (int_loglevel >= 900)`},
		{lttngagent.Event{Name: `q"`, LogLevelType: lttngagent.LogLevelAll, LogLevel: math.MinInt32,
			Filter: `logger_name == "q""`}, `logger_name == "q""`},
	} {
		if got := ruleFilter(tt.ev); got != tt.want {
			t.Errorf("%v: got filter %q; want %q", tt.ev, got, tt.want)
		}
	}
}

// TestLoggerHookSeesRuleChanges: a logger that stays enabled but whose
// rules change is reported to the hooks, so that copies of Accept follow.
func TestLoggerHookSeesRuleChanges(t *testing.T) {
	resetLogControl(t)
	l := RegisterLogger("acc.hook")
	var got []LogAccept
	remove := AddLoggerHook(func(hl *Logger, _ bool) {
		if hl == l {
			got = append(got, hl.Accept())
		}
	})
	defer remove()
	h := lttngHandler{log: &logger{level: LevelOff}}
	c := &lttngagent.Conn{}
	h.Enable(c, lttngagent.Event{Name: "acc.hook", LogLevelType: lttngagent.LogLevelRange, LogLevel: 900})
	h.Enable(c, lttngagent.Event{Name: "acc.*", LogLevelType: lttngagent.LogLevelRange, LogLevel: 700})
	h.Enable(c, lttngagent.Event{Name: "other", LogLevelType: lttngagent.LogLevelAll, LogLevel: math.MinInt32})
	h.Closed(c)
	want := []LogAccept{{AcceptRange, 900}, {AcceptRange, 700}, {AcceptAll, 0}}
	if !slices.Equal(got, want) {
		t.Errorf("hook saw %+v; want %+v", got, want)
	}
}
