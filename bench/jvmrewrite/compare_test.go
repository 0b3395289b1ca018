package jvmrewrite

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/jdkcorpus"
	"github.com/tadpole-trace/tadpole/internal/testpeers"
	"github.com/tadpole-trace/tadpole/jvm/instrument"
)

// Rounds of the comparison: ASM's JIT warms up first.
const (
	compareWarmup = 5
	compareRounds = 5
)

// processCPU returns the CPU time of this process (all threads, GC included).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestCompareASM rewrites the same sample of JDK classes with this package
// and with ASM 9.4 doing the Bytefrog agent's transformation
// (AsmBench.java: ClassReader EXPAND_FRAMES →
// AdviceAdapter → ClassWriter COMPUTE_MAXS, in one warmed-up JVM), and prints
// the median and best ns per class, wall and process CPU, with the ratio.
func TestCompareASM(t *testing.T) {
	if testing.Short() {
		t.Skip("comparison skipped in -short mode")
	}
	jdkcorpus.Require(t)
	testpeers.RequireTools(t, "javac", "java")
	javac, java := "javac", "java"
	asmCP := requireASM(t)
	sample, err := jdkcorpus.Sample(benchSample)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rec := filepath.Join(dir, "sample.rec")
	f, err := os.Create(rec)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	size := 0
	for _, b := range sample {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(b)))
		w.Write(n[:])
		w.Write(b)
		size += len(b)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	run(t, javac, "-cp", asmCP, "-d", dir, "AsmBench.java")

	cfg := instrument.DefaultConfig()
	cfg.Exclude = nil
	x, err := instrument.New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	goRound := func() (wall, cpu float64) {
		c0, t0 := processCPU(), time.Now()
		for _, b := range sample {
			if _, _, err := x.InstrumentClass(b); err != nil {
				t.Fatal(err)
			}
		}
		return float64(time.Since(t0).Nanoseconds()) / float64(len(sample)),
			float64((processCPU() - c0).Nanoseconds()) / float64(len(sample))
	}
	goRound()
	var goWall, goCPU []float64
	for i := 0; i < compareRounds; i++ {
		w, c := goRound()
		goWall, goCPU = append(goWall, w), append(goCPU, c)
	}

	out, _ := run(t, java, "-Xmx1g", "-cp", dir+string(os.PathListSeparator)+asmCP, "AsmBench", rec,
		strconv.Itoa(compareWarmup), strconv.Itoa(compareRounds))
	var asmWall, asmCPU []float64
	for _, l := range strings.Split(out, "\n") {
		var w, c float64
		if n, _ := fmt.Sscanf(l, "round %g %g", &w, &c); n == 2 {
			asmWall, asmCPU = append(asmWall, w), append(asmCPU, c)
		}
	}
	if len(asmWall) != compareRounds {
		t.Fatalf("AsmBench output:\n%s", out)
	}
	var fails int
	fmt.Sscanf(out[strings.LastIndex(out, "failures"):], "failures %d", &fails)
	if fails > len(sample)/20 {
		t.Errorf("ASM failed on %d of %d classes: the yardstick is not doing the work", fails, len(sample))
	}
	med := func(v []float64) float64 { s := slices.Clone(v); slices.Sort(s); return s[len(s)/2] }
	best := func(v []float64) float64 { return slices.Min(v) }
	mb := float64(size) / float64(len(sample)) / 1e6
	t.Logf("%d JDK classes, %.1f KB average", len(sample), mb*1e3)
	t.Logf("%-22s %12s %12s %12s %10s", "ns/class", "median wall", "best wall", "median cpu", "MB/s")
	t.Logf("%-22s %12.0f %12.0f %12.0f %10.1f", "tadpole jvm/instrument", med(goWall), best(goWall), med(goCPU), mb/(med(goWall)/1e9))
	t.Logf("%-22s %12.0f %12.0f %12.0f %10.1f", "ASM 9.4 AdviceAdapter", med(asmWall), best(asmWall), med(asmCPU), mb/(med(asmWall)/1e9))
	t.Logf("ratio ASM/tadpole: median wall %.2fx, best wall %.2fx, median cpu %.2fx (>1: tadpole faster); %s",
		med(asmWall)/med(goWall), best(asmWall)/best(goWall), med(asmCPU)/med(goCPU), strings.TrimSpace(out[strings.LastIndex(out, "failures"):]))
}

// benchSample is how many JDK classes the comparison rewrites.
const benchSample = 2000

// asmJars are the Debian libasm-java jars AsmBench needs.
var asmJars = []string{"asm-9.4.jar", "asm-tree-9.4.jar", "asm-analysis-9.4.jar", "asm-util-9.4.jar", "asm-commons-9.4.jar"}

func requireASM(t *testing.T) string {
	t.Helper()
	var cp []string
	for _, j := range asmJars {
		p := filepath.Join("/usr/share/java", j)
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("ASM 9.4 needed under CI=true (apt-get install libasm-java): %v", err)
			}
			t.Skipf("ASM 9.4 not installed: %v", err)
		}
		cp = append(cp, p)
	}
	return strings.Join(cp, string(os.PathListSeparator))
}

func run(t *testing.T, name string, args ...string) (stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, o.String(), e.String())
	}
	return o.String(), e.String()
}
