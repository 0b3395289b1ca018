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

// u1, u2, u4 and u8 read big-endian values. At the end of input, or after
// an error, they record ErrTruncated (keeping the first error) and return 0.
func (r *reader) u1(what string) uint8 {
	if r.err != nil || r.off >= len(r.b) {
		return uint8(r.short(1, what))
	}
	v := r.b[r.off]
	r.off++
	return v
}

func (r *reader) u2(what string) uint16 {
	if r.err != nil || len(r.b)-r.off < 2 {
		return uint16(r.short(2, what))
	}
	v := binary.BigEndian.Uint16(r.b[r.off:])
	r.off += 2
	return v
}

func (r *reader) u4(what string) uint32 {
	if r.err != nil || len(r.b)-r.off < 4 {
		return uint32(r.short(4, what))
	}
	v := binary.BigEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v
}

func (r *reader) u8(what string) uint64 {
	if r.err != nil || len(r.b)-r.off < 8 {
		return r.short(8, what)
	}
	v := binary.BigEndian.Uint64(r.b[r.off:])
	r.off += 8
	return v
}

// short records that n bytes were wanted and returns 0.
//
//go:noinline
func (r *reader) short(n int, what string) uint64 {
	r.need(n, what)
	return 0
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
