package classfile

// CodeArena hands out the memory of decoded Code attributes, and of
// encoded ones stored with SetCode, from slabs that Reset recycles: a
// rewriter that decodes and re-encodes the methods of many classes then
// allocates almost nothing per method. Everything an arena returned (Codes
// and the attribute bytes SetCode stored in a Member) stays valid until the
// next Reset: write the class (Class.Bytes) before calling Reset.
//
// The zero value is ready to use. A CodeArena is not safe for concurrent
// use; keep one per goroutine (or in a sync.Pool).
type CodeArena struct {
	codes  []Code
	excs   []ExceptionEntry
	attrs  []CodeAttr
	lines  []LineNumber
	locals []LocalVar
	frames []Frame
	vtypes []VType
	bytes  []byte
}

// minSlab is the smallest slab allocated, in elements.
const minSlab = 64

// Reset makes the arena's memory available again. Codes and encoded
// attributes obtained before must no longer be used.
func (a *CodeArena) Reset() {
	a.codes, a.excs, a.attrs = a.codes[:0], a.excs[:0], a.attrs[:0]
	a.lines, a.locals, a.frames = a.lines[:0], a.locals[:0], a.frames[:0]
	a.vtypes, a.bytes = a.vtypes[:0], a.bytes[:0]
}

// Code decodes the Code attribute of m like Member.Code, with the arena's
// memory. It returns nil, nil when m has no Code attribute.
func (a *CodeArena) Code(p *Pool, m *Member) (*Code, error) {
	i := m.CodeIndex(p)
	if i < 0 {
		return nil, nil
	}
	return decodeCode(p, &m.Attrs[i], a)
}

// Decode decodes a Code attribute like DecodeCode, with the arena's memory.
func (a *CodeArena) Decode(p *Pool, attr *Attribute) (*Code, error) { return decodeCode(p, attr, a) }

// SetCode encodes c into the arena and stores it as m's Code attribute,
// like Member.SetCode.
func (a *CodeArena) SetCode(p *Pool, m *Member, c *Code) error {
	n := c.Size()
	if cap(a.bytes)-len(a.bytes) < n {
		a.bytes = make([]byte, 0, max(2*cap(a.bytes), n, 64*minSlab))
	}
	start := len(a.bytes)
	b, err := c.AppendTo(a.bytes)
	if err != nil {
		return err
	}
	if len(b) != start+n || cap(b) != cap(a.bytes) {
		// Size and AppendTo disagree: never leave the slab reallocated
		// behind the arena's back.
		a.bytes = a.bytes[:start]
		return m.SetCode(p, c)
	}
	a.bytes = b
	return m.setCodeData(p, b[start:len(b):len(b)])
}

// take returns n zeroed elements from a slab, starting a new slab (twice as
// large) when the current one is full. Earlier slabs stay referenced by
// what was taken from them.
func take[T any](slab *[]T, n int) []T {
	s := *slab
	if cap(s)-len(s) < n {
		s = make([]T, 0, max(2*cap(s), n, minSlab))
	}
	out := s[len(s) : len(s)+n : len(s)+n]
	clear(out)
	*slab = s[:len(s)+n]
	return out
}

// alloc takes n elements from slab, or makes them when slab is nil (no
// arena). Zero elements are always nil, so that decoding with and without
// an arena gives equal values.
func alloc[T any](slab *[]T, n int) []T {
	if n == 0 {
		return nil
	}
	if slab == nil {
		return make([]T, n)
	}
	return take(slab, n)
}

func (a *CodeArena) lineSlab() *[]LineNumber {
	if a == nil {
		return nil
	}
	return &a.lines
}

func (a *CodeArena) localSlab() *[]LocalVar {
	if a == nil {
		return nil
	}
	return &a.locals
}

func (a *CodeArena) frameSlab() *[]Frame {
	if a == nil {
		return nil
	}
	return &a.frames
}

func (a *CodeArena) vtypeSlab() *[]VType {
	if a == nil {
		return nil
	}
	return &a.vtypes
}
