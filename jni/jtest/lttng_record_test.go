package jtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/testpeers"
)

// The official LTTng Java agent's JUL jars (Debian: liblttng-ust-agent-java).
var officialJUL = []string{"/usr/share/java/lttng-ust-agent-jul.jar", "/usr/share/java/lttng-ust-agent-common.jar"}

// jvm is a running JLttng.
type jvm = testpeers.Emitter

// startJLttng runs JLttng under tadpole (options: the -agentpath options)
// or, with official, under the official LTTng JUL agent, with the daemon's
// LTTNG_HOME and no HQ, and waits for it to be ready.
func startJLttng(t *testing.T, e *Env, sd *testpeers.Sessiond, official bool, options string, env ...string) *jvm {
	t.Helper()
	cp := []string{e.Classes, filepath.Join(e.Root, "jni", "classes")}
	args := []string{"-XX:+UseSerialGC"}
	mode := "tadpole"
	if official {
		cp = append(cp, officialJUL...)
		mode = "official"
	} else {
		p := "-agentpath:" + e.Lib
		if options != "" {
			p += "=" + options
		}
		args = append(args, p)
	}
	args = append(args, "-cp", strings.Join(cp, string(os.PathListSeparator)), "JLttng", mode)
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, "java", args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LTTNG_HOME=" + sd.Home,
		"TADPOLE_LTTNG_RETRY=200ms"}
	cmd.Env = append(cmd.Env, env...)
	return testpeers.StartEmitter(t, mode+" JVM", cmd, lttngWait)
}

// wantS1 and wantS2 are the messages each session must hold, in order.
func wantS1() []string {
	var w []string
	for i := 0; i < 3; i++ {
		n := strconv.Itoa(i)
		w = append(w, "p1 order "+n, "p1 fine "+n, "p1 warn "+n, "p1 param "+n+" of three")
	}
	return w
}

func wantS2() []string {
	var w []string
	for _, p := range []string{"p1", "p2"} {
		for i := 0; i < 3; i++ {
			n := strconv.Itoa(i)
			w = append(w, p+" warn "+n, p+" payfail "+n)
		}
	}
	return w
}

var julLevels = map[string]string{"order": "800", "fine": "500", "warn": "900", "param": "800", "payfail": "1000"}

// checkJULEvents checks the events' name, field names and order, and the
// fields tadpole fills from the record.
func checkJULEvents(t *testing.T, who string, evs []testpeers.LTTngEvent, from, to time.Time) {
	t.Helper()
	for _, e := range evs {
		if e.Name != "lttng_jul:event" || !slices.Equal(e.Keys, testpeers.JULFields) {
			t.Fatalf("%s: event %s with fields %v; want lttng_jul:event with %v", who, e.Name, e.Keys, testpeers.JULFields)
		}
		f := e.Fields
		word := strings.Fields(f["msg"])[1]
		logger := "shop.orders"
		if word == "payfail" {
			logger = "shop.pay"
		}
		ms, _ := strconv.ParseInt(f["long_millis"], 10, 64)
		if f["logger_name"] != logger || f["class_name"] != "JLttng" || f["method_name"] != "emit" ||
			f["int_loglevel"] != julLevels[word] || ms < from.UnixMilli() || ms > to.UnixMilli() {
			t.Fatalf("%s: event %v; want logger %s, JLttng.emit, level %s, millis in [%d, %d]", who, f, logger,
				julLevels[word], from.UnixMilli(), to.UnixMilli())
		}
	}
}

// julRun is a JLttng run under tadpole recorded by the two-session
// scenario, between from and to.
type julRun struct {
	e        *Env
	sd       *testpeers.Sessiond
	j        *jvm
	s1, s2   []testpeers.LTTngEvent
	from, to time.Time
}

// recordJUL runs JLttng under tadpole with options and env and the
// two-session scenario of a real session daemon, and checks that each
// session recorded exactly the records it enabled.
func recordJUL(t *testing.T, options string, env ...string) julRun {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test with lttng-sessiond")
	}
	r := julRun{e: Build(t)}
	testpeers.RequireTools(t, "babeltrace2")
	if _, err := os.Stat(filepath.Join(filepath.Dir(r.e.Lib), "libtadpole-lttng.so")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("libtadpole-lttng.so not built (liblttng-ust-dev missing?): %v", err)
		}
		t.Skipf("libtadpole-lttng.so not built (install liblttng-ust-dev): %v", err)
	}
	r.sd = testpeers.StartSessiond(t)
	r.from = time.Now()
	r.j = startJLttng(t, r.e, r.sd, false, options, env...)
	r.s1, r.s2 = r.sd.TwoSessions(t, r.j, "shop.orders", "shop.pay", RunTimeout)
	r.j.End(t)
	r.to = time.Now()
	if got, want := testpeers.Messages(r.s1), wantS1(); !slices.Equal(got, want) {
		t.Fatalf("session s1 recorded %q;\nwant %q", got, want)
	}
	if got, want := testpeers.Messages(r.s2), wantS2(); !slices.Equal(got, want) {
		t.Fatalf("session s2 recorded %q;\nwant %q", got, want)
	}
	return r
}

