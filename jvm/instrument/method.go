package instrument

import (
	"encoding/binary"
	"sort"

	"github.com/tadpole-trace/tadpole/jvm/classfile"
)

// The tables use jvm/classfile's types, so a decoded Code attribute needs no
// copying.
type (
	// Handler is one exception_table entry.
	Handler = classfile.ExceptionEntry
	// LineNumber is one LineNumberTable entry.
	LineNumber = classfile.LineNumber
	// LocalVar is one LocalVariableTable or LocalVariableTypeTable entry.
	LocalVar = classfile.LocalVar
	// Frame is one StackMapTable frame with its absolute offset.
	Frame = classfile.Frame
	// VType is a verification type.
	VType = classfile.VType
)

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
	exitWord, thrownWord                   uint16 // Config.PackedWords: the overloads taking a word
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
	if c.PassThrowable {
		r.thrown = ref(c.Thrown, ThrownThrowableDesc)
		r.bubble = ref(c.Bubble, BubbleThrowableDesc)
	} else {
		r.thrown = ref(c.Thrown, ThrownDesc)
		r.bubble = ref(c.Bubble, BubbleDesc)
	}
	if c.PackedWords {
		r.exitWord = ref(c.Exit, ExitWordDesc)
		if c.PassThrowable {
			r.thrownWord = ref(c.Thrown, ThrownThrowableWordDesc)
		} else {
			r.thrownWord = ref(c.Thrown, ThrownWordDesc)
		}
	}
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

// pushWord appends an ldc2_w of the packed word of a probe of kind
// (Config.PackedWords); ok false when the pool has no room for it.
func pushWord(dst []byte, kind, id, line int32, pool Pool) ([]byte, bool) {
	i, err := pool.Long(Word(kind, id, line))
	if err != nil {
		return dst, false
	}
	dst = append(dst, byte(OpLdc2W))
	return binary.BigEndian.AppendUint16(dst, i), true
}

// probe appends to arena a chunk that pushes id (idPush, from pushInt) and
// the line when withLine, calls method, then runs tail; padded to a multiple
// of 4 bytes with nops in front (reachable, so no frame is needed for them).
// It returns the arena and the chunk.
func probe(arena []byte, method uint16, pool Pool, tail, idPush []byte, withLine bool, line int32) ([]byte, []byte, error) {
	return probeHead(arena, method, pool, nil, tail, idPush, withLine, line)
}

// probeHead is probe with head (a dup of the exception) before the id.
func probeHead(arena []byte, method uint16, pool Pool, head, tail, idPush []byte, withLine bool, line int32) ([]byte, []byte, error) {
	var body [16]byte
	b := append(body[:0], head...)
	b = append(b, idPush...)
	if withLine {
		var err error
		if b, err = pushInt(b, line, pool); err != nil {
			return arena, nil, err
		}
	}
	b = append(b, byte(OpInvokestatic))
	b = binary.BigEndian.AppendUint16(b, method)
	b = append(b, tail...)
	start := len(arena)
	for pad := (4 - len(b)%4) % 4; pad > 0; pad-- {
		arena = append(arena, byte(OpNop))
	}
	arena = append(arena, b...)
	return arena, arena[start:len(arena):len(arena)], nil
}

// lineTable answers the source line of an offset.
type lineTable []LineNumber

func newLineTable(tables [][]LineNumber) lineTable {
	if len(tables) == 1 && sort.SliceIsSorted(tables[0], func(i, j int) bool { return tables[0][i].StartPC < tables[0][j].StartPC }) {
		return tables[0] // read only
	}
	var t lineTable
	for _, s := range tables {
		t = append(t, s...)
	}
	sort.SliceStable(t, func(i, j int) bool { return t[i].StartPC < t[j].StartPC })
	return t
}

// line returns the line of the entry with the greatest start ≤ off, NoLine if none.
func (t lineTable) line(off int) int32 {
	i := sort.Search(len(t), func(i int) bool { return int(t[i].StartPC) > off })
	if i == 0 {
		return NoLine
	}
	return int32(t[i-1].Line)
}
