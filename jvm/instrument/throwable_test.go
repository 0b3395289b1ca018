package instrument

import (
	"bytes"
	"testing"
)

// TestPassThrowable: with PassThrowable the thrown probe and the handler
// dup the exception and pass it first, and max_stack grows by 3.
func TestPassThrowable(t *testing.T) {
	p := newFakePool()
	p.members[6] = [2]string{"<init>", "()V"}
	a := &asm{}
	a.op(byte(OpNew)).u2(5)           // 0 new X
	a.op(byte(OpDup))                 // 3
	a.op(byte(OpInvokespecial)).u2(6) // 4
	a.op(byte(OpAthrow))              // 7
	m := &Method{Class: "a/B", Name: "f", Desc: "()V", Access: AccStatic, Code: &Code{MaxStack: 2, Bytecode: a.b}}
	cfg := DefaultConfig()
	cfg.PassThrowable = true
	x, err := New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := x.InstrumentCode(m, 9, 49, p)
	if err != nil {
		t.Fatal(err)
	}
	if out.MaxStack != 5 {
		t.Errorf("max stack %d; want 5", out.MaxStack)
	}
	thrownRef, _ := p.Methodref("io/tadpole/Probe", "thrown", ThrownThrowableDesc)
	bubbleRef, _ := p.Methodref("io/tadpole/Probe", "bubble", BubbleThrowableDesc)
	noLine, _ := p.Integer(NoLine) // over sipush: ldc_w
	thrown := []byte{byte(OpDup), byte(OpBipush), 9, byte(OpLdcW), byte(noLine >> 8), byte(noLine),
		byte(OpInvokestatic), byte(thrownRef >> 8), byte(thrownRef)}
	bubble := []byte{byte(OpDup), byte(OpBipush), 9, byte(OpInvokestatic), byte(bubbleRef >> 8), byte(bubbleRef), byte(OpAthrow)}
	if !bytes.Contains(out.Bytecode, append(thrown, byte(OpAthrow))) || !bytes.HasSuffix(out.Bytecode, bubble) {
		t.Errorf("code %x lacks thrown %x before athrow or handler %x", out.Bytecode, thrown, bubble)
	}
}

// fullLongPool is a pool without room for a Long.
type fullLongPool struct{ *fakePool }

func (fullLongPool) Long(int64) (uint16, error) { return 0, ErrTooLarge }

// TestPackedWords: with PackedWords the exit and thrown probes push their
// word, Word(kind, id, line), with one ldc2_w, in chunks of 8 bytes; a pool
// with no room for the Long gets the probes with two ints.
func TestPackedWords(t *testing.T) {
	a := &asm{}
	a.op(0x1a)                 // 0 iload_0
	a.op(byte(OpIfeq)).u2(5)   // 1 ifeq 6
	a.op(byte(OpAload0))       // 4 aload_0 (a Throwable)
	a.op(byte(OpAthrow))       // 5 athrow
	a.op(byte(OpSipush)).u2(7) // 6 sipush 7
	a.op(byte(OpIreturn))      // 9 ireturn
	lines := [][]LineNumber{{{StartPC: 0, Line: 300}, {StartPC: 6, Line: 400}}}
	for _, full := range []bool{false, true} {
		p := newFakePool()
		var pool Pool = p
		if full {
			pool = fullLongPool{p}
		}
		m := &Method{Class: "a/B", Name: "f", Desc: "(Ljava/lang/Throwable;)I", Access: AccStatic, Code: &Code{
			MaxStack: 1, MaxLocals: 1, Bytecode: a.b, Lines: lines}}
		cfg := DefaultConfig()
		cfg.PassThrowable = true
		cfg.PackedWords = true
		x, err := New(&cfg)
		if err != nil {
			t.Fatal(err)
		}
		out, err := x.InstrumentCode(m, 40000, 49, pool)
		if err != nil {
			t.Fatal(err)
		}
		checkCode(t, out)
		if out.MaxStack != 4 {
			t.Errorf("full=%v: max stack %d; want 4", full, out.MaxStack)
		}
		var exit, thrown []byte
		if !full {
			exitRef, _ := p.Methodref("io/tadpole/Probe", "exit", ExitWordDesc)
			thrownRef, _ := p.Methodref("io/tadpole/Probe", "thrown", ThrownThrowableWordDesc)
			ew, _ := p.Long(Word(KindExit, 40000, 400))
			tw, _ := p.Long(Word(KindThrown, 40000, 300))
			exit = []byte{byte(OpNop), byte(OpNop), byte(OpLdc2W), byte(ew >> 8), byte(ew),
				byte(OpInvokestatic), byte(exitRef >> 8), byte(exitRef), byte(OpIreturn)}
			thrown = []byte{byte(OpNop), byte(OpDup), byte(OpLdc2W), byte(tw >> 8), byte(tw),
				byte(OpInvokestatic), byte(thrownRef >> 8), byte(thrownRef), byte(OpAthrow)}
		} else {
			exitRef, _ := p.Methodref("io/tadpole/Probe", "exit", ExitDesc)
			thrownRef, _ := p.Methodref("io/tadpole/Probe", "thrown", ThrownThrowableDesc)
			id, _ := p.Integer(40000)
			exit = []byte{byte(OpNop), byte(OpNop), byte(OpNop), byte(OpLdcW), byte(id >> 8), byte(id),
				byte(OpSipush), 400 >> 8, 400 & 0xFF, byte(OpInvokestatic), byte(exitRef >> 8), byte(exitRef), byte(OpIreturn)}
			thrown = []byte{byte(OpNop), byte(OpNop), byte(OpDup), byte(OpLdcW), byte(id >> 8), byte(id),
				byte(OpSipush), 300 >> 8, 300 & 0xFF, byte(OpInvokestatic), byte(thrownRef >> 8), byte(thrownRef), byte(OpAthrow)}
		}
		if !bytes.Contains(out.Bytecode, exit) || !bytes.Contains(out.Bytecode, thrown) {
			t.Errorf("full=%v: code %x lacks exit %x or thrown %x", full, out.Bytecode, exit, thrown)
		}
	}
	if w := Word(KindExit, 5, 0x1FFFF); w != -1<<48|5<<8|1 { // the line's high bit is the sign bit
		t.Errorf("Word = %#x", w)
	}
	if w := Word(KindThrown, -2, 1); w != 1<<48|-2<<8|2 {
		t.Errorf("Word with a negative id = %#x", w)
	}
}
