package classfile

import "encoding/binary"

// reader is a bounds-checked big-endian cursor over a class file. base is the
// offset of b[0] in the whole class file, so errors name absolute offsets.
// The first failure is sticky: later reads return zero and keep the error.
type reader struct {
	b    []byte
	off  int
	base int
	err  *FormatError
}

func (r *reader) pos() int { return r.base + r.off }

func (r *reader) fail(err error, what string) {
	if r.err == nil {
		r.err = formatErr(r.pos(), err, what)
	}
}

func (r *reader) failAt(off int, err error, what string) {
	if r.err == nil {
		r.err = formatErr(off, err, what)
	}
}

// need reports whether n more bytes remain; if not it records ErrTruncated.
// Callers check counts with need(count*minSize) before allocating.
func (r *reader) need(n int, what string) bool {
	if r.err != nil {
		return false
	}
	if n < 0 || n > len(r.b)-r.off {
		r.fail(ErrTruncated, what)
		return false
	}
	return true
}

func (r *reader) remaining() int { return len(r.b) - r.off }

func (r *reader) u1(what string) uint8 {
	if !r.need(1, what) {
		return 0
	}
	v := r.b[r.off]
	r.off++
	return v
}

func (r *reader) u2(what string) uint16 {
	if !r.need(2, what) {
		return 0
	}
	v := binary.BigEndian.Uint16(r.b[r.off:])
	r.off += 2
	return v
}

func (r *reader) u4(what string) uint32 {
	if !r.need(4, what) {
		return 0
	}
	v := binary.BigEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v
}

func (r *reader) u8(what string) uint64 {
	if !r.need(8, what) {
		return 0
	}
	v := binary.BigEndian.Uint64(r.b[r.off:])
	r.off += 8
	return v
}

// bytes returns the next n bytes, aliasing the input.
func (r *reader) bytes(n int, what string) []byte {
	if !r.need(n, what) {
		return nil
	}
	v := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return v
}

func appendU2(b []byte, v uint16) []byte { return append(b, byte(v>>8), byte(v)) }

func appendU4(b []byte, v uint32) []byte {
	return append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

func putU4(b []byte, v uint32) { binary.BigEndian.PutUint32(b, v) }
