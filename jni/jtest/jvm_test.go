package jtest

import (
	"context"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/internal/testhq"
	"github.com/tadpole-trace/tadpole/internal/testpeers"
)

func runJava(t *testing.T, e *Env, env []string, agent bool, options string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	r := Run(e.Java(ctx, env, agent, options, args...))
	if r.Err != nil {
		t.Fatalf("java %v: %v\nstdout:\n%s\nstderr:\n%s", args, r.Err, r.Stdout, r.Stderr)
	}
	return r
}

// TestBasic: markers, JUL records on several loggers with their levels, a
// renamed thread, a gap-free run, nothing but the -Xcheck:jni signal
// warning on stderr.
func TestBasic(t *testing.T) {
	e := Build(t)
	h := startHQ(t)
	r := runJava(t, e, h.env(), true, "", "basic")
	if !strings.Contains(r.Stdout, "JApp done basic tracing=true") {
		t.Fatalf("got stdout %q; want tracing=true", r.Stdout)
	}
	rep, c := h.waitRun(t)
	testhq.CheckClean(t, rep, c, -1)
	for _, tc := range []struct {
		key  string
		want []string
	}{
		{"k1", []string{"v1"}},
		{"k2", []string{"vé"}},
		{"in", []string{"worker", "renamed"}},
		{"log:shop.orders", []string{"INFO order 1"}},
		{"log:shop.pay", []string{"FINE pay 2", "WARNING declined card"}},
	} {
		if got := c.Markers(tc.key); !slices.Equal(got, tc.want) {
			t.Errorf("markers %q: got %q; want %q", tc.key, got, tc.want)
		}
	}
	if strings.Contains(r.Stderr, "tadpole: [") {
		t.Errorf("agent wrote to stderr:\n%s", r.Stderr)
	}
}

// TestNPEStorm: implicit null checks (SIGSEGV in JIT code) on threads that
// called into the agent are forwarded to the JVM.
func TestNPEStorm(t *testing.T) {
	e := Build(t)
	h := startHQ(t)
	const threads, each = 4, 400000
	r := runJava(t, e, h.env(), true, "", "npe", strconv.Itoa(threads), strconv.Itoa(each))
	want := "npe caught " + strconv.Itoa(threads*each)
	if !strings.Contains(r.Stdout, want) {
		t.Fatalf("got stdout %q; want %q", r.Stdout, want)
	}
	rep, c := h.waitRun(t)
	testhq.CheckClean(t, rep, c, -1)
	if got := c.Markers("npe"); len(got) != threads+1 || got[threads] != "caught "+strconv.Itoa(threads*each) {
		t.Fatalf("got npe markers %q; want %d starts and the total", got, threads)
	}
}

// TestSelfTest: a Go panic is recovered and a write to a broken pipe
// returns EPIPE inside the JVM.
func TestSelfTest(t *testing.T) {
	e := Build(t)
	h := startHQ(t)
	r := runJava(t, e, h.env(), true, "", "selftest")
	want := "selftest -1 " + strconv.Itoa(int(syscall.EPIPE))
	if !strings.Contains(r.Stdout, want) {
		t.Fatalf("got stdout %q; want %q", r.Stdout, want)
	}
	rep, c := h.waitRun(t)
	testhq.CheckClean(t, rep, c, -1)
}

var procsLine = regexp.MustCompile(`procs [0-9]+`)

// TestProcs: in a JVM the library's Go runtime runs agent code on one
// thread at a time unless the procs option or TADPOLE_PROCS says otherwise.
func TestProcs(t *testing.T) {
	e := Build(t)
	h := startHQ(t)
	for _, c := range []struct {
		options string
		env     string
		want    string
	}{
		{"", "", "procs 1"},
		{"procs=3", "", "procs 3"},
		{"", "TADPOLE_PROCS=2", "procs 2"},
		{"procs=3", "TADPOLE_PROCS=2", "procs 3"},
	} {
		env := h.env()
		if c.env != "" {
			env = append(env, c.env)
		}
		r := runJava(t, e, env, true, c.options, "procs")
		// -Xcheck:jni's warnings may come between the line's parts.
		if got := procsLine.FindString(r.Stdout); got != c.want {
			t.Errorf("options %q, %s: got %q; want %q\nstdout:\n%s", c.options, c.env, got, c.want, r.Stdout)
		}
		rep, c := h.waitRun(t)
		testhq.CheckClean(t, rep, c, -1)
	}
}

