package testpeers

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// ErrNoRoot: the repository root (go.mod beside build.sh) was not found.
var ErrNoRoot = errors.New("testpeers: repository root not found")

// RepoRoot returns the repository root: the nearest directory above this
// package's that holds go.mod and build.sh.
func RepoRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", ErrNoRoot
	}
	for dir := filepath.Dir(file); ; {
		if isFile(filepath.Join(dir, "go.mod")) && isFile(filepath.Join(dir, "build.sh")) {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", ErrNoRoot
		}
		dir = up
	}
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// GoCommand returns the go command that builds test programs: the one on
// PATH, or else the one of the toolchain running the tests.
func GoCommand() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}
