package jvm

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/internal/testpeers"
	"github.com/tadpole-trace/tadpole/jni/jtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// The columns of the method-tracing comparison.
const (
	colPlain   = "plain JVM"
	colTadpole = "tadpole"
	colASM     = "ASM agent"
	colJVMTI   = "JVMTI agent"
)

var methodColumns = []string{colPlain, colASM, colJVMTI, colTadpole}

// methodWorkload is one program MethodBench runs: its traced classes (an
// internal-name prefix), its parameter, and its untimed and timed rounds
// (the JVMTI agent's own: interpreter-only mode needs no JIT warm-up, and
// its runs are long).
type methodWorkload struct {
	name, what               string
	prefix                   string
	param                    func(*methodsEnv) string
	warmup, rounds           int
	jvmtiWarmup, jvmtiRounds int
	exactCalls               bool // the same calls every round
}

var methodWorkloads = []methodWorkload{
	{name: "fib", what: "recursive fib(30) per round", prefix: "work/",
		param: func(*methodsEnv) string { return "30" }, warmup: 10, rounds: 30, jvmtiWarmup: 1, jvmtiRounds: 3, exactCalls: true},
	{name: "collections", what: "200 000 objects through ArrayList, HashMap, TreeMap, a sort and a stream per round",
		prefix: "work/", param: func(*methodsEnv) string { return "200000" }, warmup: 5, rounds: 10, jvmtiWarmup: 0,
		jvmtiRounds: 1, exactCalls: true},
	{name: "interpreter", what: "tree-walking interpreter: interpreted fib(24) and a 2 400-step loop per round",
		prefix: "work/", param: func(*methodsEnv) string { return "24" }, warmup: 5, rounds: 10, jvmtiWarmup: 1,
		jvmtiRounds: 2, exactCalls: true},
	// javac makes a few hundred calls more or fewer from one JVM to the
	// next (identity hash codes differ): HQ's count of the timed run is
	// checked to within 0.01 %, and exactly in a run of its own in which
	// the JVMTI agent counts beside tadpole.
	{name: "javac", what: "javac compiling a source tree per round, every javac class traced", prefix: "com/sun/tools/javac/",
		param: func(e *methodsEnv) string { return "@" + e.argfile }, warmup: 2, rounds: 3, jvmtiWarmup: 1, jvmtiRounds: 1},
}

// methodsEnv is what the comparison builds once per process.
type methodsEnv struct {
	jt       *jtest.Env
	dir      string
	app      string // MethodBench and the work classes
	agentJar string // the ASM agent (its probe jar and ASM's jars beside it)
	jvmtiLib string // the JVMTI counting agent
	argfile  string // javac's arguments for the javac workload
	files    int    // source files it compiles
}

var methodsBuilt struct {
	sync.Once
	env *methodsEnv
	err error
}

// asmAgentJars are the Debian libasm-java jars the ASM agent loads.
var asmAgentJars = []string{"asm-9.4.jar", "asm-commons-9.4.jar", "asm-tree-9.4.jar", "asm-analysis-9.4.jar"}

// buildMethods compiles MethodBench and the workloads, the ASM agent and its
// probe, and the JVMTI agent, and writes the javac workload's source tree.
func buildMethods(tb testing.TB) *methodsEnv {
	tb.Helper()
	e := jtest.Build(tb) // java, javac, gcc; libtadpole.so
	testpeers.RequireTools(tb, "jar")
	for _, j := range asmAgentJars {
		if _, err := os.Stat(filepath.Join("/usr/share/java", j)); err != nil {
			if os.Getenv("CI") == "true" {
				tb.Fatalf("ASM 9.4 needed under CI=true (apt-get install libasm-java): %v", err)
			}
			tb.Skipf("ASM 9.4 not installed (libasm-java): %v", err)
		}
	}
	methodsBuilt.Do(func() { methodsBuilt.env, methodsBuilt.err = buildMethodsOnce(e) })
	if methodsBuilt.err != nil {
		tb.Fatal(methodsBuilt.err)
	}
	return methodsBuilt.env
}