// TestThreadDump: kill -QUIT and jcmd Thread.print still work.
func TestThreadDump(t *testing.T) {
	e := Build(t)
	testRequire(t, "jcmd")
	h := startHQ(t)
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	j := startReady(ctx, t, e.Java(ctx, h.env(), true, "", "await"), "JApp ready\n")
	if err := j.cmd.Process.Signal(syscall.SIGQUIT); err != nil {
		t.Fatal(err)
	}
	jc, err := exec.CommandContext(ctx, "jcmd", strconv.Itoa(j.cmd.Process.Pid), "Thread.print").CombinedOutput()
	if err != nil || !strings.Contains(string(jc), "tadpole-jul") && !strings.Contains(string(jc), "\"main\"") {
		t.Errorf("jcmd Thread.print: %v\n%s", err, jc)
	}
	out := j.wake(t)
	if !strings.Contains(out, "Full thread dump") {
		t.Errorf("no thread dump on stdout after SIGQUIT:\n%s", out)
	}
	rep, c := h.waitRun(t)
	testhq.CheckClean(t, rep, c, -1)
	if got := c.Markers("woke"); len(got) != 1 {
		t.Errorf("got woke markers %q; want 1", got)
	}
}

// readyJava is a JVM that has said it is ready: up and able to take signals
// and attach requests. In JApp's await mode it waits for a byte on its stdin.
type readyJava struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    readyWriter
	errb   syncBuf
	exited chan error
}

// startReady starts cmd and returns once it has written ready to its
// stdout. A fixed sleep instead races the JVM on a busy host: a JVM that has
// already run its course, exited and not yet been reaped takes jcmd's
// attach signal and never answers.
func startReady(ctx context.Context, t *testing.T, cmd *exec.Cmd, ready string) *readyJava {
	t.Helper()
	j := &readyJava{cmd: cmd, out: readyWriter{want: ready, ready: make(chan struct{})}, exited: make(chan error, 1)}
	var err error
	if j.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = &j.out, &j.errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { j.exited <- cmd.Wait() }()
	select {
	case <-j.out.ready:
		return j
	case err := <-j.exited:
		t.Fatalf("java exited before it was ready: %v\nstdout:\n%s\nstderr:\n%s", err, j.out.String(), j.errb.String())
	case <-ctx.Done():
		t.Fatalf("java not ready: %v\nstdout:\n%s\nstderr:\n%s", ctx.Err(), j.out.String(), j.errb.String())
	}
	return nil
}

// wake lets a JVM in await mode finish; see wait.
func (j *readyJava) wake(t *testing.T) string {
	t.Helper()
	if _, err := j.stdin.Write([]byte("\n")); err != nil {
		t.Fatalf("wake java: %v\nstderr:\n%s", err, j.errb.String())
	}
	return j.wait(t)
}

// wait checks the JVM exits normally and returns its stdout.
func (j *readyJava) wait(t *testing.T) string {
	t.Helper()
	j.stdin.Close()
	if err := <-j.exited; err != nil {
		t.Fatalf("java: %v\nstdout:\n%s\nstderr:\n%s", err, j.out.String(), j.errb.String())
	}
	return j.out.String()
}

// syncBuf collects a process's output, which its reader may want while
// the process still writes.
type syncBuf struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (w *syncBuf) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *syncBuf) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// readyWriter is a syncBuf that closes ready once want has been written.
type readyWriter struct {
	syncBuf
	want  string
	ready chan struct{}
	seen  bool
}

func (w *readyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.seen && strings.Contains(w.buf.String(), w.want) {
		w.seen = true
		close(w.ready)
	}
	return len(p), nil
}

