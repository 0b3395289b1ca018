package ctest

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/testhq"
	"github.com/tadpole-trace/tadpole/internal/testpeers"
	"github.com/tadpole-trace/tadpole/internal/testpeers/fakedaemon"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
	"github.com/tadpole-trace/tadpole/transport/lttngagent"
)

// Settings of the logger test.
const (
	// logGrace is how many ticks (5 ms each at least) may still follow the
	// old rules after an lttng command returned.
	logGrace = 100
	// logWait bounds every wait for the program, HQ or the daemon.
	logWait = 20 * time.Second
)

// logRec is a log record seen at HQ.
type logRec struct {
	logger, level string
	tick          int
}

// logState parses the markers HQ released: the last tick and the records.
func logState(t *testing.T, c *testhq.Collector) (int, []logRec) {
	t.Helper()
	last := -1
	var recs []logRec
	for _, e := range c.Events() {
		if e.Type != bytefrog.MsgMarker {
			continue
		}
		if e.Key == "tick" {
			n, err := strconv.Atoi(e.Value)
			if err != nil || n != last+1 {
				t.Fatalf("tick %q after %d", e.Value, last)
			}
			last = n
			continue
		}
		logger, ok := strings.CutPrefix(e.Key, "log:")
		level, msg, _ := strings.Cut(e.Value, " ")
		tickText, ok2 := strings.CutPrefix(msg, "tick ")
		n, err := strconv.Atoi(tickText)
		if !ok || !ok2 || err != nil || n != last {
			t.Fatalf("unexpected marker %s=%s after tick %d", e.Key, e.Value, last)
		}
		recs = append(recs, logRec{logger, level, n})
	}
	return last, recs
}

