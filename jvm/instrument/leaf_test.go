package instrument

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/tadpole-trace/tadpole/jvm/classfile"
)

// leafFakePool is a fakePool with what leaf methods need: Fieldrefs, the
// kinds of ldc constants and the classes of field references.
type leafFakePool struct {
	*fakePool
	plain  map[uint16]bool
	fields map[uint16]string
}

func newLeafFakePool() *leafFakePool {
	return &leafFakePool{fakePool: newFakePool(), plain: map[uint16]bool{}, fields: map[uint16]string{}}
}

func (p *leafFakePool) Fieldref(c, n, d string) (uint16, error) {
	return p.add("F" + c + "." + n + d), nil
}
func (p *leafFakePool) Plain(i uint16) bool         { return p.plain[i] }
func (p *leafFakePool) MemberClass(i uint16) string { return p.fields[i] }

func leafInstrumenter(t *testing.T) *Instrumenter {
	t.Helper()
	cfg := DefaultConfig()
	cfg.PackedWords, cfg.PassThrowable, cfg.Leaves = true, true, true
	x, err := New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// leafLoop is a static int f(int n) with a loop (a same frame at its head)
// and two returns.
func leafLoop() (*asm, *Method) {
	a := &asm{}
	a.op(byte(OpIload), 0)             // 0 iload 0
	a.op(byte(OpIfeq)).u2(10)          // 2 ifeq 12
	a.op(byte(OpIinc), 0, 0xFF)        // 5 iinc 0 -1
	a.op(byte(OpGoto)).u2(-8 & 0xFFFF) // 8 goto 0
	a.op(0x04)                         // 11 iconst_1 (dead)
	a.op(byte(OpIload), 0)             // 12 iload 0
	a.op(byte(OpIreturn))              // 14 ireturn
	a.op(0x03, byte(OpIreturn))        // 15 iconst_0; ireturn (dead)
	m := &Method{Class: "a/B", Name: "f", Desc: "(I)I", Access: AccStatic, Code: &Code{
		MaxStack: 1, MaxLocals: 1, Bytecode: a.b, HasFrames: true,
		Frames: []Frame{{Offset: 0, Kind: classfile.FrameSame}, {Offset: 12, Kind: classfile.FrameSame}},
		Lines:  [][]LineNumber{{{StartPC: 0, Line: 7}, {StartPC: 12, Line: 9}}},
	}}
	return a, m
}

func TestLeafCode(t *testing.T) {
	_, m := leafLoop()
	m.Code.Bytecode = m.Code.Bytecode[:15]
	p := newLeafFakePool()
	x := leafInstrumenter(t)
	out, err := x.InstrumentCode(m, 300, 52, p)
	if err != nil {
		t.Fatal(err)
	}
	insns := checkCode(t, out)
	now, _ := p.Fieldref("io/tadpole/Probe", "now", NowDesc)
	leaf, _ := p.Methodref("io/tadpole/Probe", "leaf", LeafDesc)
	bubble, _ := p.Methodref("io/tadpole/Probe", "bubbleLeaf", LeafBubbleThrowableDesc)
	word, _ := p.Long(Word(KindExit, 300, 9))
	enter, _ := p.Methodref("io/tadpole/Probe", "enter", EnterDesc)
	// Entry: getstatic now; lstore_1. Before the return: lload_1; ldc2_w
	// word; invokestatic leaf. The handler: dup; sipush 300; lload_1;
	// invokestatic bubbleLeaf; athrow.
	wantEntry := binary.BigEndian.AppendUint16([]byte{byte(OpGetstatic)}, now)
	wantEntry = append(wantEntry, byte(opLstore0)+1)
	if !bytes.HasPrefix(out.Bytecode, wantEntry) {
		t.Errorf("entry % x; want % x", out.Bytecode[:4], wantEntry)
	}
	exit := binary.BigEndian.AppendUint16([]byte{byte(opLload0) + 1, byte(OpLdc2W)}, word)
	exit = binary.BigEndian.AppendUint16(append(exit, byte(OpInvokestatic)), leaf)
	exit = append(exit, byte(OpIreturn))
	if !bytes.Contains(out.Bytecode, exit) {
		t.Errorf("no leaf exit % x in % x", exit, out.Bytecode)
	}
	handler := []byte{byte(OpDup), byte(OpSipush), 300 >> 8, 300 & 0xFF, byte(opLload0) + 1}
	handler = binary.BigEndian.AppendUint16(append(handler, byte(OpInvokestatic)), bubble)
	handler = append(handler, byte(OpAthrow))
	if !bytes.HasSuffix(out.Bytecode, handler) {
		t.Errorf("handler % x; want suffix % x", out.Bytecode, handler)
	}
	for _, in := range insns {
		if in.Op == OpInvokestatic && binary.BigEndian.Uint16(out.Bytecode[in.Off+1:]) == enter {
			t.Error("a leaf has an entry probe")
		}
	}
	if out.MaxLocals != 3 || out.MaxStack != 5 {
		t.Errorf("max_locals %d, max_stack %d; want 3, 5", out.MaxLocals, out.MaxStack)
	}
	// Every frame is full, with the tick local (a long at slot 1) after the
	// method's own; the handler's has only the tick.
	if len(out.Frames) != 3 {
		t.Fatalf("frames %+v", out.Frames)
	}
	for i, f := range out.Frames {
		want := []VType{{Tag: classfile.VInteger}, {Tag: classfile.VLong}}
		if i == 2 {
			want = []VType{{Tag: classfile.VTop}, {Tag: classfile.VLong}}
		}
		if f.Kind != classfile.FrameFull || !slices.Equal(f.Locals, want) {
			t.Errorf("frame %d: %+v; want full with locals %v", i, f, want)
		}
	}
	if h := out.Handlers[len(out.Handlers)-1]; int(h.StartPC) != len(wantEntry) {
		t.Errorf("catch-all starts at %d; want after the entry (%d)", h.StartPC, len(wantEntry))
	}
}

// TestLeafWide: a tick local past slot 255 takes wide lstore and lload;
// one at max_locals 65534 would not fit, and the method gets the usual
// probes.
func TestLeafWide(t *testing.T) {
	for _, tc := range []struct {
		locals uint16
		leaf   bool
	}{{300, true}, {maxLeafLocals, true}, {maxLeafLocals + 1, false}, {0xFFFF, false}} {
		_, m := leafLoop()
		m.Code.Bytecode = m.Code.Bytecode[:15]
		m.Code.MaxLocals = tc.locals
		m.Code.Frames = nil
		m.Code.HasFrames = false
		p := newLeafFakePool()
		x := leafInstrumenter(t)
		out, err := x.InstrumentCode(m, 3, 49, p)
		if err != nil {
			t.Fatal(err)
		}
		checkCode(t, out)
		store := []byte{byte(OpWide), byte(opLstore), byte(tc.locals >> 8), byte(tc.locals)}
		if got := bytes.Contains(out.Bytecode, store); got != tc.leaf {
			t.Errorf("max_locals %d: wide lstore %v; want %v: % x", tc.locals, got, tc.leaf, out.Bytecode)
		}
		want := tc.locals
		if tc.leaf {
			want += 2
		}
		if out.MaxLocals != want {
			t.Errorf("max_locals %d → %d; want %d", tc.locals, out.MaxLocals, want)
		}
	}
}

// TestNotLeaf: each instruction that calls, throws or may run a class
// initializer or other code makes a method no leaf.
func TestNotLeaf(t *testing.T) {
	const own, other, plainC, classC = 20, 21, 22, 23
	cases := []struct {
		name string
		body []byte
		leaf bool
	}{
		{"getfield", []byte{0x2a, byte(OpGetfield), 0, 30, 0x57}, true},
		{"own static", []byte{byte(OpGetstatic), 0, own, 0x57}, true},
		{"other static", []byte{byte(OpGetstatic), 0, other, 0x57}, false},
		{"put other static", []byte{0x03, byte(OpPutstatic), 0, other}, false},
		{"ldc int", []byte{byte(OpLdc), plainC, 0x57}, true},
		{"ldc class", []byte{byte(OpLdc), classC, 0x57}, false},
		{"ldc_w class", []byte{byte(OpLdcW), 0, classC, 0x57}, false},
		{"invokevirtual", []byte{0x2a, byte(OpInvokevirtual), 0, 31}, false},
		{"invokestatic", []byte{byte(OpInvokestatic), 0, 32}, false},
		{"allowed invokestatic", []byte{0x03, 0x04, byte(OpInvokestatic), 0, 34, 0x57}, true},
		{"new", []byte{byte(OpNew), 0, 33, 0x57}, false},
		{"athrow", []byte{0x01, byte(OpAthrow)}, false},
	}
	for _, tc := range cases {
		p := newLeafFakePool()
		p.fields[own], p.fields[other] = "a/B", "a/C"
		p.plain[plainC] = true
		p.members[30] = [2]string{"f", "I"}
		p.members[31] = [2]string{"g", "()V"}
		p.members[32] = [2]string{"h", "()V"}
		p.members[34] = [2]string{"compare", "(II)I"}
		p.fields[32], p.fields[34] = "a/C", "java/lang/Integer"
		code := append(append([]byte(nil), tc.body...), byte(OpReturn))
		m := &Method{Class: "a/B", Name: "f", Desc: "()V", Code: &Code{MaxStack: 2, MaxLocals: 1, Bytecode: code}}
		x := leafInstrumenter(t)
		x.Config().LeafCalls = func(class, name, desc string) bool {
			return class == "java/lang/Integer" && name == "compare"
		}
		out, err := x.InstrumentCode(m, 3, 49, p)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := out.MaxLocals == 3; got != tc.leaf {
			t.Errorf("%s: leaf %v; want %v", tc.name, got, tc.leaf)
		}
		// A pool that cannot name the tick field: no leaves.
		out, err = x.InstrumentCode(m, 3, 49, p.fakePool)
		if err != nil || out.MaxLocals != 1 {
			t.Errorf("%s without a leaf pool: %v, max_locals %d", tc.name, err, out.MaxLocals)
		}
	}
}

func TestLeafConfig(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Leaves = true
	if _, err := New(&cfg); !errors.Is(err, ErrConfig) {
		t.Errorf("Leaves without PackedWords: %v", err)
	}
	cfg.PackedWords, cfg.Leaf = true, ""
	if _, err := New(&cfg); !errors.Is(err, ErrConfig) {
		t.Errorf("Leaves without a probe name: %v", err)
	}
}
