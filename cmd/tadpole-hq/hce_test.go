package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	hceAppOnce sync.Once
	hceAppBin  string
	hceAppErr  error
)

// buildHCEApp builds the agent's HCE test program once.
func buildHCEApp(t *testing.T) string {
	t.Helper()
	hceAppOnce.Do(func() {
		hceAppBin = filepath.Join(filepath.Dir(hqBin), "hceapp")
		out, err := exec.Command("go", "build", "-o", hceAppBin, "github.com/tadpole-trace/tadpole/agent/testdata/hceapp").CombinedOutput()
		if err != nil {
			hceAppErr = err
			t.Logf("%s", out)
		}
	})
	if hceAppErr != nil {
		t.Fatalf("building hceapp: %v", hceAppErr)
	}
	return hceAppBin
}

// startApp runs hceapp traced by HQ at hqAddr and registered with the hub
// at hubAddr; it is killed at cleanup.
func startApp(t *testing.T, hqAddr, hubAddr string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(buildHCEApp(t))
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TADPOLE_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "TADPOLE_HQ="+hqAddr, "TADPOLE_HCE="+hubAddr, "TADPOLE_LTTNG=off", "TADPOLE_LOGS=lttng", "TADPOLE_LOG=none")
	cmd.StdinPipe() // the program runs until its stdin closes
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

func ctlRun(t *testing.T, hub string, args ...string) (string, string, int) {
	t.Helper()
	return hqRun(t, append([]string{"ctl", "-hce", hub}, args...)...)
}

// TestCtl: tadpole-hq -hce serves a hub on TCP and a pipe; a traced Go
// service registers over the pipe; tadpole-hq ctl lists it, drives its
// loggers and tracing, holds an exclusive attach that denies another ctl,
// and sees the agent deregistered when its process is killed.
func TestCtl(t *testing.T) {
	pipe := filepath.Join(t.TempDir(), "hub.fifo")
	_, hqAddr, _, stderr := serve(t, "-status", "off", "-hce", "127.0.0.1:0,pipe:"+pipe)
	m := regexp.MustCompile(`HCE hub on (127\.0\.0\.1:\d+)`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no HCE hub line:\n%s", stderr)
	}
	hub := m[1]
	app := startApp(t, hqAddr, "pipe:"+pipe)
	pid := strconv.Itoa(app.Process.Pid)

	var out string
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(out, pid); {
		if time.Now().After(deadline) {
			t.Fatalf("agent %s not listed:\n%s", pid, out)
		}
		time.Sleep(20 * time.Millisecond)
		out, _, _ = ctlRun(t, hub, "agents")
	}
	if !strings.Contains(out, "tadpole:hceapp") || !strings.Contains(out, "HII_TADPOLE_AGENT") {
		t.Errorf("agents:\n%s", out)
	}
	steps := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"loggers"}, 0, "app.orders"},
		{[]string{"enable", "app.orders"}, 0, "enable: done"},
		{[]string{"status"}, 0, "(1 enabled)"},
		{[]string{"pause"}, 0, "pause: done"},
		{[]string{"status"}, 0, "mode Paused"},
		{[]string{"pause"}, 1, "TP_PAUSE while Paused"},
		{[]string{"resume"}, 0, "resume: done"},
		{[]string{"mark", "release", "1.2"}, 0, "mark: done"},
		{[]string{"disable", "app.orders"}, 0, "disable: done"},
		{[]string{"disable", "app.orders"}, 1, "not enabled"},
		{[]string{"-pid", "1", "status"}, 1, "no tadpole agent with pid 1"},
		{[]string{"enable"}, 2, "want one of the commands"},
		{[]string{"frobnicate"}, 2, "want one of the commands"},
	}
	for _, s := range steps {
		o, e, code := ctlRun(t, hub, s.args...)
		if code != s.code || !strings.Contains(o+e, s.want) {
			t.Errorf("ctl %v: status %d, output\n%s%s\nwant status %d and %q", s.args, code, o, e, s.code, s.want)
		}
	}
	if _, _, code := hqRun(t, "ctl", "-hce", "127.0.0.1:1", "agents"); code != 1 {
		t.Errorf("ctl without a hub: status %d", code)
	}
	if _, e, code := hqRun(t, "-hce", "127.0.0.1:0", "-exec", "true"); code != 2 || !strings.Contains(e, "-hce") {
		t.Errorf("-hce with -exec: status %d, %s", code, e)
	}
	if _, e, code := hqRun(t, "-listen", "127.0.0.1:0", "-hce", "pipe:/nonexistent-dir/x.fifo", "-runs", "1"); code != 1 || !strings.Contains(e, "-hce") {
		t.Errorf("-hce on a bad pipe: status %d, %s", code, e)
	}

	// An exclusive attach denies another client until the agent dies.
	attach := exec.Command(hqBin, "ctl", "-hce", "pipe:"+pipe, "-x", "attach", pid)
	stdout, _ := attach.StdoutPipe()
	if err := attach.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { attach.Process.Kill() })
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && !strings.HasPrefix(sc.Text(), "attached to agent") {
	}
	if o, e, code := ctlRun(t, hub, "status"); code != 1 || !strings.Contains(e, "EXCLUSIVELY_LOCKED") {
		t.Errorf("status under an exclusive attach: %d\n%s%s", code, o, e)
	}
	app.Process.Kill()
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if code := waitExit(t, attach); code != 0 || !strings.Contains(strings.Join(lines, "\n"), "EID_AGENT_DEREGISTERED") {
		t.Errorf("attach: status %d, output %q", code, lines)
	}
}
