package instrument

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/tadpole-trace/tadpole/jvm/classfile"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// requireTool returns the path of a JDK tool, skipping the test when it is
// missing (failing under CI=true).
func requireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s needed under CI=true: %v", name, err)
		}
		t.Skipf("%s not installed", name)
	}
	return p
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

// instrumentDir instruments every class file under src into dst (classes
// left alone are copied) and returns the results by class.
func instrumentDir(t *testing.T, x *Instrumenter, src, dst string) map[string]*ClassResult {
	t.Helper()
	results := map[string]*ClassResult{}
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".class") {
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
		results[res.Class] = res
		if out == nil {
			out = b
		}
		rel, _ := filepath.Rel(src, p)
		q := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(q), 0o755); err != nil {
			return err
		}
		return os.WriteFile(q, out, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return results
}

// TestProgramVerifies compiles the test program, instruments all its classes
// and runs it under -Xverify:all: same output as uninstrumented, and the
// probe helper finds entries = exits + bubbles, with matching ids, on every
// thread.
func TestProgramVerifies(t *testing.T) {
	javac := requireTool(t, "javac")
	java := requireTool(t, "java")
	dir := t.TempDir()
	classes := filepath.Join(dir, "classes")
	srcs, _ := filepath.Glob("testdata/java/tadpole/test/*.java")
	run(t, javac, append([]string{"-g", "-d", classes}, srcs...)...)
	// A version 48 class with jsr/ret subroutines, written with ASM.
	asmCP := requireASM(t)
	gen := filepath.Join(dir, "gen")
	run(t, javac, "-cp", asmCP, "-d", gen, "testdata/java/jsrgen/JsrGen.java")
	run(t, java, "-cp", gen+string(os.PathListSeparator)+asmCP, "JsrGen", classes)
	want, _ := run(t, java, "-cp", classes, "tadpole.test.Main")
	for _, mode := range []struct{ packed, leaves bool }{{false, false}, {true, false}, {true, true}} {
		t.Run(fmt.Sprintf("PackedWords=%v/Leaves=%v", mode.packed, mode.leaves), func(t *testing.T) {
			out := filepath.Join(dir, fmt.Sprintf("out-%v-%v", mode.packed, mode.leaves))
			programVerifies(t, java, classes, out, want, mode.packed, mode.leaves)
		})
	}
}

// programVerifies instruments classes into out, with or without
// PackedWords, and runs the result under -Xverify:all: the same output as
// classes gives, and the helper's stack discipline on every thread.
func programVerifies(t *testing.T, java, classes, out, want string, packed, leaves bool) {
	cfg := DefaultConfig()
	cfg.Helper = "tadpole/test/Probe"
	cfg.PackedWords = packed
	cfg.Leaves = leaves
	cfg.LeafCalls = func(class, name, desc string) bool {
		return class == "java/lang/Integer" || class == "java/lang/Math"
	}
	x, err := New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	results := instrumentDir(t, x, classes, out)
	var n, skipped int
	for _, r := range results {
		for _, m := range r.Methods {
			n++
			if m.Err != nil {
				if !(r.Class == "tadpole/test/Huge" && m.Name == "big" && errors.Is(m.Err, ErrTooLarge)) {
					t.Errorf("%s.%s%s not instrumented: %v", r.Class, m.Name, m.Desc, m.Err)
				}
				skipped++
				t.Logf("skipped %s.%s%s: %v", r.Class, m.Name, m.Desc, m.Err)
				if _, ok := reasonOf(m.Err); !ok {
					t.Errorf("untyped error %v", m.Err)
				}
			}
		}
	}
	t.Logf("%d classes, %d methods, %d skipped", len(results), n, skipped)
	if skipped != 1 && !(leaves && skipped == 0) { // a leaf's probes are shorter: big may fit
		t.Errorf("%d methods skipped; want only Huge.big", skipped)
	}
	if r := results["tadpole/test/Probe"]; r == nil || len(r.Methods) != 0 {
		t.Errorf("helper instrumented: %+v", r)
	}
	if !hasGotoW(t, filepath.Join(out, "tadpole/test/Huge.class"), "loop") {
		t.Error("Huge.loop has no goto_w after instrumentation")
	}
	if r := results["tadpole/test/Jsr"]; r == nil || r.Instrumented() != 3 {
		t.Errorf("jsr class: %+v", r)
	}
	if hasGotoW(t, filepath.Join(classes, "tadpole/test/Huge.class"), "loop") {
		t.Error("Huge.loop already has goto_w before instrumentation")
	}
	// A leaf's probes are a few bytes shorter: cond's branch stays in range.
	if !leaves && !hasGotoW(t, filepath.Join(out, "tadpole/test/Huge.class"), "cond") ||
		hasGotoW(t, filepath.Join(classes, "tadpole/test/Huge.class"), "cond") {
		t.Error("Huge.cond: no trampoline")
	}

	got, stderr := run(t, java, "-Xverify:all", "-Xss4m", "-cp", out, "tadpole.test.Main")
	if got != want {
		t.Errorf("instrumented output %q; want %q", got, want)
	}
	t.Logf("probe report:\n%s", stderr)
	threads := probeThreads(t, stderr)
	if threads["worker-3"] == nil || threads["deep"] == nil || strings.Contains(stderr, "no Jsr class") {
		t.Errorf("probe report incomplete:\n%s", stderr)
	}
	for name, th := range threads {
		if th["depth"] != "0" {
			t.Errorf("thread %s ended with live frames %s", name, th["live"])
		}
	}
	if m := threads["main"]; leaves != (m != nil && m["leaves"] != "0") {
		t.Errorf("leaves %v: main thread's leaf probes %v", leaves, m)
	}
}

// probeThreads parses the probe helper's report: the fields of each
// thread's line by thread name. It fails the test on a BAD line or without
// the OK verdict.
func probeThreads(t *testing.T, stderr string) map[string]map[string]string {
	t.Helper()
	if !strings.Contains(stderr, " OK\n") || strings.Contains(stderr, "BAD") {
		t.Errorf("probe report not OK:\n%s", stderr)
	}
	threads := map[string]map[string]string{}
	for _, l := range strings.Split(stderr, "\n") {
		if !strings.HasPrefix(l, "probe: thread=") {
			continue
		}
		f := map[string]string{}
		for _, kv := range strings.Fields(strings.TrimPrefix(l, "probe: ")) {
			if k, v, ok := strings.Cut(kv, "="); ok {
				f[k] = v
			}
		}
		threads[f["thread"]] = f
	}
	return threads
}

// hasGotoW reports whether method name of the class file at path contains a
// goto_w.
func hasGotoW(t *testing.T, path, name string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := classfile.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Methods {
		m := &c.Methods[i]
		if c.MemberName(m) != name {
			continue
		}
		cc, err := m.Code(c.Pool)
		if err != nil {
			t.Fatal(err)
		}
		insns, err := Decode(cc.Code, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range insns {
			if in.Op == OpGotoW {
				return true
			}
		}
	}
	return false
}
