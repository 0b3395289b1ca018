package lttngust_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/testhq"
	"github.com/tadpole-trace/tadpole/internal/testpeers"
)

const wait = time.Minute

var built struct {
	once     sync.Once
	dir, err string
}

// build compiles testdata/goemit and, next to it, libtadpole-lttng.so.
func build(t *testing.T) string {
	t.Helper()
	testpeers.RequireTools(t, "gcc", "pkg-config", "babeltrace2")
	flags, err := exec.Command("pkg-config", "--cflags", "--libs", "lttng-ust").Output()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("lttng-ust headers missing (liblttng-ust-dev): %v", err)
		}
		t.Skipf("lttng-ust headers missing (install liblttng-ust-dev): %v", err)
	}
	built.once.Do(func() {
		root, err := testpeers.RepoRoot()
		if err != nil {
			built.err = err.Error()
			return
		}
		dir, err := os.MkdirTemp("", "tadpole-lttngust-")
		if err != nil {
			built.err = err.Error()
			return
		}
		built.dir = dir
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		steps := []*exec.Cmd{
			exec.CommandContext(ctx, testpeers.GoCommand(), "build", "-o", filepath.Join(dir, "goemit"),
				"./agent/lttngust/testdata/goemit"),
			exec.CommandContext(ctx, "gcc", append([]string{"-O2", "-fPIC", "-shared", "-fvisibility=hidden",
				"-Icapi/lttng", "-o", filepath.Join(dir, "libtadpole-lttng.so"), "capi/lttng/tadpole_lttng.c"},
				strings.Fields(string(flags))...)...),
		}
		for _, c := range steps {
			c.Dir = root
			c.Env = append(os.Environ(), "CGO_ENABLED=1")
			if out, err := c.CombinedOutput(); err != nil {
				built.err = strings.Join(c.Args, " ") + ": " + err.Error() + "\n" + string(out)
				return
			}
		}
	})
	if built.err != "" {
		t.Fatal(built.err)
	}
	return built.dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

func start(t *testing.T, dir string, env ...string) *testpeers.Emitter {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "goemit"))
	cmd.Env = append(os.Environ(), env...)
	return testpeers.StartEmitter(t, "goemit", cmd, wait)
}

// TestRecordGo: a Go program that imports lttngust records its enabled
// loggers' records into LTTng sessions as lttng_jul:event with the fields
// of lttng-ust 2.13, exactly those enabled (levels, a filter,
// disable-event, two sessions at once), with no HQ and with one
// (logs=lttng:both: HQ gets them too). Records through log/slog carry
// their caller as the source; those through Logger.Log too.
func TestRecordGo(t *testing.T) {
	dir := build(t)
	for _, withHQ := range []bool{false, true} {
		name := "noHQ"
		if withHQ {
			name = "HQ"
		}
		t.Run(name, func(t *testing.T) {
			sd := testpeers.StartSessiond(t)
			env := []string{"LTTNG_HOME=" + sd.Home, "TADPOLE_LTTNG_RETRY=200ms", "TADPOLE_FLUSH_INTERVAL=5ms",
				"TADPOLE_LOGS=lttng:both"}
			var h *testhq.HQ
			if withHQ {
				h = testhq.Start(t, nil)
				env = append(env, "TADPOLE_HQ="+h.Addr())
			}
			from := time.Now()
			p := start(t, dir, env...)
			s1, s2 := sd.TwoSessions(t, p, "gapp.alpha", "gapp.beta", wait)
			p.End(t)
			to := time.Now()
			w1, w2 := testpeers.TwoSessionsWant()
			if got := testpeers.Messages(s1); !slices.Equal(got, w1) {
				t.Fatalf("session s1 recorded %q;\nwant %q", got, w1)
			}
			if got := testpeers.Messages(s2); !slices.Equal(got, w2) {
				t.Fatalf("session s2 recorded %q;\nwant %q", got, w2)
			}
			for _, e := range append(s1, s2...) {
				f := e.Fields
				word := strings.Fields(f["msg"])[1]
				logger := "gapp.alpha"
				if word == "severe" {
					logger = "gapp.beta"
				}
				ms, _ := strconv.ParseInt(f["long_millis"], 10, 64)
				tid, err := strconv.Atoi(f["int_threadid"])
				if e.Name != "lttng_jul:event" || !slices.Equal(e.Keys, testpeers.JULFields) ||
					f["logger_name"] != logger || f["int_loglevel"] != testpeers.TwoSessionsLevels[word] || err != nil || tid <= 0 ||
					f["class_name"] != "main" || f["method_name"] != "emit" ||
					ms < from.UnixMilli() || ms > to.UnixMilli() {
					t.Fatalf("event %s %v; want lttng_jul:event %v, logger %s, level %s, a goroutine id, "+
						"source main.emit, millis in [%d, %d]",
						e.Name, f, testpeers.JULFields, logger, testpeers.TwoSessionsLevels[word], from.UnixMilli(), to.UnixMilli())
				}
			}
			if withHQ {
				col := h.Collector(0)
				deadline := time.Now().Add(wait)
				for !slices.Contains(col.Markers("log:gapp.alpha"), "INFO p1 info 0") {
					if time.Now().After(deadline) {
						t.Fatalf("HQ never got gapp.alpha's records: %q", col.Markers("log:gapp.alpha"))
					}
					time.Sleep(20 * time.Millisecond)
				}
				for _, v := range col.Markers("log:gapp.beta") {
					if !strings.HasPrefix(v, "SEVERE ") {
						t.Fatalf("HQ got gapp.beta record %q; only SEVERE ones are enabled", v)
					}
				}
			}
		})
	}
}

// TestNoCompanion: without libtadpole-lttng.so a Go program is still
// listed and obeys the daemon, records nothing into LTTng, and says so
// once.
func TestNoCompanion(t *testing.T) {
	dir := build(t)
	sd := testpeers.StartSessiond(t)
	p := start(t, dir, "LTTNG_HOME="+sd.Home, "TADPOLE_LTTNG_RETRY=200ms",
		"TADPOLE_LTTNG_LIB="+filepath.Join(t.TempDir(), "libtadpole-lttng.so"))
	s1, s2 := sd.TwoSessions(t, p, "gapp.alpha", "gapp.beta", wait)
	p.End(t)
	if len(s1) != 0 || len(s2) != 0 {
		t.Fatalf("without the companion library: recorded %q and %q; want nothing",
			testpeers.Messages(s1), testpeers.Messages(s2))
	}
	if n := strings.Count(p.Stderr(), "LTTng recording unavailable"); n != 1 {
		t.Fatalf("stderr says %d times that LTTng recording is unavailable; want once:\n%s", n, p.Stderr())
	}
}
