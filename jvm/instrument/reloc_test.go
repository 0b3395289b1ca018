package instrument

import (
	"bytes"
	"errors"
	"testing"
)

// sample: 0 iload_0; 1 ifeq L; 4 tableswitch …; L: iinc; goto 0 (loop); return.
func sampleCode() (code []byte, retOff int) {
	a := &asm{}
	a.op(0x1a)                // 0 iload_0
	a.op(byte(OpIfeq)).u2(0)  // 1 ifeq → patched
	a.op(0x1a)                // 4 iload_0
	ts := a.pos()             // 5
	a.op(byte(OpTableswitch)) // 5, pad 2
	a.pad()
	swp := a.pos()
	a.u4(0).u4(0).u4(1).u4(0).u4(0)
	l := a.pos()
	a.op(byte(OpIinc), 0, 1)
	g := a.pos()
	a.op(byte(OpGoto)).u2(-g)
	ret := a.pos()
	a.op(byte(OpReturn))
	b := a.b
	b[2], b[3] = 0, byte(ret-1)
	for _, p := range []int{swp, swp + 12, swp + 16} {
		b[p+3] = byte(l - ts)
	}
	return b, ret
}

func TestRelocate(t *testing.T) {
	code, ret := sampleCode()
	nop4 := []byte{0, 0, 0, 0}
	chunks := []Chunk{
		{At: 0, Bytes: bytes.Repeat([]byte{0}, 8)},
		{At: 4, Owned: true, Bytes: nop4},
		{At: ret, Owned: true, Bytes: bytes.Repeat([]byte{0}, 12)},
	}
	l, err := Relocate(code, chunks, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(code) + 24; len(l.Code) != want {
		t.Fatalf("len %d; want %d", len(l.Code), want)
	}
	old, _ := Decode(code, nil)
	nw, _ := Decode(l.Code, nil)
	newTargets := targetsOf(l.Code, nw)
	for _, in := range old {
		ts := Targets(code, in, nil)
		if len(ts) == 0 {
			continue
		}
		p, _ := l.Insn(in.Off)
		got := newTargets[p]
		if len(got) != len(ts) {
			t.Fatalf("insn %d→%d: targets %v; want %d", in.Off, p, got, len(ts))
		}
		for k, o := range ts {
			if w, _ := l.Start(o); got[k] != w {
				t.Errorf("insn %d target %d → %d; want %d", in.Off, o, got[k], w)
			}
		}
	}
	// The loop back to 0 skips the entry chunk; the branch to the return
	// lands on its owned chunk.
	if s, _ := l.Start(0); s != 8 {
		t.Errorf("Start(0) = %d; want 8", s)
	}
	if s, _ := l.Start(ret); s != ret+12 {
		t.Errorf("Start(ret) = %d; want %d", s, ret+12)
	}
	if s, _ := l.End(4); s != 12 {
		t.Errorf("End(4) = %d; want 12", s)
	}
	if s, _ := l.Insn(4); s != 16 {
		t.Errorf("Insn(4) = %d; want 16", s)
	}
	if _, ok := l.Start(2); ok {
		t.Error("Start inside an instruction succeeded")
	}
}

// bigJump returns code: [if<op> or goto] over n nops to a return, then a
// second return; inserting a chunk at the first return pushes the target.
func bigJump(op Opcode, n int) []byte {
	a := &asm{}
	a.op(0x1a)
	a.op(byte(op)).u2(3 + n + 1)
	a.nops(n)
	a.op(byte(OpReturn))
	a.op(byte(OpReturn))
	return a.b
}

func TestWiden(t *testing.T) {
	const n = 32760
	for _, tc := range []struct {
		op    Opcode
		grow  int
		first Opcode
	}{
		{OpGoto, 4, OpNop},
		{OpJsr, 4, OpNop},
		{OpIfeq, 8, OpIfeq + 1},
		{OpIfnull, 8, OpIfnonnull},
	} {
		code := bigJump(tc.op, n)
		ret := 4 + n
		chunk := []Chunk{{At: ret, Owned: true, Bytes: make([]byte, 12)}}
		l, err := Relocate(code, chunk, nil)
		if err != nil {
			t.Fatalf("%v: %v", tc.op, err)
		}
		if len(l.Code) != len(code)+12+tc.grow {
			t.Errorf("%v: len %d; want %d", tc.op, len(l.Code), len(code)+12+tc.grow)
		}
		if Opcode(l.Code[1]) != tc.first {
			t.Errorf("%v: first opcode %v; want %v", tc.op, Opcode(l.Code[1]), tc.first)
		}
		insns, err := Decode(l.Code, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Find the 32-bit jump and check it lands on the second return.
		want := len(l.Code) - 1
		found := false
		for _, in := range insns {
			if in.Op == OpGotoW || in.Op == OpJsrW {
				found = true
				if ts := Targets(l.Code, in, nil); ts[0] != want {
					t.Errorf("%v: wide target %d; want %d", tc.op, ts[0], want)
				}
			}
			if in.Op.isCond() {
				if ts := Targets(l.Code, in, nil); ts[0] != in.Off+condSkip {
					t.Errorf("%v: inverted branch to %d", tc.op, ts[0])
				}
			}
		}
		if !found {
			t.Errorf("%v: no wide jump", tc.op)
		}
		// With a StackMapTable lacking a frame at the fall-through, a
		// conditional cannot be widened.
		_, err = Relocate(code, chunk, func(int) bool { return false })
		if tc.op.isCond() != errors.Is(err, ErrBranchOverflow) {
			t.Errorf("%v with frames: %v", tc.op, err)
		}
	}
	// Backward jump.
	a := &asm{}
	a.op(byte(OpReturn))
	a.nops(32764)
	g := a.pos()
	a.op(byte(OpGoto)).u2(-g)
	l, err := Relocate(a.b, []Chunk{{At: 0, Owned: true, Bytes: make([]byte, 12)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	last, _ := Decode(l.Code[len(l.Code)-5:], nil)
	if last[0].Op != OpGotoW || Targets(l.Code, Insn{Off: len(l.Code) - 5, Op: OpGotoW, Len: 5}, nil)[0] != 0 {
		t.Errorf("backward widen: %v", last)
	}
}

func TestRelocateTooLarge(t *testing.T) {
	code := (&asm{}).nops(65500).op(byte(OpReturn)).b
	_, err := Relocate(code, []Chunk{{At: 0, Bytes: make([]byte, 40)}}, nil)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v; want ErrTooLarge", err)
	}
}

func TestRelocateBadChunk(t *testing.T) {
	code, _ := sampleCode()
	for _, c := range [][]Chunk{
		{{At: 0, Bytes: []byte{0, 0}}},
		{{At: 2, Bytes: make([]byte, 4)}},
		{{At: 4, Bytes: make([]byte, 4)}, {At: 0, Bytes: make([]byte, 4)}},
	} {
		if _, err := Relocate(code, c, nil); !errors.Is(err, ErrBadOffset) {
			t.Errorf("%v: got %v", c, err)
		}
	}
}