// TestHQKilled: HQ going away mid-run leaves the JVM running to a normal
// exit.
func TestHQKilled(t *testing.T) {
	e := Build(t)
	h := startHQ(t)
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	j := startReady(ctx, t, e.Java(ctx, h.env("TADPOLE_LOG=none"), true, "", "logloop", "3000"), "JApp looping")
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	h.Srv.Shutdown(sctx)
	scancel()
	out := j.wait(t)
	if !strings.Contains(out, "JApp looping tracing=true") || !strings.Contains(out, "JApp done logloop") {
		t.Fatalf("got stdout %q; want a traced loop run to its end", out)
	}
}

// TestNoHQ: an absent HQ delays the JVM by at most the connect timeout,
// then it runs untraced after one line that says why; log=none silences
// it, and a bad option is one line too.
func TestNoHQ(t *testing.T) {
	e := Build(t)
	env := append(baseEnv(), "TADPOLE_HQ=127.0.0.1:1", "TADPOLE_LTTNG=off")
	for _, tc := range []struct {
		opts  string
		lines int
		want  string
	}{
		{"connect_timeout=300ms", 1, "[WARN] running untraced: tadpole: HQ not reachable"},
		{"connect_timeout=300ms,log=none", 0, ""},
		{"connect_timeout=300ms,log_level=error", 0, ""},
		{"connect_timeout=300ms,colour=red", 1, `[ERROR] running untraced: tadpole: unknown option "colour"`},
		{"connect_timeout=300ms,colour=red,log=none", 0, ""},
	} {
		r := runJava(t, e, env, true, tc.opts, "basic")
		if !strings.Contains(r.Stdout, "tracing=false") {
			t.Fatalf("%s: got stdout %q; want tracing=false", tc.opts, r.Stdout)
		}
		if n := tadpoleLines(r.Stderr); n != tc.lines || !strings.Contains(r.Stderr, tc.want) {
			t.Errorf("%s: got %d tadpole lines; want %d with %q:\n%s", tc.opts, n, tc.lines, tc.want, r.Stderr)
		}
		if r.Elapsed > 20*time.Second {
			t.Fatalf("%s: JVM took %v", tc.opts, r.Elapsed)
		}
	}
}

// tadpoleLines counts the agent's lines in a process's stderr.
func tadpoleLines(stderr string) int {
	n := 0
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "tadpole:") {
			n++
		}
	}
	return n
}

// TestStartCost: without HQ the agent adds at most 50 ms to JVM start
// (best of several runs each way, alternating, to dampen a shared machine's
// noise).
func TestStartCost(t *testing.T) {
	e := Build(t)
	env := append(baseEnv(), "TADPOLE_LTTNG=off", "TADPOLE_LOG=none")
	without, with := time.Hour, time.Hour
	for range 5 {
		without = min(without, runJava(t, e, env, false, "", "none").Elapsed)
		with = min(with, runJava(t, e, env, true, "", "none").Elapsed)
	}
	t.Logf("JVM start: %v without the agent, %v with it", without, with)
	if with-without > 50*time.Millisecond {
		t.Fatalf("agent added %v to JVM start; want <= 50ms", with-without)
	}
}

// TestLibjsig: under libjsig the agent refuses to start, with a clear
// message, and the JVM goes on.
func TestLibjsig(t *testing.T) {
	e := Build(t)
	jsig := findLibjsig()
	if jsig == "" {
		testSkip(t, "libjsig.so not found in the JDK")
	}
	h := startHQ(t)
	r := runJava(t, e, h.env("LD_PRELOAD="+jsig), true, "", "basic")
	if !strings.Contains(r.Stderr, "[ERROR] libjsig is preloaded") || !strings.Contains(r.Stdout, "tracing=false") ||
		tadpoleLines(r.Stderr) != 1 {
		t.Fatalf("stdout %q\nstderr (want one line):\n%s", r.Stdout, r.Stderr)
	}
	r = runJava(t, e, h.env("LD_PRELOAD="+jsig), true, "log=none", "basic")
	if tadpoleLines(r.Stderr) != 0 || !strings.Contains(r.Stdout, "tracing=false") {
		t.Fatalf("log=none: stdout %q\nstderr (want silence):\n%s", r.Stdout, r.Stderr)
	}
}

