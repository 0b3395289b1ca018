package jtest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/internal/testhq"
	"github.com/tadpole-trace/tadpole/internal/testpeers"
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
	checkTraceOf(t, e, rep, c, want, threads, true)
}

// checkTraceOf is checkTrace; clinit false when jt/Work was initialized
// before tracing began.
func checkTraceOf(t *testing.T, e *Env, rep *hq.Report, c *testhq.Collector, want jtraceCounts, threads int, clinit bool) {
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
	kinds := []string{
		"jt/Work.fib", "jt/Work.<init>", "jt/Work$Inner.<init>", "jt/Work$Inner.twice",
		"jt/Work$Point.<init>", "jt/Work$Point.x", "jt/Work$Greeter.greet", "jt/Work$Hello.hello",
		"jt/Work.lambda$job$0", "jt/Loaded.<init>", "jt/Loaded.run",
	}
	if clinit {
		kinds = append(kinds, "jt/Work.<clinit>")
	}
	for _, m := range kinds {
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
// machine measures the other processes; the bound is tripled for that
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
	if d > 3*50*time.Millisecond {
		t.Errorf("the agent without HQ adds %v of CPU to the JVM's start; want ≤ 50 ms (150 ms allowed here)", d)
	}
}

// TestTraceAttach: the agent attached late (jcmd JVMTI.agent_load) gives
// probes to the classes loaded before (retransformed) and after: HQ gets
// every call the program makes once attached.
func TestTraceAttach(t *testing.T) {
	e := Build(t)
	testpeers.RequireTools(t, "jcmd")
	h := startHQ(t)
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	const threads = 2
	cmd := e.traceCmd(ctx, h.env(), false, "", "attach", strconv.Itoa(threads))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "JTrace ready" {
		t.Fatalf("no ready line: %q %v\n%s", lines.Text(), lines.Err(), stderr.String())
	}
	jcmd := exec.CommandContext(ctx, "jcmd", strconv.Itoa(cmd.Process.Pid), "JVMTI.agent_load", e.Lib, `"trace=jt/**,!jt/Skip"`) // quoted: jcmd takes name=value for its own options
	if b, err := jcmd.CombinedOutput(); err != nil || !strings.Contains(string(b), "return code: 0") {
		t.Fatalf("jcmd: %v\n%s", err, b)
	}
	if _, err := stdin.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	var want jtraceCounts
	for lines.Scan() {
		l := lines.Text()
		if strings.HasPrefix(l, "JTrace calls=") {
			fmt.Sscanf(l, "JTrace calls=%d bubbles=%d throws=%d skipped=%d", &want.calls, &want.bubbles, &want.throws, &want.skipped)
		}
	}
	if err := cmd.Wait(); err != nil || want.calls == 0 {
		t.Fatalf("JTrace: %v, counts %+v\n%s", err, want, stderr.String())
	}
	rep, c := h.waitRun(t)
	checkTraceOf(t, e, rep, c, want, threads, false)
	t.Logf("attached: %+v; classes %+v", want, rep.Classes)
}

// TestTraceSuspendStop: HQ suspends, unsuspends and stops the run while
// the program calls; the probes switch off and on with it (the program
// sees Probe.on end off after one turn on again), and the run stays clean: calls nest across the
// data break, nothing is stamped inside the windows.
func TestTraceSuspendStop(t *testing.T) {
	e := Build(t)
	h := &testHQ{testhq.Start(t, func(cfg *hq.Config) {
		cfg.Script = "wait 300ms; suspend; wait 1s; unsuspend; wait 500ms; stop"
	})}
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	r := Run(e.traceCmd(ctx, h.env(), true, "trace=jt/**", "loop"))
	if r.Err != nil || !strings.Contains(r.Stdout, "JTrace loop gen=1 on=false") {
		t.Fatalf("JTrace loop: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	rep, c := h.waitRun(t)
	testhq.CheckClean(t, rep, c, -1)
	if rep.StackFaults != 0 || rep.InWindow != 0 || len(c.Breaks()) != 1 {
		t.Fatalf("stack faults %d, in window %d, breaks %v; want 0, 0, one", rep.StackFaults, rep.InWindow, c.Breaks())
	}
	if rep.Events[bytefrog.MsgMethodEntry] == 0 {
		t.Fatal("no method entries")
	}
	t.Logf("%d entries, %d exits, %d unmatched exits", rep.Events[bytefrog.MsgMethodEntry], rep.Events[bytefrog.MsgMethodExit], rep.UnmatchedExits)
}

// TestTraceLateHQ: the JVM starts with HQ not yet there (hq_retry): its
// classes get probes at load while nothing is recorded; once HQ answers
// and starts the run, the probes turn on and every later call arrives.
func TestTraceLateHQ(t *testing.T) {
	e := Build(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	env := append(baseEnv(), "TADPOLE_HQ="+addr, "TADPOLE_HQ_RETRY=200ms", "TADPOLE_FLUSH_INTERVAL=5ms", "TADPOLE_LTTNG=off", "TADPOLE_LOG=none")
	const threads = 2
	cmd := e.traceCmd(ctx, env, true, "trace=jt/**,!jt/Skip", "attach", strconv.Itoa(threads))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "JTrace ready" {
		t.Fatalf("no ready line: %q %v\n%s", lines.Text(), lines.Err(), stderr.String())
	}
	h := &testHQ{testhq.Start(t, func(cfg *hq.Config) { cfg.Listen = addr })}
	r, err := h.Srv.NextRun(ctx)
	if err != nil {
		t.Fatalf("no run: %v\n%s", err, stderr.String())
	}
	if err := r.WaitMode(ctx, bytefrog.ModeTracing); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the probes' tick thread sees tracing within 20 ms
	stdin.Write([]byte("go\n"))
	stdin.Close()
	var want jtraceCounts
	for lines.Scan() {
		if l := lines.Text(); strings.HasPrefix(l, "JTrace calls=") {
			fmt.Sscanf(l, "JTrace calls=%d bubbles=%d throws=%d skipped=%d", &want.calls, &want.bubbles, &want.throws, &want.skipped)
		}
	}
	if err := cmd.Wait(); err != nil || want.calls == 0 {
		t.Fatalf("JTrace: %v, counts %+v\n%s", err, want, stderr.String())
	}
	rep, err := r.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := h.Collector(0)
	<-c.Done()
	checkTraceOf(t, e, rep, c, want, threads, false)
}

// TestTraceJavac: classes of a named JDK module (jdk.compiler) get probes
// when the trace option selects them: the probes' helper on the boot class
// path is readable from the module, and javac still compiles under
// -Xverify:all.
func TestTraceJavac(t *testing.T) {
	e := Build(t)
	h := startHQ(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "Hello.java")
	if err := os.WriteFile(src, []byte("class Hello { public static void main(String[] a) { System.out.println(a.length); } }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", "-Xverify:all", "-agentpath:"+e.Lib+"=trace=com/sun/tools/javac/main/**",
		"-m", "jdk.compiler/com.sun.tools.javac.Main", "-d", dir, src)
	cmd.Env = h.env()
	if r := Run(cmd); r.Err != nil {
		t.Fatalf("javac: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "Hello.class")); err != nil {
		t.Fatal(err)
	}
	rep, c := h.waitRun(t)
	testhq.CheckClean(t, rep, c, -1)
	entries, ends := rep.Events[bytefrog.MsgMethodEntry], rep.Events[bytefrog.MsgMethodExit]+rep.Events[bytefrog.MsgExceptionBubble]
	found := false
	for _, sig := range c.Methods() {
		if strings.HasPrefix(sig, "com/sun/tools/javac/main/JavaCompiler.compile;") {
			found = true
		}
		if !strings.HasPrefix(sig, "com/sun/tools/javac/main/") {
			t.Errorf("method outside the trace option: %s", sig)
		}
	}
	if !found || entries == 0 || entries != ends {
		t.Fatalf("JavaCompiler.compile mapped %v; %d entries, %d exits and bubbles", found, entries, ends)
	}
}

// TestTraceJULOrder: with jul_order=on, JUL records logged between traced
// calls reach HQ between them: the i-th record after the i-th entry of Work.logged and
// before its exit.
func TestTraceJULOrder(t *testing.T) { traceJULOrder(t, "trace=jt/**,jul_order=on") }

// traceJULOrder runs JTrace log with options and checks that the i-th
// record reaches HQ after the i-th entry of Work.logged and before its exit.
func traceJULOrder(t *testing.T, options string) {
	e := Build(t)
	h := startHQ(t)
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	r := Run(e.traceCmd(ctx, h.env(), true, options, "log"))
	if r.Err != nil || !strings.Contains(r.Stdout, "JTrace log done") {
		t.Fatalf("JTrace log: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	rep, c := h.waitRun(t)
	testhq.CheckClean(t, rep, c, -1)
	var logged int32 = -1
	for id, sig := range c.Methods() {
		if strings.HasPrefix(sig, "jt/Work.logged;") {
			logged = id
		}
	}
	entered, left, records := 0, 0, 0
	for _, ev := range c.Events() {
		switch {
		case ev.Type == bytefrog.MsgMethodEntry && ev.Method == logged:
			entered++
		case ev.Type == bytefrog.MsgMethodExit && ev.Method == logged:
			left++
		case ev.Type == bytefrog.MsgMarker && ev.Key == "log:jtrace":
			if want := fmt.Sprintf("INFO rec %d", records); ev.Value != want || entered != records+1 || left != records {
				t.Fatalf("record %q at seq %d after %d entries and %d exits of Work.logged; want %q after %d and %d",
					ev.Value, ev.Seq, entered, left, want, records+1, records)
			}
			records++
		}
	}
	if records != 200 || entered != 200 || left != 200 {
		t.Fatalf("%d records, %d entries, %d exits of Work.logged; want 200 each", records, entered, left)
	}
}
