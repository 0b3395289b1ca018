package hce

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"
)

// Block is one command block. Decoded blocks' Data aliases the payload.
type Block struct {
	HeaderID uint32 // HeaderID when encoding a zero value
	Dest     uint32
	Src      uint32
	Session  uint32
	Iface    InterfaceID
	Cmd      CommandID
	Context  uint32
	Data     []byte
}

func (b *Block) String() string {
	return fmt.Sprintf("%v %s %d→%d ctx %d (%d bytes)", b.Iface, b.Cmd.Name(b.Iface), b.Src, b.Dest, b.Context, len(b.Data))
}

// AppendBlock appends a command block.
func AppendBlock(b []byte, bl *Block) []byte {
	id := bl.HeaderID
	if id == 0 {
		id = HeaderID
	}
	b = AppendU32(b, id)
	b = AppendU32(b, bl.Dest)
	b = AppendU32(b, bl.Src)
	b = AppendU32(b, bl.Session)
	b = AppendU32(b, uint32(bl.Iface))
	b = AppendU32(b, uint32(bl.Cmd))
	b = AppendU32(b, bl.Context)
	b = AppendU32(b, uint32(len(bl.Data)))
	return append(b, bl.Data...)
}

// AppendPayload appends a standard payload: u32 count, then the blocks.
func AppendPayload(b []byte, blocks ...*Block) []byte {
	b = AppendU32(b, uint32(len(blocks)))
	for _, bl := range blocks {
		b = AppendBlock(b, bl)
	}
	return b
}

// ParsePayload decodes a standard payload into dst[:0]. The whole payload
// is checked before anything is returned: a bad block loses the message.
func ParsePayload(dst []Block, p []byte) ([]Block, error) {
	dst = dst[:0]
	if len(p) < sizeU32 {
		return dst, fmt.Errorf("%w: payload of %d bytes has no block count", ErrTruncated, len(p))
	}
	n := binary.BigEndian.Uint32(p)
	p = p[sizeU32:]
	// The count is bounded by the bytes present before anything is allocated.
	if uint64(n) > uint64(len(p)/BlockHeader) {
		return dst, fmt.Errorf("%w: %d blocks declared in %d bytes", ErrTruncated, n, len(p))
	}
	for i := uint32(0); i < n; i++ {
		var bl Block
		var err error
		if bl, p, err = parseBlock(p); err != nil {
			return dst[:0], fmt.Errorf("block %d: %w", i, err)
		}
		dst = append(dst, bl)
	}
	if len(p) != 0 {
		return dst[:0], fmt.Errorf("%w: %d bytes after %d blocks", ErrTrailing, len(p), n)
	}
	return dst, nil
}

func parseBlock(p []byte) (Block, []byte, error) {
	var bl Block
	if len(p) < BlockHeader {
		return bl, p, ErrTruncated
	}
	bl.HeaderID = binary.BigEndian.Uint32(p)
	// "The upper 16-bits of the header ID should be a fixed value so that
	// even if the HCE encounters a header ID that it doesn't recognize it can
	// verify that it is a header ID."
	if bl.HeaderID&0xFFFF0000 != HeaderIDFixed {
		return bl, p, fmt.Errorf("%w: %#08x", ErrBadHeaderID, bl.HeaderID)
	}
	if bl.HeaderID != HeaderID {
		return bl, p, fmt.Errorf("%w: %#08x", ErrHeaderVersion, bl.HeaderID)
	}
	bl.Dest = binary.BigEndian.Uint32(p[4:])
	bl.Src = binary.BigEndian.Uint32(p[8:])
	bl.Session = binary.BigEndian.Uint32(p[12:])
	bl.Iface = InterfaceID(binary.BigEndian.Uint32(p[16:]))
	bl.Cmd = CommandID(binary.BigEndian.Uint32(p[20:]))
	bl.Context = binary.BigEndian.Uint32(p[24:])
	size := binary.BigEndian.Uint32(p[28:])
	p = p[BlockHeader:]
	if uint64(size) > uint64(len(p)) {
		return bl, p, fmt.Errorf("%w: data of %d bytes, %d left", ErrTruncated, size, len(p))
	}
	bl.Data = p[:size:size]
	return bl, p[size:], nil
}

// AppendU32 appends a big-endian u32.
func AppendU32(b []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(b, v) }

// AppendU64 appends a big-endian u64.
func AppendU64(b []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(b, v) }

// AppendString appends u32 byte length and the UTF-8 bytes, no NUL. The
// caller keeps s within MaxString; longer strings are cut at a rune start.
func AppendString(b []byte, s string) []byte {
	if len(s) > MaxString {
		n := MaxString
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
	}
	b = AppendU32(b, uint32(len(s)))
	return append(b, s...)
}

// DataReader decodes command data field by field. The first error sticks;
// later reads return zero values. Check End.
type DataReader struct {
	b   []byte
	err error
}

// NewDataReader reads data.
func NewDataReader(data []byte) *DataReader { return &DataReader{b: data} }

// U32 reads a u32.
func (r *DataReader) U32() uint32 {
	if r.err != nil {
		return 0
	}
	if len(r.b) < sizeU32 {
		r.err = ErrTruncated
		return 0
	}
	v := binary.BigEndian.Uint32(r.b)
	r.b = r.b[sizeU32:]
	return v
}

// U64 reads a u64.
func (r *DataReader) U64() uint64 {
	if r.err != nil {
		return 0
	}
	if len(r.b) < sizeU64 {
		r.err = ErrTruncated
		return 0
	}
	v := binary.BigEndian.Uint64(r.b)
	r.b = r.b[sizeU64:]
	return v
}

// Count reads a u32 count of items at least min bytes each, checked
// against the bytes left before anyone allocates for it.
func (r *DataReader) Count(min int) uint32 {
	n := r.U32()
	if r.err == nil && uint64(n)*uint64(min) > uint64(len(r.b)) {
		r.err = fmt.Errorf("%w: %d items declared in %d bytes", ErrTruncated, n, len(r.b))
		return 0
	}
	return n
}

// String reads a string (a copy).
func (r *DataReader) String() string {
	n := r.U32()
	if r.err != nil {
		return ""
	}
	if n > MaxString {
		r.err = fmt.Errorf("%w: %d bytes, limit %d", ErrString, n, MaxString)
		return ""
	}
	if uint64(n) > uint64(len(r.b)) {
		r.err = ErrTruncated
		return ""
	}
	s := r.b[:n]
	r.b = r.b[n:]
	if !utf8.Valid(s) {
		r.err = fmt.Errorf("%w: not UTF-8", ErrString)
		return ""
	}
	return string(s)
}

// Rest returns the unread bytes.
func (r *DataReader) Rest() []byte { return r.b }

// Err is the first error.
func (r *DataReader) Err() error { return r.err }

// End returns the first error, or ErrTrailing when bytes are left.
func (r *DataReader) End() error {
	if r.err == nil && len(r.b) > 0 {
		return fmt.Errorf("%w: %d bytes", ErrTrailing, len(r.b))
	}
	return r.err
}
