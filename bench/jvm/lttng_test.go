package jvm

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/testpeers"
	"github.com/tadpole-trace/tadpole/jni/jtest"
)

// The LTTng-UST JUL agent: its jars and its JNI library's directory
// (Debian: liblttng-ust-agent-java, liblttng-ust-java-agent-jni).
var (
	lttngJars = []string{"/usr/share/java/lttng-ust-agent-common.jar", "/usr/share/java/lttng-ust-agent-jul.jar"}
	lttngJNI  = []string{"/usr/lib/x86_64-linux-gnu/jni", "/usr/lib/aarch64-linux-gnu/jni", "/usr/lib/jni"}
)

// BenchmarkJULLTTng: the LTTng-UST JUL agent's LttngLogHandler with an
// active session enabling the logger; the session must discard nothing.
func BenchmarkJULLTTng(b *testing.B) { report(b, caseLTTng, runLTTng(b, records(b))) }

// BenchmarkJULTadpoleLTTng: tadpole's handler recording into an active
// LTTng session through libtadpole-lttng.so, no HQ; the session must
// discard nothing.
func BenchmarkJULTadpoleLTTng(b *testing.B) {
	report(b, caseTadpoleLTTng, runTadpoleLTTng(b, records(b)))
}

// runLTTng runs JulBench with the LTTng-UST JUL agent under a session
// daemon of its own and checks that the session lost nothing.
func runLTTng(b testing.TB, n int) sample {
	e := jtest.Build(b)
	for _, j := range lttngJars {
		if _, err := os.Stat(j); err != nil {
			skip(b, "LTTng JUL agent missing: "+j)
		}
	}
	libDir := ""
	for _, d := range lttngJNI {
		if _, err := os.Stat(filepath.Join(d, "liblttng-ust-jul-jni.so")); err == nil {
			libDir = d
		}
	}
	if libDir == "" {
		skip(b, "liblttng-ust-jul-jni.so not found")
	}
	cp := benchClasses(b, e)
	return runInSession(b, func(ctx context.Context) *exec.Cmd {
		return javaCmd(ctx, e, cp+":"+strings.Join(lttngJars, ":"), []string{"-Djava.library.path=" + libDir, drainPause},
			"lttng", n)
	}, n)
}

// BenchmarkJULTadpoleLTTngNoSource: the same with lttng_source=off (no
// class and method in the event).
func BenchmarkJULTadpoleLTTngNoSource(b *testing.B) {
	report(b, caseTadpoleLTTngNoSrc, runTadpoleLTTngNoSource(b, records(b)))
}

// runTadpoleLTTng runs JulBench with tadpole's handler, no HQ, recording
// into the session through libtadpole-lttng.so.
func runTadpoleLTTng(b testing.TB, n int) sample { return runTadpoleInSession(b, n, "logs=lttng") }

// runTadpoleLTTngNoSource is runTadpoleLTTng with lttng_source=off.
func runTadpoleLTTngNoSource(b testing.TB, n int) sample {
	return runTadpoleInSession(b, n, "logs=lttng,lttng_source=off")
}

func runTadpoleInSession(b testing.TB, n int, options string) sample {
	e := jtest.Build(b)
	if _, err := os.Stat(filepath.Join(filepath.Dir(e.Lib), "libtadpole-lttng.so")); err != nil {
		skip(b, "libtadpole-lttng.so not built (liblttng-ust-dev missing)")
	}
	// Readable by the user the application runs as.
	if err := os.Chmod(filepath.Dir(e.Lib), 0o755); err != nil {
		b.Fatal(err)
	}
	cp := benchClasses(b, e)
	return runInSession(b, func(ctx context.Context) *exec.Cmd {
		return javaCmd(ctx, e, cp, []string{"-agentpath:" + e.Lib + "=" + options, drainPause}, "tadpole", n)
	}, n)
}

// drainPause has JulBench pause between its warm-up and its timed records
// into an LTTng session, so that the consumer daemon writes out the
// warm-up's events first.
const drainPause = "-Dbench.pauseMs=1000"

