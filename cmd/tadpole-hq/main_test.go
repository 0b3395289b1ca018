package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/hqtest"
)

// Binaries built once for all tests.
var hqBin, agentBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tadpole-hq-test")
	if err != nil {
		panic(err)
	}
	hqBin = filepath.Join(dir, "tadpole-hq")
	agentBin = filepath.Join(dir, "fakeagent")
	for _, b := range [][2]string{{hqBin, "."}, {agentBin, "./testdata/fakeagent"}} {
		out, err := exec.Command("go", "build", "-o", b[0], b[1]).CombinedOutput()
		if err != nil {
			os.Stderr.Write(out)
			panic(err)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// hqRun runs tadpole-hq with args and returns stdout, stderr and the exit
// status.
func hqRun(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(hqBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

func TestExecCompleted(t *testing.T) {
	for _, c := range []hq.Compression{hq.CompressS2, hq.CompressZstd, hq.CompressNone} {
		t.Run(c.String(), func(t *testing.T) { testExecCompleted(t, c) })
	}
}

// testExecCompleted runs an agent with trace files in compression c and
// replays the file.
func testExecCompleted(t *testing.T, c hq.Compression) {
	dir := t.TempDir()
	stdout, stderr, code := hqRun(t, "-dir", dir, "-compress", c.String(), "-senders", "2", "-exec", agentBin, "ok", "3000")
	if code != 0 {
		t.Fatalf("exit status %d; want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"fakeagent: connected as run 0", "result: completed", "2 data connection(s)", "top methods by calls",
		hqtest.MethodName(0), "checks: sequence complete, no duplicates, all ids mapped",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	// The times are the run's own (0s on an idle machine, a millisecond or
	// two on a busy one); the order is what the HQ did.
	if !regexp.MustCompile(`commands: Configuration@\S+ Start@\S+ Stop@`).MatchString(stdout) {
		t.Errorf("stdout lacks the commands Configuration, Start, Stop:\n%s", stdout)
	}
	if !strings.Contains(stderr, "1 run(s): 1 completed, 0 failed") {
		t.Errorf("stderr lacks the tally:\n%s", stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"+hq.TraceExt+"*"))
	if len(files) != 1 || !strings.HasSuffix(files[0], c.Ext()) {
		t.Fatalf("trace files %v; want one ending %s", files, c.Ext())
	}
	// The replay prints the same summary.
	replayed, rerr, code := hqRun(t, "replay", files[0])
	if code != 0 {
		t.Fatalf("replay: exit status %d; stderr %s", code, rerr)
	}
	summary := stdout[strings.Index(stdout, "run 0 "):]
	if replayed != summary {
		t.Errorf("replay summary:\n%s\nwant:\n%s", replayed, summary)
	}
}

func TestCompressFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want hq.Compression
		err  string
	}{
		{nil, hq.CompressColumns, ""},
		{[]string{"-compress", "columns"}, hq.CompressColumns, ""},
		{[]string{"-compress", "s2"}, hq.CompressS2, ""},
		{[]string{"-compress", "zstd"}, hq.CompressZstd, ""},
		{[]string{"-compress", "none"}, hq.CompressNone, ""},
		{[]string{"-compress", "lz4"}, 0, `-compress: hq: invalid configuration: compression "lz4"`},
		{[]string{"-compress", ""}, 0, "-compress: "},
	} {
		o, err := parseFlags(tc.args, io.Discard)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v; want %q", tc.args, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case o.cfg.Compression != tc.want:
			t.Errorf("%q: compression %v; want %v", tc.args, o.cfg.Compression, tc.want)
		}
	}
}

func TestExecFailures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"agent error", []string{agentBin, "error", "boom"}, 3, "result: failed: agent error: boom", "0 completed, 1 failed"},
		{"child fails", []string{agentBin, "exit", "5"}, 5, "result: completed", "exit status 5"},
		{"no agent", []string{agentBin, "none"}, 3, "fakeagent: not connecting", "expected at least 1 run(s)"},
		{"no X", []string{agentBin, "noX"}, 3, "control connection closed before the shutdown heartbeat", "1 failed"},
		{"no such command", []string{filepath.Join(t.TempDir(), "missing")}, 1, "", "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := hqRun(t, append([]string{"-exec"}, tc.args...)...)
			if code != tc.code || !strings.Contains(stdout, tc.stdout) || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("exit status %d; want %d, stdout with %q, stderr with %q\nstdout:\n%s\nstderr:\n%s",
					code, tc.code, tc.stdout, tc.stderr, stdout, stderr)
			}
		})
	}
}

