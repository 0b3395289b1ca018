package agent

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/internal/testhq"
	"github.com/tadpole-trace/tadpole/internal/testpeers"
)

// The integration tests run the Go program testdata/lttngapp as a
// subprocess against an in-test HQ and a real lttng-sessiond 2.13, and drive
// it with the lttng CLI. The program logs on three slog loggers at four
// levels every iteration and marks the iteration number; the tests read the
// markers at HQ.

// Settings of the integration tests.
const (
	// integGrace is how many program iterations (5 ms each at least) may
	// still follow the old rules after an lttng command returned: the HQ
	// lags the program by the agent's flush interval and the transport.
	integGrace = 100
	// integWindow is how many iterations a check looks at.
	integWindow = 60
	// integWait bounds every wait for the program, HQ or the daemon.
	integWait = 20 * time.Second
	// integListWait bounds the wait for the program to be listed; the
	// agent retries every 200 ms, so it normally takes milliseconds.
	integListWait = 10 * time.Second
	// integPoll is the polling period of the waits.
	integPoll = 20 * time.Millisecond
	// integTickKey is the key of the program's per-iteration marker.
	integTickKey = "app.tick"
)

// integLoggers are the program's loggers, sorted, and integLevels the slog
// level names it logs at.
var (
	integLoggers = []string{"app.orders", "app.orders.db", "app.payments"}
	integLevels  = []string{"DEBUG", "INFO", "WARN", "ERROR"}
)

// integRec is one log record seen at HQ: logger, slog level name and the
// program iteration that logged it.
type integRec struct {
	logger, level string
	seq           int
}

func (r integRec) String() string { return r.logger + "/" + r.level }

// integApp is one run of testdata/lttngapp with its HQ run.
type integApp struct {
	pid   int
	run   *hq.Run
	col   *testhq.Collector
	stdin io.WriteCloser
	cmd   *exec.Cmd
	exit  chan error

	mu     sync.Mutex
	parsed int // markers of col already parsed
	recs   []integRec
	tick   int // last iteration marked; -1 before the first
	bad    []string
}

// buildIntegApp builds testdata/lttngapp into a temporary directory.
func buildIntegApp(t *testing.T) string {
	t.Helper()
	gobin := testpeers.GoCommand()
	if _, err := os.Stat(gobin); err != nil {
		t.Skipf("no go command to build testdata/lttngapp: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "lttngapp")
	args := []string{"build", "-o", bin}
	if raceBuild() {
		// A data race in the program fails its exit status.
		args = append(args, "-race")
	}
	start := time.Now()
	out, err := exec.Command(gobin, append(args, "./testdata/lttngapp")...).CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./testdata/lttngapp: %v\n%s", err, out)
	}
	t.Logf("built lttngapp (race detector %v) in %v", raceBuild(), time.Since(start).Round(time.Millisecond))
	return bin
}

// raceBuild reports whether the test binary runs with the race detector.
func raceBuild() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// startIntegApp starts the program with the agent options in env (NAME=value
// pairs added to a copy of the test's environment without its TADPOLE_ and
// LTTNG_ variables) and waits for its HQ run. The program is stopped at
// cleanup; its agent log is shown when the test failed.
func startIntegApp(t *testing.T, h *testhq.HQ, bin string, env ...string) *integApp {
	t.Helper()
	var base []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TADPOLE_") && !strings.HasPrefix(kv, "LTTNG_") {
			base = append(base, kv)
		}
	}
	logPath := filepath.Join(t.TempDir(), "agent.log")
	cmd := exec.Command(bin)
	cmd.Env = append(base,
		"TADPOLE_HQ="+h.Srv.Addr(),
		"TADPOLE_LTTNG_RETRY=200ms",
		"TADPOLE_FLUSH_INTERVAL=5ms",
		"TADPOLE_LOG_LEVEL=debug",
		"TADPOLE_LOG="+logPath,
	)
	cmd.Env = append(cmd.Env, env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a := &integApp{pid: cmd.Process.Pid, stdin: stdin, cmd: cmd, exit: make(chan error, 1), tick: -1}
	go func() { a.exit <- cmd.Wait() }()
	t.Cleanup(func() {
		a.stop()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("lttngapp stderr:\n%s\nagent log:\n%s", stderr.String(), b)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), integWait)
	defer cancel()
	run, err := h.Srv.NextRun(ctx)
	if err != nil {
		t.Fatalf("no HQ run from lttngapp: %v", err)
	}
	a.run = run
	cols := h.Collectors()
	a.col = cols[len(cols)-1]
	return a
}

// stop closes the program's stdin and waits for it to exit (killing it
// after a timeout). It is idempotent.
func (a *integApp) stop() error {
	if a.stdin == nil {
		return nil
	}
	a.stdin.Close()
	a.stdin = nil
	select {
	case err := <-a.exit:
		return err
	case <-time.After(integWait):
		a.cmd.Process.Kill()
		<-a.exit
		return fmt.Errorf("lttngapp did not exit within %v after stdin closed", integWait)
	}
}

