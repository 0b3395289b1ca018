package instrument

import "encoding/binary"

// VTag is a verification_type_info tag (JVMS §4.7.4).
type VTag uint8

// Verification type tags.
const (
	VTop VTag = iota
	VInteger
	VFloat
	VDouble
	VLong
	VNull
	VUninitializedThis
	VObject        // Index is a CONSTANT_Class index
	VUninitialized // Index is the offset of a new instruction
)

// VType is one verification type.
type VType struct {
	Tag   VTag
	Index uint16 // cpool index (VObject) or code offset (VUninitialized)
}

// FrameKind is the form of a stack map frame, independent of its offset delta.
type FrameKind uint8

// Frame kinds. Same and Same1 choose their short or extended encoding from the
// delta when written.
const (
	FrameSame   FrameKind = iota // same_frame / same_frame_extended
	FrameSame1                   // same_locals_1_stack_item (extended)
	FrameChop                    // chop_frame
	FrameAppend                  // append_frame
	FrameFull                    // full_frame
)

// Frame is one StackMapTable entry with its absolute code offset. Locals holds
// the appended locals (FrameAppend) or all locals (FrameFull); Stack the one
// item (FrameSame1) or the whole stack (FrameFull).
type Frame struct {
	Offset int
	Kind   FrameKind
	Chop   int
	Locals []VType
	Stack  []VType
}

// Frame type byte ranges (JVMS §4.7.4).
const (
	frameSameMax      = 63
	frameSame1Base    = 64
	frameSame1Max     = 127
	frameSame1Ext     = 247
	frameChopBase     = 251 // chop k is 251-k, k = 1..3
	frameSameExt      = 251
	frameAppendBase   = 251 // append k is 251+k, k = 1..3
	frameFull         = 255
	maxFrameLocalsLen = 3
)

// DecodeFrames parses the body of a StackMapTable attribute into frames with
// absolute offsets.
func DecodeFrames(b []byte) ([]Frame, error) {
	if len(b) < 2 {
		return nil, codeErr(0, ErrBadFrames, "no entry count")
	}
	n := u16(b)
	// Each frame takes at least one byte: check before allocating.
	if n > len(b)-2 {
		return nil, codeErr(0, ErrBadFrames, "%d frames in %d bytes", n, len(b))
	}
	frames := make([]Frame, 0, n)
	p, off := 2, -1
	for i := 0; i < n; i++ {
		if p >= len(b) {
			return nil, codeErr(0, ErrBadFrames, "frame %d truncated", i)
		}
		t := int(b[p])
		p++
		var f Frame
		delta := 0
		var err error
		switch {
		case t <= frameSameMax:
			f.Kind, delta = FrameSame, t
		case t <= frameSame1Max:
			f.Kind, delta = FrameSame1, t-frameSame1Base
			f.Stack, p, err = decodeVTypes(b, p, 1)
		case t < frameSame1Ext:
			return nil, codeErr(0, ErrBadFrames, "reserved frame type %d", t)
		default:
			if p+2 > len(b) {
				return nil, codeErr(0, ErrBadFrames, "frame %d truncated", i)
			}
			delta = u16(b[p:])
			p += 2
			switch {
			case t == frameSame1Ext:
				f.Kind = FrameSame1
				f.Stack, p, err = decodeVTypes(b, p, 1)
			case t < frameSameExt:
				f.Kind, f.Chop = FrameChop, frameChopBase-t
			case t == frameSameExt:
				f.Kind = FrameSame
			case t < frameFull:
				f.Kind = FrameAppend
				f.Locals, p, err = decodeVTypes(b, p, t-frameAppendBase)
			default:
				f.Kind = FrameFull
				if p+2 > len(b) {
					return nil, codeErr(0, ErrBadFrames, "frame %d truncated", i)
				}
				f.Locals, p, err = decodeVTypes(b, p+2, u16(b[p:]))
				if err == nil {
					if p+2 > len(b) {
						return nil, codeErr(0, ErrBadFrames, "frame %d truncated", i)
					}
					f.Stack, p, err = decodeVTypes(b, p+2, u16(b[p:]))
				}
			}
		}
		if err != nil {
			return nil, err
		}
		off += delta + 1
		f.Offset = off
		frames = append(frames, f)
	}
	if p != len(b) {
		return nil, codeErr(0, ErrBadFrames, "%d trailing bytes", len(b)-p)
	}
	return frames, nil
}

