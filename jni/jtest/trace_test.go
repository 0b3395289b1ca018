package jtest

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/internal/testhq"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// traceCmd runs JTrace (testdata/JTrace.java, packages jt and jx) under
// -Xverify:all with the agent (options after '='; agent false: without it).
func (e *Env) traceCmd(ctx context.Context, env []string, agent bool, options string, args ...string) *exec.Cmd {
	a := []string{"-Xverify:all", "-XX:+UseSerialGC", "-Xshare:auto"}
	if agent {
		p := "-agentpath:" + e.Lib
		if options != "" {
			p += "=" + options
		}
		a = append(a, p)
	}
	a = append(a, "-cp", e.Classes, "JTrace")
	cmd := exec.CommandContext(ctx, "java", append(a, args...)...)
	cmd.Env = env
	return cmd
}

// jtraceCounts is what JTrace printed it counted of package jt.
type jtraceCounts struct{ calls, bubbles, throws, skipped int }

func runTrace(t *testing.T, e *Env, env []string, options string, args ...string) jtraceCounts {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	r := Run(e.traceCmd(ctx, env, true, options, args...))
	if r.Err != nil {
		t.Fatalf("JTrace %v: %v\nstdout:\n%s\nstderr:\n%s", args, r.Err, r.Stdout, r.Stderr)
	}
	var c jtraceCounts
	for _, l := range strings.Split(r.Stdout, "\n") {
		if !strings.HasPrefix(l, "JTrace ") {
			continue
		}
		for _, kv := range strings.Fields(l)[1:] {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.Atoi(v)
			switch k {
			case "calls":
				c.calls = n
			case "bubbles":
				c.bubbles = n
			case "throws":
				c.throws = n
			case "skipped":
				c.skipped = n
			}
		}
		return c
	}
	t.Fatalf("no counts from JTrace; stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	return c
}

// throwLine is the line of Work.java marked THROW-LINE.
func throwLine(t *testing.T, e *Env) uint16 {
	t.Helper()
	f, err := os.Open(filepath.Join(e.Root, "jni/jtest/testdata/jt/Work.java"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for n := 1; s.Scan(); n++ {
		if strings.Contains(s.Text(), "THROW-LINE") {
			return uint16(n)
		}
	}
	t.Fatal("no THROW-LINE in Work.java")
	return 0
}

// checkTrace checks a JTrace run against what the program counted: every
// jt call entered, left by exit or bubble, each thread's calls nested and
// balanced, every throw seen; and the methods of each kind of class mapped.
func checkTrace(t *testing.T, e *Env, rep *hq.Report, c *testhq.Collector, want jtraceCounts, threads int) {
	t.Helper()
	testhq.CheckClean(t, rep, c, -1)
	if rep.StackFaults != 0 || rep.UnmatchedExits != 0 {
		t.Fatalf("stack faults %d, unmatched exits %d", rep.StackFaults, rep.UnmatchedExits)
	}
	methods := c.Methods()
	byName := map[string]int32{}
	for id, sig := range methods {
		name, _, _ := strings.Cut(sig, ";")
		byName[name] = id
		if strings.HasPrefix(sig, "jt/Skip") || strings.HasPrefix(sig, "jx/") || strings.HasPrefix(sig, "JTrace") {
			t.Errorf("excluded method traced: %s", sig)
		}
	}
	for _, m := range []string{
		"jt/Work.<clinit>", "jt/Work.fib", "jt/Work.<init>", "jt/Work$Inner.<init>", "jt/Work$Inner.twice",
		"jt/Work$Point.<init>", "jt/Work$Point.x", "jt/Work$Greeter.greet", "jt/Work$Hello.hello",
		"jt/Work.lambda$job$0", "jt/Loaded.<init>", "jt/Loaded.run",
	} {
		if _, ok := byName[m]; !ok {
			t.Errorf("method %s not mapped; mapped: %v", m, methods)
		}
	}
	var entries, exits, bubbles, throws int
	perThread := map[uint16]int{}
	line := throwLine(t, e)
	thrower, catcher := byName["jt/Work.thrower"], byName["jt/Work.catcher"]
	ev := c.Events()
	paths := 0
	for i, x := range ev {
		switch x.Type {
		case bytefrog.MsgMethodEntry:
			entries++
			perThread[x.Thread]++
		case bytefrog.MsgMethodExit:
			exits++
			perThread[x.Thread]--
		case bytefrog.MsgExceptionBubble:
			bubbles++
			perThread[x.Thread]--
		case bytefrog.MsgException:
			throws++
			if x.Method != thrower {
				continue
			}
			if x.Line != line {
				t.Errorf("exception in thrower at line %d; want %d", x.Line, line)
			}
			// The bubble path: thrower's frames, then catcher returns.
			n := 0
			for _, y := range ev[i+1:] {
				if y.Thread != x.Thread {
					continue
				}
				if y.Type == bytefrog.MsgExceptionBubble && y.Method == thrower && y.Exception == x.Exception {
					n++
					continue
				}
				if y.Type != bytefrog.MsgMethodExit || y.Method != catcher || n < 3 {
					t.Errorf("after %d thrower bubbles: %+v; want catcher's exit after ≥ 3", n, y)
				}
				break
			}
			paths++
		}
	}
	if paths != threads+1 {
		t.Errorf("%d exceptions thrown in thrower; want %d", paths, threads+1)
	}
	if entries != want.calls || exits != want.calls-want.bubbles || bubbles != want.bubbles || throws != want.throws {
		t.Errorf("entries %d exits %d bubbles %d exceptions %d; JTrace counted calls %d bubbles %d throws %d",
			entries, exits, bubbles, throws, want.calls, want.bubbles, want.throws)
	}
	names := c.Names()
	for tid, open := range perThread {
		if open != 0 {
			t.Errorf("thread %d (%s): %d calls not left", tid, names[tid], open)
		}
	}
	if want.skipped != 1 {
		t.Errorf("skipped %d; want 1", want.skipped)
	}
	if rep.Classes.Transformed < 6 {
		t.Errorf("%d classes transformed; want ≥ 6 (Work, its 4 nested classes, Loaded)", rep.Classes.Transformed)
	}
}

// TestTraceMethods: with trace=jt/**,!jt/Skip, -Xverify:all and 3 threads,
// HQ gets every call of package jt: classes of a custom class loader,
// lambdas, records, inner classes, default methods and <clinit> included;
// the excluded class reported ignored.
func TestTraceMethods(t *testing.T) {
	e := Build(t)
	h := startHQ(t)
	const threads = 3
	want := runTrace(t, e, h.env(), "trace=jt/**,!jt/Skip", strconv.Itoa(threads))
	rep, c := h.waitRun(t)
	checkTrace(t, e, rep, c, want, threads)
	if rep.Classes.Ignored < 1 {
		t.Errorf("%d classes ignored; want jt/Skip", rep.Classes.Ignored)
	}
	t.Logf("JTrace: %+v; classes %+v", want, rep.Classes)
}

// TestTraceHQFilters: without a trace option (application classes), HQ's
// exclusions leave out the counting classes and jt/Skip, and an inclusion
// overrides an exclusion.
func TestTraceHQFilters(t *testing.T) {
	e := Build(t)
	h := &testHQ{testhq.Start(t, func(cfg *hq.Config) {
		cfg.Agent.Exclusions = []string{"jx/", "JTrace", "jt/"}
		cfg.Agent.Inclusions = []string{`jt/(Work|Loaded)`}
	})}
	want := runTrace(t, e, h.env(), "", "2")
	rep, c := h.waitRun(t)
	checkTrace(t, e, rep, c, want, 2)
}

// TestTraceOff: trace=none leaves every class alone; the run is clean.
func TestTraceOff(t *testing.T) {
	e := Build(t)
	h := startHQ(t)
	runTrace(t, e, h.env(), "trace=none", "1")
	rep, c := h.waitRun(t)
	testhq.CheckClean(t, rep, c, -1)
	if n := len(c.Methods()); n != 0 || rep.Classes.Transformed != 0 {
		t.Fatalf("trace=none: %d methods mapped, %d classes transformed", n, rep.Classes.Transformed)
	}
}

// TestTraceStartupNoHQ: a JVM with the agent and no HQ (application
// classes rewritten at load, probes off) starts and runs JTrace for at most
// 50 ms more than without the agent. The JVM's CPU time (user + system) is
// compared, best of several alternating runs, since wall time on a shared
// machine measures the other processes; the bound is doubled for that
// machine's noise. Both figures are logged.
func TestTraceStartupNoHQ(t *testing.T) {
	e := Build(t)
	const runs = 7
	best := [2]time.Duration{time.Hour, time.Hour}
	wall := [2]time.Duration{time.Hour, time.Hour}
	for i := 0; i < runs; i++ {
		for j, agent := range []bool{false, true} {
			ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
			cmd := e.traceCmd(ctx, append(baseEnv(), "TADPOLE_LTTNG=off"), agent, "", "0")
			r := Run(cmd)
			cancel()
			if r.Err != nil || !strings.Contains(r.Stdout, "JTrace calls=") {
				t.Fatalf("agent %v: %v\n%s%s", agent, r.Err, r.Stdout, r.Stderr)
			}
			if agent && r.Stderr != "" {
				t.Errorf("agent without HQ wrote to stderr:\n%s", r.Stderr)
			}
			best[j] = min(best[j], cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
			wall[j] = min(wall[j], r.Elapsed)
		}
	}
	d := best[1] - best[0]
	t.Logf("JTrace start and run, best of %d: CPU %v without the agent, %v with it and no HQ (%+v); wall %v and %v (%+v)",
		runs, best[0], best[1], d, wall[0], wall[1], wall[1]-wall[0])
	if d > 2*50*time.Millisecond {
		t.Errorf("the agent without HQ adds %v of CPU to the JVM's start; want ≤ 50 ms (100 ms allowed here)", d)
	}
}
