package ctest

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/testpeers"
)

// TestJ4PJolokiaJS runs the official Jolokia client, npm jolokia.js 2.6.1
// under node, against the endpoint of a C program (testdata/modes.c,
// tracing into a test HQ): version, read, write, exec, search, list and
// bulk on tadpole's own MBeans (testdata/js/client.mjs). Without node,
// npm or the registry the test is skipped, or fails under CI=true.
func TestJ4PJolokiaJS(t *testing.T) {
	dir := testpeers.NPMInstall(t, filepath.Join("testdata", "js"), "package.json", "client.mjs")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	lib := BuildLib(t)
	bin := filepath.Join(t.TempDir(), "modes")
	lib.Compile(t, bin, "testdata/modes.c")
	h := startHQ(t, nil)
	addr := testpeers.FreeAddr(t)
	cmd := exec.CommandContext(ctx, bin, "1")
	cmd.Env = h.env("TADPOLE_J4P="+addr, "TADPOLE_J4P_WRITE=on")
	stdin, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	testpeers.AwaitJ4PRead(t, addr, "io.tadpole:type=Agent/Mode", "Tracing")
	out, err := exec.CommandContext(ctx, "node", filepath.Join(dir, "client.mjs"), "http://"+addr+"/jolokia").CombinedOutput()
	t.Logf("jolokia.js:\n%s", out)
	if err != nil || !strings.Contains(string(out), " passed, 0 failed") {
		t.Errorf("jolokia.js client: %v", err)
	}
}