// finish stops the program and checks its run ended cleanly at HQ.
func (a *integApp) finish(t *testing.T) {
	t.Helper()
	if err := a.stop(); err != nil {
		t.Fatalf("lttngapp: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), integWait)
	defer cancel()
	rep, err := a.run.Wait(ctx)
	if err != nil {
		t.Fatalf("run.Wait: %v", err)
	}
	testhq.CheckClean(t, rep, a.col, -1)
}

// update parses the markers HQ released since the last call.
func (a *integApp) update() {
	marks := marks(a.col)[a.parsed:]
	a.mu.Lock()
	defer a.mu.Unlock()
	a.parsed += len(marks)
	for _, m := range marks {
		key, value, _ := strings.Cut(m, "=")
		if key == integTickKey {
			n, err := strconv.Atoi(value)
			if err != nil || n != a.tick+1 {
				a.bad = append(a.bad, fmt.Sprintf("tick %q after %d", value, a.tick))
			}
			a.tick = n
			continue
		}
		logger, ok := strings.CutPrefix(key, LogMarkerPrefix)
		// "LEVEL tick seq=N"; attributes logged through WithGroup("db")
		// carry the group's prefix.
		level, msg, _ := strings.Cut(value, " ")
		prefix := "tick seq="
		if logger == "app.orders.db" {
			prefix = "tick db.seq="
		}
		seqText, ok2 := strings.CutPrefix(msg, prefix)
		seq, err := strconv.Atoi(seqText)
		if !ok || !ok2 || err != nil {
			a.bad = append(a.bad, "unexpected marker "+m)
			continue
		}
		if seq != a.tick+1 {
			a.bad = append(a.bad, fmt.Sprintf("record %s of iteration %d after tick %d", m, seq, a.tick))
		}
		a.recs = append(a.recs, integRec{logger: logger, level: level, seq: seq})
	}
}

// lastTick is the last iteration whose marker reached HQ.
func (a *integApp) lastTick() int {
	a.update()
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.tick
}

// waitTick waits until the marker of iteration n reached HQ; every record of
// iterations up to n has then reached it too (one goroutine logs them in
// order and HQ releases markers in sequence order).
func (a *integApp) waitTick(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(integWait)
	for a.lastTick() < n {
		if time.Now().After(deadline) {
			t.Fatalf("iteration %d not at HQ after %v (last %d)", n, integWait, a.lastTick())
		}
		time.Sleep(integPoll)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if n := len(a.bad); n > 0 {
		t.Fatalf("malformed trace, %d problems, first %q", n, a.bad[:min(n, 5)])
	}
}

// records returns the records of iterations lo+1 … hi.
func (a *integApp) records(lo, hi int) []integRec {
	a.update()
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []integRec
	for _, r := range a.recs {
		if r.seq > lo && r.seq <= hi {
			out = append(out, r)
		}
	}
	return out
}

// expectWindow waits for integWindow iterations after iteration from and
// checks that their records are exactly the logger/level pairs in want (each
// at least once, nothing else); it returns the last iteration checked.
func (a *integApp) expectWindow(t *testing.T, what string, from int, want ...string) int {
	t.Helper()
	return a.expectRange(t, what, from, from+integWindow, want...)
}

// expectRange is expectWindow for iterations from+1 … to.
func (a *integApp) expectRange(t *testing.T, what string, from, to int, want ...string) int {
	t.Helper()
	a.waitTick(t, to)
	got := map[string]int{}
	for _, r := range a.records(from, to) {
		got[r.String()]++
	}
	var missing, extra []string
	for _, w := range want {
		if got[w] == 0 {
			missing = append(missing, w)
		}
	}
	for g, n := range got {
		if !slices.Contains(want, g) {
			extra = append(extra, fmt.Sprintf("%s×%d", g, n))
		}
	}
	slices.Sort(extra)
	if len(missing) > 0 || len(extra) > 0 {
		t.Fatalf("%s: iterations %d–%d: records missing %q, unexpected %q; want exactly %q",
			what, from+1, to, missing, extra, want)
	}
	return to
}

// pairs returns "logger/LEVEL" for every logger and level given.
func pairs(loggers []string, levels ...string) []string {
	var out []string
	for _, l := range loggers {
		for _, lv := range levels {
			out = append(out, l+"/"+lv)
		}
	}
	return out
}

// lttngCmd runs an lttng command and returns the iteration from which the
// new state is certain: the last one at HQ when the command returned (the
// daemon waits for the agent's reply) plus integGrace.
func lttngCmd(t *testing.T, sd *testpeers.Sessiond, a *integApp, args ...string) int {
	t.Helper()
	sd.MustLttng(args...)
	return a.lastTick() + integGrace
}

// waitListed waits until `lttng list -j` shows pid with the program's
// loggers and returns how long that took.
func waitListed(t *testing.T, sd *testpeers.Sessiond, pid int) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		names, ok := sd.ListedJUL(pid)
		if ok && reflect.DeepEqual(names, integLoggers) {
			return time.Since(start)
		}
		if time.Since(start) > integListWait {
			t.Fatalf("lttng list -j: pid %d listed %v with %q after %v; want %q",
				pid, ok, names, integListWait, integLoggers)
		}
		time.Sleep(integPoll)
	}
}

// integSetup starts a sessiond, an HQ and the program with env.
func integSetup(t *testing.T, env func(sd *testpeers.Sessiond) []string) (*testpeers.Sessiond, *integApp) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test with lttng-sessiond")
	}
	sd := testpeers.StartSessiond(t)
	bin := buildIntegApp(t)
	h := startHQ(t, nil)
	return sd, startIntegApp(t, h, bin, env(sd)...)
}

