package instrument

import "encoding/binary"

// Insn is one decoded instruction.
type Insn struct {
	Off  int    // offset of the opcode (of the wide prefix for a wide instruction)
	Len  int    // length in bytes, operands and padding included
	Op   Opcode // the opcode; for wide, the modified opcode
	Wide bool   // wide prefix
}

// Switch operand sizes (JVMS §6.5 tableswitch, lookupswitch).
const (
	switchWord      = 4
	tableHeaderLen  = 3 * switchWord // default, low, high
	lookupHeaderLen = 2 * switchWord // default, npairs
	lookupPairLen   = 2 * switchWord // match, offset
)

// switchPad is the number of padding bytes after a switch opcode at off.
func switchPad(off int) int { return (4 - (off+1)%4) % 4 }

func i32(b []byte) int { return int(int32(binary.BigEndian.Uint32(b))) }
func i16(b []byte) int { return int(int16(binary.BigEndian.Uint16(b))) }
func u16(b []byte) int { return int(binary.BigEndian.Uint16(b)) }

// Decode appends the instructions of code to dst. Branch targets are not
// checked; see checkTargets.
func Decode(code []byte, dst []Insn) ([]Insn, error) {
	for off := 0; off < len(code); {
		op := Opcode(code[off])
		n := int(opLen[op])
		in := Insn{Off: off, Op: op}
		switch n {
		case 0:
			return dst, codeErr(off, ErrBadOpcode, "0x%02x", uint8(op))
		case opVar:
			var err error
			n, err = varLen(code, off, &in)
			if err != nil {
				return dst, err
			}
		}
		if off+n > len(code) {
			return dst, codeErr(off, ErrTruncated, "%v needs %d bytes", op, n)
		}
		in.Len = n
		dst = append(dst, in)
		off += n
	}
	return dst, nil
}

// varLen returns the length of the tableswitch, lookupswitch or wide at off.
func varLen(code []byte, off int, in *Insn) (int, error) {
	switch Opcode(code[off]) {
	case OpWide:
		if off+1 >= len(code) {
			return 0, codeErr(off, ErrTruncated, "wide")
		}
		op := Opcode(code[off+1])
		in.Op, in.Wide = op, true
		switch {
		case op == OpIinc:
			return 6, nil
		case op >= OpIload && op <= OpAload, op >= OpIstore && op <= OpAstore, op == OpRet:
			return 4, nil
		}
		return 0, codeErr(off, ErrBadWide, "wide %v", op)
	case OpTableswitch:
		p := off + 1 + switchPad(off)
		if p+tableHeaderLen > len(code) {
			return 0, codeErr(off, ErrTruncated, "tableswitch header")
		}
		lo, hi := int64(i32(code[p+4:])), int64(i32(code[p+8:]))
		if hi < lo {
			return 0, codeErr(off, ErrBadSwitch, "high %d < low %d", hi, lo)
		}
		// Check the count against the code left before using it.
		if (hi-lo+1)*switchWord > int64(len(code)-p-tableHeaderLen) {
			return 0, codeErr(off, ErrTruncated, "tableswitch of %d entries", hi-lo+1)
		}
		return p - off + tableHeaderLen + int(hi-lo+1)*switchWord, nil
	default: // lookupswitch
		p := off + 1 + switchPad(off)
		if p+lookupHeaderLen > len(code) {
			return 0, codeErr(off, ErrTruncated, "lookupswitch header")
		}
		np := int64(i32(code[p+4:]))
		if np < 0 {
			return 0, codeErr(off, ErrBadSwitch, "npairs %d", np)
		}
		if np*lookupPairLen > int64(len(code)-p-lookupHeaderLen) {
			return 0, codeErr(off, ErrTruncated, "lookupswitch of %d pairs", np)
		}
		return p - off + lookupHeaderLen + int(np)*lookupPairLen, nil
	}
}

// Targets appends the absolute branch targets of in (an instruction of
// code) to dst: one for a branch, default then cases for a switch, none for
// other instructions. ret's target is not static and is not reported.
func Targets(code []byte, in Insn, dst []int) []int {
	if in.Wide {
		return dst
	}
	switch op := in.Op; {
	case op.isBranch16():
		return append(dst, in.Off+i16(code[in.Off+1:]))
	case op == OpGotoW || op == OpJsrW:
		return append(dst, in.Off+i32(code[in.Off+1:]))
	case op == OpTableswitch:
		p := in.Off + 1 + switchPad(in.Off)
		dst = append(dst, in.Off+i32(code[p:]))
		for q := p + tableHeaderLen; q < in.Off+in.Len; q += switchWord {
			dst = append(dst, in.Off+i32(code[q:]))
		}
	case op == OpLookupswitch:
		p := in.Off + 1 + switchPad(in.Off)
		dst = append(dst, in.Off+i32(code[p:]))
		for q := p + lookupHeaderLen; q < in.Off+in.Len; q += lookupPairLen {
			dst = append(dst, in.Off+i32(code[q+switchWord:]))
		}
	}
	return dst
}

// index maps code offsets to instruction indexes: idx[off] is the index of the
// instruction starting at off, -1 inside an instruction; idx[len(code)] is
// len(insns), the end.
func index(insns []Insn, codeLen int, dst []int32) []int32 {
	if cap(dst) < codeLen+1 {
		dst = make([]int32, codeLen+1)
	}
	dst = dst[:codeLen+1]
	for i := range dst {
		dst[i] = -1
	}
	for i, in := range insns {
		dst[in.Off] = int32(i)
	}
	dst[codeLen] = int32(len(insns))
	return dst
}

// at returns the index of the instruction at off, or -1.
func at(idx []int32, off int) int {
	if off < 0 || off >= len(idx) {
		return -1
	}
	return int(idx[off])
}

// checkTargets verifies that every static branch target of insns is the start
// of an instruction of code.
func checkTargets(code []byte, insns []Insn, idx []int32, scratch []int) error {
	for _, in := range insns {
		scratch = Targets(code, in, scratch[:0])
		for _, t := range scratch {
			if i := at(idx, t); i < 0 || i == len(insns) {
				return codeErr(in.Off, ErrBadBranch, "%v to %d", in.Op, t)
			}
		}
	}
	return nil
}
