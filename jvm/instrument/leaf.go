package instrument

import (
	"encoding/binary"

	"github.com/tadpole-trace/tadpole/jvm/classfile"
)

// Leaf methods (Config.Leaves). A method that calls nothing (no invoke or
// invokedynamic, no athrow, nothing that runs a class initializer or a
// bootstrap method) gets no entry probe: its entry reads the helper's tick
// field into a long local added after the method's own, and each return
// calls the leaf probe with that tick and the exit word, which records the
// entry and the exit together. Its catch-all passes the tick to the leaf
// bubble probe, which records the deferred entry before the bubble.

// Probe descriptors of leaf methods.
const (
	LeafDesc                = "(JJ)V"                      // leaf(long t0, long word), before each return
	LeafBubbleDesc          = "(IJ)V"                      // bubbleLeaf(int id, long t0), in the catch-all
	LeafBubbleThrowableDesc = "(Ljava/lang/Throwable;IJ)V" // bubbleLeaf(Throwable t, int id, long t0)
	NowDesc                 = "J"                          // the helper's static tick field
)

const (
	leafStack        = 4          // lload t0 and ldc2_w word, over a return value
	leafHandlerStack = 5          // the exception, its dup, the id, t0
	maxLeafLocals    = 0xFFFF - 2 // the tick local takes two slots

	opLload   Opcode = 0x16
	opLload0  Opcode = 0x1e
	opLstore  Opcode = 0x37
	opLstore0 Opcode = 0x3f
)

// leafPool is what a Pool needs for leaf methods: a Fieldref for the tick,
// and the kind of an ldc's constant.
type leafPool interface {
	// Fieldref returns the index of a CONSTANT_Fieldref, appended if absent.
	Fieldref(class, name, desc string) (uint16, error)
	// Plain reports whether the constant at idx is an Integer, Float,
	// Long, Double or String: loading it runs no code of the program.
	Plain(idx uint16) bool
	// MemberClass returns the class of the Fieldref, Methodref or
	// InterfaceMethodref at idx, "" when idx is none.
	MemberClass(idx uint16) string
}

func (c classPool) Fieldref(class, name, desc string) (uint16, error) {
	return c.p.AddFieldref(class, name, desc)
}

func (c classPool) Plain(i uint16) bool {
	switch c.p.Tag(i) {
	case classfile.TagInteger, classfile.TagFloat, classfile.TagLong, classfile.TagDouble, classfile.TagString:
		return true
	}
	return false
}

// leafRefs are the pool indexes of the leaf probes in one class.
type leafRefs struct {
	now, leaf, bubble uint16
}

func (r *leafRefs) resolve(c *Config, p leafPool, pool Pool) error {
	if r.now != 0 {
		return nil
	}
	now, err := p.Fieldref(c.Helper, c.Now, NowDesc)
	if err != nil {
		return err
	}
	leaf, err := pool.Methodref(c.Helper, c.Leaf, LeafDesc)
	if err != nil {
		return err
	}
	desc := LeafBubbleDesc
	if c.PassThrowable {
		desc = LeafBubbleThrowableDesc
	}
	bubble, err := pool.Methodref(c.Helper, c.LeafBubble, desc)
	if err != nil {
		return err
	}
	*r = leafRefs{now: now, leaf: leaf, bubble: bubble}
	return nil
}

// isLeaf reports whether m's code (decoded as insns) makes it a leaf: it
// calls no method, throws nothing itself, creates no object, touches no
// static field of another class and loads no constant that runs code (each
// of which could run traced code, a class initializer, between its entry
// and its exit, or leave it by athrow), has no subroutines, and has room
// for two more locals.
func isLeaf(m *Method, code []byte, insns []Insn, pool Pool, calls func(class, name, desc string) bool) (leafPool, bool) {
	lp, ok := pool.(leafPool)
	if !ok || m.Code.MaxLocals > maxLeafLocals || m.Name == "<init>" {
		return nil, false
	}
	for _, in := range insns {
		switch in.Op {
		case OpInvokestatic:
			if calls == nil || !leafCall(lp, pool, code, in, calls) {
				return nil, false
			}
		case OpInvokevirtual, OpInvokespecial, OpInvokeinterf, OpInvokedynamic,
			OpAthrow, OpNew, OpJsr, OpJsrW, OpRet:
			return nil, false
		case OpGetstatic, OpPutstatic:
			// The class's own statics: it is initialized (or being
			// initialized by this thread) while its code runs.
			if lp.MemberClass(binary.BigEndian.Uint16(code[in.Off+1:])) != m.Class {
				return nil, false
			}
		case OpLdc:
			if !lp.Plain(uint16(code[in.Off+1])) {
				return nil, false
			}
		case OpLdcW:
			if !lp.Plain(binary.BigEndian.Uint16(code[in.Off+1:])) {
				return nil, false
			}
		}
	}
	return lp, true
}

// leafCall reports whether the invokestatic in is one calls allows.
func leafCall(lp leafPool, pool Pool, code []byte, in Insn, calls func(class, name, desc string) bool) bool {
	i := binary.BigEndian.Uint16(code[in.Off+1:])
	class := lp.MemberClass(i)
	if class == "" {
		return false
	}
	name, desc, err := pool.Member(i)
	return err == nil && calls(class, name, desc)
}

// MemberClass returns the class of the member reference at i, "" when i is none.
func (c classPool) MemberClass(i uint16) string {
	switch c.p.Tag(i) {
	case classfile.TagFieldref, classfile.TagMethodref, classfile.TagInterfaceMethodref:
		class, _, _ := c.p.MemberRef(i)
		return class
	}
	return ""
}

// localOp appends op (lload or lstore) of local l in its shortest form.
func localOp(dst []byte, op Opcode, l int) []byte {
	short := opLload0
	if op == opLstore {
		short = opLstore0
	}
	switch {
	case l <= 3:
		return append(dst, byte(short)+byte(l))
	case l <= 0xFF:
		return append(dst, byte(op), byte(l))
	}
	return binary.BigEndian.AppendUint16(append(dst, byte(OpWide), byte(op)), uint16(l))
}

// padded appends b to arena as a chunk padded to a multiple of 4 bytes with
// nops in front, as probeHead does.
func padded(arena, b []byte) ([]byte, []byte) {
	start := len(arena)
	for pad := (4 - len(b)%4) % 4; pad > 0; pad-- {
		arena = append(arena, byte(OpNop))
	}
	arena = append(arena, b...)
	return arena, arena[start:len(arena):len(arena)]
}

// leafFrames turns frames (valid in their order) into full frames with the
// tick local (a long at slot l) added to each, its locals padded with top
// up to l.
func leafFrames(m *Method, pool Pool, frames []Frame, l int) error {
	init, err := initialLocals(m, pool)
	if err != nil {
		return err
	}
	locals, err := expandLocals(frames, init)
	if err != nil {
		return err
	}
	for i := range frames {
		frames[i].Kind, frames[i].Chop = classfile.FrameFull, 0
		frames[i].Locals = withTick(locals[i], l)
	}
	return nil
}

// withTick returns locals (StackMapTable form) padded with top up to slot l,
// then a long.
func withTick(locals []VType, l int) []VType {
	out := make([]VType, 0, len(locals)+l+1)
	slots := 0
	for _, v := range locals {
		out = append(out, v)
		slots++
		if v.Tag == classfile.VLong || v.Tag == classfile.VDouble {
			slots++
		}
	}
	for ; slots < l; slots++ {
		out = append(out, VType{Tag: classfile.VTop})
	}
	return append(out, VType{Tag: classfile.VLong})
}
