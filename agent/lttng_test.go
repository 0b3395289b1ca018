package agent

import (
	"fmt"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/testhq"
	"github.com/tadpole-trace/tadpole/transport/lttngagent"
)

// resetLogControl restores the process-wide log state after a test.
func resetLogControl(t testing.TB) {
	t.Cleanup(func() {
		logControl.mu.Lock()
		logControl.conns = nil
		logControl.to = LogsToBoth
		logControl.mu.Unlock()
		SetLogPolicy(LogsAuto)
	})
}

func enableAll(level int32, typ lttngagent.LogLevelType, filter string) lttngagent.Event {
	return lttngagent.Event{Name: "*", LogLevel: level, LogLevelType: typ, Filter: filter}
}

func TestLTTngEnableDisable(t *testing.T) {
	resetLogControl(t)
	h := lttngHandler{log: &logger{level: LevelOff}}
	c1, c2 := &lttngagent.Conn{}, &lttngagent.Conn{}
	ab := RegisterLogger("lt.a.b")
	cd := RegisterLogger("lt.c.d")
	SetLogPolicy(LogsAuto)
	if !ab.enabled.Load() || !cd.enabled.Load() {
		t.Fatal("auto policy with no daemon: loggers should record")
	}
	ev := lttngagent.Event{Name: "lt.a.*", LogLevel: math.MinInt32, LogLevelType: lttngagent.LogLevelAll}
	if rc := h.Enable(c1, ev); rc != lttngagent.ReplySuccess {
		t.Fatalf("Enable = %v", rc)
	}
	if !ab.enabled.Load() || cd.enabled.Load() {
		t.Errorf("after enable lt.a.*: a.b %v, c.d %v; want true, false", ab.enabled.Load(), cd.enabled.Load())
	}
	// A second daemon enabling the same name, then the first disabling it:
	// still enabled through the second.
	h.Enable(c2, ev)
	h.Disable(c1, "lt.a.*")
	if !ab.enabled.Load() {
		t.Error("a.b disabled while c2 still enables it")
	}
	if rc := h.Disable(c1, "lt.a.*"); rc != lttngagent.ReplyUnknownName {
		t.Errorf("second Disable on c1 = %v; want unknown name", rc)
	}
	h.Disable(c2, "lt.a.*")
	if ab.enabled.Load() {
		t.Error("a.b still enabled after every disable")
	}
	// Closing the connections gives the loggers back to the auto policy.
	h.Closed(c1)
	h.Closed(c2)
	if !ab.enabled.Load() || !cd.enabled.Load() {
		t.Error("auto policy after the daemons left: loggers should record again")
	}
	// A logger registered after an enable gets the matching rules.
	h.Enable(c1, ev)
	late := RegisterLogger("lt.a.late")
	if !late.enabled.Load() {
		t.Error("logger registered after the enable is not enabled")
	}
	h.Closed(c1)
}

func TestLTTngLevelsAndFilters(t *testing.T) {
	resetLogControl(t)
	h := lttngHandler{log: &logger{level: LevelOff}}
	c := &lttngagent.Conn{}
	l := RegisterLogger("lt.levels")
	// enable-event -j lt.levels --loglevel=WARNING: WARNING (900) or more severe.
	h.Enable(c, lttngagent.Event{Name: "lt.levels", LogLevel: 900, LogLevelType: lttngagent.LogLevelRange,
		Filter: `(logger_name == "lt.levels") && (int_loglevel >= 900)`})
	for _, tt := range []struct {
		level int32
		msg   string
		want  bool
	}{{800, "info", false}, {900, "warning", true}, {1000, "severe", true}} {
		if got := l.accepts(tt.level, tt.msg); got != tt.want {
			t.Errorf("level %d accepted = %v; want %v", tt.level, got, tt.want)
		}
	}
	// A user filter on the message.
	h.Enable(c, lttngagent.Event{Name: "lt.levels", LogLevel: math.MinInt32, LogLevelType: lttngagent.LogLevelAll,
		Filter: `(msg == "pay*") && (logger_name == "lt.levels")`})
	if !l.accepts(300, "payment refused") || l.accepts(300, "other") {
		t.Error("msg glob filter not applied")
	}
	// A filter the agent cannot parse still enables by name and level.
	h.Enable(c, lttngagent.Event{Name: "lt.levels", LogLevel: 1000, LogLevelType: lttngagent.LogLevelSingle, Filter: "$$$"})
	if !l.accepts(1000, "x") {
		t.Error("unparsable filter should fall back to name and level")
	}
	h.Closed(c)
}