// waitFor polls cond until it holds or logWait passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(logWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, logWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLoggersLTTng runs testdata/loggers.c with logs=lttng against a real
// lttng-sessiond: its C loggers are listed by "lttng list -j", and records
// follow enable-event and disable-event, with log level rules, both through
// tadpole_logger_enabled and tadpole_log.
func TestLoggersLTTng(t *testing.T) {
	lib := BuildLib(t)
	sd := testpeers.StartSessiond(t)
	bin := filepath.Join(t.TempDir(), "loggers")
	lib.Compile(t, bin, "testdata/loggers.c")
	h := startHQ(t, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = Env("TADPOLE_HQ="+h.Srv.Addr(), "TADPOLE_FLUSH_INTERVAL=5ms", "TADPOLE_LOGS=lttng",
		"TADPOLE_LTTNG_RETRY=200ms", "LTTNG_HOME="+sd.Home)
	stdin, _ := cmd.StdinPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := false
	defer func() {
		if !exited {
			stdin.Close()
			cmd.Wait()
		}
		if t.Failed() {
			t.Logf("loggers stderr:\n%s", stderr.String())
		}
	}()
	run, err := h.Srv.NextRun(ctx)
	if err != nil {
		t.Fatalf("no HQ run: %v", err)
	}
	col := h.Collector(0)

	waitFor(t, "lttng list -j showing capp.alpha and capp.beta", func() bool {
		out, err := sd.Lttng("list", "-j")
		return err == nil && strings.Contains(out, "capp.alpha") && strings.Contains(out, "capp.beta")
	})
	tick := func() int { n, _ := logState(t, col); return n }
	count := func(logger, level string, from int) int {
		_, recs := logState(t, col)
		n := 0
		for _, r := range recs {
			if r.logger == logger && (level == "" || r.level == level) && r.tick > from {
				n++
			}
		}
		return n
	}
	// lttng runs the command and returns the last tick HQ had seen before.
	lttng := func(args ...string) int {
		from := tick()
		sd.MustLttng(args...)
		return from
	}

	if n := count("capp.alpha", "", -1) + count("capp.beta", "", -1); n != 0 {
		t.Fatalf("got %d log records before any enable-event; want 0 with logs=lttng", n)
	}
	out := sd.MkdirAll("trace")
	sd.MustLttng("--no-sessiond", "create", "s", "--output="+out)
	lttng("enable-event", "-j", "capp.alpha", "-s", "s")
	sd.MustLttng("start", "s")
	waitFor(t, "capp.alpha records", func() bool { return count("capp.alpha", "WARNING", -1) > 0 && count("capp.alpha", "INFO", -1) > 0 })

	from := lttng("enable-event", "-j", "capp.beta", "--loglevel-only=WARNING", "-s", "s")
	waitFor(t, "capp.beta WARNING records", func() bool { return count("capp.beta", "WARNING", from) > 0 })
	if n := count("capp.beta", "INFO", -1); n != 0 {
		t.Errorf("got %d capp.beta INFO records; want 0 (enabled with --loglevel-only=WARNING)", n)
	}

	from = lttng("disable-event", "-j", "capp.alpha", "-s", "s")
	waitFor(t, "ticks after disable-event", func() bool { return tick() > from+2*logGrace })
	if n := count("capp.alpha", "", from+logGrace); n != 0 {
		t.Errorf("got %d capp.alpha records after disable-event; want 0", n)
	}
	if n := count("capp.beta", "WARNING", from+logGrace); n == 0 {
		t.Errorf("capp.beta stopped recording after capp.alpha was disabled")
	}

	stdin.Close()
	exited = true
	if err := cmd.Wait(); err != nil {
		t.Fatalf("loggers: %v", err)
	}
	rep, err := run.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	testhq.CheckClean(t, rep, col, -1)
}

// TestLoggersDialects runs testdata/loggers.c against a session daemon of
// each dialect that lttng_dialect selects: its loggers are listed, ENABLE
// makes records reach HQ, and a daemon sending garbage costs only its
// connection: the program registers again and obeys the next ENABLE.
func TestLoggersDialects(t *testing.T) {
	lib := BuildLib(t)
	bin := filepath.Join(t.TempDir(), "loggers")
	lib.Compile(t, bin, "testdata/loggers.c")
	for _, opt := range []string{"2.13", "rfc01"} {
		t.Run(opt, func(t *testing.T) {
			dl, err := lttngagent.ParseDialect(opt)
			if err != nil {
				t.Fatal(err)
			}
			d := fakedaemon.New(t, dl)
			h := startHQ(t, nil)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin)
			cmd.Env = Env("TADPOLE_HQ="+h.Srv.Addr(), "TADPOLE_FLUSH_INTERVAL=5ms", "TADPOLE_LOGS=lttng",
				"TADPOLE_LTTNG_RETRY=50ms", "TADPOLE_LTTNG_DIALECT="+opt, "TADPOLE_LTTNG_PORT="+strconv.Itoa(d.Port()))
			stdin, _ := cmd.StdinPipe()
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				stdin.Close()
				if err := cmd.Wait(); err != nil {
					t.Errorf("loggers: %v\n%s", err, stderr.String())
				}
			}()
			if _, err := h.Srv.NextRun(ctx); err != nil {
				t.Fatalf("no HQ run: %v", err)
			}
			col := h.Collector(0)
			alpha := func() int {
				_, recs := logState(t, col)
				n := 0
				for _, r := range recs {
					if r.logger == "capp.alpha" {
						n++
					}
				}
				return n
			}

			nc := d.Accept(cmd.Process.Pid)
			if names := d.List(nc); !slices.Contains(names, "capp.alpha") || !slices.Contains(names, "capp.beta") {
				t.Fatalf("LIST = %q; want capp.alpha and capp.beta", names)
			}
			if rc := d.Enable(nc, "capp.alpha"); rc != lttngagent.ReplySuccess {
				t.Fatalf("ENABLE = %v", rc)
			}
			waitFor(t, "capp.alpha records at HQ", func() bool { return alpha() > 0 })
			d.Garbage(nc)
			nc = d.Accept(cmd.Process.Pid)
			if rc := d.Disable(nc, "capp.alpha"); rc != lttngagent.ReplyUnknownName {
				t.Errorf("DISABLE on the new connection = %v; want unknown name (the old one's enable went with it)", rc)
			}
			before := alpha()
			if rc := d.Enable(nc, "capp.alpha"); rc != lttngagent.ReplySuccess {
				t.Fatalf("ENABLE after reconnect = %v", rc)
			}
			waitFor(t, "capp.alpha records after reconnect", func() bool { return alpha() > before })
		})
	}
}
