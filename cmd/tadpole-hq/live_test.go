package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func needBabeltrace(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("babeltrace2")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("babeltrace2 not found (CI=true): install the babeltrace2 package")
		}
		t.Skip("babeltrace2 not found")
	}
	return p
}

// btEvents keeps babeltrace2's event lines from the event name on,
// without the mapping and thread-name events.
func btEvents(out string) []string {
	var ev []string
	for _, l := range strings.Split(out, "\n") {
		i := strings.Index(l, "tadpole:")
		if i < 0 || strings.Contains(l, "tadpole:method_signature:") || strings.Contains(l, "tadpole:exception_class:") ||
			strings.Contains(l, "tadpole:thread_name:") {
			continue
		}
		ev = append(ev, l[i:])
	}
	return ev
}

var seqTid = regexp.MustCompile(`seq = (-?\d+), tid = (\d+)`)

// TestLiveExample: tadpole-hq -live serves a traced Go program's run to
// two babeltrace2 viewers started with the program; they print every event
// HQ counted, each thread's events in sequence order, exactly what
// babeltrace2 prints for the run's exported CTF trace; both exit 0 when
// the run ends.
func TestLiveExample(t *testing.T) {
	bt := needBabeltrace(t)
	tmp := t.TempDir()
	shop := filepath.Join(tmp, "shop")
	if out, err := exec.Command("go", "build", "-o", shop, "../../examples/go").CombinedOutput(); err != nil {
		t.Fatalf("go build examples/go: %v\n%s", err, out)
	}
	dir, jsonPath := filepath.Join(tmp, "traces"), filepath.Join(tmp, "runs.jsonl")
	os.Mkdir(dir, 0o755)
	hqCmd := exec.Command(hqBin, "-listen", "127.0.0.1:0", "-live", "127.0.0.1:0", "-live-from-start",
		"-live-timer", "200ms", "-dir", dir, "-json", jsonPath, "-status", "off")
	stderr, _ := hqCmd.StderrPipe()
	if err := hqCmd.Start(); err != nil {
		t.Fatal(err)
	}
	hqDone := make(chan error, 1)
	t.Cleanup(func() { hqCmd.Process.Kill() })
	var agentAddr, liveAddr string
	sc := bufio.NewScanner(stderr)
	for (agentAddr == "" || liveAddr == "") && sc.Scan() {
		l := sc.Text()
		if a, ok := strings.CutPrefix(l, "tadpole-hq: listening on "); ok {
			agentAddr = a
		}
		if i := strings.Index(l, "lttng-live net://"); i >= 0 {
			liveAddr = strings.Fields(l[i+len("lttng-live net://"):])[0]
		}
	}
	if agentAddr == "" || liveAddr == "" {
		t.Fatal("tadpole-hq did not print its addresses")
	}
	var hqErr lockedBuffer
	go func() { io.Copy(&hqErr, stderr); hqDone <- hqCmd.Wait() }()

	app := exec.Command(shop, "-orders", "20000")
	app.Env = append(os.Environ(), "TADPOLE_HQ="+agentAddr)
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	url := fmt.Sprintf("net://%s/host/%s/shop-%d-0", liveAddr, host, app.Process.Pid)
	// The session appears when the agent connects: wait for babeltrace2's
	// listing to show it.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		out, _ := exec.Command(bt, "-i", "lttng-live", "net://"+liveAddr).CombinedOutput()
		if strings.Contains(string(out), url+" ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not listed:\n%s\ntadpole-hq:\n%s", url, out, hqErr.String())
		}
	}
	var viewers [2]*exec.Cmd
	var outs [2]strings.Builder
	var errs [2]strings.Builder
	for i := range viewers {
		viewers[i] = exec.Command(bt, "-i", "lttng-live", url)
		viewers[i].Stdout, viewers[i].Stderr = &outs[i], &errs[i]
		if err := viewers[i].Start(); err != nil {
			t.Fatal(err)
		}
		defer viewers[i].Process.Kill()
	}
	if err := app.Wait(); err != nil {
		t.Fatalf("example: %v", err)
	}
	for i, v := range viewers {
		done := make(chan error, 1)
		go func() { done <- v.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("viewer %d: %v\n%s", i, err, errs[i].String())
			}
		case <-time.After(60 * time.Second):
			v.Process.Kill()
			t.Fatalf("viewer %d still running after the run ended\n%s", i, errs[i].String())
		}
	}
	hqCmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-hqDone:
		if err != nil {
			t.Fatalf("tadpole-hq: %v\n%s", err, hqErr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("tadpole-hq did not exit on SIGINT")
	}

	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep hq.Report
	if err := json.Unmarshal(b, &rep); err != nil || !rep.OK || rep.TraceFile == "" {
		t.Fatalf("report: %v %s", err, b)
	}
	// The exported trace, for comparison.
	ctfDir := filepath.Join(tmp, "ctf")
	stdout, errOut, code := hqRun(t, "export", "-ctf", ctfDir, rep.TraceFile)
	if code != 0 || !strings.Contains(stdout, strconv.FormatInt(rep.Sequenced, 10)+" events") {
		t.Fatalf("export: status %d\n%s\n%s", code, stdout, errOut)
	}
	exp, err := exec.Command(bt, ctfDir).Output()
	if err != nil {
		t.Fatalf("babeltrace2 %s: %v", ctfDir, err)
	}
	want := btEvents(string(exp))
	if int64(len(want)) != rep.Sequenced {
		t.Fatalf("exported trace: %d events; HQ counted %d", len(want), rep.Sequenced)
	}
	last := map[string]int{}
	for _, l := range want {
		m := seqTid.FindStringSubmatch(l)
		if m == nil {
			continue // markers have no thread
		}
		seq, _ := strconv.Atoi(m[1])
		if p, ok := last[m[2]]; ok && seq <= p {
			t.Fatalf("thread %s: seq %d after %d", m[2], seq, p)
		}
		last[m[2]] = seq
	}
	if len(last) < 2 {
		t.Fatalf("events of %d threads; the example runs workers", len(last))
	}
	for i := range viewers {
		got := btEvents(outs[i].String())
		if len(got) != len(want) {
			t.Fatalf("viewer %d printed %d events; want %d\n%s", i, len(got), len(want), errs[i].String())
		}
		for j := range got {
			if got[j] != want[j] {
				t.Fatalf("viewer %d, event %d:\n got %s\nwant %s", i, j, got[j], want[j])
			}
		}
	}
	t.Logf("%d events, %d threads, shown live to two viewers", len(want), len(last))
}

// TestExportUsage: export needs -ctf and one file, and refuses a
// non-empty directory.
func TestExportCTF(t *testing.T) {
	if _, _, code := hqRun(t, "export", "../../hq/testdata/basic.tphq.s2"); code != exitUsage {
		t.Errorf("no -ctf: status %d", code)
	}
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "x"), nil, 0o644)
	if _, stderr, code := hqRun(t, "export", "-ctf", full, "../../hq/testdata/basic.tphq.s2"); code != exitError ||
		!strings.Contains(stderr, "not empty") {
		t.Errorf("non-empty dir: status %d, %s", code, stderr)
	}
	out := filepath.Join(t.TempDir(), "ctf")
	stdout, stderr, code := hqRun(t, "export", "-ctf", out, "../../hq/testdata/basic.tphq.s2")
	if code != 0 || !strings.Contains(stdout, "completed") {
		t.Fatalf("export: %d %s %s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "metadata")); err != nil {
		t.Fatal(err)
	}
}