// TestLTTngSessiondLogsLTTng: logs=lttng, the daemon found through its port
// file (LTTNG_HOME). Listing, enable/disable, loglevel ranges and single
// levels, a wildcard, and re-registration after the daemon is killed and
// restarted.
func TestLTTngSessiondLogsLTTng(t *testing.T) {
	start := time.Now()
	sd, a := integSetup(t, func(sd *testpeers.Sessiond) []string {
		return []string{"TADPOLE_LOGS=lttng", "LTTNG_HOME=" + sd.Home}
	})
	// The daemon runs as another user in a 0700 home; the agent must still
	// read its port file.
	if _, err := os.ReadFile(sd.PortFile); err != nil {
		t.Fatalf("port file not readable by the agent's user: %v", err)
	}
	reg := waitListed(t, sd, a.pid)
	t.Logf("registered and listed %v after the program's HQ run began", reg.Round(time.Millisecond))
	t.Logf("lttng list -j:\n%s", sd.MustLttng("list", "-j"))
	t.Logf("lttng --mi xml list -j:\n%s", sd.MustLttng("--mi", "xml", "list", "-j"))

	// Nothing is recorded before a session enables something.
	a.expectRange(t, "before any enable", -1, max(a.lastTick(), integWindow))

	out := sd.MkdirAll("tr")
	sd.MustLttng("--no-sessiond", "create", "s", "--output="+out)
	from := lttngCmd(t, sd, a, "enable-event", "-j", "app.orders", "-s", "s")
	sd.MustLttng("start", "s")
	a.expectWindow(t, "enable-event -j app.orders", from, pairs([]string{"app.orders"}, integLevels...)...)

	from = lttngCmd(t, sd, a, "disable-event", "-j", "app.orders", "-s", "s")
	to := a.expectWindow(t, "disable-event -j app.orders", from)
	var last int
	for _, r := range a.records(-1, to) {
		last = max(last, r.seq)
	}
	t.Logf("last app.orders record: iteration %d; certain stop at %d", last, from)

	from = lttngCmd(t, sd, a, "enable-event", "-j", "app.payments", "--loglevel=WARNING", "-s", "s")
	a.expectWindow(t, "enable-event -j app.payments --loglevel=WARNING", from,
		pairs([]string{"app.payments"}, "WARN", "ERROR")...)

	sd.MustLttng("disable-event", "-j", "app.payments", "-s", "s")
	from = lttngCmd(t, sd, a, "enable-event", "-j", "app.payments", "--loglevel-only=SEVERE", "-s", "s")
	a.expectWindow(t, "enable-event -j app.payments --loglevel-only=SEVERE", from, "app.payments/ERROR")

	// A wildcard: the name pattern and the logger_name glob of the filter
	// match app.orders and app.orders.db.
	from = lttngCmd(t, sd, a, "enable-event", "-j", "app.orders*", "--loglevel-only=WARNING", "-s", "s")
	a.expectWindow(t, "enable-event -j 'app.orders*' --loglevel-only=WARNING", from,
		"app.payments/ERROR", "app.orders/WARN", "app.orders.db/WARN")

	// SIGKILL: the connection drops without DISABLEs and the agent forgets
	// what that daemon enabled.
	sd.Kill()
	from = a.lastTick() + integGrace
	a.expectWindow(t, "daemon killed", from)
	restart := time.Now()
	sd.Start()
	reg = waitListed(t, sd, a.pid)
	t.Logf("re-registered and listed %v after the restart (%v after sessiond.Start returned)",
		time.Since(restart).Round(time.Millisecond), reg.Round(time.Millisecond))
	a.expectWindow(t, "daemon restarted, no session", a.lastTick())

	out = sd.MkdirAll("tr2")
	sd.MustLttng("--no-sessiond", "create", "s2", "--output="+out)
	from = lttngCmd(t, sd, a, "enable-event", "-j", "app.orders.db", "-s", "s2")
	sd.MustLttng("start", "s2")
	a.expectWindow(t, "enable-event -j app.orders.db after the restart", from,
		pairs([]string{"app.orders.db"}, integLevels...)...)

	from = lttngCmd(t, sd, a, "destroy", "s2")
	a.expectWindow(t, "destroy s2", from)

	a.finish(t)
	t.Logf("%d records, %d iterations, %v in all", len(a.records(-1, a.tick)), a.tick+1,
		time.Since(start).Round(time.Millisecond))
}

