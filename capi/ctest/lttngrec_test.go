package ctest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/testpeers"
)

// cprog is a running testdata/lttngrec.c.
type cprog = testpeers.Emitter

func startLTTngRec(t *testing.T, bin string, env []string, opts string) *cprog {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, bin, opts)
	cmd.Env = env
	return testpeers.StartEmitter(t, "lttngrec", cmd, logWait)
}

// TestLTTngRecordC: a C program records its enabled loggers' records into
// LTTng sessions as lttng_jul:event (fields of lttng-ust 2.13: logger,
// level, time, thread id; no source through tadpole_log), exactly those
// enabled (levels, a filter, disable-event, two sessions at once), with
// no HQ and with one (logs=lttng:both: HQ gets them too).
func TestLTTngRecordC(t *testing.T) {
	lib := BuildLib(t)
	testpeers.RequireTools(t, "babeltrace2")
	if _, err := os.Stat(filepath.Join(lib.Dir, "libtadpole-lttng.so")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("libtadpole-lttng.so not built (liblttng-ust-dev missing?): %v", err)
		}
		t.Skipf("libtadpole-lttng.so not built (install liblttng-ust-dev): %v", err)
	}
	bin := filepath.Join(t.TempDir(), "lttngrec")
	lib.Compile(t, bin, "testdata/lttngrec.c")
	for _, withHQ := range []bool{false, true} {
		name := "noHQ"
		if withHQ {
			name = "HQ"
		}
		t.Run(name, func(t *testing.T) {
			sd := testpeers.StartSessiond(t)
			env := Env("LTTNG_HOME="+sd.Home, "TADPOLE_LTTNG_RETRY=200ms", "TADPOLE_FLUSH_INTERVAL=5ms")
			opts := "logs=lttng:both"
			var h *testHQ
			if withHQ {
				h = startHQ(t, nil)
				opts += ",hq=" + h.Srv.Addr()
			}
			from := time.Now()
			p := startLTTngRec(t, bin, env, opts)
			s1, s2 := sd.TwoSessions(t, p, "capp.alpha", "capp.beta", logWait)
			p.End(t)
			to := time.Now()
			w1, w2 := testpeers.TwoSessionsWant()
			if got := testpeers.Messages(s1); !slices.Equal(got, w1) {
				t.Fatalf("session s1 recorded %q;\nwant %q", got, w1)
			}
			if got := testpeers.Messages(s2); !slices.Equal(got, w2) {
				t.Fatalf("session s2 recorded %q;\nwant %q", got, w2)
			}
			tid := strconv.Itoa(p.PID()) // the main thread logs
			for _, e := range append(s1, s2...) {
				f := e.Fields
				word := strings.Fields(f["msg"])[1]
				logger := "capp.alpha"
				if word == "severe" {
					logger = "capp.beta"
				}
				ms, _ := strconv.ParseInt(f["long_millis"], 10, 64)
				if e.Name != "lttng_jul:event" || !slices.Equal(e.Keys, testpeers.JULFields) || f["logger_name"] != logger ||
					f["int_loglevel"] != testpeers.TwoSessionsLevels[word] || f["int_threadid"] != tid || f["class_name"] != "" ||
					f["method_name"] != "" || ms < from.UnixMilli() || ms > to.UnixMilli() {
					t.Fatalf("event %s %v; want lttng_jul:event %v, logger %s, level %s, thread %s, millis in [%d, %d]",
						e.Name, f, testpeers.JULFields, logger, testpeers.TwoSessionsLevels[word], tid, from.UnixMilli(), to.UnixMilli())
				}
			}
			if withHQ {
				col := h.Collector(0)
				waitFor(t, "capp.alpha records at HQ", func() bool {
					return slices.Contains(col.Markers("log:capp.alpha"), "INFO p1 info 0")
				})
				for _, v := range col.Markers("log:capp.beta") {
					if !strings.HasPrefix(v, "SEVERE ") {
						t.Fatalf("HQ got capp.beta record %q; only SEVERE ones are enabled", v)
					}
				}
			}
		})
	}
}

