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
