package instrument

import (
	"encoding/binary"
	"fmt"
	"testing"
)

// fakePool is a constant pool for hand-built code: members are registered by
// index, appends get fresh indexes from 100 up.
type fakePool struct {
	members map[uint16][2]string
	refs    map[string]uint16
	next    uint16
}

func newFakePool() *fakePool {
	return &fakePool{members: map[uint16][2]string{}, refs: map[string]uint16{}, next: 100}
}

func (p *fakePool) Member(i uint16) (string, string, error) {
	m, ok := p.members[i]
	if !ok {
		return "", "", fmt.Errorf("no member %d", i)
	}
	return m[0], m[1], nil
}

func (p *fakePool) add(key string) uint16 {
	if i, ok := p.refs[key]; ok {
		return i
	}
	p.next++
	p.refs[key] = p.next
	return p.next
}

func (p *fakePool) Methodref(c, n, d string) (uint16, error) {
	return p.add("M" + c + "." + n + d), nil
}
func (p *fakePool) Class(n string) (uint16, error)  { return p.add("C" + n), nil }
func (p *fakePool) Integer(v int32) (uint16, error) { return p.add(fmt.Sprint("I", v)), nil }
func (p *fakePool) Long(v int64) (uint16, error)    { return p.add(fmt.Sprint("J", v)), nil }

// asm builds bytecode.
type asm struct{ b []byte }

func (a *asm) op(bs ...byte) *asm { a.b = append(a.b, bs...); return a }
func (a *asm) u2(v int) *asm      { a.b = binary.BigEndian.AppendUint16(a.b, uint16(v)); return a }
func (a *asm) u4(v int) *asm      { a.b = binary.BigEndian.AppendUint32(a.b, uint32(v)); return a }
func (a *asm) pos() int           { return len(a.b) }
func (a *asm) nops(n int) *asm {
	for ; n > 0; n-- {
		a.b = append(a.b, byte(OpNop))
	}
	return a
}
func (a *asm) pad() *asm { return a.nops(switchPad(len(a.b) - 1)) }

// checkCode decodes code and checks every branch target, handler, line,
// local and frame offset lands on an instruction.
func checkCode(t *testing.T, c *Code) []Insn {
	t.Helper()
	insns, err := Decode(c.Bytecode, nil)
	if err != nil {
		t.Fatalf("decode output: %v", err)
	}
	idx := index(insns, len(c.Bytecode), nil)
	if err := checkTargets(c.Bytecode, insns, idx, nil); err != nil {
		t.Fatalf("output targets: %v", err)
	}
	if err := checkTables(c, idx, len(insns)); err != nil {
		t.Fatalf("output tables: %v", err)
	}
	return insns
}

func targetsOf(code []byte, insns []Insn) map[int][]int {
	m := map[int][]int{}
	for _, in := range insns {
		if ts := Targets(code, in, nil); len(ts) > 0 {
			m[in.Off] = ts
		}
	}
	return m
}
