package agent

import (
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestHostIsSacred checks the agent's sources for calls that would harm the
// host: exiting it, or writing to its stdout.
func TestHostIsSacred(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	forbidden := []string{"os.Exit(", "os.Stdout", "fmt.Print(", "fmt.Printf(", "fmt.Println(", "log.Fatal", "println(", "print("}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "C" {
				t.Errorf("%s imports C: the agent core is pure Go", f)
			}
		}
		for _, line := range strings.Split(string(src), "\n") {
			code, _, _ := strings.Cut(line, "//")
			for _, bad := range forbidden {
				if strings.Contains(code, bad) && !strings.Contains(code, "fmt.S") {
					t.Errorf("%s: %q: %s", f, bad, strings.TrimSpace(line))
				}
			}
		}
	}
}

// TestNothingOnStdout runs a whole trace with stdout redirected and checks
// the agent wrote nothing there, even when failing.
func TestNothingOnStdout(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	defer func() { os.Stdout = saved }()

	h := startHQ(t, nil)
	cfg := testConfig(h.Srv.Addr())
	cfg.Log = "stderr"
	cfg.LogLevel = LevelDebug
	a, run := startAgent(t, h, cfg)
	m := NewMethod("t/T.stdout;1;()V")
	m.Enter().Exit()
	finish(t, a, run)
	cfg.HQ = "127.0.0.1:1"
	cfg.ConnectTimeout = 100 * 1e6
	Start(ctxT(t), cfg) // fails: HQ absent

	os.Stdout = saved
	w.Close()
	out, _ := io.ReadAll(r)
	if len(out) != 0 {
		t.Errorf("agent wrote to stdout: %q", out)
	}
}