func buildMethodsOnce(jt *jtest.Env) (*methodsEnv, error) {
	dir, err := os.MkdirTemp("", "tadpole-methodbench-")
	if err != nil {
		return nil, err
	}
	os.Chmod(dir, 0o755)
	src, _ := filepath.Abs(filepath.Join("testdata", "methods"))
	e := &methodsEnv{jt: jt, dir: dir, app: filepath.Join(dir, "app"), agentJar: filepath.Join(dir, "asmagent.jar"),
		jvmtiLib: filepath.Join(dir, "libjvmticount.so"), argfile: filepath.Join(dir, "javac.args")}
	var asmCP []string
	for _, j := range asmAgentJars {
		b, err := os.ReadFile(filepath.Join("/usr/share/java", j))
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, j), b, 0o644); err != nil {
			return nil, err
		}
		asmCP = append(asmCP, filepath.Join(dir, j))
	}
	manifest := filepath.Join(dir, "manifest.txt")
	if err := os.WriteFile(manifest, []byte("Premain-Class: tadpolebench.asmagent.AsmAgent\nBoot-Class-Path: probe.jar\n"+
		"Class-Path: "+strings.Join(asmAgentJars, " ")+"\n"), 0o644); err != nil {
		return nil, err
	}
	jdk, err := jdkHome()
	if err != nil {
		return nil, err
	}
	steps := [][]string{
		{"javac", "-nowarn", "-d", e.app, filepath.Join(src, "MethodBench.java"), filepath.Join(src, "work", "Fib.java"),
			filepath.Join(src, "work", "Coll.java"), filepath.Join(src, "work", "Interp.java")},
		{"javac", "-nowarn", "-d", filepath.Join(dir, "probe"), filepath.Join(src, "probe", "Probe.java")},
		{"javac", "-nowarn", "-cp", strings.Join(asmCP, ":"), "-d", filepath.Join(dir, "asmagent"),
			filepath.Join(src, "asmagent", "AsmAgent.java")},
		{"jar", "--create", "--file", filepath.Join(dir, "probe.jar"), "-C", filepath.Join(dir, "probe"), "."},
		{"jar", "--create", "--file", e.agentJar, "--manifest", manifest, "-C", filepath.Join(dir, "asmagent"), "."},
		{"gcc", "-O2", "-Wall", "-fPIC", "-shared", "-I" + filepath.Join(jdk, "include"),
			"-I" + filepath.Join(jdk, "include", "linux"), "-o", e.jvmtiLib, filepath.Join(src, "jvmticount.c")},
	}
	ctx, cancel := context.WithTimeout(context.Background(), jtest.BuildTimeout)
	defer cancel()
	for _, s := range steps {
		if out, err := exec.CommandContext(ctx, s[0], s[1:]...).CombinedOutput(); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("%v: %v\n%s", s, err, out)
		}
	}
	files, err := writeJavacTree(jt.Root, filepath.Join(dir, "tree"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	e.files = len(files)
	args := []string{"-d", filepath.Join(dir, "javac-out"), "-proc:none", "-nowarn", "-XDsuppressNotes", "-implicit:none"}
	if err := os.WriteFile(e.argfile, []byte(strings.Join(append(args, files...), "\n")+"\n"), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return e, nil
}

// jdkHome is the JDK of the javac in PATH (its include/ has jvmti.h).
func jdkHome() (string, error) {
	javac, err := exec.LookPath("javac")
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(javac)
	if err != nil {
		return "", err
	}
	jdk := filepath.Dir(filepath.Dir(real))
	if _, err := os.Stat(filepath.Join(jdk, "include", "jvmti.h")); err != nil {
		return "", fmt.Errorf("no jvmti.h in the JDK of %s: %v", real, err)
	}
	return jdk, nil
}

// methodSample is one JVM's result.
type methodSample struct {
	// ns of the timed rounds: wall, the main (traced) thread's CPU time,
	// the JVM process's CPU time (JIT, GC and the agents' own threads too)
	wall, cpu, proc float64
	rounds          int
	calls           int64 // traced calls in the timed rounds, by the column's own count (-1: none)
	analytic        int64 // calls the workload computes it made in them (-1: unknown)
	// tadpole: wall ns the traced thread spent in the timed rounds handing
	// full buffers to the agent (flush0, waits for a free buffer included;
	// -1 for the other columns)
	handover float64
	// totals over the whole run (warm-up included): the ASM and JVMTI
	// agents' counts, HQ's for tadpole
	entries, exits, bubbles int64
	lost                    string  // tadpole: why HQ did not get every event ("" if it did)
	hqCPU                   float64 // tadpole: CPU ns of this process (HQ) over the run
}

var methodsMeasured struct {
	sync.Mutex
	runs map[string][]methodSample
}

func methodKey(w, col string) string { return w + "\x00" + col }

func recordMethods(w, col string, s methodSample) {
	methodsMeasured.Lock()
	defer methodsMeasured.Unlock()
	if methodsMeasured.runs == nil {
		methodsMeasured.runs = make(map[string][]methodSample)
	}
	methodsMeasured.runs[methodKey(w, col)] = append(methodsMeasured.runs[methodKey(w, col)], s)
}

// methodRuns returns a cell's samples sorted by the traced thread's CPU
// time.
func methodRuns(w, col string) []methodSample {
	methodsMeasured.Lock()
	s := slices.Clone(methodsMeasured.runs[methodKey(w, col)])
	methodsMeasured.Unlock()
	slices.SortFunc(s, func(a, b methodSample) int { return cmp.Compare(a.cpu/float64(a.rounds), b.cpu/float64(b.rounds)) })
	return s
}

var (
	resultRe = regexp.MustCompile(`result ns=(\d+) cpu=(-?\d+) proc=(-?\d+) calls=(-?\d+) analytic=(-?\d+) handover=(-?\d+)`)
	asmRe    = regexp.MustCompile(`asm-total entries=(\d+) exits=(\d+) bubbles=(\d+)`)
	asmClsRe = regexp.MustCompile(`asm-classes transformed=(\d+) failed=(\d+)`)
	jvmtiRe  = regexp.MustCompile(`jvmti-total entries=(\d+) exits=(\d+) bubbles=(\d+)`)
)

func atoi(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }

// methodCmd is java running MethodBench for w with extra JVM arguments.
func (e *methodsEnv) methodCmd(ctx context.Context, w methodWorkload, jvmti bool, extra ...string) *exec.Cmd {
	warm, rounds := w.warmup, w.rounds
	if jvmti {
		warm, rounds = w.jvmtiWarmup, w.jvmtiRounds
	}
	args := append([]string{"-XX:+UseSerialGC", "-Xmx1g"}, extra...)
	args = append(args, "-cp", e.app, "MethodBench", w.name, strconv.Itoa(warm), strconv.Itoa(rounds), w.param(e))
	cmd := exec.CommandContext(ctx, "java", args...)
	cmd.Env = append(os.Environ(), "TADPOLE_LTTNG=off")
	return cmd
}

// methodRunTimeout bounds one JVM of the comparison.
const methodRunTimeout = 15 * time.Minute

// parseMethodRun reads MethodBench's result line from stdout.
func parseMethodRun(tb testing.TB, cmd *exec.Cmd, stdout, stderr string, rounds int) methodSample {
	tb.Helper()
	m := resultRe.FindStringSubmatch(stdout)
	if m == nil {
		tb.Fatalf("%v: no result\nstdout:\n%s\nstderr:\n%s", cmd.Args, stdout, stderr)
	}
	return methodSample{wall: float64(atoi(m[1])), cpu: float64(atoi(m[2])), proc: float64(atoi(m[3])), rounds: rounds,
		calls: atoi(m[4]), analytic: atoi(m[5]), handover: float64(atoi(m[6])), entries: -1, exits: -1, bubbles: -1}
}

func runMethodCmd(tb testing.TB, cmd *exec.Cmd, rounds int) (methodSample, string) {
	tb.Helper()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		tb.Fatalf("%v: %v\nstdout:\n%s\nstderr:\n%s", cmd.Args, err, o.String(), e.String())
	}
	return parseMethodRun(tb, cmd, o.String(), e.String(), rounds), e.String()
}

// runPlain runs the workload without an agent.
func runPlain(tb testing.TB, e *methodsEnv, w methodWorkload) methodSample {
	ctx, cancel := context.WithTimeout(context.Background(), methodRunTimeout)
	defer cancel()
	s, _ := runMethodCmd(tb, e.methodCmd(ctx, w, false), w.rounds)
	return s
}

// runASM runs the workload under the ASM agent, which counts its events:
// in the timed rounds (calls) and over the whole run (at exit).
func runASM(tb testing.TB, e *methodsEnv, w methodWorkload) methodSample {
	ctx, cancel := context.WithTimeout(context.Background(), methodRunTimeout)
	defer cancel()
	s, stderr := runMethodCmd(tb, e.methodCmd(ctx, w, false, "-javaagent:"+e.agentJar+"="+w.prefix, "-Dbench.counter=asm"),
		w.rounds)
	m, c := asmRe.FindStringSubmatch(stderr), asmClsRe.FindStringSubmatch(stderr)
	if m == nil || c == nil {
		tb.Fatalf("ASM agent: no totals in stderr:\n%s", stderr)
	}
	s.entries, s.exits, s.bubbles = atoi(m[1]), atoi(m[2]), atoi(m[3])
	if atoi(c[1]) == 0 || atoi(c[2]) != 0 {
		// A class left alone would make its counts short of what a
		// complete tracer records, and they are the reference.
		tb.Fatalf("ASM agent: %s classes transformed, %s failed:\n%s", c[1], c[2], stderr)
	}
	return s
}

// runJVMTI runs the workload under the JVMTI MethodEntry/MethodExit agent.
func runJVMTI(tb testing.TB, e *methodsEnv, w methodWorkload) methodSample {
	ctx, cancel := context.WithTimeout(context.Background(), methodRunTimeout)
	defer cancel()
	s, stderr := runMethodCmd(tb, e.methodCmd(ctx, w, true, "-agentpath:"+e.jvmtiLib+"="+w.prefix, "-Dbench.counter=jvmti"),
		w.jvmtiRounds)
	m := jvmtiRe.FindStringSubmatch(stderr)
	if m == nil {
		tb.Fatalf("JVMTI agent: no totals in stderr:\n%s", stderr)
	}
	s.entries, s.exits, s.bubbles = atoi(m[1]), atoi(m[2]), atoi(m[3])
	return s
}

// tadpoleTrace is the agent option selecting the traced classes (a
// pattern on internal class names, docs/options.md); HQ's configuration
// says the same in Bytefrog's inclusions and exclusions.
func tadpoleTrace(prefix string) string { return "trace=" + prefix + "**" }

// runTadpole runs the workload under libtadpole.so with the reference HQ
// in this process (hq_retry=0: the JVM waits for HQ at start rather than
// running untraced when a loaded machine answers late), and checks that HQ received every event: as many
// entries, and exits plus bubbles, as a counting agent saw in a run of the
// same rounds (want), gap-free.
//
// With counted, the JVMTI agent runs in the same JVM (its rounds) and HQ's
// counts must equal its counts exactly; the timing is then meaningless.
func runTadpoleMethods(tb testing.TB, e *methodsEnv, w methodWorkload, want methodSample, counted bool) methodSample {
	cfg := hq.DefaultConfig()
	cfg.Listen = benchListen(tb)
	cfg.Agent.Inclusions = []string{regexp.QuoteMeta(w.prefix) + ".*"}
	cfg.Agent.Exclusions = []string{".*"}
	srv, err := hq.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		tb.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), methodRunTimeout)
	defer cancel()
	args := []string{"-agentpath:" + e.jt.Lib + "=hq=" + srv.Addr() + ",hq_retry=0,lttng=off," + tadpoleTrace(w.prefix)}
	rounds := w.rounds
	if counted {
		args = append(args, "-agentpath:"+e.jvmtiLib+"="+w.prefix)
		rounds = w.jvmtiRounds
	}
	cmd := e.methodCmd(ctx, w, counted, args...)
	var o, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &se
	cpu0 := hqProcessCPU()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	runs := make(chan *hq.Run, 1)
	go func() {
		if r, err := srv.NextRun(ctx); err == nil {
			runs <- r
		}
	}()
	var run *hq.Run
	var exitErr error
	select {
	case run = <-runs:
		exitErr = <-exited
	case exitErr = <-exited:
		select {
		case run = <-runs:
		case <-time.After(5 * time.Second):
		}
	}
	if exitErr != nil {
		tb.Fatalf("%v: %v\nstdout:\n%s\nstderr:\n%s", cmd.Args, exitErr, o.String(), se.String())
	}
	s := parseMethodRun(tb, cmd, o.String(), se.String(), rounds)
	if counted {
		m := jvmtiRe.FindStringSubmatch(se.String())
		if m == nil {
			tb.Fatalf("JVMTI agent beside tadpole: no totals in stderr:\n%s", se.String())
		}
		want = methodSample{entries: atoi(m[1]), exits: atoi(m[2]), bubbles: atoi(m[3])}
	}
	if run == nil {
		s.lost = "the agent never connected to HQ; its stderr: " + strings.TrimSpace(se.String())
		return s
	}
	rep, err := run.Wait(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	s.hqCPU = float64(hqProcessCPU() - cpu0)
	s.entries = rep.Events[bytefrog.MsgMethodEntry]
	s.exits = rep.Events[bytefrog.MsgMethodExit]
	s.bubbles = rep.Events[bytefrog.MsgExceptionBubble]
	switch {
	case !rep.OK || rep.GapCount != 0:
		s.lost = fmt.Sprintf("run not clean: %s, %d gaps (%d missing)", rep.Reason, rep.GapCount, rep.Missing)
	case !sameCount(s.entries, want.entries, w.exactCalls || counted) ||
		!sameCount(s.exits+s.bubbles, want.exits+want.bubbles, w.exactCalls || counted):
		s.lost = fmt.Sprintf("HQ received %d method entries and %d exits/bubbles; the run made %d and %d",
			s.entries, s.exits+s.bubbles, want.entries, want.exits+want.bubbles)
	}
	if s.lost != "" && strings.TrimSpace(se.String()) != "" {
		s.lost += "; agent stderr: " + strings.TrimSpace(se.String())
	}
	return s
}

