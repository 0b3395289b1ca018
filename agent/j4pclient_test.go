package agent

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/testpeers"
)

// TestJolokiaJS runs the official Jolokia client, npm jolokia.js 2.6.1
// under node, against the management endpoint of a Go program
// (testdata/j4papp, a subprocess): version, read with paths, write, exec,
// search, list and bulk, on the program's beans and tadpole's own, with
// Basic authentication (and its refusals). The
// client is installed from testdata/js/package.json into a temporary
// directory; without node, npm or the registry the test is skipped, or
// fails under CI=true.
func TestJolokiaJS(t *testing.T) {
	dir := testpeers.NPMInstall(t, filepath.Join("testdata", "js"), "package.json", "client.mjs")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	gobin := testpeers.GoCommand()
	bin := filepath.Join(t.TempDir(), "j4papp")
	args := []string{"build", "-o", bin}
	if raceBuild() {
		args = append(args, "-race")
	}
	if out, err := exec.Command(gobin, append(args, "./testdata/j4papp")...).CombinedOutput(); err != nil {
		t.Fatalf("go build ./testdata/j4papp: %v\n%s", err, out)
	}
	app := exec.CommandContext(ctx, bin)
	app.Env = append(os.Environ(), "TADPOLE_J4P=127.0.0.1:0", "TADPOLE_J4P_WRITE=on", "TADPOLE_LOG=none", "TADPOLE_HQ=",
		"TADPOLE_J4P_USER=ops", "TADPOLE_J4P_PASSWORD=s3cret")
	stdin, err := app.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := app.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	app.Stderr = &stderr
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "j4p ")
	if err != nil || !ok {
		stdin.Close()
		app.Wait()
		t.Fatalf("j4papp did not print its address (%q, %v): %s", line, err, stderr.String())
	}

	node := exec.CommandContext(ctx, "node", filepath.Join(dir, "client.mjs"), "http://"+addr+"/jolokia", "ops", "s3cret")
	out, err := node.CombinedOutput()
	t.Logf("jolokia.js:\n%s", out)
	if err != nil || !strings.Contains(string(out), " passed, 0 failed") {
		t.Errorf("jolokia.js client: %v", err)
	}
	stdin.Close()
	if err := app.Wait(); err != nil {
		t.Errorf("j4papp: %v\n%s", err, stderr.String())
	}
}