// TestLTTngSessiondLogsAuto: logs=auto. Every logger records until a
// session enables one; then only that one does while the daemon stays
// connected; when it goes away, every logger records again.
func TestLTTngSessiondLogsAuto(t *testing.T) {
	start := time.Now()
	sd, a := integSetup(t, func(sd *testpeers.Sessiond) []string {
		return []string{"TADPOLE_LOGS=auto", "LTTNG_HOME=" + sd.Home}
	})
	everything := pairs(integLoggers, integLevels...)
	a.expectWindow(t, "auto, from the start", -1, everything...)
	reg := waitListed(t, sd, a.pid)
	t.Logf("registered and listed after %v", reg.Round(time.Millisecond))
	a.expectWindow(t, "auto, registered, nothing enabled", a.lastTick(), everything...)

	out := sd.MkdirAll("tr")
	sd.MustLttng("--no-sessiond", "create", "s", "--output="+out)
	from := lttngCmd(t, sd, a, "enable-event", "-j", "app.payments", "-s", "s")
	sd.MustLttng("start", "s")
	a.expectWindow(t, "auto, enable-event -j app.payments", from,
		pairs([]string{"app.payments"}, integLevels...)...)

	from = lttngCmd(t, sd, a, "disable-event", "-j", "app.payments", "-s", "s")
	a.expectWindow(t, "auto, disabled while the daemon stays", from)

	sd.Kill()
	from = a.lastTick() + integGrace
	a.expectWindow(t, "auto, daemon gone", from, everything...)

	a.finish(t)
	t.Logf("%d records, %d iterations, %v in all", len(a.records(-1, a.tick)), a.tick+1,
		time.Since(start).Round(time.Millisecond))
}

// TestLTTngSessiondPortOption: lttng_port names the daemon's agent port and
// no port file is found (LTTNG_HOME and HOME are empty directories); the
// program must register there, and enable-event must reach it.
func TestLTTngSessiondPortOption(t *testing.T) {
	sd, a := integSetup(t, func(sd *testpeers.Sessiond) []string {
		home := t.TempDir()
		return []string{"TADPOLE_LOGS=lttng", "TADPOLE_LTTNG_PORT=" + strconv.Itoa(sd.Port),
			"LTTNG_HOME=" + home, "HOME=" + home}
	})
	reg := waitListed(t, sd, a.pid)
	t.Logf("registered through lttng_port=%d and listed after %v", sd.Port, reg.Round(time.Millisecond))
	out := sd.MkdirAll("tr")
	sd.MustLttng("--no-sessiond", "create", "s", "--output="+out)
	from := lttngCmd(t, sd, a, "enable-event", "-j", "app.payments", "--loglevel=SEVERE", "-s", "s")
	a.expectWindow(t, "lttng_port, enable-event -j app.payments --loglevel=SEVERE", from, "app.payments/ERROR")
	a.finish(t)
}

// TestLTTngWithoutHQ: a Go program with no HQ that calls RegisterLTTng is
// listed by `lttng list -j` with its loggers and answers enable-event and
// disable-event.
func TestLTTngWithoutHQ(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test with lttng-sessiond")
	}
	sd := testpeers.StartSessiond(t)
	bin := buildIntegApp(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + sd.Home, "LTTNG_HOME=" + sd.Home, "TADPOLE_LTTNG_RETRY=200ms"}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := false
	defer func() {
		if !done {
			stdin.Close()
			cmd.Wait()
		}
		if t.Failed() {
			t.Logf("lttngapp stderr:\n%s", stderr.String())
		}
	}()
	waitListed(t, sd, cmd.Process.Pid)
	sd.MustLttng("--no-sessiond", "create", "s", "--output="+sd.MkdirAll("trace"))
	sd.MustLttng("enable-event", "-j", "app.orders", "-s", "s")
	sd.MustLttng("disable-event", "-j", "app.orders", "-s", "s")
	sd.MustLttng("destroy", "s")
	stdin.Close()
	done = true
	if err := cmd.Wait(); err != nil {
		t.Fatalf("lttngapp: %v\n%s", err, stderr.String())
	}
}
