package classfile

import (
	"fmt"
	"strconv"
)

// FrameKind is the form of a stack_map_frame (JVMS §4.7.4).
type FrameKind uint8

// Frame kinds, with their frame_type ranges.
const (
	FrameSame           FrameKind = iota // 0-63 (251 when the delta does not fit)
	FrameSameLocals1                     // 64-127 (247 when the delta does not fit)
	FrameSameLocals1Ext                  // 247
	FrameChop                            // 248-250
	FrameSameExt                         // 251
	FrameAppend                          // 252-254
	FrameFull                            // 255
)

var frameKindNames = [...]string{"same", "same_locals_1_stack_item", "same_locals_1_stack_item_extended",
	"chop", "same_frame_extended", "append", "full_frame"}

func (k FrameKind) String() string {
	if int(k) < len(frameKindNames) {
		return frameKindNames[k]
	}
	return "UNKNOWN_FRAME_KIND_" + strconv.Itoa(int(k))
}

// Frame types bounding the kinds (JVMS §4.7.4).
const (
	frameSameMax        = 63
	frameSameLocals1    = 64
	frameSameLocals1Max = 127
	frameSameLocals1Ext = 247
	frameChopMin        = 248
	frameSameExt        = 251
	frameAppendMax      = 254
	frameFull           = 255
	maxShortDelta       = 63
)

// Frame is a stack map frame with its absolute bytecode offset (the
// decoder sums the offset_delta chain: the first frame is at its delta,
// each next one at previous + delta + 1; the encoder derives the deltas
// back, so rewriters only move Offset).
//
// Kind keeps the frame's original form so that an unchanged table encodes
// to its original bytes; the encoder switches FrameSame and
// FrameSameLocals1 to their extended forms when the delta exceeds 63.
type Frame struct {
	Kind   FrameKind
	Offset int     // absolute bytecode offset
	Chop   int     // FrameChop: number of locals removed, 1-3
	Locals []VType // FrameAppend: the 1-3 locals added; FrameFull: all locals
	Stack  []VType // FrameSameLocals1(Ext): the one stack item; FrameFull: the stack
}

// VTag is a verification_type_info tag.
type VTag uint8

// Verification type tags.
const (
	VTop               VTag = 0
	VInteger           VTag = 1
	VFloat             VTag = 2
	VDouble            VTag = 3
	VLong              VTag = 4
	VNull              VTag = 5
	VUninitializedThis VTag = 6
	VObject            VTag = 7 // Index = Class constant
	VUninitialized     VTag = 8 // Index = offset of the `new` instruction
)

var vtagNames = [...]string{"Top", "Integer", "Float", "Double", "Long", "Null",
	"UninitializedThis", "Object", "Uninitialized"}

func (t VTag) String() string {
	if int(t) < len(vtagNames) {
		return vtagNames[t]
	}
	return "UNKNOWN_VTAG_" + strconv.Itoa(int(t))
}

// VType is a verification type. Index is the Class constant of VObject and
// the bytecode offset of the `new` for VUninitialized; 0 otherwise.
type VType struct {
	Tag   VTag
	Index uint16
}

func (v VType) size() int {
	if v.Tag == VObject || v.Tag == VUninitialized {
		return 3
	}
	return 1
}

// decodeFrames decodes the body of a StackMapTable. All verification types
// share one backing array (each takes at least one byte, so the input
// length bounds their number).
func decodeFrames(r *reader, p *Pool, arena *CodeArena) []Frame {
	n := int(r.u2("number_of_entries"))
	if !r.need(n, "stack map frames") {
		return nil
	}
	frames := alloc(arena.frameSlab(), n)
	vts := alloc(arena.vtypeSlab(), r.remaining())[:0]
	off := -1
	for i := range frames {
		f := &frames[i]
		at := r.pos()
		t := r.u1("frame_type")
		delta := 0
		switch {
		case t <= frameSameMax:
			f.Kind, delta = FrameSame, int(t)
		case t <= frameSameLocals1Max:
			f.Kind, delta = FrameSameLocals1, int(t-frameSameLocals1)
			vts, f.Stack = readVTypes(r, p, vts, 1)
		case t < frameSameLocals1Ext:
			r.failAt(at, ErrBadAttribute, "reserved frame_type "+strconv.Itoa(int(t)))
		case t == frameSameLocals1Ext:
			f.Kind, delta = FrameSameLocals1Ext, int(r.u2("offset_delta"))
			vts, f.Stack = readVTypes(r, p, vts, 1)
		case t < frameSameExt:
			f.Kind, f.Chop, delta = FrameChop, frameSameExt-int(t), int(r.u2("offset_delta"))
		case t == frameSameExt:
			f.Kind, delta = FrameSameExt, int(r.u2("offset_delta"))
		case t <= frameAppendMax:
			f.Kind, delta = FrameAppend, int(r.u2("offset_delta"))
			vts, f.Locals = readVTypes(r, p, vts, int(t)-frameSameExt)
		default:
			f.Kind, delta = FrameFull, int(r.u2("offset_delta"))
			vts, f.Locals = readVTypes(r, p, vts, int(r.u2("number_of_locals")))
			vts, f.Stack = readVTypes(r, p, vts, int(r.u2("number_of_stack_items")))
		}
		if r.err != nil {
			return nil
		}
		off += delta + 1
		if off > maxU2 {
			r.failAt(at, ErrBadAttribute, "frame offset "+strconv.Itoa(off)+" beyond 65535")
			return nil
		}
		f.Offset = off
	}
	return frames
}