func decodeVTypes(b []byte, p, n int) ([]VType, int, error) {
	// Each type takes at least one byte: check before allocating.
	if n > len(b)-p {
		return nil, p, codeErr(0, ErrBadFrames, "%d types in %d bytes", n, len(b)-p)
	}
	vs := make([]VType, n)
	for i := range vs {
		if p >= len(b) {
			return nil, p, codeErr(0, ErrBadFrames, "type truncated")
		}
		t := VTag(b[p])
		p++
		switch {
		case t == VObject || t == VUninitialized:
			if p+2 > len(b) {
				return nil, p, codeErr(0, ErrBadFrames, "type truncated")
			}
			vs[i] = VType{Tag: t, Index: binary.BigEndian.Uint16(b[p:])}
			p += 2
		case t < VObject:
			vs[i] = VType{Tag: t}
		default:
			return nil, p, codeErr(0, ErrBadFrames, "verification tag %d", t)
		}
	}
	return vs, p, nil
}

// EncodeFrames appends the body of a StackMapTable attribute for frames,
// which must have strictly increasing offsets, to dst. Each frame keeps its
// kind and takes the shortest encoding its delta allows.
func EncodeFrames(dst []byte, frames []Frame) ([]byte, error) {
	if len(frames) > 0xffff {
		return dst, codeErr(0, ErrTooLarge, "%d frames", len(frames))
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(frames)))
	prev := -1
	for _, f := range frames {
		delta := f.Offset - prev - 1
		if delta < 0 || delta > 0xffff {
			return dst, codeErr(f.Offset, ErrBadFrames, "frame offset delta %d", delta)
		}
		prev = f.Offset
		switch f.Kind {
		case FrameSame:
			if delta <= frameSameMax {
				dst = append(dst, byte(delta))
			} else {
				dst = append(dst, frameSameExt)
				dst = binary.BigEndian.AppendUint16(dst, uint16(delta))
			}
		case FrameSame1:
			if len(f.Stack) != 1 {
				return dst, codeErr(f.Offset, ErrBadFrames, "same_locals_1 with %d items", len(f.Stack))
			}
			if delta <= frameSame1Max-frameSame1Base {
				dst = append(dst, byte(frameSame1Base+delta))
			} else {
				dst = append(dst, frameSame1Ext)
				dst = binary.BigEndian.AppendUint16(dst, uint16(delta))
			}
			dst = appendVTypes(dst, f.Stack)
		case FrameChop:
			if f.Chop < 1 || f.Chop > maxFrameLocalsLen {
				return dst, codeErr(f.Offset, ErrBadFrames, "chop %d", f.Chop)
			}
			dst = append(dst, byte(frameChopBase-f.Chop))
			dst = binary.BigEndian.AppendUint16(dst, uint16(delta))
		case FrameAppend:
			if len(f.Locals) < 1 || len(f.Locals) > maxFrameLocalsLen {
				return dst, codeErr(f.Offset, ErrBadFrames, "append %d", len(f.Locals))
			}
			dst = append(dst, byte(frameAppendBase+len(f.Locals)))
			dst = binary.BigEndian.AppendUint16(dst, uint16(delta))
			dst = appendVTypes(dst, f.Locals)
		default:
			dst = append(dst, frameFull)
			dst = binary.BigEndian.AppendUint16(dst, uint16(delta))
			dst = binary.BigEndian.AppendUint16(dst, uint16(len(f.Locals)))
			dst = appendVTypes(dst, f.Locals)
			dst = binary.BigEndian.AppendUint16(dst, uint16(len(f.Stack)))
			dst = appendVTypes(dst, f.Stack)
		}
	}
	return dst, nil
}

func appendVTypes(dst []byte, vs []VType) []byte {
	for _, v := range vs {
		dst = append(dst, byte(v.Tag))
		if v.Tag == VObject || v.Tag == VUninitialized {
			dst = binary.BigEndian.AppendUint16(dst, v.Index)
		}
	}
	return dst
}