func TestExecScript(t *testing.T) {
	stdout, stderr, code := hqRun(t, "-suspended", "-script",
		"wait 30ms; unsuspend; wait 30ms; pause; await P; unpause; suspend; wait 20ms; unsuspend; wait 30ms; stop",
		"-exec", agentBin, "follow")
	if code != 0 {
		t.Fatalf("exit status %d; want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"result: completed", "data breaks: 1 at ", "fakeagent: stopped",
		"Pause@", "Unpause@", "Stop@",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !regexp.MustCompile(`commands: Configuration@\S+ Suspend@\S+ Start@\S+ Unsuspend@`).MatchString(stdout) {
		t.Errorf("stdout lacks the commands Configuration, Suspend, Start, Unsuspend:\n%s", stdout)
	}
}

// serve starts tadpole-hq in server mode and returns it with its address.
func serve(t *testing.T, args ...string) (*exec.Cmd, string, *bytes.Buffer, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(hqBin, append([]string{"-listen", "127.0.0.1:0"}, args...)...)
	stdout := &bytes.Buffer{}
	cmd.Stdout = stdout
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	stderr := &syncBuffer{}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		sc.Split(scanCRLF)
		for sc.Scan() {
			line := sc.Text()
			stderr.add(line)
			if a, ok := strings.CutPrefix(line, "tadpole-hq: listening on "); ok {
				addr <- a
			}
		}
	}()
	select {
	case a := <-addr:
		return cmd, a, stdout, stderr
	case <-time.After(10 * time.Second):
		t.Fatalf("no listening line; stderr:\n%s", stderr)
	}
	return nil, "", nil, nil
}

// scanCRLF splits on \n and on \r, as a status line redraw uses.
func scanCRLF(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// syncBuffer collects stderr lines from the reading goroutine.
type syncBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *syncBuffer) add(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, s)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

func agent(t *testing.T, addr string, args ...string) {
	t.Helper()
	cmd := exec.Command(agentBin, args...)
	cmd.Env = append(os.Environ(), "TADPOLE_HQ="+addr)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fakeagent: %v\n%s", err, out)
	}
}

func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(20 * time.Second):
		t.Fatal("tadpole-hq did not exit")
	}
	return -1
}

func TestServeRuns(t *testing.T) {
	cmd, addr, stdout, _ := serve(t, "-runs", "2", "-status", "off")
	agent(t, addr, "ok", "2000")
	agent(t, addr, "ok", "2000")
	if code := waitExit(t, cmd); code != 0 {
		t.Fatalf("exit status %d; want 0", code)
	}
	if n := strings.Count(stdout.String(), "result: completed"); n != 2 {
		t.Errorf("%d completed summaries; want 2:\n%s", n, stdout)
	}
	if !strings.Contains(stdout.String(), "run 1 ") {
		t.Errorf("second run should have id 1:\n%s", stdout)
	}
}

func TestServeStatusLine(t *testing.T) {
	cmd, addr, _, stderr := serve(t, "-status", "on", "-runs", "1", "-script", "wait 1300ms; stop")
	agent(t, addr, "follow")
	if code := waitExit(t, cmd); code != 0 {
		t.Fatalf("exit status %d; want 0", code)
	}
	if s := stderr.String(); !strings.Contains(s, "| 1 agent(s) | #0 Tracing") {
		t.Errorf("no status line in stderr:\n%q", s)
	}
}

func TestServeInterrupt(t *testing.T) {
	cmd, _, _, _ := serve(t, "-status", "off")
	cmd.Process.Signal(syscall.SIGINT)
	if code := waitExit(t, cmd); code != 0 {
		t.Errorf("exit status %d after SIGINT; want 0", code)
	}
}

func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-h"}, 0, "tadpole-hq [flags] -exec CMD [ARGS...]"},
		{[]string{"-nope"}, 2, "flag provided but not defined"},
		{[]string{"-exec"}, 2, "-exec needs a command"},
		{[]string{"extra"}, 2, "unexpected arguments"},
		{[]string{"-flavor", "x", "-exec", "true"}, 2, "unknown flavor"},
		{[]string{"-versions", "1,9", "-exec", "true"}, 1, "protocol version 9 not supported"},
		{[]string{"-script", "jump", "-exec", "true"}, 1, "bad script"},
		{[]string{"-compress", "gzip", "-exec", "true"}, 2, "-compress: hq: invalid configuration: compression \"gzip\""},
		{[]string{"replay"}, 2, "usage: tadpole-hq replay [-lenient] FILE"},
		{[]string{"verify"}, 2, "usage: tadpole-hq verify [-lenient] FILE"},
		{[]string{"replay", "/nonexistent"}, 1, "no such file"},
	} {
		_, stderr, code := hqRun(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("tadpole-hq %q: exit status %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

// TestVerify: verify gives one line per trace file and status 3 when a run
// fails its checks.
func TestVerify(t *testing.T) {
	for _, tc := range []struct {
		file string
		code int
		want string
	}{
		{"basic.tphq.s2", 0, "completed; checks: sequence complete, no duplicates, all ids mapped"},
		{"checks.tphq.zst", 3, "failed: incomplete data: 1 gap(s), 4 events missing; checks: 1 gap(s)"},
	} {
		stdout, stderr, code := hqRun(t, "verify", "../../hq/testdata/"+tc.file)
		if code != tc.code || strings.Count(stdout, "\n") != 1 || !strings.Contains(stdout, tc.want) {
			t.Errorf("verify %s: status %d, stdout %q, stderr %q; want %d and one line with %q", tc.file, code, stdout,
				stderr, tc.code, tc.want)
		}
	}
}

// TestExecJSON: -json appends each run's report as one JSON object a line,
// with the same counts as the summary.
func TestExecJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.jsonl")
	for range 2 {
		stdout, stderr, code := hqRun(t, "-json", path, "-exec", agentBin, "ok", "300")
		if code != 0 {
			t.Fatalf("exit status %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines; want one per run, 2:\n%s", len(lines), b)
	}
	for _, l := range lines {
		var rep hq.Report
		if err := json.Unmarshal([]byte(l), &rep); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if !rep.OK || rep.Sequenced == 0 || rep.GapCount != 0 || len(rep.Unmapped) != 0 || rep.Remapped != 0 {
			t.Errorf("report %+v; want a completed run with events and no findings", rep)
		}
	}
}