// TestLTTngNoCompanion: without libtadpole-lttng.so a C program with no
// HQ is still listed and obeys the daemon, records nothing into LTTng, and
// says so once.
func TestLTTngNoCompanion(t *testing.T) {
	lib := BuildLib(t)
	testpeers.RequireTools(t, "babeltrace2")
	bin := filepath.Join(t.TempDir(), "lttngrec")
	lib.Compile(t, bin, "testdata/lttngrec.c")
	sd := testpeers.StartSessiond(t)
	env := Env("LTTNG_HOME="+sd.Home, "TADPOLE_LTTNG_RETRY=200ms")
	p := startLTTngRec(t, bin, env, "lttng_lib="+filepath.Join(t.TempDir(), "libtadpole-lttng.so"))
	s1, s2 := sd.TwoSessions(t, p, "capp.alpha", "capp.beta", logWait)
	p.End(t)
	if len(s1) != 0 || len(s2) != 0 {
		t.Fatalf("without the companion library: recorded %q and %q; want nothing", testpeers.Messages(s1), testpeers.Messages(s2))
	}
	if n := strings.Count(p.Stderr(), "LTTng recording unavailable"); n != 1 {
		t.Fatalf("stderr says %d times that LTTng recording is unavailable; want once:\n%s", n, p.Stderr())
	}
}

// TestLTTngRecordDomains: with lttng_domain=log4j or python a C program is
// listed by `lttng list -l` / `-p`, and `enable-event -l` / `-p` puts its
// records into the session as lttng_log4j:event / lttng_python:event with
// the fields of lttng-ust 2.13's providers, in order.
func TestLTTngRecordDomains(t *testing.T) {
	lib := BuildLib(t)
	testpeers.RequireTools(t, "babeltrace2")
	if _, err := os.Stat(filepath.Join(lib.Dir, "libtadpole-lttng.so")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("libtadpole-lttng.so not built (liblttng-ust-dev missing?): %v", err)
		}
		t.Skipf("libtadpole-lttng.so not built (install liblttng-ust-dev): %v", err)
	}
	bin := filepath.Join(t.TempDir(), "lttngrec")
	lib.Compile(t, bin, "testdata/lttngrec.c")
	for _, d := range []struct {
		domain, flag, event string
		fields              []string
		logger, level       string // the fields naming the logger and the level
	}{
		{"log4j", "-l", "lttng_log4j:event", []string{"msg", "logger_name", "class_name", "method_name", "filename",
			"line_number", "timestamp", "int_loglevel", "thread_name"}, "logger_name", "int_loglevel"},
		{"python", "-p", "lttng_python:event", []string{"asctime", "msg", "logger_name", "funcName", "lineno",
			"int_loglevel", "thread", "threadName"}, "logger_name", "int_loglevel"},
	} {
		t.Run(d.domain, func(t *testing.T) {
			sd := testpeers.StartSessiond(t)
			env := Env("LTTNG_HOME="+sd.Home, "TADPOLE_LTTNG_RETRY=200ms")
			p := startLTTngRec(t, bin, env, "lttng_domain="+d.domain)
			waitFor(t, "lttng list "+d.flag+" showing capp.alpha", func() bool {
				out, err := sd.Lttng("list", d.flag)
				return err == nil && strings.Contains(out, "capp.alpha")
			})
			sd.MustLttng("--no-sessiond", "create", "s", "--output="+sd.MkdirAll("s"))
			sd.MustLttng("enable-event", d.flag, "capp.alpha", "-s", "s")
			sd.MustLttng("start", "s")
			p.Emit(t, "p1")
			sd.MustLttng("stop", "s")
			evs := testpeers.ViewSession(t, sd, "s")
			sd.MustLttng("destroy", "s")
			p.End(t)
			var want []string
			for i := 0; i < 3; i++ {
				want = append(want, "p1 info "+strconv.Itoa(i), "p1 warn "+strconv.Itoa(i))
			}
			if got := testpeers.Messages(evs); !slices.Equal(got, want) {
				t.Fatalf("recorded %q; want %q", got, want)
			}
			for _, e := range evs {
				lv := "800"
				if strings.Contains(e.Fields["msg"], "warn") {
					lv = "900"
				}
				if e.Name != d.event || !slices.Equal(e.Keys, d.fields) || e.Fields[d.logger] != "capp.alpha" ||
					e.Fields[d.level] != lv {
					t.Fatalf("event %s %v %v; want %s with fields %v, logger capp.alpha, level %s", e.Name, e.Keys,
						e.Fields, d.event, d.fields, lv)
				}
			}
		})
	}
}
