package instrument

import (
	"encoding/binary"
	"sort"
)

// Handler is one exception_table entry.
type Handler struct {
	Start, End, Handler, CatchType uint16
}

// LineNumber is one LineNumberTable entry.
type LineNumber struct {
	Start, Line uint16
}

// LocalVar is one LocalVariableTable or LocalVariableTypeTable entry.
type LocalVar struct {
	Start, Length, Name, Desc, Index uint16
}

// Code is the part of a Code attribute the instrumenter reads and rewrites.
// Lines, LocalVars and LocalVarTypes hold one slice per attribute, in order.
type Code struct {
	MaxStack, MaxLocals uint16
	Bytecode            []byte
	Handlers            []Handler
	Lines               [][]LineNumber
	LocalVars           [][]LocalVar
	LocalVarTypes       [][]LocalVar
	HasFrames           bool    // a StackMapTable attribute is present
	Frames              []Frame // its frames, absolute offsets
}

// Method is one method to instrument.
type Method struct {
	Class  string // internal name of the declaring class
	Name   string
	Desc   string
	Access uint16
	Code   *Code
}

// probeRefs are the constant pool indexes the probes use in one class.
type probeRefs struct {
	enter, exit, thrown, bubble, throwable uint16
}

func (r *probeRefs) resolve(c *Config, pool Pool) error {
	if r.enter != 0 {
		return nil
	}
	var err error
	ref := func(name, desc string) uint16 {
		if err != nil {
			return 0
		}
		var i uint16
		i, err = pool.Methodref(c.Helper, name, desc)
		return i
	}
	r.enter = ref(c.Enter, EnterDesc)
	r.exit = ref(c.Exit, ExitDesc)
	r.thrown = ref(c.Thrown, ThrownDesc)
	r.bubble = ref(c.Bubble, BubbleDesc)
	if err == nil {
		r.throwable, err = pool.Class("java/lang/Throwable")
	}
	if err != nil {
		*r = probeRefs{}
	}
	return err
}

// pushInt appends the shortest instruction pushing v.
func pushInt(dst []byte, v int32, pool Pool) ([]byte, error) {
	switch {
	case v >= -1 && v <= 5:
		return append(dst, byte(int32(OpIconst0)+v)), nil
	case v >= -128 && v <= 127:
		return append(dst, byte(OpBipush), byte(v)), nil
	case v >= -32768 && v <= 32767:
		dst = append(dst, byte(OpSipush))
		return binary.BigEndian.AppendUint16(dst, uint16(v)), nil
	}
	i, err := pool.Integer(v)
	if err != nil {
		return dst, err
	}
	dst = append(dst, byte(OpLdcW)) // an appended constant may not fit ldc's u1 index
	return binary.BigEndian.AppendUint16(dst, i), nil
}

// probe returns a chunk calling method with the int arguments, then tail,
// padded to a multiple of 4 bytes with nops in front (reachable, so no frame
// is needed for them).
func probe(method uint16, pool Pool, tail []byte, args ...int32) ([]byte, error) {
	var body [16]byte
	b := body[:0]
	var err error
	for _, a := range args {
		if b, err = pushInt(b, a, pool); err != nil {
			return nil, err
		}
	}
	b = append(b, byte(OpInvokestatic))
	b = binary.BigEndian.AppendUint16(b, method)
	b = append(b, tail...)
	pad := (4 - len(b)%4) % 4
	out := make([]byte, pad, pad+len(b))
	return append(out, b...), nil
}

// lineTable answers the source line of an offset.
type lineTable []LineNumber

func newLineTable(tables [][]LineNumber) lineTable {
	var t lineTable
	for _, s := range tables {
		t = append(t, s...)
	}
	sort.SliceStable(t, func(i, j int) bool { return t[i].Start < t[j].Start })
	return t
}

// line returns the line of the entry with the greatest start ≤ off, NoLine if none.
func (t lineTable) line(off int) int32 {
	i := sort.Search(len(t), func(i int) bool { return int(t[i].Start) > off })
	if i == 0 {
		return NoLine
	}
	return int32(t[i-1].Line)
}