// hqProcessCPU is this process's CPU time (user and system) in ns: while
// a tadpole JVM runs, the reference HQ's.
func hqProcessCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// sameCount: HQ's count a against a counting agent's b, exactly or to
// within 0.01 %.
func sameCount(a, b int64, exact bool) bool {
	if exact {
		return a == b
	}
	d := float64(a - b)
	return d <= float64(b)*1e-4 && -d <= float64(b)*1e-4
}

// BenchmarkMethodTracing runs every workload in every column side by side
// in this one process, in turn: plain, the ASM agent, the JVMTI agent,
// tadpole into the reference HQ. Each sub-benchmark is one JVM; the
// comparison prints its table at the end (min / median / max over the
// runs of this process: -count N runs it N times). The tadpole column
// fails unless HQ received every event of the run.
//
//	cd bench && go test -run '^$' -bench MethodTracing -benchtime 1x -timeout 2h ./jvm
func BenchmarkMethodTracing(b *testing.B) {
	e := buildMethods(b)
	for _, w := range methodWorkloads {
		if f := os.Getenv("TADPOLE_BENCH_WORKLOADS"); f != "" && !slices.Contains(strings.Split(f, ","), w.name) {
			continue
		}
		// asm: the ASM agent's run; ref: the counts HQ's must match, those
		// of the JVMTI agent when it ran the same rounds, else the ASM
		// agent's.
		var asm, ref methodSample
		for _, col := range methodColumns {
			b.Run(w.name+"/"+strings.ReplaceAll(col, " ", "_"), func(b *testing.B) {
				var s methodSample
				switch col {
				case colPlain:
					s = runPlain(b, e, w)
				case colASM:
					s = runASM(b, e, w)
					asm, ref = s, s
					checkCalls(b, w, s)
				case colJVMTI:
					s = runJVMTI(b, e, w)
					checkCalls(b, w, s)
					checkAgree(b, w, asm, s)
					if w.jvmtiWarmup == w.warmup && w.jvmtiRounds == w.rounds {
						ref = s
					}
				case colTadpole:
					if ref.rounds == 0 {
						b.Skip("no agent's counts to check HQ's against")
					}
					s = runTadpoleMethods(b, e, w, ref, false)
				}
				recordMethods(w.name, col, s)
				reportMethods(b, w, col, s)
				if s.lost != "" {
					b.Errorf("tadpole on %s: events lost: %s", w.name, s.lost)
				}
			})
		}
		if !w.exactCalls {
			b.Run(w.name+"/tadpole_counted_by_JVMTI", func(b *testing.B) {
				if s := runTadpoleMethods(b, e, w, methodSample{}, true); s.lost != "" {
					b.Errorf("tadpole on %s, counted by the JVMTI agent in the same JVM: events lost: %s", w.name, s.lost)
				}
				b.ReportMetric(0, "ns/op")
			})
		}
	}
	printMethodTable(os.Stdout, e)
}

