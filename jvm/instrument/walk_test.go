package instrument

import (
	"errors"
	"testing"
)

func TestDecodeLengths(t *testing.T) {
	for pre := 0; pre < 4; pre++ {
		a := &asm{}
		a.nops(pre)
		ts := a.pos()
		a.op(byte(OpTableswitch)).pad().u4(100).u4(1).u4(3).u4(10).u4(20).u4(30) // 3 cases
		ls := a.pos()
		a.op(byte(OpLookupswitch)).pad().u4(7).u4(2).u4(5).u4(8).u4(9).u4(12)
		wi := a.pos()
		a.op(byte(OpWide), byte(OpIinc)).u2(300).u2(5)
		wl := a.pos()
		a.op(byte(OpWide), byte(OpIload)).u2(300)
		gw := a.pos()
		a.op(byte(OpGotoW)).u4(-gw)
		mn := a.pos()
		a.op(byte(OpMultianewarray)).u2(1).op(2)
		ii := a.pos()
		a.op(byte(OpInvokeinterf)).u2(1).op(1, 0)
		rt := a.pos()
		a.op(byte(OpReturn))
		insns, err := Decode(a.b, nil)
		if err != nil {
			t.Fatalf("pre %d: %v", pre, err)
		}
		want := map[int]int{ts: ls - ts, ls: wi - ls, wi: 6, wl: 4, gw: 5, mn: 4, ii: 5, rt: 1}
		got := map[int]int{}
		for _, in := range insns[pre:] {
			got[in.Off] = in.Len
		}
		for off, n := range want {
			if got[off] != n {
				t.Errorf("pre %d: insn at %d len %d; want %d", pre, off, got[off], n)
			}
		}
		if got := Targets(a.b, insns[pre], nil); len(got) != 4 || got[0] != ts+100 || got[3] != ts+30 {
			t.Errorf("tableswitch targets %v", got)
		}
		if got := Targets(a.b, insns[pre+1], nil); len(got) != 3 || got[0] != ls+7 || got[2] != ls+12 {
			t.Errorf("lookupswitch targets %v", got)
		}
		if got := Targets(a.b, insns[pre+4], nil); len(got) != 1 || got[0] != 0 {
			t.Errorf("goto_w targets %v", got)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		code []byte
		err  error
	}{
		{"bad opcode", []byte{0xca}, ErrBadOpcode},
		{"truncated sipush", []byte{byte(OpSipush), 1}, ErrTruncated},
		{"bad wide", []byte{byte(OpWide), byte(OpNop), 0, 0}, ErrBadWide},
		{"wide truncated", []byte{byte(OpWide)}, ErrTruncated},
		{"tableswitch high<low", (&asm{}).op(byte(OpTableswitch)).pad().u4(0).u4(5).u4(1).b, ErrBadSwitch},
		{"tableswitch huge", (&asm{}).op(byte(OpTableswitch)).pad().u4(0).u4(-1 << 31).u4(1<<31 - 1).b, ErrTruncated},
		{"lookupswitch negative", (&asm{}).op(byte(OpLookupswitch)).pad().u4(0).u4(-1).b, ErrBadSwitch},
		{"lookupswitch huge", (&asm{}).op(byte(OpLookupswitch)).pad().u4(0).u4(1 << 30).b, ErrTruncated},
	} {
		_, err := Decode(tc.code, nil)
		var ce *CodeError
		if !errors.Is(err, tc.err) || !errors.As(err, &ce) {
			t.Errorf("%s: got %v; want %v", tc.name, err, tc.err)
		}
	}
	// Branch into the middle of an instruction.
	code := (&asm{}).op(byte(OpGoto)).u2(4).op(byte(OpSipush)).u2(1).op(byte(OpReturn)).b
	if _, err := Relocate(code, nil, nil); !errors.Is(err, ErrBadBranch) {
		t.Errorf("branch into sipush: %v", err)
	}
}

func TestInvert(t *testing.T) {
	for _, p := range [][2]Opcode{{0x99, 0x9a}, {0x9b, 0x9c}, {0x9d, 0x9e}, {0x9f, 0xa0}, {0xa1, 0xa2}, {0xa3, 0xa4}, {0xa5, 0xa6}, {OpIfnull, OpIfnonnull}} {
		if p[0].invert() != p[1] || p[1].invert() != p[0] {
			t.Errorf("invert %v/%v: %v %v", p[0], p[1], p[0].invert(), p[1].invert())
		}
	}
}
