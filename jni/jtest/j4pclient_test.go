package jtest

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
// under node, against the endpoint of a JVM (J4PApp): version, read with
// paths, write, exec, search, list and bulk on the JVM's platform MBeans,
// the app's and tadpole's own (testdata/js/client.mjs). The client is
// installed from testdata/js/package.json into a temporary directory;
// without node, npm or the registry the test is skipped, or fails under
// CI=true.
func TestJ4PJolokiaJS(t *testing.T) {
	dir := testpeers.NPMInstall(t, filepath.Join("testdata", "js"), "package.json", "client.mjs")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	j := startJ4P(t, j4pOptions{checkJNI: true})
	out, err := exec.CommandContext(ctx, "node", filepath.Join(dir, "client.mjs"), j.Tadpole).CombinedOutput()
	t.Logf("jolokia.js:\n%s", out)
	if err != nil || !strings.Contains(string(out), " passed, 0 failed") {
		t.Errorf("jolokia.js client: %v", err)
	}
}