// TestAttach: jcmd PID JVMTI.agent_load starts tracing a running JVM.
func TestAttach(t *testing.T) {
	e := Build(t)
	testRequire(t, "jcmd")
	h := startHQ(t)
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	cmd := e.Java(ctx, h.env(), false, "", "await")
	cmd.Args = slices.Insert(cmd.Args, 1, "-XX:+EnableDynamicAgentLoading")
	j := startReady(ctx, t, cmd, "JApp ready\n")
	jc, err := exec.CommandContext(ctx, "jcmd", strconv.Itoa(cmd.Process.Pid), "JVMTI.agent_load", e.Lib).CombinedOutput()
	if err != nil {
		t.Fatalf("jcmd JVMTI.agent_load: %v\n%s\nstderr:\n%s", err, jc, j.errb.String())
	}
	if out := j.wake(t); !strings.Contains(out, "tracing=true") {
		t.Fatalf("got stdout %q; want tracing=true\n%s", out, j.errb.String())
	}
	rep, c := h.waitRun(t)
	testhq.CheckClean(t, rep, c, -1)
	if got := c.Markers("woke"); len(got) != 1 {
		t.Errorf("got woke markers %q; want 1", got)
	}
}

func findLibjsig() string {
	out, err := exec.Command("java", "-XshowSettings:properties", "-version").CombinedOutput()
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(out), "\n") {
		if _, home, ok := strings.Cut(l, "java.home = "); ok {
			p := strings.TrimSpace(home) + "/lib/libjsig.so"
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	return ""
}

func testRequire(t *testing.T, tool string) {
	if _, err := exec.LookPath(tool); err != nil {
		testSkip(t, tool+" not found")
	}
}

func testSkip(t *testing.T, why string) {
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// TestFrozenHQ: an HQ that stops reading ends the run after stall_timeout
// with one line on stderr; the JVM's logging threads go on untraced and it
// exits normally, without waiting on the agent.
func TestFrozenHQ(t *testing.T) {
	e := Build(t)
	f := testpeers.NewFrozenHQ(t)
	env := append(baseEnv(), "TADPOLE_HQ="+f.Addr(), "TADPOLE_LTTNG=off", "TADPOLE_STALL_TIMEOUT=300ms",
		"TADPOLE_BUFFER_BUDGET=262144")
	r := runJava(t, e, env, true, "", "records", "4", "200000")
	t.Logf("JVM ran %v", r.Elapsed.Round(time.Millisecond))
	if !strings.Contains(r.Stdout, "JApp done records tracing=false") {
		t.Errorf("stdout %q; want the records written, untraced at the end", r.Stdout)
	}
	if n := strings.Count(r.Stderr, "HQ stopped taking data"); n != 1 {
		t.Errorf("stderr names the stall %d times; want once:\n%s", n, r.Stderr)
	}
	if r.Elapsed > 30*time.Second {
		t.Errorf("the JVM took %v", r.Elapsed)
	}
}

// TestHQLate: an HQ that refuses at first does not hold the JVM (it runs
// untraced from main on); once HQ listens the agent connects in the
// background and the JVM's records reach it.
func TestHQLate(t *testing.T) {
	e := Build(t)
	addr := testpeers.FreeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	env := append(baseEnv(), "TADPOLE_HQ="+addr, "TADPOLE_HQ_RETRY=100ms", "TADPOLE_LTTNG=off", "TADPOLE_FLUSH_INTERVAL=5ms")
	t0 := time.Now()
	j := startReady(ctx, t, e.Java(ctx, env, true, "", "logloop", "4000"), "JApp looping tracing=false")
	t.Logf("JVM looping untraced %v after its start", time.Since(t0).Round(time.Millisecond))
	h := testhq.Start(t, func(c *hq.Config) { c.Listen = addr })
	run, err := h.Srv.NextRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := j.wait(t)
	if !strings.Contains(out, "JApp done logloop tracing=true") {
		t.Fatalf("stdout %q; want the loop traced by its end", out)
	}
	rep, err := run.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK || rep.Markers == 0 {
		t.Fatalf("run: OK %v (%s), %d markers; want the loop's records", rep.OK, rep.Reason, rep.Markers)
	}
	t.Logf("%d records reached HQ once it appeared", rep.Markers)
}
