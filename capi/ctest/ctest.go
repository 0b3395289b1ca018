package ctest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/testpeers"
)

// Timeouts of the helpers.
const (
	// BuildTimeout bounds building the library (a cold Go build cache on
	// two cores takes about a minute).
	BuildTimeout = 5 * time.Minute
	// RunTimeout bounds one run of a test program.
	RunTimeout = 60 * time.Second
)

// Root returns the repository root.
func Root() (string, error) { return testpeers.RepoRoot() }

// Lib is a built libtadpole.so.
type Lib struct {
	Root    string // repository root
	Dir     string // directory of libtadpole.so and tadpole.pc
	Path    string // the library
	Include string // directory of tadpole.h
}

var libOnce struct {
	sync.Once
	lib *Lib
	err error
}

// BuildLib builds the library once per test process with ./build.sh lib into
// a temporary directory (so that it never races another build of out/), and
// returns it. The directory is removed by Cleanup.
func BuildLib(t testing.TB) *Lib {
	t.Helper()
	testpeers.RequireTools(t, "gcc")
	libOnce.Do(func() {
		libOnce.lib, libOnce.err = buildLib()
	})
	if libOnce.err != nil {
		t.Fatal(libOnce.err)
	}
	return libOnce.lib
}

func buildLib() (*Lib, error) {
	root, err := Root()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "tadpole-lib-")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), BuildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "build.sh"), "lib")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "LIBOUT="+dir, "GO="+testpeers.GoCommand())
	out, err := cmd.CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("./build.sh lib: %v\n%s", err, out)
	}
	// Readable by the unprivileged user some tests run programs as.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	return &Lib{Root: root, Dir: dir, Path: filepath.Join(dir, "libtadpole.so"), Include: filepath.Join(root, "include")}, nil
}

// Cleanup removes the library built by BuildLib; TestMain calls it.
func Cleanup() {
	if libOnce.lib != nil {
		os.RemoveAll(libOnce.lib.Dir)
	}
}

// CFlags are the flags every test program is compiled with.
var CFlags = []string{"-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-pthread"}

// Compile compiles C sources into the executable out, linked against lib
// with an rpath to it.
func (l *Lib) Compile(t testing.TB, out string, srcs ...string) {
	t.Helper()
	args := append([]string{}, CFlags...)
	args = append(args, "-I", l.Include, "-o", out)
	args = append(args, srcs...)
	args = append(args, "-L", l.Dir, "-Wl,-rpath,"+l.Dir, "-ltadpole")
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// Env returns the test's environment without TADPOLE_ and LTTNG_ variables,
// plus extra NAME=value pairs.
func Env(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TADPOLE_") && !strings.HasPrefix(kv, "LTTNG_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// Result is the outcome of a program run.
type Result struct {
	Stdout, Stderr string
	Err            error // nil when it exited with status 0
	Pid            int   // the process's id; 0 if it did not start
}

// Run runs a program to completion (at most RunTimeout).
func Run(t testing.TB, env []string, name string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String(), Err: err}
	if cmd.Process != nil {
		res.Pid = cmd.Process.Pid
	}
	return res
}