// TestLTTngRecordJUL: a JVM under tadpole with no HQ is listed by the
// session daemon, and `lttng enable-event -j` puts exactly the enabled JUL
// records into each LTTng session (levels, a filter expression,
// disable-event, two sessions at once), as lttng_jul:event with the
// fields of lttng-ust 2.13; the same program under the official LTTng
// Java agent records the same events, field for field (time aside).
func TestLTTngRecordJUL(t *testing.T) {
	r := recordJUL(t, "")
	e, sd, j, s1, s2 := r.e, r.sd, r.j, r.s1, r.s2
	checkJULEvents(t, "tadpole", append(s1, s2...), r.from, r.to)
	// No HQ, so no method tracing: the class was rewritten with call
	// sites only, which named every record's source.
	checkNoWalks(t, j)

	for _, f := range officialJUL {
		if _, err := os.Stat(f); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("official LTTng Java agent missing: %v", err)
			}
			t.Skipf("official LTTng Java agent missing (install liblttng-ust-agent-java): %v", err)
		}
	}
	o := startJLttng(t, e, sd, true, "")
	o1, o2 := sd.TwoSessions(t, o, "shop.orders", "shop.pay", RunTimeout)
	o.End(t)
	for i, pair := range [][2][]testpeers.LTTngEvent{{s1, o1}, {s2, o2}} {
		got, want := pair[0], pair[1]
		if len(got) != len(want) {
			t.Fatalf("session s%d: tadpole recorded %d events, the official agent %d:\n%q\n%q",
				i+1, len(got), len(want), testpeers.Messages(got), testpeers.Messages(want))
		}
		for k := range got {
			g, w := got[k], want[k]
			if g.Name != w.Name || !slices.Equal(g.Keys, w.Keys) {
				t.Fatalf("session s%d event %d: tadpole %s %v, official %s %v", i+1, k, g.Name, g.Keys, w.Name, w.Keys)
			}
			for _, key := range g.Keys {
				if key != "long_millis" && g.Fields[key] != w.Fields[key] {
					t.Fatalf("session s%d event %d field %s: tadpole %q, official %q", i+1, k, key,
						g.Fields[key], w.Fields[key])
				}
			}
		}
	}
	t.Logf("s1: %d events, s2: %d events, the same as the official agent's", len(s1), len(s2))
}

// TestLTTngNoCompanion: without libtadpole-lttng.so (or lttng-ust) a JVM
// with no HQ still runs, is listed and answers the daemon's commands; it
// says once that LTTng recording is unavailable, and records nothing.
func TestLTTngNoCompanion(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test with lttng-sessiond")
	}
	e := Build(t)
	testpeers.RequireTools(t, "babeltrace2")
	sd := testpeers.StartSessiond(t)
	j := startJLttng(t, e, sd, false, "lttng_lib="+filepath.Join(t.TempDir(), "libtadpole-lttng.so"))
	s1, s2 := sd.TwoSessions(t, j, "shop.orders", "shop.pay", RunTimeout)
	j.End(t)
	if len(s1) != 0 || len(s2) != 0 {
		t.Fatalf("without the companion library: recorded %q and %q; want nothing", testpeers.Messages(s1), testpeers.Messages(s2))
	}
	if n := strings.Count(j.Stderr(), "LTTng recording unavailable"); n != 1 {
		t.Fatalf("stderr says %d times that LTTng recording is unavailable; want once:\n%s", n, j.Stderr())
	}
}

// TestLTTngRecordJULNoSource: with lttng_source=off the same records reach
// the sessions with empty class_name and method_name.
func TestLTTngRecordJULNoSource(t *testing.T) {
	r := recordJUL(t, "lttng_source=off")
	s1, s2 := r.s1, r.s2
	for _, ev := range append(s1, s2...) {
		if ev.Fields["class_name"] != "" || ev.Fields["method_name"] != "" {
			t.Fatalf("lttng_source=off: event %v has a source", ev.Fields)
		}
	}
}

// TestLTTngRecordJULStackWalk: with trace=none no class is rewritten, so
// no call site names a record's source: the agent finds each on the stack,
// with the same result.
func TestLTTngRecordJULStackWalk(t *testing.T) {
	r := recordJUL(t, "trace=none")
	j, s1, s2 := r.j, r.s1, r.s2
	checkJULEvents(t, "tadpole, trace=none", append(s1, s2...), r.from, r.to)
	m := walksRe.FindStringSubmatch(j.Stderr())
	if m == nil {
		t.Fatalf("JLttng did not print its source walks:\n%s", j.Stderr())
	}
	if n, _ := strconv.Atoi(m[1]); n < len(s1)+len(s2) {
		t.Fatalf("%d records' sources came from the stack; want every one of the %d (no call sites)", n, len(s1)+len(s2))
	}
}

// TestLTTngRecordJULWithHQ: with an HQ tracing too (logs=lttng, records to
// both), the sessions record exactly what they enabled and HQ gets the
// enabled loggers' records as markers.
func TestLTTngRecordJULWithHQ(t *testing.T) {
	h := startHQ(t)
	r := recordJUL(t, "logs=lttng", "TADPOLE_HQ="+h.Addr(), "TADPOLE_FLUSH_INTERVAL=5ms")
	j := r.j
	checkNoWalks(t, j)
	cols := h.Collectors()
	if len(cols) == 0 {
		t.Fatal("no HQ run")
	}
	c := cols[len(cols)-1]
	waitFor(t, "shop.orders records at HQ", func() bool {
		return slices.Contains(c.Markers("log:shop.orders"), "INFO p1 order 0")
	})
	for _, v := range c.Markers("log:shop.pay") {
		if !strings.HasPrefix(v, "SEVERE ") {
			t.Fatalf("HQ got shop.pay record %q; only SEVERE ones are enabled", v)
		}
	}
}

var walksRe = regexp.MustCompile(`tadpole source walks (\d+)`)

// checkNoWalks checks that JLttng's records into LTTng took their source
// from their call sites: the agent looked for none on the stack.
func checkNoWalks(t *testing.T, j *jvm) {
	t.Helper()
	m := walksRe.FindStringSubmatch(j.Stderr())
	if m == nil {
		t.Fatalf("JLttng did not print its source walks:\n%s", j.Stderr())
	}
	if m[1] != "0" {
		t.Fatalf("%s records' sources came from the stack; want every one from its call site", m[1])
	}
}
