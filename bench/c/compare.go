package cbench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/capi/ctest"
	"github.com/tadpole-trace/tadpole/internal/testpeers"
)

// runTimeout bounds one run of the benchmark program.
const runTimeout = 5 * time.Minute

// Result is what one run of bench.c measured: the median ns per event of
// each probe, and the events tadpole recorded.
type Result struct {
	NsPerEvent    map[string]float64 // "tadpole", "lttng-ust", "empty-call", "tadpole-record"
	TadpoleEvents int64
	Ratio         float64 // tadpole / lttng-ust
	LTTngStop     string  // what "lttng stop" and "lttng destroy" said (discarded events)
	// TraceDir is where the session wrote the LTTng trace.
	TraceDir string
}

// Program is bench.c built against a library, in a directory the
// session daemon's user can read.
type Program struct {
	Path string
	dir  string
}

// srcDir is this package's directory.
func srcDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Build generates the tracepoint provider with lttng-gen-tp and compiles
// bench.c against lib.
func Build(tb testing.TB, lib *ctest.Lib) *Program {
	tb.Helper()
	testpeers.RequireTools(tb, "gcc", "lttng-gen-tp")
	dir, err := os.MkdirTemp("", "tadpole-cbench-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	src := srcDir()
	tp, err := os.ReadFile(filepath.Join(src, "csrc", "tpbench.tp"))
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tpbench.tp"), tp, 0o644); err != nil {
		tb.Fatal(err)
	}
	gen := exec.Command("lttng-gen-tp", "tpbench.tp", "-o", "tpbench.h", "-o", "tpbench.c")
	gen.Dir = dir
	if out, err := gen.CombinedOutput(); err != nil {
		tb.Fatalf("lttng-gen-tp: %v\n%s", err, out)
	}
	bin := filepath.Join(dir, "bench")
	args := []string{"-std=c11", "-O2", "-Wall", "-Wextra", "-I", dir, "-I", lib.Include,
		"-o", bin, filepath.Join(src, "csrc", "bench.c"), filepath.Join(dir, "tpbench.c"),
		"-L", lib.Dir, "-Wl,-rpath," + lib.Dir, "-ltadpole", "-llttng-ust", "-llttng-ust-common", "-ldl", "-pthread"}
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		tb.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return &Program{Path: bin, dir: dir}
}

// Run runs the program with an active LTTng session recording its
// tracepoints and tadpole tracing into hqAddr; it runs as the daemon's user
// (the unprivileged one when the test runs as root), so that the
// tracepoints register with that daemon.
func (p *Program) Run(tb testing.TB, sd *testpeers.Sessiond, hqAddr string, pairs, threads, rounds int) Result {
	tb.Helper()
	out := sd.MkdirAll(fmt.Sprintf("trace-%d", time.Now().UnixNano()))
	sd.MustLttng("--no-sessiond", "create", "bench", "--output="+out)
	destroyed := false
	defer func() {
		if !destroyed {
			sd.Lttng("destroy", "bench")
		}
	}()
	sd.MustLttng("enable-event", "-u", "tadpole_bench:*", "-s", "bench")
	sd.MustLttng("start", "bench")

	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Path, strconv.Itoa(pairs), strconv.Itoa(threads), strconv.Itoa(rounds))
	cmd.Env = ctest.Env("HOME="+sd.Home, "LTTNG_HOME="+sd.Home, "TADPOLE_HQ="+hqAddr, "TADPOLE_LTTNG=off")
	cmd.Dir = p.dir
	if os.Geteuid() == 0 {
		cred, err := credential("nobody")
		if err != nil {
			tb.Fatal(err)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		tb.Fatalf("bench: %v\n%s", err, stderr.String())
	}
	// Both commands report events the session discarded.
	stop, _ := sd.Lttng("stop", "bench")
	destroy, _ := sd.Lttng("destroy", "bench")
	destroyed = true
	res := Result{NsPerEvent: make(map[string]float64), LTTngStop: strings.TrimSpace(stop + destroy), TraceDir: out}
	sc := bufio.NewScanner(strings.NewReader(string(stdout)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 8 && f[0] == "mode":
			v, _ := strconv.ParseFloat(f[7], 64)
			res.NsPerEvent[f[1]] = v
		case len(f) == 2 && f[0] == "tadpole-events":
			res.TadpoleEvents, _ = strconv.ParseInt(f[1], 10, 64)
		case len(f) == 3 && f[0] == "ratio":
			res.Ratio, _ = strconv.ParseFloat(f[2], 64)
		}
	}
	if len(res.NsPerEvent) != 4 || res.TadpoleEvents == 0 {
		tb.Fatalf("bench printed no results:\n%s\n%s", stdout, stderr.String())
	}
	return res
}

func credential(name string) (*syscall.Credential, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, err
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// CountLTTngEvents counts the tadpole_bench events of an LTTng trace with
// babeltrace2.
func CountLTTngEvents(tb testing.TB, dir string) int64 {
	tb.Helper()
	testpeers.RequireTools(tb, "babeltrace2")
	cmd := exec.Command("babeltrace2", dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	var n int64
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "tadpole_bench:method") {
			n++
		}
	}
	if err := cmd.Wait(); err != nil {
		tb.Fatalf("babeltrace2 %s: %v", dir, err)
	}
	return n
}
