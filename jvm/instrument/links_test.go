package instrument

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tadpole-trace/tadpole/internal/jdkcorpus"
	"github.com/tadpole-trace/tadpole/jvm/classfile"
)

// breakMaxStack sets max_stack to 1 in the first method that needs more
// (every instrumented method does: an exit probe pushes two ints), which the
// verifier must reject.
func breakMaxStack(b []byte) ([]byte, error) {
	c, err := classfile.Parse(b)
	if err != nil {
		return nil, err
	}
	for i := range c.Methods {
		m := &c.Methods[i]
		cc, err := m.Code(c.Pool)
		if err != nil || cc == nil || cc.MaxStack < 2 {
			continue
		}
		cc.MaxStack = 1
		if err := m.SetCode(c.Pool, cc); err != nil {
			return nil, err
		}
		return c.Bytes()
	}
	return nil, errors.New("no method to break")
}

// TestJDKLinks checks the rewritten stack maps with HotSpot's own verifier:
// every class of every JDK module but java.base is instrumented, patched into
// its module (--patch-module), and linked under -Xverify:all
// (testdata/java/verifyall: Class.forName, then getDeclaredMethods, which
// links). No class may fail verification, or fail to link, that does not in
// the unpatched JDK.
func TestJDKLinks(t *testing.T) {
	if testing.Short() {
		t.Skip("linking the JDK skipped in -short mode")
	}
	corpus := jdkcorpus.Require(t)
	javac, java := requireTool(t, "javac"), requireTool(t, "java")
	dir := t.TempDir()
	tools, patch := filepath.Join(dir, "tools"), filepath.Join(dir, "patch")
	run(t, javac, "-d", tools, "testdata/java/verifyall/VerifyAll.java", "testdata/java/verifyall/tadpole/noop/Probe.java")

	cfg := DefaultConfig()
	cfg.Helper = "tadpole/noop/Probe"
	cfg.Exclude = nil
	x, err := New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	mods, err := os.ReadDir(corpus)
	if err != nil {
		t.Fatal(err)
	}
	var names, argv []string
	var canary string
	rewritten := 0
	for _, m := range mods {
		if !m.IsDir() || m.Name() == "java.base" {
			continue
		}
		src := filepath.Join(corpus, m.Name())
		patched := false
		err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".class") || d.Name() == "module-info.class" {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			names = append(names, strings.ReplaceAll(strings.TrimSuffix(rel, ".class"), string(filepath.Separator), "."))
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out, _, err := x.InstrumentClass(b)
			if err != nil || out == nil {
				return nil
			}
			if canary == "" {
				// One class is written with too small a max_stack: it
				// must fail, proving the patched classes are verified.
				if out, err = breakMaxStack(out); err != nil {
					return err
				}
				canary = names[len(names)-1]
			}
			q := filepath.Join(patch, m.Name(), rel)
			if err := os.MkdirAll(filepath.Dir(q), 0o755); err != nil {
				return err
			}
			rewritten++
			patched = true
			return os.WriteFile(q, out, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
		if patched {
			argv = append(argv, "--patch-module", m.Name()+"="+filepath.Join(patch, m.Name()),
				"--add-reads", m.Name()+"=ALL-UNNAMED")
		}
	}
	sort.Strings(names)
	list := filepath.Join(dir, "classes.txt")
	if err := os.WriteFile(list, []byte(strings.Join(names, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	argfile := filepath.Join(dir, "patch.args")
	if err := os.WriteFile(argfile, []byte(strings.Join(argv, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"-Xverify:all", "-Xshare:off", "--add-modules", "ALL-SYSTEM",
		"-Xbootclasspath/a:" + tools, "-cp", tools}
	linkRun := func(extra ...string) (map[string]string, string) {
		args := append(append(append([]string{}, common...), extra...), "VerifyAll", list)
		out, _ := run(t, java, args...)
		fails := map[string]string{}
		summary := ""
		for _, l := range strings.Split(out, "\n") {
			f := strings.SplitN(l, " ", 3)
			switch {
			case len(f) >= 2 && (f[0] == "VERIFY" || f[0] == "OTHER"):
				fails[f[1]] = l
			case f[0] == "LINKED":
				summary = l
			}
		}
		if summary == "" {
			t.Fatalf("VerifyAll printed no summary:\n%s", out)
		}
		return fails, summary
	}
	before, sb := linkRun()
	after, sa := linkRun("@" + argfile)
	t.Logf("%d classes of %d modules, %d rewritten; unpatched %s; patched %s (one is the canary)", len(names), len(argv)/4, rewritten, sb, sa)
	if !strings.HasPrefix(after[canary], "VERIFY ") {
		t.Errorf("canary %s with max_stack 1 not rejected by the verifier: %q", canary, after[canary])
	}
	delete(after, canary)
	bad := 0
	for n, l := range after {
		// Subclasses of the canary fail with it.
		if _, ok := before[n]; !ok && !strings.Contains(l, strings.ReplaceAll(canary, ".", "/")) {
			if bad++; bad <= 20 {
				t.Errorf("only after instrumentation: %s", l)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d classes fail to link only after instrumentation", bad)
	}
}