func TestLogPolicies(t *testing.T) {
	resetLogControl(t)
	h := lttngHandler{log: &logger{level: LevelOff}}
	l := RegisterLogger("lt.policy")
	SetLogPolicy(LogsNone)
	if l.enabled.Load() {
		t.Error("logs=none: enabled")
	}
	SetLogPolicy(LogsLTTng)
	if l.enabled.Load() {
		t.Error("logs=lttng without a daemon: enabled")
	}
	c := &lttngagent.Conn{}
	h.Enable(c, enableAll(math.MinInt32, lttngagent.LogLevelAll, ""))
	if !l.enabled.Load() {
		t.Error("logs=lttng after enable-event -a: disabled")
	}
	SetLogPolicy(LogsAll)
	h.Disable(c, "*")
	if !l.enabled.Load() {
		t.Error("logs=all: disabled by the daemon")
	}
	h.Closed(c)
}

// TestLogDestinations: logs=POLICY:TO sends the records a session enabled
// into LTTng (LTTngAccept), to HQ (enabled), or both; disable-event and a
// closed connection take them out of LTTng.
func TestLogDestinations(t *testing.T) {
	resetLogControl(t)
	h := lttngHandler{log: &logger{level: LevelOff}}
	l := RegisterLogger("lt.dest")
	other := RegisterLogger("lt.dest.other")
	SetLogPolicy(LogsLTTng)
	if got := l.LTTngAccept(); got.Kind != AcceptNone {
		t.Fatalf("before enable-event: LTTngAccept %v; want NONE", got)
	}
	c := &lttngagent.Conn{}
	h.Enable(c, lttngagent.Event{Name: "lt.dest", LogLevel: 900, LogLevelType: lttngagent.LogLevelRange,
		Filter: `(logger_name == "lt.dest") && (int_loglevel >= 900)`})
	for _, tc := range []struct {
		to        LogDest
		hq, lttng bool
	}{{LogsToBoth, true, true}, {LogsToHQ, true, false}, {LogsToLTTng, false, true}} {
		setLogDest(tc.to)
		lt := l.LTTngAccept()
		if got := lt.Kind != AcceptNone; got != tc.lttng {
			t.Errorf("logs=lttng:%v: LTTngAccept %v; want recorded into LTTng %v", tc.to, lt, tc.lttng)
		}
		if tc.lttng && (lt.Kind != AcceptRange || lt.Level != 900) {
			t.Errorf("logs=lttng:%v: LTTngAccept %+v; want RANGE 900", tc.to, lt)
		}
		if got := l.enabled.Load(); got != tc.hq {
			t.Errorf("logs=lttng:%v: enabled for HQ %v; want %v", tc.to, got, tc.hq)
		}
		if k := other.LTTngAccept().Kind; k != AcceptNone {
			t.Errorf("logs=lttng:%v: a logger never enabled has LTTngAccept %v", tc.to, k)
		}
	}
	setLogDest(LogsToBoth)
	SetLogPolicy(LogsNone)
	if k := l.LTTngAccept().Kind; k != AcceptNone {
		t.Errorf("logs=none: LTTngAccept %v; want NONE", k)
	}
	SetLogPolicy(LogsLTTng)
	h.Disable(c, "lt.dest")
	if k := l.LTTngAccept().Kind; k != AcceptNone {
		t.Errorf("after disable-event: LTTngAccept %v; want NONE", k)
	}
	h.Enable(c, lttngagent.Event{Name: "lt.*", LogLevel: math.MinInt32, LogLevelType: lttngagent.LogLevelAll})
	if k := l.LTTngAccept().Kind; k != AcceptAll {
		t.Errorf("after enable-event 'lt.*': LTTngAccept %v; want ALL", k)
	}
	h.Closed(c)
	if k := l.LTTngAccept().Kind; k != AcceptNone {
		t.Errorf("after the daemon left: LTTngAccept %v; want NONE", k)
	}
}