// runInSession runs the JulBench command under a session daemon of its
// own, with a session enabling the benchmark logger, and checks that the
// session lost nothing.
func runInSession(b testing.TB, command func(context.Context) *exec.Cmd, n int) sample {
	s := testpeers.StartSessiond(b)
	trace := s.MkdirAll("trace")
	s.MustLttng("create", "julbench", "--output="+trace)
	// JUL events go to the UST channel lttng_jul_channel, created here
	// first in lttng's default mode, discard (a writer never waits for the
	// consumer daemon): what is measured is the writer's cost, and a run
	// fails unless the session discarded nothing. Its sub-buffers are
	// sized for that, at 128 MiB a CPU (against lttng's default of
	// 4 × 512 KiB): the warm-up's million events (about 80 bytes each)
	// fit even when the consumer daemon, which shares the machine's two
	// cores with the JVM, keeps up with none of them, and so do the timed
	// ones after the pause (drainPause) in which it catches up.
	s.MustLttng("enable-channel", "-u", "lttng_jul_channel", "-s", "julbench",
		"--discard", "--subbuf-size=8M", "--num-subbuf=16")
	s.MustLttng("enable-event", "-j", "bench.jul", "-s", "julbench")
	s.MustLttng("start", "julbench")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := command(ctx)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.Home, "LTTNG_HOME=" + s.Home}
	cmd.Dir = s.Home
	if os.Geteuid() == 0 {
		// The sessiond runs as nobody; its application must too.
		u, err := user.Lookup("nobody")
		if err != nil {
			b.Fatal(err)
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	}
	res := runJava(b, cmd)
	s.MustLttng("stop", "julbench")
	stats := s.MustLttng("list", "julbench")
	if !strings.Contains(stats, "bench.jul") {
		b.Fatalf("session does not list the logger:\n%s", stats)
	}
	// The daemon's discarded-events counter of the session's channels, and
	// the trace itself: every record of the run (warm-up and timed) is an
	// event in it.
	res.discarded = -1
	for _, m := range discardedRe.FindAllStringSubmatch(stats, -1) {
		d, _ := strconv.ParseInt(m[1], 10, 64)
		res.discarded = max(res.discarded, 0) + d
	}
	// lttng-ust in the JVM enables the event on its own schedule (its
	// registration with the daemon), so the first warm-up records may
	// precede it; none may be lost after, and the timed ones all follow
	// the warm-up: at least n events, none discarded.
	res.recorded, res.lost = countTrace(b, trace)
	b.Logf("%.1f ns/record wall, %.1f logging thread CPU; %d events in the trace, %d discarded (daemon), %d (trace)",
		res.ns, res.cpu, res.recorded, res.discarded, res.lost)
	if res.discarded != 0 || res.lost != 0 || res.recorded < int64(n) || res.recorded > int64(warmup+n) {
		b.Fatalf("LTTng lost records: %d in the trace of %d logged (%d timed), %d discarded (daemon), %d (trace)\n%s",
			res.recorded, warmup+n, n, res.discarded, res.lost, stats)
	}
	return res
}

// printPerJVM prints each JVM's figures of the cases, round by round (the
// n-th run of each case is round n), and per round the official agent's
// cost over tadpole's into the same kind of LTTng session: a median can
// hide a bimodal spread, which these rows show.
func printPerJVM(w io.Writer, cases []string) {
	measured.Lock()
	defer measured.Unlock()
	rounds := 0
	for _, c := range cases {
		rounds = max(rounds, len(measured.runs[c]))
	}
	fmt.Fprintf(w, "  per JVM, ns/record wall / logging thread CPU:\n  %-5s", "round")
	for _, c := range cases {
		fmt.Fprintf(w, " %21s", c)
	}
	fmt.Fprintf(w, "  %s / %s wall, CPU\n", caseLTTng, caseTadpoleLTTng)
	for r := range rounds {
		fmt.Fprintf(w, "  %-5d", r+1)
		for _, c := range cases {
			if runs := measured.runs[c]; r < len(runs) {
				fmt.Fprintf(w, " %10.1f /%9.1f", runs[r].ns, runs[r].cpu)
			} else {
				fmt.Fprintf(w, " %21s", "-")
			}
		}
		lt, tl := measured.runs[caseLTTng], measured.runs[caseTadpoleLTTng]
		if r < len(lt) && r < len(tl) {
			fmt.Fprintf(w, "  %.1f×, %.1f×", lt[r].ns/tl[r].ns, lt[r].cpu/tl[r].cpu)
		}
		fmt.Fprintln(w)
	}
}

// discardedRe is the per-channel counter `lttng list SESSION` prints.
var discardedRe = regexp.MustCompile(`Discarded events:\s*(\d+)`)

// The counter sink's lines; it prints its counts as it goes, the last
// ones are the trace's.
var (
	counterEventsRe    = regexp.MustCompile(`(?m)^\s*(\d+) Event messages\s*$`)
	counterDiscardedRe = regexp.MustCompile(`(?m)^\s*(\d+) Discarded (?:event|packet) messages\s*$`)
)

func countTrace(b testing.TB, dir string) (events, discarded int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "babeltrace2", dir, "-c", "sink.utils.counter").CombinedOutput()
	if err != nil {
		b.Fatalf("babeltrace2 %s: %v\n%s", dir, err, out)
	}
	ms := counterEventsRe.FindAllSubmatch(out, -1)
	if ms == nil {
		b.Fatalf("babeltrace2 counted no events:\n%s", out)
	}
	events, _ = strconv.ParseInt(string(ms[len(ms)-1][1]), 10, 64)
	// The last block's discarded event and packet messages.
	if ds := counterDiscardedRe.FindAllSubmatch(out, -1); len(ds) >= 2 {
		for _, d := range ds[len(ds)-2:] {
			v, _ := strconv.ParseInt(string(d[1]), 10, 64)
			discarded += v
		}
	}
	return events, discarded
}

func skip(b testing.TB, why string) {
	if os.Getenv("CI") == "true" {
		b.Fatal(why)
	}
	b.Skip(why)
}