// checkCalls: a counting agent's calls match what the workload computes.
func checkCalls(tb testing.TB, w methodWorkload, s methodSample) {
	tb.Helper()
	if s.calls <= 0 {
		tb.Fatalf("%s: the counting agent saw %d calls in the timed rounds", w.name, s.calls)
	}
	if s.analytic >= 0 && s.calls != s.analytic {
		tb.Errorf("%s: the counting agent saw %d calls; the workload made %d", w.name, s.calls, s.analytic)
	}
	if s.entries != s.exits+s.bubbles {
		tb.Errorf("%s: %d entries, %d exits and %d bubbles", w.name, s.entries, s.exits, s.bubbles)
	}
}

// checkAgree: the two counting agents saw the same calls per round,
// exactly on the workloads that make the same calls every round. javac's
// calls vary by a few hundred from one JVM to the next (identity hash
// codes differ: 0.002 % of 283 M calls in one compilation of a larger
// tree): a bound of 0.01 % keeps that from hiding a real difference.
func checkAgree(tb testing.TB, w methodWorkload, asm, jvmti methodSample) {
	tb.Helper()
	if asm.rounds == 0 {
		return
	}
	a, j := float64(asm.calls)/float64(asm.rounds), float64(jvmti.calls)/float64(jvmti.rounds)
	if w.exactCalls && asm.calls*int64(jvmti.rounds) != jvmti.calls*int64(asm.rounds) ||
		!w.exactCalls && (j-a > j*1e-4 || a-j > j*1e-4) {
		tb.Errorf("%s: the JVMTI agent counted %d calls in %d rounds, the ASM agent %d in %d", w.name, jvmti.calls,
			jvmti.rounds, asm.calls, asm.rounds)
	}
}

