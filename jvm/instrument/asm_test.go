package instrument

import (
	"bufio"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tadpole-trace/tadpole/internal/jdkcorpus"
)

// asmJars are Debian libasm-java 9.4's jars the checker needs.
var asmJars = []string{"asm-9.4.jar", "asm-tree-9.4.jar", "asm-analysis-9.4.jar", "asm-util-9.4.jar"}

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

// asmFailures runs AsmCheck over a record file and returns its failures
// keyed by "class method" and the number of methods checked.
func asmFailures(t *testing.T, java, cp, records string) (map[string]string, string) {
	t.Helper()
	out, _ := run(t, java, "-Xss8m", "--add-modules", "ALL-SYSTEM", "-cp", cp, "AsmCheck", records)
	fails := map[string]string{}
	summary := ""
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "FAIL "):
			f := strings.SplitN(l, " ", 4)
			if len(f) == 4 {
				fails[f[1]+" "+f[2]] = f[3]
			}
		case strings.HasPrefix(l, "CHECKED "):
			summary = l
		}
	}
	if summary == "" {
		t.Fatalf("AsmCheck printed no summary:\n%s", out)
	}
	return fails, summary
}

// TestASMAnalyzer instruments the whole JDK corpus and checks every rewritten
// class with ASM 9.4 (CheckClassAdapter and an Analyzer over SimpleVerifier
// per method). Methods ASM already rejects in the original class (classes it
// cannot load from the test JVM) are not counted against the rewriter.
func TestASMAnalyzer(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-JDK ASM analysis skipped in -short mode")
	}
	jdkcorpus.Require(t)
	javac, java := requireTool(t, "javac"), requireTool(t, "java")
	asmCP := requireASM(t)
	dir := t.TempDir()
	run(t, javac, "-cp", asmCP, "-d", dir, "testdata/java/asmcheck/AsmCheck.java")
	cp := dir + string(os.PathListSeparator) + asmCP

	// The JVM agent's probe shapes (TestJDKWalk covers the default ones):
	// the exception passed, exit and thrown words as long constants.
	cfg := DefaultConfig()
	cfg.Exclude = nil
	cfg.PassThrowable, cfg.PackedWords = true, true
	x, err := New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	origPath, newPath := filepath.Join(dir, "orig.rec"), filepath.Join(dir, "new.rec")
	of, _ := os.Create(origPath)
	nf, _ := os.Create(newPath)
	ow, nw := bufio.NewWriter(of), bufio.NewWriter(nf)
	put := func(w *bufio.Writer, b []byte) {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(b)))
		w.Write(n[:])
		w.Write(b)
	}
	classes := 0
	err = jdkcorpus.Walk(func(path string, b []byte) error {
		out, _, err := x.InstrumentClass(b)
		if err != nil || out == nil {
			return nil
		}
		classes++
		put(ow, b)
		put(nw, out)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []*bufio.Writer{ow, nw} {
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	of.Close()
	nf.Close()
	before, sb := asmFailures(t, java, cp, origPath)
	after, sa := asmFailures(t, java, cp, newPath)
	t.Logf("ASM over %d rewritten classes: original %s; instrumented %s", classes, sb, sa)
	bad := 0
	for k, msg := range after {
		if _, ok := before[k]; ok {
			continue
		}
		bad++
		if bad <= 20 {
			t.Errorf("ASM rejects instrumented %s: %s", k, msg)
		}
	}
	if bad > 0 {
		t.Errorf("%d methods fail ASM analysis only after instrumentation", bad)
	}
}
