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

// TestSeedClasses instruments the committed classes: every method is
// instrumented, and the output re-parses with valid code.
func TestSeedClasses(t *testing.T) {
	x := newTestInstrumenter(t)
	for name, b := range seedClasses(t) {
		out, res, err := x.InstrumentClass(b)
		if err != nil || out == nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, m := range res.Methods {
			if m.Err != nil {
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
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg := DefaultConfig()
		cfg.PackedWords = len(b)%2 == 1 // either probe shape, by the input
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

// fuzzPool answers every member lookup with a descriptor picked by index.
type fuzzPool struct{ *fakePool }

var fuzzDescs = [][2]string{{"<init>", "()V"}, {"<init>", "(IJ)V"}, {"f", "J"}, {"m", "(Ljava/lang/Object;)I"}, {"g", "[[D"}}

func (p fuzzPool) Member(i uint16) (string, string, error) {
	if i%7 == 6 {
		return "", "", errors.New("no such member")
	}
	d := fuzzDescs[int(i)%len(fuzzDescs)]
	return d[0], d[1], nil
}

// FuzzInstrumentCode: arbitrary bytecode, as a method or a constructor, with
// or without a (single-frame) StackMapTable, never panics; instrumented code
// decodes with every branch and table offset on an instruction.
func FuzzInstrumentCode(f *testing.F) {
	code, _ := sampleCode()
	f.Add(code, false, false)
	f.Add([]byte{byte(OpAload0), byte(OpInvokespecial), 0, 0, byte(OpReturn)}, true, true)
	f.Add([]byte{byte(OpAload0), byte(OpDup), byte(OpPop), byte(OpInvokespecial), 0, 5, byte(OpAthrow)}, true, false)
	f.Add(bigJump(OpIfeq, 32760), false, true)
	x, err := New(nil)
	if err != nil {
		f.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.PackedWords, cfg.PassThrowable = true, true
	xp, err := New(&cfg)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, code []byte, ctor, frames bool) {
		x := x
		if len(code)%2 == 1 { // either probe shape, by the input
			x = xp
		}
		m := &Method{Class: "a/B", Name: "f", Desc: "(I)V", Access: AccStatic, Code: &Code{
			MaxStack: 4, MaxLocals: 2, Bytecode: code,
			Lines: [][]LineNumber{{{StartPC: 0, Line: 1}}},
		}}
		if ctor {
			m.Name, m.Access = "<init>", 0
		}
		major := uint16(49)
		if frames {
			major = 52
			m.Code.HasFrames = true
			if len(code) > 1 {
				m.Code.Frames = []Frame{{Offset: len(code) - 1, Kind: classfile.FrameSame}}
			}
		}
		out, err := x.InstrumentCode(m, 9, major, fuzzPool{newFakePool()})
		if err != nil {
			if !isTyped(err) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		checkCode(t, out)
	})
}
