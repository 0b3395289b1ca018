package calltree_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq/calltree"
)

// npmDir holds the npm packages the node check installs, kept between
// runs.
var npmDir = filepath.Join(os.TempDir(), "tadpole-calltree-npm")

// npmPackages are installed into npmDir: speedscope for its published
// schema, ajv to validate against it.
var npmPackages = []string{"speedscope@1.25.0", "ajv@8.17.1"}

// nodeTools returns node, with npmPackages installed; it skips the test
// when npm cannot install them, and when node is missing (fails under
// CI=true).
func nodeTools(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node not found")
		}
		t.Skip("node not found")
	}
	if _, err := os.Stat(filepath.Join(npmDir, "node_modules", "ajv", "package.json")); err == nil {
		if _, err := os.Stat(filepath.Join(npmDir, "node_modules", "speedscope", "package.json")); err == nil {
			return node
		}
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm not found")
	}
	if err := os.MkdirAll(npmDir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := append([]string{"install", "--prefix", npmDir, "--no-audit", "--no-fund", "--ignore-scripts"}, npmPackages...)
	if out, err := exec.CommandContext(ctx, npm, args...).CombinedOutput(); err != nil {
		t.Skipf("npm install %s (registry unreachable?): %v\n%s", strings.Join(npmPackages, " "), err, out)
	}
	return node
}

// validateScript validates each JSON file named on its command line
// against speedscope's schema, with ajv; it prints ajv's errors and exits
// 1 when one fails.
const validateScript = `
const fs = require("fs"), path = require("path");
const dir = process.env.NPM_DIR;
const Ajv = require(path.join(dir, "node_modules", "ajv"));
const schema = JSON.parse(fs.readFileSync(path.join(dir, "node_modules", "speedscope", "dist", "release", "file-format-schema.json"), "utf8"));
const validate = new Ajv({strict: false, allErrors: true}).compile(schema);
let failed = false;
for (const f of process.argv.slice(2)) {
  if (!validate(JSON.parse(fs.readFileSync(f, "utf8")))) {
    console.log(f + ": " + JSON.stringify(validate.errors));
    failed = true;
  }
}
process.exit(failed ? 1 : 0);
`

// TestSpeedscopeNode validates exports with ajv against the schema in
// speedscope's npm package, and checks that the schema committed under
// testdata (which the Go check uses) is that one.
func TestSpeedscopeNode(t *testing.T) {
	node := nodeTools(t)
	published, err := os.ReadFile(filepath.Join(npmDir, "node_modules", "speedscope", "dist", "release", "file-format-schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(speedscopeSchemaPath)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if json.Unmarshal(published, &a) != nil || json.Unmarshal(committed, &b) != nil || !reflect.DeepEqual(a, b) {
		t.Error("testdata's schema differs from the one speedscope 1.25.0 ships")
	}

	chunks, _ := timedTraffic(4, 20000, 30, 3)
	rep, live := liveRun(t, chunks)
	_, capped := replayTree(t, rep.TraceFile, &calltree.Config{MaxPaths: 40, MaxDepth: 3, MaxTimeline: 500})
	dir := t.TempDir()
	var files []string
	for name, tr := range map[string]*calltree.Tree{"live": live, "capped": capped} {
		var buf bytes.Buffer
		if err := tr.WriteSpeedscope(&buf, nil); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, name+".speedscope.json")
		if err := os.WriteFile(f, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	script := filepath.Join(dir, "validate.js")
	if err := os.WriteFile(script, []byte(validateScript), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(files ...string) (string, error) {
		cmd := exec.Command(node, append([]string{script}, files...)...)
		cmd.Env = append(os.Environ(), "NPM_DIR="+npmDir)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(files...); err != nil {
		t.Fatalf("ajv rejects the export: %v\n%s", err, out)
	}
	// The validator does reject a file the schema rejects.
	good, _ := os.ReadFile(files[0])
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, bytes.Replace(good, []byte(`"unit":"milliseconds"`), []byte(`"unit":"ms"`), 1), 0o644)
	if out, err := run(bad); err == nil || !strings.Contains(out, "unit") {
		t.Errorf("ajv accepts a profile in unit \"ms\": %v\n%s", err, out)
	}
}

// TestFlameScriptParses checks the flame graph's script with node --check.
func TestFlameScriptParses(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node not found")
		}
		t.Skip("node not found")
	}
	chunks, _ := timedTraffic(5, 2000, 10, 2)
	_, tr := liveRun(t, chunks)
	var buf bytes.Buffer
	if err := tr.WriteFlameSVG(&buf, nil); err != nil {
		t.Fatal(err)
	}
	_, script, ok := strings.Cut(buf.String(), "<![CDATA[")
	script, _, ok2 := strings.Cut(script, "]]>")
	if !ok || !ok2 || len(script) < 100 {
		t.Fatal("no script in the flame graph")
	}
	f := filepath.Join(t.TempDir(), "flame.js")
	if err := os.WriteFile(f, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(node, "--check", f).CombinedOutput(); err != nil {
		t.Fatalf("node --check: %v\n%s", err, out)
	}
}
