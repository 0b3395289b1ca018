package instrument

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tadpole-trace/tadpole/internal/jdkcorpus"
)

// TestJavacVerifies instruments every class of the JDK's jdk.compiler module,
// patches them into the module, and compiles the test program with that
// javac under -Xverify:all: javac works (the program it compiled prints the
// same result), and the probe helper finds entries = exits + bubbles with
// matching ids on every thread. Twice: with the usual probes, and with
// PackedWords and Leaves, as the agent rewrites.
func TestJavacVerifies(t *testing.T) {
	if testing.Short() {
		t.Skip("instrumented javac run skipped in -short mode")
	}
	corpus := jdkcorpus.Require(t)
	for _, leaves := range []bool{false, true} {
		t.Run(fmt.Sprintf("Leaves=%v", leaves), func(t *testing.T) { javacVerifies(t, corpus, leaves) })
	}
}

func javacVerifies(t *testing.T, corpus string, leaves bool) {
	javac, java := requireTool(t, "javac"), requireTool(t, "java")
	dir := t.TempDir()
	probes, patch := filepath.Join(dir, "probes"), filepath.Join(dir, "patch")
	run(t, javac, "-d", probes, "testdata/java/tadpole/test/Probe.java")

	cfg := DefaultConfig()
	cfg.Helper = "tadpole/test/Probe"
	cfg.Exclude = nil
	cfg.PackedWords, cfg.Leaves = leaves, leaves
	x, err := New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(corpus, "jdk.compiler")
	var classes, methods, instrumented int
	mainID := int32(-1)
	err = filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".class") || d.Name() == "module-info.class" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out, res, err := x.InstrumentClass(b)
		if err != nil {
			return err
		}
		classes++
		for _, m := range res.Methods {
			if res.Class == "com/sun/tools/javac/Main" && m.Name == "main" && m.Desc == "([Ljava/lang/String;)V" {
				mainID = m.ID
			}
		}
		methods += len(res.Methods)
		instrumented += res.Instrumented()
		if out == nil {
			return nil
		}
		rel, _ := filepath.Rel(src, p)
		q := filepath.Join(patch, rel)
		if err := os.MkdirAll(filepath.Dir(q), 0o755); err != nil {
			return err
		}
		return os.WriteFile(q, out, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("jdk.compiler: %d classes, %d of %d methods instrumented", classes, instrumented, methods)
	if classes < 1000 || instrumented < methods*9/10 {
		t.Fatalf("too little instrumented")
	}

	srcs, _ := filepath.Glob("testdata/java/tadpole/test/*.java")
	ref, got := filepath.Join(dir, "ref"), filepath.Join(dir, "got")
	run(t, javac, append([]string{"-d", ref}, srcs...)...)
	args := []string{"-Xverify:all", "--patch-module", "jdk.compiler=" + patch,
		"--add-reads", "jdk.compiler=ALL-UNNAMED", "-cp", probes,
		"-m", "jdk.compiler/com.sun.tools.javac.Main", "-d", got}
	_, stderr := run(t, java, append(args, srcs...)...)
	// javac's Main.main ends in System.exit: its frame is the only one still
	// live when the shutdown hook reports.
	threads := probeThreads(t, stderr)
	if th := threads["main"]; th == nil || th["live"] != strconv.Itoa(int(mainID)) {
		t.Errorf("main thread live frames %v; want only javac's Main.main (%d)", th, mainID)
	}
	if m := threads["main"]; leaves != (m != nil && m["leaves"] != "0") {
		t.Errorf("leaves %v: main thread's leaf probes %v", leaves, m)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	t.Logf("instrumented javac: %s", lines[len(lines)-1])
	want, _ := run(t, java, "-cp", ref, "tadpole.test.Main")
	have, _ := run(t, java, "-cp", got, "tadpole.test.Main")
	if have != want {
		t.Errorf("program compiled by instrumented javac prints %q; want %q", have, want)
	}
}
