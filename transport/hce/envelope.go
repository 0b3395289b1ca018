package hce

import (
	"bufio"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
)

// Envelope is one decoded message envelope. Payload aliases the codec's
// read buffer: it is valid until the next Read.
type Envelope struct {
	Flags   Flags
	Sum     [sizeMD5]byte
	Payload []byte
}

// Stats counts what a Codec's reader dropped or skipped. Safe to read from
// any goroutine.
type Stats struct {
	Envelopes     atomic.Uint64 // envelopes read and accepted
	Resyncs       atomic.Uint64 // times the reader had to scan for the magic
	SkippedBytes  atomic.Uint64 // bytes skipped while scanning
	ChecksumDrops atomic.Uint64 // envelopes dropped on an MD5 mismatch
	BadFlagDrops  atomic.Uint64 // headers skipped for bad flags
}

// Codec reads and writes envelopes on one stream. One goroutine may call
// Read while another calls Write; neither is safe for concurrent use with
// itself.
type Codec struct {
	r    *bufio.Reader
	w    io.Writer
	max  int
	md5  bool
	rbuf []byte // grow-only payload buffer
	wbuf []byte // reused by Write

	Stats Stats
}

// NewCodec returns a codec over r and w (either may be nil when unused).
func NewCodec(r io.Reader, w io.Writer, cfg *Config) (*Codec, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	cd := &Codec{w: w, max: c.MaxPayload, md5: c.MD5}
	if r != nil {
		cd.r = bufio.NewReaderSize(r, 64<<10)
	}
	return cd, nil
}

// SetMD5 switches the MD5 of outgoing envelopes.
func (c *Codec) SetMD5(on bool) { c.md5 = on }

// Read returns the next envelope. Bytes before a magic number are skipped
// and counted ("If an error occurs while the data is being read, the
// transport layer will be able to look for this number as an identifier of
// the beginning of a new message envelope"). ErrChecksum and ErrBadFlags
// are Recoverable: read again. ErrTooLarge and I/O errors end the stream.
func (c *Codec) Read() (Envelope, error) {
	var e Envelope
	skipped := 0
	for {
		p, err := c.r.Peek(sizeU32)
		if err != nil {
			c.countSkip(skipped)
			return e, eofErr(err, len(p) > 0 || skipped > 0)
		}
		if binary.BigEndian.Uint32(p) != Magic {
			c.r.Discard(1)
			skipped++
			continue
		}
		break
	}
	c.countSkip(skipped)
	hdr, err := c.r.Peek(EnvelopeHeader)
	if err != nil {
		return e, eofErr(err, true)
	}
	e.Flags = Flags(binary.BigEndian.Uint32(hdr[offFlags:]))
	if err := checkFlags(e.Flags); err != nil {
		// A corrupt header: skip its magic and scan again from the next byte.
		c.r.Discard(1)
		c.Stats.BadFlagDrops.Add(1)
		return e, err
	}
	size := binary.BigEndian.Uint32(hdr[offSize:])
	if uint64(size) > uint64(c.max) {
		return e, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, size, c.max)
	}
	copy(e.Sum[:], hdr[offMD5:offSize])
	c.r.Discard(EnvelopeHeader)
	if cap(c.rbuf) < int(size) {
		c.rbuf = make([]byte, size)
	}
	e.Payload = c.rbuf[:size]
	if _, err := io.ReadFull(c.r, e.Payload); err != nil {
		return e, eofErr(err, true)
	}
	// "If the MD5 flag is set in the flags field, the 16-bytes immediately
	// following the flags field will specify an MD5 hash code which will be
	// used to verify the integrity of the incoming message."
	if e.Flags&FlagMD5 != 0 && md5.Sum(e.Payload) != e.Sum {
		c.Stats.ChecksumDrops.Add(1)
		return e, fmt.Errorf("%w (%v, %d bytes)", ErrChecksum, e.Flags, size)
	}
	c.Stats.Envelopes.Add(1)
	return e, nil
}

func (c *Codec) countSkip(n int) {
	if n > 0 {
		c.Stats.Resyncs.Add(1)
		c.Stats.SkippedBytes.Add(uint64(n))
	}
}

func eofErr(err error, partial bool) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) && partial {
		return fmt.Errorf("%w: %w", ErrTruncated, io.ErrUnexpectedEOF)
	}
	return err
}

// checkFlags: exactly zero or one message-type bit, plus optional MD5, and
// no other bit (project rule, open item 5).
func checkFlags(f Flags) error {
	if f&^(typeMask|FlagMD5) != 0 {
		return fmt.Errorf("%w: %v", ErrBadFlags, f)
	}
	if t := f.Type(); t&(t-1) != 0 {
		return fmt.Errorf("%w: %v: more than one message type", ErrBadFlags, f)
	}
	return nil
}

// AppendEnvelope appends an envelope around payload; with sum, the MD5
// flag is set and the payload's MD5 filled in, else the field is zero.
func AppendEnvelope(b []byte, flags Flags, sum bool, payload []byte) []byte {
	start := len(b)
	b = beginEnvelope(b, flags)
	b = append(b, payload...)
	return endEnvelope(b, start, sum)
}

// beginEnvelope appends a header whose size and MD5 endEnvelope fills.
func beginEnvelope(b []byte, flags Flags) []byte {
	var hdr [EnvelopeHeader]byte
	binary.BigEndian.PutUint32(hdr[:], Magic)
	binary.BigEndian.PutUint32(hdr[offFlags:], uint32(flags&^FlagMD5))
	return append(b, hdr[:]...)
}

func endEnvelope(b []byte, start int, sum bool) []byte {
	h := b[start : start+EnvelopeHeader]
	payload := b[start+EnvelopeHeader:]
	binary.BigEndian.PutUint32(h[offSize:], uint32(len(payload)))
	if sum {
		f := binary.BigEndian.Uint32(h[offFlags:])
		binary.BigEndian.PutUint32(h[offFlags:], f|uint32(FlagMD5))
		s := md5.Sum(payload)
		copy(h[offMD5:offSize], s[:])
	}
	return b
}

// Write sends one envelope in one Write call.
func (c *Codec) Write(flags Flags, payload []byte) error {
	c.wbuf = AppendEnvelope(c.wbuf[:0], flags, c.md5, payload)
	_, err := c.w.Write(c.wbuf)
	return err
}

// WriteBlocks sends one command payload holding blocks.
func (c *Codec) WriteBlocks(blocks ...*Block) error {
	c.wbuf = AppendBlocksEnvelope(c.wbuf[:0], c.md5, blocks...)
	_, err := c.w.Write(c.wbuf)
	return err
}

// AppendBlocksEnvelope appends a whole envelope holding blocks.
func AppendBlocksEnvelope(b []byte, sum bool, blocks ...*Block) []byte {
	start := len(b)
	b = beginEnvelope(b, 0)
	b = AppendU32(b, uint32(len(blocks)))
	for _, bl := range blocks {
		b = AppendBlock(b, bl)
	}
	return endEnvelope(b, start, sum)
}