func TestSlogLevelsMapToDomain(t *testing.T) {
	for _, tt := range []struct {
		l    slog.Level
		want int32
	}{{slog.LevelDebug, 500}, {slog.LevelInfo, 800}, {slog.LevelWarn, 900}, {slog.LevelError, 1000}, {slog.LevelError + 4, 1000}} {
		if got := domainLevel(tt.l); got != tt.want {
			t.Errorf("domainLevel(%v) = %d; want %d", tt.l, got, tt.want)
		}
	}
}

func TestSlogHandlerRecordsMarkers(t *testing.T) {
	resetLogControl(t)
	h := startHQ(t, nil)
	a, run := startAgent(t, h, testConfig(h.Srv.Addr()))
	log := slog.New(NewSlogHandler("lt.slog", nil)).With("svc", "shop")
	log.Info("hello", "n", 1, slog.Group("req", "id", "a b"))
	log.Debug("dropped by level")
	log.WithGroup("db").Warn("slow")
	testhq.CheckClean(t, finish(t, a, run), h.Collector(0), 2)
	got := marks(h.Collector(0))
	want := []string{
		`log:lt.slog=INFO hello svc=shop n=1 req.id="a b"`,
		`log:lt.slog.db=WARN slow svc=shop`,
	}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("marker %d = %q; want %q", i, got[i], w)
		}
	}
}

var sinkBool bool

func BenchmarkLoggerEnabledDisabled(b *testing.B) {
	resetLogControl(b)
	SetLogPolicy(LogsNone)
	l := RegisterLogger("lt.bench.off")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		sinkBool = l.Enabled()
	}
}

func BenchmarkLoggerEnabledEnabled(b *testing.B) {
	resetLogControl(b)
	sinkSession(b, 1)
	SetLogPolicy(LogsAll)
	l := RegisterLogger("lt.bench.on")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		sinkBool = l.Enabled()
	}
}

func BenchmarkLoggerFilter(b *testing.B) {
	resetLogControl(b)
	h := lttngHandler{log: &logger{level: LevelOff}}
	c := &lttngagent.Conn{}
	l := RegisterLogger("lt.bench.filter")
	h.Enable(c, lttngagent.Event{Name: "lt.bench.filter", LogLevel: 900, LogLevelType: lttngagent.LogLevelRange,
		Filter: `((msg == "x*") && (logger_name == "lt.bench.filter")) && (int_loglevel >= 900)`})
	b.Cleanup(func() { h.Closed(c) })
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		sinkBool = l.accepts(1000, "xyz")
	}
}

func TestHooksHaveManySubscribers(t *testing.T) {
	var a, b int
	// Hooks see new loggers only: names are fresh on every -count.
	name := fmt.Sprintf("lt.hooks.%d.", time.Now().UnixNano())
	ra := AddLoggerHook(func(*Logger, bool) { a++ })
	rb := AddLoggerHook(func(*Logger, bool) { b++ })
	RegisterLogger(name + "1")
	ra()
	RegisterLogger(name + "2")
	rb()
	RegisterLogger(name + "3")
	if a != 1 || b != 2 {
		t.Errorf("hook calls a=%d b=%d; want 1 and 2", a, b)
	}
}