// callsPerRound is the traced calls of one timed round: the ASM agent's
// count of this process's first ASM run of w.
func callsPerRound(w string) float64 {
	r := methodRuns(w, colASM)
	if len(r) == 0 {
		return 0
	}
	return float64(r[0].calls) / float64(r[0].rounds)
}

func reportMethods(b *testing.B, w methodWorkload, col string, s methodSample) {
	b.ReportMetric(0, "ns/op")
	r := float64(s.rounds)
	b.ReportMetric(s.wall/r/1e6, "wall-ms/round")
	b.ReportMetric(s.cpu/r/1e6, "cpu-ms/round")
	cpr := callsPerRound(w.name)
	if plain := methodRuns(w.name, colPlain); cpr > 0 && len(plain) > 0 && col != colPlain {
		p := plain[(len(plain)-1)/2]
		pr := float64(p.rounds)
		b.ReportMetric((s.cpu/r-p.cpu/pr)/cpr, "added-cpu-ns/call")
		b.ReportMetric((s.wall/r-p.wall/pr)/cpr, "added-wall-ns/call")
		b.ReportMetric(s.cpu/r/(p.cpu/pr), "x-plain-cpu")
	}
}

// cell is a column's runs of a workload: per round ns of its median run
// (by the traced thread's CPU time), the spread, and how many runs.
type cell struct {
	n               int
	wall, cpu, proc float64
	minCPU, maxCPU  float64
	lost            string
	hqNs            float64 // tadpole: HQ's CPU ns per event, median run
	handover        float64 // tadpole: the traced thread's hand-over wall ns per round, median run (-1: none)
}

