package classfile

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// requireJava returns the java launcher; skips without one unless CI=true.
func requireJava(t *testing.T) string {
	t.Helper()
	java, err := exec.LookPath("java")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("java needed under CI=true: %v", err)
		}
		t.Skipf("java not found: %v", err)
	}
	return java
}

func runJava(t *testing.T, java, dir, main string) string {
	t.Helper()
	cmd := exec.Command(java, "-Xverify:all", "-Xshare:off", "-cp", dir, main)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("java %s in %s: %v\n%s", main, dir, err, stderr.Bytes())
	}
	return string(out)
}

// TestRewrittenClassesRunOnJVM appends constants to javac-built classes,
// decodes and re-encodes every Code attribute, writes them and runs them
// under -Xverify:all: the output must match the original classes' run.
func TestRewrittenClassesRunOnJVM(t *testing.T) {
	java := requireJava(t)
	dir := t.TempDir()
	for _, name := range []string{"Main8", "Sample8", "Sample8$Inner"} {
		b, err := os.ReadFile(filepath.Join("testdata/classes", name+".class"))
		if err != nil {
			t.Fatal(err)
		}
		c, err := Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		p := c.Pool
		for _, add := range []func() (uint16, error){
			func() (uint16, error) { return p.AddMethodref("io/tadpole/Probe", "enter", "(I)V") },
			func() (uint16, error) { return p.AddLong(1 << 40) },
			func() (uint16, error) { return p.AddInteger(123456) },
			func() (uint16, error) { return p.AddString("tadpole") },
		} {
			if _, err := add(); err != nil {
				t.Fatal(err)
			}
		}
		for i := range c.Methods {
			m := &c.Methods[i]
			code, err := m.Code(p)
			if err != nil {
				t.Fatal(err)
			}
			if code == nil {
				continue
			}
			code.Code = bytes.Clone(code.Code)
			if err := m.SetCode(p, code); err != nil {
				t.Fatal(err)
			}
		}
		out, err := c.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if len(out) <= len(b) {
			t.Fatalf("%s: rewritten class is not larger than the original", name)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".class"), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := runJava(t, java, "testdata/classes", "Main8")
	if got := runJava(t, java, dir, "Main8"); got != want {
		t.Errorf("rewritten classes print\n%s\nwant\n%s", got, want)
	}
}

// TestBuiltJsrClassRunsOnJVM assembles a version 49 class whose method
// calls a subroutine twice with jsr/ret (the pre-Java 6 form of finally),
// and runs it under -Xverify:all.
func TestBuiltJsrClassRunsOnJVM(t *testing.T) {
	java := requireJava(t)
	p := NewPool()
	must := func(i uint16, err error) uint16 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	c := &Class{Major: 49, Pool: p, Access: AccPublic | AccSuper}
	c.This = must(p.AddClass("Jsr"))
	c.Super = must(p.AddClass("java/lang/Object"))
	out := must(p.AddFieldref("java/lang/System", "out", "Ljava/io/PrintStream;"))
	println := must(p.AddMethodref("java/io/PrintStream", "println", "(I)V"))
	f := must(p.AddMethodref("Jsr", "f", "(I)I"))
	lnt := must(p.AddUTF8(AttrLineNumberTable))
	// f(x): 0 jsr 8; 3 jsr 8; 6 iload_0; 7 ireturn; 8 astore_1; 9 iinc 0 10; 12 ret 1
	fCode := &Code{MaxStack: 1, MaxLocals: 2,
		Code: []byte{0xa8, 0, 8, 0xa8, 0, 5, 0x1a, 0xac, 0x4c, 0x84, 0, 10, 0xa9, 1},
		Attrs: []CodeAttr{{Name: lnt, Kind: CodeAttrLineNumbers,
			Lines: []LineNumber{{0, 1}, {6, 2}, {8, 3}}}}}
	// main: getstatic out; bipush 22; invokestatic f; invokevirtual println; return
	mainCode := &Code{MaxStack: 2, MaxLocals: 1, Code: []byte{
		0xb2, byte(out >> 8), byte(out), 0x10, 22, 0xb8, byte(f >> 8), byte(f),
		0xb6, byte(println >> 8), byte(println), 0xb1}}
	c.Methods = []Member{
		{Access: AccStatic, Name: must(p.AddUTF8("f")), Desc: must(p.AddUTF8("(I)I"))},
		{Access: AccPublic | AccStatic, Name: must(p.AddUTF8("main")), Desc: must(p.AddUTF8("([Ljava/lang/String;)V"))},
	}
	if err := c.Methods[0].SetCode(p, fCode); err != nil {
		t.Fatal(err)
	}
	if err := c.Methods[1].SetCode(p, mainCode); err != nil {
		t.Fatal(err)
	}
	b, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := roundTrip(b); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Jsr.class"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := runJava(t, java, dir, "Jsr"); got != "42\n" {
		t.Errorf("Jsr printed %q; want \"42\\n\"", got)
	}
}
