package instrument

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tadpole-trace/tadpole/jvm/classfile"
)

func seedClasses(tb testing.TB) map[string][]byte {
	tb.Helper()
	files, err := filepath.Glob("testdata/classes/*.class")
	if err != nil || len(files) == 0 {
		tb.Fatalf("no testdata classes: %v", err)
	}
	m := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		m[filepath.Base(f)] = b
	}
	return m
}

// TestSeedClasses instruments the committed classes: every method but the
// constructor with a branch before super() is instrumented, and the output
// re-parses with valid code.
func TestSeedClasses(t *testing.T) {
	x := newTestInstrumenter(t)
	for name, b := range seedClasses(t) {
		out, res, err := x.InstrumentClass(b)
		if err != nil || out == nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, m := range res.Methods {
			skip := res.Class == "tadpole/test/Derived" && m.Name == "<init>" && m.Desc == "(II)V"
			if skip != (m.Err != nil) || skip && !errors.Is(m.Err, ErrCtorFlow) {
				t.Errorf("%s.%s%s: %v", res.Class, m.Name, m.Desc, m.Err)
			}
		}
		if err := checkClass(out, res); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		// Instrumenting the output again works too (probes are ordinary code).
		if _, _, err := x.InstrumentClass(out); err != nil {
			t.Errorf("%s twice: %v", name, err)
		}
	}
}

// FuzzInstrument: parse → instrument → write never panics; a rewritten class
// re-parses and its instrumented methods have valid code and tables.
func FuzzInstrument(f *testing.F) {
	for _, b := range seedClasses(f) {
		f.Add(b)
	}
	cfg := DefaultConfig()
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := New(&cfg)
		if err != nil {
			t.Fatal(err)
		}
		out, res, err := x.InstrumentClass(b)
		if err != nil || out == nil {
			return
		}
		for _, m := range res.Methods {
			if m.Err != nil {
				if !isTyped(m.Err) {
					t.Fatalf("untyped error %v", m.Err)
				}
			}
		}
		if err := checkClass(out, res); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzRelocate: arbitrary code with a chunk before every return and athrow
// never panics; relocated code decodes with every branch on an instruction.
func FuzzRelocate(f *testing.F) {
	code, _ := sampleCode()
	f.Add(code)
	f.Add(bigJump(OpIfeq, 32760))
	f.Add(bigJump(OpGoto, 32762))
	f.Fuzz(func(t *testing.T, code []byte) {
		insns, err := Decode(code, nil)
		if err != nil {
			return
		}
		var chunks []Chunk
		for i, in := range insns {
			if in.Op.IsReturn() || in.Op == OpAthrow {
				chunks = append(chunks, Chunk{At: in.Off, Owned: i%2 == 0, Bytes: make([]byte, 12)})
			}
		}
		l, err := Relocate(code, chunks, nil)
		if err != nil {
			return
		}
		c := &Code{Bytecode: l.Code}
		checkCode(t, c)
		idx := index(insns, len(code), nil)
		for _, in := range insns {
			if n, _ := l.Insn(in.Off); Opcode(l.Code[n]) != in.Op && !in.Op.isBranch16() && !in.Wide {
				t.Fatalf("insn %d moved to %d is %v, was %v", in.Off, n, Opcode(l.Code[n]), in.Op)
			}
		}
		_ = idx
	})
}

// TestTypeAnnotationsMapped: the offset targets of Code type annotations
// (new, checkcast, instanceof) and local variable ranges follow their
// instructions.
func TestTypeAnnotationsMapped(t *testing.T) {
	b := seedClasses(t)["TypeAnnos.class"]
	x := newTestInstrumenter(t)
	out, _, err := x.InstrumentClass(b)
	if err != nil || out == nil {
		t.Fatal(err)
	}
	annos := func(b []byte) ([]byte, []classfile.TypeAnnotation) {
		c, err := classfile.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		for i := range c.Methods {
			m := &c.Methods[i]
			if c.MemberName(m) != "run" {
				continue
			}
			cc, err := m.Code(c.Pool)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range cc.Attrs {
				if a.Kind == classfile.CodeAttrRaw && isTypeAnnotations(c.Pool, a.Name) {
					as, err := classfile.DecodeTypeAnnotations(a.Data, -1)
					if err != nil {
						t.Fatal(err)
					}
					return cc.Code, as
				}
			}
		}
		t.Fatal("no type annotations in run")
		return nil, nil
	}
	oldCode, oldA := annos(b)
	newCode, newA := annos(out)
	if len(oldA) != len(newA) || len(oldA) < 3 {
		t.Fatalf("%d annotations, then %d", len(oldA), len(newA))
	}
	offsets := 0
	for i := range oldA {
		o, n := oldA[i], newA[i]
		if o.Target.HasOffset() {
			offsets++
			if oldCode[o.Offset] != newCode[n.Offset] || n.Offset <= o.Offset {
				t.Errorf("%v at %d (%v) moved to %d (%v)", o.Target, o.Offset, Opcode(oldCode[o.Offset]), n.Offset, Opcode(newCode[n.Offset]))
			}
		}
		for j, v := range o.LocalVars {
			if nv := n.LocalVars[j]; nv.StartPC <= v.StartPC || nv.Index != v.Index {
				t.Errorf("local %+v → %+v", v, nv)
			}
		}
	}
	if offsets < 3 {
		t.Errorf("%d offset targets; want new, checkcast and instanceof", offsets)
	}
}