func readVTypes(r *reader, p *Pool, vts []VType, n int) ([]VType, []VType) {
	if !r.need(n, "verification types") {
		return vts, nil
	}
	start := len(vts)
	for i := 0; i < n; i++ {
		at := r.pos()
		v := VType{Tag: VTag(r.u1("verification type tag"))}
		switch {
		case v.Tag == VObject:
			v.Index = r.u2("cpool_index")
			if r.err == nil && !p.is(v.Index, TagClass) {
				r.failAt(at, ErrBadConstant, "Object_variable_info is not a Class")
			}
		case v.Tag == VUninitialized:
			v.Index = r.u2("offset")
		case v.Tag > VUninitialized:
			r.failAt(at, ErrBadAttribute, "verification type tag "+strconv.Itoa(int(v.Tag)))
		}
		if r.err != nil {
			return vts, nil
		}
		vts = append(vts, v)
	}
	return vts, vts[start:len(vts):len(vts)]
}

func framesSize(fs []Frame) int {
	n := 2
	prev := -1
	for i := range fs {
		f := &fs[i]
		delta := f.Offset - prev - 1
		prev = f.Offset
		switch f.Kind {
		case FrameSame:
			n++
			if delta > maxShortDelta {
				n += 2
			}
		case FrameSameLocals1:
			n++
			if delta > maxShortDelta {
				n += 2
			}
			n += vtypesSize(f.Stack)
		case FrameSameLocals1Ext:
			n += 3 + vtypesSize(f.Stack)
		case FrameChop, FrameSameExt:
			n += 3
		case FrameAppend:
			n += 3 + vtypesSize(f.Locals)
		default:
			n += 3 + 2 + vtypesSize(f.Locals) + 2 + vtypesSize(f.Stack)
		}
	}
	return n
}

func vtypesSize(vs []VType) int {
	n := 0
	for _, v := range vs {
		n += v.size()
	}
	return n
}

func frameErr(i int, f *Frame, why string) error {
	return fmt.Errorf("%w: stack map frame %d (%v at offset %d): %s", ErrBadAttribute, i, f.Kind, f.Offset, why)
}

// appendFrames encodes a StackMapTable body. Offsets must increase
// strictly, and fit a u2.
func appendFrames(b []byte, fs []Frame) ([]byte, error) {
	if len(fs) > maxU2 {
		return b, tooLarge("number_of_entries", len(fs))
	}
	b = appendU2(b, uint16(len(fs)))
	prev := -1
	for i := range fs {
		f := &fs[i]
		delta := f.Offset - prev - 1
		if delta < 0 || f.Offset > maxU2 {
			return b, frameErr(i, f, "offsets must increase and fit in 16 bits")
		}
		prev = f.Offset
		switch f.Kind {
		case FrameSame:
			if delta <= maxShortDelta {
				b = append(b, byte(delta))
			} else {
				b = append(b, frameSameExt)
				b = appendU2(b, uint16(delta))
			}
		case FrameSameLocals1, FrameSameLocals1Ext:
			if len(f.Stack) != 1 {
				return b, frameErr(i, f, "needs exactly one stack item")
			}
			if f.Kind == FrameSameLocals1 && delta <= maxShortDelta {
				b = append(b, byte(frameSameLocals1+delta))
			} else {
				b = append(b, frameSameLocals1Ext)
				b = appendU2(b, uint16(delta))
			}
			b = appendVTypes(b, f.Stack)
		case FrameChop:
			if f.Chop < 1 || f.Chop > 3 {
				return b, frameErr(i, f, "chops 1 to 3 locals")
			}
			b = append(b, byte(frameSameExt-f.Chop))
			b = appendU2(b, uint16(delta))
		case FrameSameExt:
			b = append(b, frameSameExt)
			b = appendU2(b, uint16(delta))
		case FrameAppend:
			if len(f.Locals) < 1 || len(f.Locals) > 3 {
				return b, frameErr(i, f, "appends 1 to 3 locals")
			}
			b = append(b, byte(frameSameExt+len(f.Locals)))
			b = appendU2(b, uint16(delta))
			b = appendVTypes(b, f.Locals)
		case FrameFull:
			if len(f.Locals) > maxU2 || len(f.Stack) > maxU2 {
				return b, frameErr(i, f, "too many locals or stack items")
			}
			b = append(b, frameFull)
			b = appendU2(b, uint16(delta))
			b = appendU2(b, uint16(len(f.Locals)))
			b = appendVTypes(b, f.Locals)
			b = appendU2(b, uint16(len(f.Stack)))
			b = appendVTypes(b, f.Stack)
		default:
			return b, frameErr(i, f, "unknown kind")
		}
	}
	return b, nil
}

func appendVTypes(b []byte, vs []VType) []byte {
	for _, v := range vs {
		b = append(b, byte(v.Tag))
		if v.Tag == VObject || v.Tag == VUninitialized {
			b = appendU2(b, v.Index)
		}
	}
	return b
}
