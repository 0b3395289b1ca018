package testpeers

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// NPMInstall copies files (a package.json and the scripts that use it) from
// src into a temporary directory, installs the packages package.json names
// there with npm, and returns the directory. Without node, npm or the
// registry the test is skipped, or fails under CI=true.
func NPMInstall(t testing.TB, src string, files ...string) string {
	t.Helper()
	RequireTools(t, "node", "npm")
	dir := t.TempDir()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	npm := exec.CommandContext(ctx, "npm", "install", "--prefix", dir, "--no-audit", "--no-fund", "--ignore-scripts")
	if out, err := npm.CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("npm install in %s: %v\n%s", src, err, out)
		}
		t.Skipf("npm install in %s failed (offline?): %v\n%s", src, err, out)
	}
	return dir
}
