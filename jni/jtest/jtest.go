package jtest

import (
	"bytes"
	"cmp"
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
	// BuildTimeout bounds building the library and compiling Java.
	BuildTimeout = 5 * time.Minute
	// RunTimeout bounds one java run.
	RunTimeout = 90 * time.Second
)

// Root returns the repository root.
func Root() (string, error) { return testpeers.RepoRoot() }

// Env is a built agent and the compiled test program.
type Env struct {
	Root    string
	Dir     string // temporary directory of everything built
	Lib     string // libtadpole.so
	Classes string // the test program's class path
}

var built struct {
	sync.Once
	env *Env
	err error
}

// Build builds the library and the Java test program once per test
// process; Cleanup removes them.
func Build(t testing.TB) *Env {
	t.Helper()
	testpeers.RequireTools(t, "java", "javac", "gcc")
	built.Do(func() { built.env, built.err = build() })
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.env
}

func build() (*Env, error) {
	root, err := Root()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "tadpole-jtest-")
	if err != nil {
		return nil, err
	}
	e := &Env{Root: root, Dir: dir, Lib: filepath.Join(dir, "libtadpole.so"), Classes: filepath.Join(dir, "app")}
	ctx, cancel := context.WithTimeout(context.Background(), BuildTimeout)
	defer cancel()
	gocmd := testpeers.GoCommand()
	steps := []*exec.Cmd{
		exec.CommandContext(ctx, gocmd, "build", "-trimpath", "-buildvcs=false", "-buildmode=c-shared",
			"-ldflags=-s -w -extldflags=-Wl,--version-script="+filepath.Join(root, "cmd/libtadpole/exports.map"),
			"-o", e.Lib, "./jni/jtest/libjvm"),
		exec.CommandContext(ctx, "javac", "-nowarn", "-cp", filepath.Join(root, "jni/classes"), "-d", e.Classes,
			filepath.Join(root, "jni/jtest/testdata/JApp.java"), filepath.Join(root, "jni/jtest/testdata/JLttng.java"),
			// the method-tracing program (trace_test.go)
			filepath.Join(root, "jni/jtest/testdata/JTrace.java"), filepath.Join(root, "jni/jtest/testdata/jt/Work.java"),
			filepath.Join(root, "jni/jtest/testdata/jt/Loaded.java"), filepath.Join(root, "jni/jtest/testdata/jt/Skip.java"),
			filepath.Join(root, "jni/jtest/testdata/jx/Count.java")),
	}
	// libtadpole-lttng.so next to libtadpole.so, as ./build.sh lib puts
	// it, when lttng-ust's headers are installed.
	if out, err := exec.Command("pkg-config", "--cflags", "--libs", "lttng-ust").Output(); err == nil {
		args := []string{"-O2", "-Wall", "-fPIC", "-shared", "-fvisibility=hidden", "-Icapi/lttng", "-o",
			filepath.Join(dir, "libtadpole-lttng.so"), "capi/lttng/tadpole_lttng.c"}
		steps = append(steps, exec.CommandContext(ctx, "gcc", append(args, strings.Fields(string(out))...)...))
	}
	for _, c := range steps {
		c.Dir = root
		// CGO_CFLAGS as given (./build.sh test puts its JDK's include
		// directories there, see jni/cflags.go), else -O2.
		c.Env = append(os.Environ(), "CGO_ENABLED=1", "CGO_CFLAGS="+cmp.Or(os.Getenv("CGO_CFLAGS"), "-O2"))
		if out, err := c.CombinedOutput(); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("%v: %v\n%s", c.Args, err, out)
		}
	}
	return e, nil
}

// Cleanup removes what Build built.
func Cleanup() {
	if built.env != nil {
		os.RemoveAll(built.env.Dir)
	}
}

// Result is the outcome of a java run.
type Result struct {
	Stdout, Stderr string
	Err            error
	Elapsed        time.Duration
}

// Java returns the command running the test program with the agent
// (options after '='; agent false: without it) under -Xcheck:jni.
func (e *Env) Java(ctx context.Context, env []string, agent bool, options string, args ...string) *exec.Cmd {
	a := []string{"-Xcheck:jni", "-XX:+UseSerialGC", "-Xshare:auto"}
	if agent {
		p := "-agentpath:" + e.Lib
		if options != "" {
			p += "=" + options
		}
		a = append(a, p)
	}
	a = append(a, "-cp", e.Classes+string(os.PathListSeparator)+filepath.Join(e.Root, "jni", "classes"), "JApp")
	cmd := exec.CommandContext(ctx, "java", append(a, args...)...)
	cmd.Env = env
	return cmd
}

// Run runs cmd to completion.
func Run(cmd *exec.Cmd) Result {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err := cmd.Run()
	return Result{Stdout: stdout.String(), Stderr: stderr.String(), Err: err, Elapsed: time.Since(t0)}
}