func methodCell(w, col string) (cell, bool) {
	r := methodRuns(w, col)
	if len(r) == 0 {
		return cell{}, false
	}
	m := r[(len(r)-1)/2]
	rd := float64(m.rounds)
	c := cell{n: len(r), wall: m.wall / rd, cpu: m.cpu / rd, proc: m.proc / rd,
		minCPU: r[0].cpu / float64(r[0].rounds), maxCPU: r[len(r)-1].cpu / float64(r[len(r)-1].rounds), handover: -1}
	if m.handover >= 0 {
		c.handover = m.handover / rd
	}
	if ev := m.entries + m.exits + m.bubbles; m.hqCPU > 0 && ev > 0 {
		c.hqNs = m.hqCPU / float64(ev)
	}
	for _, s := range r {
		if s.lost != "" {
			c.lost = s.lost
		}
	}
	return c, true
}

// printMethodTable prints the side-by-side table of every workload
// measured in this process.
func printMethodTable(out io.Writer, e *methodsEnv) {
	fmt.Fprintf(out, "\nJVM method tracing side by side. Per round, of the median run by the traced thread's CPU time: "+
		"that CPU time [min–max of the runs],\nthe process's CPU time and the wall time, in ms. A traced call is its entry "+
		"and its exit event. added ns/call = (round − plain round) / traced calls\nof a round, on the traced thread's "+
		"CPU time and on the wall time; slowdown = round / plain round, on the same two.\n")
	for _, w := range methodWorkloads {
		cpr := callsPerRound(w.name)
		p, okP := methodCell(w.name, colPlain)
		if !okP || cpr == 0 {
			continue
		}
		param := w.param(e)
		if w.name == "javac" {
			param = fmt.Sprintf("%d files", e.files)
		}
		fmt.Fprintf(out, "\n%s (%s; %s): %.2f M traced calls per round, %d+%d rounds (JVMTI %d+%d)\n", w.name, w.what, param,
			cpr/1e6, w.warmup, w.rounds, w.jvmtiWarmup, w.jvmtiRounds)
		fmt.Fprintf(out, "  %-12s %28s %10s %10s %15s %9s %9s %9s\n", "", "thread CPU ms [min–max]", "proc CPU", "wall",
			"added ns/call", "(wall)", "slowdown", "(wall)")
		added := map[string]float64{}
		lost := ""
		for _, col := range []string{colPlain, colTadpole, colASM, colJVMTI} {
			c, ok := methodCell(w.name, col)
			if !ok {
				fmt.Fprintf(out, "  %-12s not measured\n", col)
				continue
			}
			added[col] = (c.cpu - p.cpu) / cpr
			note := ""
			if c.lost != "" {
				note = "  INCOMPLETE: " + c.lost
				lost = c.lost
			}
			fmt.Fprintf(out, "  %-12s %9.1f [%7.1f – %7.1f] %10.1f %10.1f %15.1f %9.1f %8.2f× %8.2f×  (%d runs)%s\n", col,
				c.cpu/1e6, c.minCPU/1e6, c.maxCPU/1e6, c.proc/1e6, c.wall/1e6, added[col], (c.wall-p.wall)/cpr, c.cpu/p.cpu,
				c.wall/p.wall, c.n, note)
			if col == colTadpole && c.hqNs > 0 {
				fmt.Fprintf(out, "  %-12s per event: %.1f CPU ns of the JVM's other threads over plain's (the agent's "+
					"drain and encoder), %.1f CPU ns of HQ (this process, the whole run)\n", "",
					((c.proc-c.cpu)-(p.proc-p.cpu))/(2*cpr), c.hqNs)
				if c.handover >= 0 {
					fmt.Fprintf(out, "  %-12s traced thread: %.2f wall ns per traced call in handing full buffers over "+
						"(flush0, waits for a free buffer included: the wall it loses while the agent or HQ is behind)\n", "", c.handover/cpr)
				}
			}
		}
		t, ok := added[colTadpole]
		switch {
		case !ok:
		case lost != "":
			fmt.Fprintf(out, "  tadpole: no ratios, HQ did not receive every event\n")
		case t <= 0:
			fmt.Fprintf(out, "  tadpole: no measurable cost over plain\n")
		default:
			fmt.Fprintf(out, "  tadpole: %.1f added ns per traced call on the traced thread (target ≤ 15)", t)
			if a, ok := added[colASM]; ok {
				fmt.Fprintf(out, "; %.1f× cheaper than the ASM agent (target ≥ 4×)", a/t)
			}
			if j, ok := added[colJVMTI]; ok {
				fmt.Fprintf(out, "; %.1f× cheaper than the JVMTI agent (target ≥ 30×)", j/t)
			}
			fmt.Fprintln(out)
		}
	}
	fmt.Fprintln(out)
}
