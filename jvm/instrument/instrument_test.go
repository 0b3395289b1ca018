package instrument

import (
	"bytes"
	"errors"
	"testing"

	"github.com/tadpole-trace/tadpole/jvm/classfile"
)

func newTestInstrumenter(t *testing.T) *Instrumenter {
	t.Helper()
	cfg := DefaultConfig()
	x, err := New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// probeBytes returns the expected probe chunk.
func probeBytes(t *testing.T, p *fakePool, name, desc string, tail []byte, args ...int32) []byte {
	t.Helper()
	ref, _ := p.Methodref("io/tadpole/Probe", name, desc)
	idPush, _ := pushInt(nil, args[0], p)
	line := int32(0)
	if len(args) > 1 {
		line = args[1]
	}
	_, b, err := probe(nil, ref, p, tail, idPush, len(args) > 1, line)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestInstrumentCode(t *testing.T) {
	p := newFakePool()
	p.members[6] = [2]string{"<init>", "()V"}
	a := &asm{}
	a.op(0x1a)                        // 0 iload_0
	a.op(byte(OpIfeq)).u2(5)          // 1 ifeq 6
	a.op(0x04)                        // 4 iconst_1
	a.op(byte(OpIreturn))             // 5 ireturn
	a.op(byte(OpNew)).u2(5)           // 6 new X
	a.op(byte(OpDup))                 // 9
	a.op(byte(OpInvokespecial)).u2(6) // 10
	a.op(byte(OpAthrow))              // 13
	code := a.b
	m := &Method{Class: "a/B", Name: "f", Desc: "(I)I", Access: AccStatic, Code: &Code{
		MaxStack: 2, MaxLocals: 1, Bytecode: code,
		Lines:     [][]LineNumber{{{StartPC: 0, Line: 10}, {StartPC: 6, Line: 12}}},
		LocalVars: [][]LocalVar{{{StartPC: 0, Length: 14, Name: 1, Desc: 2, Index: 0}}},
		HasFrames: true,
		Frames:    []Frame{{Offset: 6, Kind: classfile.FrameSame}},
	}}
	x := newTestInstrumenter(t)
	out, err := x.InstrumentCode(m, 300, 52, p)
	if err != nil {
		t.Fatal(err)
	}
	checkCode(t, out)
	entry := probeBytes(t, p, "enter", EnterDesc, nil, 300)
	exit := probeBytes(t, p, "exit", ExitDesc, nil, 300, 10)
	thrown := probeBytes(t, p, "thrown", ThrownDesc, nil, 300, 12)
	bubble := probeBytes(t, p, "bubble", BubbleDesc, []byte{byte(OpAthrow)}, 300)
	var want []byte
	want = append(want, entry...)
	want = append(want, code[0:1]...)
	e := len(entry)
	newL := e + 6 + len(exit) // start of the new X block
	want = append(want, byte(OpIfeq), 0, byte(newL-(e+1)))
	want = append(want, code[4])
	want = append(want, exit...)
	want = append(want, code[5:13]...)
	want = append(want, thrown...)
	want = append(want, code[13])
	hpc := len(want)
	want = append(want, bubble...)
	if !bytes.Equal(out.Bytecode, want) {
		t.Fatalf("code\n got %x\nwant %x", out.Bytecode, want)
	}
	if out.MaxStack != 4 || out.MaxLocals != 1 {
		t.Errorf("max stack/locals %d/%d", out.MaxStack, out.MaxLocals)
	}
	if len(out.Handlers) != 1 || out.Handlers[0] != (Handler{StartPC: uint16(e), EndPC: uint16(hpc), HandlerPC: uint16(hpc)}) {
		t.Errorf("handlers %v; want catch-all [%d,%d)→%d", out.Handlers, e, hpc, hpc)
	}
	if got := out.Lines[0]; got[0] != (LineNumber{StartPC: uint16(e), Line: 10}) || got[1] != (LineNumber{StartPC: uint16(newL), Line: 12}) {
		t.Errorf("lines %v", got)
	}
	if v := out.LocalVars[0][0]; int(v.StartPC) != e || int(v.StartPC+v.Length) != hpc {
		t.Errorf("local var %+v", v)
	}
	if len(out.Frames) != 2 || out.Frames[0].Offset != newL || out.Frames[1].Offset != hpc ||
		out.Frames[1].Kind != classfile.FrameFull || len(out.Frames[1].Locals) != 0 || len(out.Frames[1].Stack) != 1 {
		t.Errorf("frames %+v", out.Frames)
	}
	// The original is untouched.
	if !bytes.Equal(m.Code.Bytecode, code) || m.Code.Lines[0][0].StartPC != 0 {
		t.Error("input modified")
	}
}

func TestInstrumentLargeIDAndLine(t *testing.T) {
	p := newFakePool()
	code := []byte{byte(OpReturn)}
	m := &Method{Class: "a/B", Name: "f", Desc: "()V", Code: &Code{MaxStack: 0, Bytecode: code}}
	x := newTestInstrumenter(t)
	out, err := x.InstrumentCode(m, 1<<20, 49, p)
	if err != nil {
		t.Fatal(err)
	}
	checkCode(t, out)
	if out.HasFrames || len(out.Frames) != 0 {
		t.Error("frames in a version 49 class")
	}
	idRef, _ := p.Integer(1 << 20)
	lineRef, _ := p.Integer(NoLine)
	// entry: nop nop ldc_w id invokestatic
	if out.Bytecode[2] != byte(OpLdcW) || int(u16(out.Bytecode[3:])) != int(idRef) {
		t.Errorf("entry %x", out.Bytecode[:8])
	}
	if out.Bytecode[8+3] != byte(OpLdcW) || out.Bytecode[8+6] != byte(OpLdcW) || int(u16(out.Bytecode[8+7:])) != int(lineRef) {
		t.Errorf("exit %x", out.Bytecode[8:20])
	}
}

func TestInstrumentConstructor(t *testing.T) {
	p := newFakePool()
	p.members[6] = [2]string{"<init>", "()V"}
	p.members[7] = [2]string{"<init>", "(La/X;)V"}
	p.members[8] = [2]string{"f", "J"}
	a := &asm{}
	a.op(byte(OpAload0))              // 0
	a.op(byte(OpNew)).u2(5)           // 1
	a.op(byte(OpDup))                 // 4
	a.op(byte(OpInvokespecial)).u2(6) // 5 X.<init>
	a.op(byte(OpInvokespecial)).u2(7) // 8 super(X)
	a.op(byte(OpAload0))              // 11
	a.op(0x0a)                        // 12 lconst_1
	a.op(byte(OpPutfield)).u2(8)      // 13
	a.op(byte(OpReturn))              // 16
	m := &Method{Class: "a/B", Name: "<init>", Desc: "()V", Code: &Code{
		MaxStack: 3, MaxLocals: 1, Bytecode: a.b, HasFrames: true,
	}}
	x := newTestInstrumenter(t)
	out, err := x.InstrumentCode(m, 1, 61, p)
	if err != nil {
		t.Fatal(err)
	}
	checkCode(t, out)
	entry := probeBytes(t, p, "enter", EnterDesc, nil, 1)
	if !bytes.Equal(out.Bytecode[:11], a.b[:11]) || !bytes.Equal(out.Bytecode[11:11+len(entry)], entry) {
		t.Fatalf("entry not after super(): %x", out.Bytecode)
	}
	h := out.Handlers[len(out.Handlers)-1]
	if int(h.StartPC) != 11+len(entry) || h.CatchType != 0 {
		t.Errorf("catch-all %+v", h)
	}

	// A conditional argument to super(): both paths reach the one call.
	b := &asm{}
	b.op(byte(OpAload0), 0x1b)        // aload_0 iload_1
	b.op(byte(OpIfeq)).u2(7)          // ifeq +7
	b.op(opAconstNull)                // aconst_null
	b.op(byte(OpGoto)).u2(4)          // goto +4
	b.op(opAconstNull)                // aconst_null
	b.op(byte(OpInvokespecial)).u2(7) // super(X)
	b.op(byte(OpReturn))
	m.Code = &Code{MaxStack: 3, MaxLocals: 2, Bytecode: b.b, HasFrames: true,
		Frames: []Frame{{Offset: 9, Kind: classfile.FrameSameLocals1, Stack: []VType{{Tag: classfile.VUninitializedThis}}}, {Offset: 10, Kind: classfile.FrameFull}}}
	out, err = x.InstrumentCode(m, 1, 61, p)
	if err != nil {
		t.Fatalf("branch before super: %v", err)
	}
	checkCode(t, out)
	if !bytes.Equal(out.Bytecode[:13], b.b[:13]) || !bytes.Equal(out.Bytecode[13:13+len(entry)], entry) {
		t.Errorf("entry not after super(): %x", out.Bytecode)
	}
	if h := out.Handlers[len(out.Handlers)-1]; int(h.StartPC) != 13+len(entry) {
		t.Errorf("catch-all %+v", h)
	}
	// Paths with different stacks at the call, a return before super(), a
	// throw on one path (allowed: no probe has run), several super() calls.
	for _, tc := range []struct {
		name string
		code []byte
		ok   bool
	}{
		{"stacks differ", (&asm{}).op(byte(OpAload0), 0x1b).op(byte(OpIfeq)).u2(4).op(opAconstNull).op(byte(OpInvokespecial)).u2(6).op(byte(OpReturn)).b, false},
		{"return first", (&asm{}).op(0x1b).op(byte(OpIfeq)).u2(4).op(byte(OpReturn)).op(byte(OpAload0)).op(byte(OpInvokespecial)).u2(6).op(byte(OpReturn)).b, false},
		{"throw first", (&asm{}).op(0x1b).op(byte(OpIfeq)).u2(5).op(opAconstNull, byte(OpAthrow)).op(byte(OpAload0)).op(byte(OpInvokespecial)).u2(6).op(byte(OpReturn)).b, true},
		{"two calls", (&asm{}).op(byte(OpAload0), 0x1b).op(byte(OpIfeq)).u2(6).op(byte(OpInvokespecial)).u2(6).op(byte(OpReturn)).op(byte(OpInvokespecial)).u2(6).op(byte(OpReturn)).b, false},
	} {
		m.Code = &Code{MaxStack: 3, MaxLocals: 2, Bytecode: tc.code}
		out, err := x.InstrumentCode(m, 1, 49, p)
		if tc.ok != (err == nil) || !tc.ok && !errors.Is(err, ErrCtorFlow) {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if tc.ok {
			checkCode(t, out)
			thrown, _ := p.Methodref("io/tadpole/Probe", "thrown", ThrownDesc)
			if bytes.Contains(out.Bytecode, []byte{byte(OpInvokestatic), byte(thrown >> 8), byte(thrown)}) {
				t.Errorf("%s: thrown probe before super(): %x", tc.name, out.Bytecode)
			}
		}
	}
	// No super() call at all.
	m.Code = &Code{MaxStack: 1, Bytecode: []byte{byte(OpAload0), byte(OpPop), byte(OpReturn)}}
	if _, err := x.InstrumentCode(m, 1, 49, p); !errors.Is(err, ErrCtorFlow) {
		t.Errorf("no super: %v", err)
	}
}

const opAconstNull = 0x01

func TestInstrumentJsr(t *testing.T) {
	p := newFakePool()
	a := &asm{}
	a.op(byte(OpJsr)).u2(4) // 0 jsr 4
	a.op(byte(OpReturn))    // 3
	a.op(byte(OpAstore), 1) // 4 astore 1
	a.op(byte(OpRet), 1)    // 6 ret 1
	m := &Method{Class: "a/B", Name: "f", Desc: "()V", Access: AccStatic | AccSynchronized, Code: &Code{
		MaxStack: 1, MaxLocals: 2, Bytecode: a.b,
	}}
	x := newTestInstrumenter(t)
	out, err := x.InstrumentCode(m, 2, 46, p)
	if err != nil {
		t.Fatal(err)
	}
	insns := checkCode(t, out)
	for _, in := range insns {
		if in.Op == OpJsr {
			if ts := Targets(out.Bytecode, in, nil); out.Bytecode[ts[0]] != byte(OpAstore) {
				t.Errorf("jsr lands on %v", Opcode(out.Bytecode[ts[0]]))
			}
		}
	}
}

func TestInstrumentNoStackMap(t *testing.T) {
	code, _ := sampleCode()
	m := &Method{Class: "a/B", Name: "f", Desc: "(I)V", Access: AccStatic, Code: &Code{MaxStack: 1, MaxLocals: 1, Bytecode: code}}
	x := newTestInstrumenter(t)
	if _, err := x.InstrumentCode(m, 2, 52, newFakePool()); !errors.Is(err, ErrNoStackMap) {
		t.Errorf("got %v; want ErrNoStackMap", err)
	}
	// Straight-line code gets a table with the handler's frame.
	m.Code = &Code{MaxStack: 0, Bytecode: []byte{byte(OpReturn)}}
	out, err := x.InstrumentCode(m, 2, 52, newFakePool())
	if err != nil || !out.HasFrames || len(out.Frames) != 1 {
		t.Errorf("straight-line: %v %+v", err, out)
	}
}

func TestInstrumentUninitializedFrame(t *testing.T) {
	p := newFakePool()
	p.members[6] = [2]string{"<init>", "(I)V"}
	a := &asm{}
	a.op(byte(OpNew)).u2(5)           // 0 new X
	a.op(byte(OpDup))                 // 3
	a.op(0x1a)                        // 4 iload_0
	a.op(byte(OpIfeq)).u2(7)          // 5 ifeq 12
	a.op(0x04)                        // 8 iconst_1
	a.op(byte(OpGoto)).u2(4)          // 9 goto 13
	a.op(0x03)                        // 12 iconst_0
	a.op(byte(OpInvokespecial)).u2(6) // 13
	a.op(0xb0)                        // 16
	u := VType{Tag: classfile.VUninitialized, Index: 0}
	m := &Method{Class: "a/B", Name: "f", Desc: "(I)La/X;", Access: AccStatic, Code: &Code{
		MaxStack: 3, MaxLocals: 1, Bytecode: a.b, HasFrames: true,
		Frames: []Frame{
			{Offset: 12, Kind: classfile.FrameFull, Locals: []VType{{Tag: classfile.VInteger}}, Stack: []VType{u, u}},
			{Offset: 13, Kind: classfile.FrameFull, Locals: []VType{{Tag: classfile.VInteger}}, Stack: []VType{u, u, {Tag: classfile.VInteger}}},
		},
	}}
	x := newTestInstrumenter(t)
	out, err := x.InstrumentCode(m, 2, 52, p)
	if err != nil {
		t.Fatal(err)
	}
	checkCode(t, out)
	newAt := int(out.Frames[0].Stack[0].Index)
	if Opcode(out.Bytecode[newAt]) != OpNew || newAt == 0 {
		t.Errorf("uninitialized → %d (%v)", newAt, Opcode(out.Bytecode[newAt]))
	}
	if m.Code.Frames[0].Stack[0].Index != 0 {
		t.Error("input frame modified")
	}
}

func TestSignature(t *testing.T) {
	for _, tc := range []struct {
		class, name, desc string
		access            int
		want              string
	}{
		{"com/ex/Main", "main", "([Ljava/lang/String;)V", 9, "com/ex/Main.main;9;([Ljava/lang/String;)V"},
		{"com/codedx/invokeamethod/Main", "<init>", "()V", 1, "com/codedx/invokeamethod/Main.<init>;1;()V"},
		{"a/B$C", "f", "(IJ)Ljava/lang/Object;", ASMAccess(1, true, true), "a/B$C.f;135169;(IJ)Ljava/lang/Object;"},
	} {
		if got := Signature(tc.class, tc.name, tc.access, tc.desc); got != tc.want {
			t.Errorf("got %q; want %q", got, tc.want)
		}
	}
}

func TestMethodSlots(t *testing.T) {
	for _, tc := range []struct {
		desc      string
		args, ret int
		ok        bool
	}{
		{"()V", 0, 0, true},
		{"(IJ[DLa/B;D)J", 1 + 2 + 1 + 1 + 2, 2, true},
		{"([[J)[J", 1, 1, true},
		{"(L;)V", 0, 0, false},
		{"(I", 0, 0, false},
		{"(I)", 0, 0, false},
		{"(Q)V", 0, 0, false},
	} {
		a, r, ok := methodSlots(tc.desc)
		if ok != tc.ok || ok && (a != tc.args || r != tc.ret) {
			t.Errorf("%s: %d %d %v; want %d %d %v", tc.desc, a, r, ok, tc.args, tc.ret, tc.ok)
		}
	}
}

// TestTrampoline: a conditional branch pushed out of range where its
// fall-through has no frame jumps to a goto_w trampoline placed after a
// return, with a full frame copied from the target's.
func TestTrampoline(t *testing.T) {
	const n = 32755
	a := &asm{}
	a.op(0x1a)                   // 0 iload_0
	a.op(byte(OpIfeq)).u2(0)     // 1 ifeq L (patched)
	a.op(0x1a)                   // 4 iload_0  (fall-through: no frame)
	a.op(byte(OpIfeq + 1)).u2(4) // 5 ifne 9
	a.op(byte(OpReturn))         // 8 return
	a.nops(n)                    // 9… (frame at 9)
	a.op(byte(OpReturn))         // return: its exit probe pushes L out of range
	l := a.pos()
	a.op(byte(OpReturn)) // L
	a.b[2], a.b[3] = byte((l-1)>>8), byte(l-1)
	ints := []VType{{Tag: classfile.VInteger}}
	m := &Method{Class: "a/B", Name: "f", Desc: "(I)V", Access: AccStatic, Code: &Code{
		MaxStack: 1, MaxLocals: 1, Bytecode: a.b, HasFrames: true,
		Frames: []Frame{
			{Offset: 9, Kind: classfile.FrameSame},
			{Offset: l, Kind: classfile.FrameAppend, Locals: []VType{{Tag: classfile.VFloat}}},
		},
	}}
	m.Code.MaxLocals = 2
	x := newTestInstrumenter(t)
	out, err := x.InstrumentCode(m, 7, 52, newFakePool())
	if err != nil {
		t.Fatal(err)
	}
	insns := checkCode(t, out)
	tr := x.layout.Trampolines()
	if len(tr) != 1 || tr[0].At != 9 || tr[0].Target != l {
		t.Fatalf("trampolines %+v", tr)
	}
	var ifeq Insn
	for _, in := range insns {
		if in.Op == OpIfeq {
			ifeq = in
		}
	}
	if got := Targets(out.Bytecode, ifeq, nil)[0]; got != tr[0].Pos || Opcode(out.Bytecode[got+3]) != OpGotoW {
		t.Errorf("ifeq goes to %d; trampoline at %d", got, tr[0].Pos)
	}
	lNew, _ := x.layout.Start(l)
	if g := Targets(out.Bytecode, Insn{Off: tr[0].Pos + 3, Op: OpGotoW, Len: 5}, nil)[0]; g != lNew {
		t.Errorf("trampoline jumps to %d; want %d", g, lNew)
	}
	want := []Frame{
		{Offset: tr[0].Pos, Kind: classfile.FrameFull, Locals: []VType{ints[0], {Tag: classfile.VFloat}}},
		{Offset: tr[0].Pos + trampLen, Kind: classfile.FrameFull, Locals: ints},
		{Offset: lNew, Kind: classfile.FrameAppend, Locals: []VType{{Tag: classfile.VFloat}}},
	}
	for i, w := range want {
		f := out.Frames[i]
		if f.Offset != w.Offset || f.Kind != w.Kind || len(f.Locals) != len(w.Locals) || len(f.Stack) != 0 {
			t.Errorf("frame %d: %+v; want %+v", i, f, w)
			continue
		}
		for k := range w.Locals {
			if f.Locals[k] != w.Locals[k] {
				t.Errorf("frame %d local %d: %+v; want %+v", i, k, f.Locals[k], w.Locals[k])
			}
		}
	}
}

func TestConstructorEndsAtSuper(t *testing.T) {
	p := newFakePool()
	p.members[6] = [2]string{"<init>", "()V"}
	code := (&asm{}).op(byte(OpAload0), byte(OpInvokespecial)).u2(6).b
	m := &Method{Class: "a/B", Name: "<init>", Desc: "()V", Code: &Code{MaxStack: 1, MaxLocals: 1, Bytecode: code}}
	if _, err := newTestInstrumenter(t).InstrumentCode(m, 1, 49, p); !errors.Is(err, ErrCtorFlow) {
		t.Errorf("got %v; want ErrCtorFlow", err)
	}
}
