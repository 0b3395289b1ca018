package bytefrog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// A parseFunc decodes the message of one type from b, where len(b) ≥ 1 and
// b[0] is its type byte. It sets only the fields of m that belong to the
// type. On success it returns the message length. When b holds only part of
// the message it returns ErrShort and the smallest total length that could
// make progress: the whole message when its header is complete, else the
// header. Other errors return the message length when the framing is known
// (the message can be skipped), else 0.
type parseFunc func(d Dialect, m *Msg, b []byte) (int, error)

// parsers dispatches on the type byte; init fills the unknown types'
// slots with parseUnknown.
var parsers = [256]parseFunc{
	MsgHello:                parseHello,
	MsgConfiguration:        parseConfiguration,
	MsgStart:                parseCommand,
	MsgStop:                 parseCommand,
	MsgPause:                parseCommand,
	MsgUnpause:              parseCommand,
	MsgSuspend:              parseCommand,
	MsgUnsuspend:            parseCommand,
	MsgHeartbeat:            parseHeartbeat,
	MsgDataBreak:            parseDataBreak,
	MsgMapThreadName:        parseMapThreadName,
	MsgMapMethodSignature:   parseMapMethodSignature,
	MsgMapException:         parseMapException,
	MsgMapSourceLocation:    parseMapSourceLocation,
	MsgMethodVisit:          parseMethodVisit,
	MsgSourceLocationCount:  parseSourceLocationCount,
	MsgProjectHello:         parseProjectHello,
	MsgMethodEntry:          parseMethodEntry,
	MsgMethodExit:           parseMethodExit,
	MsgException:            parseException,
	MsgExceptionBubble:      parseExceptionBubble,
	MsgDataHello:            parseDataHello,
	MsgDataHelloReply:       parseCommand,
	MsgClassTransformed:     parseClassMsg,
	MsgClassIgnored:         parseClassMsg,
	MsgClassTransformFailed: parseClassMsg,
	MsgMarker:               parseMarker,
	MsgError:                parseError,
}

// Parse decodes the message at the start of b into m and returns its length.
//
// If b holds only the start of a message, Parse returns 0 and ErrShort
// (unwrapped). Other errors wrap a sentinel: ErrUnknownType (as an
// *UnknownTypeError), ErrTooLarge, ErrInvalidUTF, ErrBadConfig or
// ErrVersion. When the extent of the bad message is known (a string that is
// not modified UTF-8, a configuration payload that does not parse), n is
// its length and m.Type and m.Raw are set, so that a caller may skip it;
// otherwise n is 0.
//
// Parse sets m.Type, m.Raw (b[:n]) and the fields of that type, and leaves
// the other fields alone. Text, Value and Raw alias b. Strings are checked
// with ValidUTF. Heartbeat modes are not checked (see Mode.Valid), nor are
// message types checked against d.Version: that is the caller's protocol
// logic. A MethodExit is read in the layout of d.Flavor (FlavorCodePulse, or
// else the Bytefrog layout). A Configuration is decoded into m.Config with
// ParseJavaConfig under version 1 and ParseJSONConfig under later versions;
// its declared length is checked against d.MaxConfigSize before anything
// else; a version outside 1–MaxVersion has no Configuration (ErrVersion).
func (d Dialect) Parse(m *Msg, b []byte) (n int, err error) {
	n, err = d.parse(m, b)
	if err == ErrShort {
		return 0, err
	}
	return n, err
}

// parse is Parse with the parseFunc conventions.
func (d Dialect) parse(m *Msg, b []byte) (int, error) {
	if len(b) == 0 {
		return typeSize, ErrShort
	}
	n, err := parsers[b[0]](d, m, b)
	if err != nil {
		if n > 0 && err != ErrShort { // framed: the message can be skipped
			m.Type = MsgType(b[0])
			m.Raw = b[:n:n]
		}
		return n, err
	}
	m.Type = MsgType(b[0])
	m.Raw = b[:n:n]
	return n, nil
}

func init() {
	for i, f := range parsers {
		if f == nil {
			parsers[i] = parseUnknown
		}
	}
}

// parseUnknown fills the dispatch table's unknown slots.
func parseUnknown(_ Dialect, _ *Msg, b []byte) (int, error) {
	return 0, &UnknownTypeError{Type: b[0]}
}

// maxConfig is the effective cap on a Configuration payload.
func (d Dialect) maxConfig() int {
	if d.MaxConfigSize <= 0 {
		return DefaultMaxConfigSize
	}
	return min(d.MaxConfigSize, math.MaxInt32)
}

// maxMsgSize is the length of the largest message d accepts.
func (d Dialect) maxMsgSize() int {
	return max(ConfigV1MinSize+d.maxConfig(), MarkerMinSize+2*MaxStringLen)
}

func get32(b []byte) int32  { return int32(binary.BigEndian.Uint32(b)) }
func get16(b []byte) uint16 { return binary.BigEndian.Uint16(b) }

// utfAt reads the writeUTF string at b[off:], checking it with ValidUTF.
// It follows the parseFunc conventions and also returns the offset after
// the string; what names the string in an error.
func utfAt(b []byte, off int, what string) (s []byte, end int, err error) {
	end, ok := utfEnd(b, off)
	if !ok {
		return nil, end, ErrShort
	}
	s = b[off+u16Size : end : end]
	return s, end, checkUTF(b, s, what)
}

// utfEnd returns the offset after the writeUTF string at b[off:], and
// whether b holds all of it; if not, the offset is what b needs to hold for
// progress.
func utfEnd(b []byte, off int) (int, bool) {
	if len(b) < off+u16Size {
		return off + u16Size, false
	}
	end := off + u16Size + int(get16(b[off:]))
	return end, len(b) >= end
}

// checkUTF validates s, a string of the message b, called what.
func checkUTF(b, s []byte, what string) error {
	if i := invalidUTFAt(s); i >= 0 {
		return fmt.Errorf("%w: %v %s, at byte %d of %d", ErrInvalidUTF, MsgType(b[0]), what, i, len(s))
	}
	return nil
}

func parseHello(_ Dialect, m *Msg, b []byte) (int, error) {
	if len(b) < HelloSize {
		return HelloSize, ErrShort
	}
	m.Version = b[offField1]
	return HelloSize, nil
}

func parseProjectHello(_ Dialect, m *Msg, b []byte) (int, error) {
	if len(b) < ProjectHelloSize {
		return ProjectHelloSize, ErrShort
	}
	b = b[:ProjectHelloSize]
	m.Version = b[offField1]
	m.ProjectID = get32(b[offPHProj:])
	return ProjectHelloSize, nil
}

func parseCommand(_ Dialect, _ *Msg, _ []byte) (int, error) {
	return CommandSize, nil
}

func parseHeartbeat(_ Dialect, m *Msg, b []byte) (int, error) {
	if len(b) < HeartbeatSize {
		return HeartbeatSize, ErrShort
	}
	b = b[:HeartbeatSize]
	m.Mode = Mode(b[offField1])
	m.Buffers = get16(b[offHBBufs:])
	return HeartbeatSize, nil
}

func parseDataBreak(_ Dialect, m *Msg, b []byte) (int, error) {
	if len(b) < DataBreakSize {
		return DataBreakSize, ErrShort
	}
	m.Seq = get32(b[offField1:DataBreakSize])
	return DataBreakSize, nil
}

func parseMapThreadName(_ Dialect, m *Msg, b []byte) (int, error) {
	if len(b) < MapThreadNameMinSize {
		return MapThreadNameMinSize, ErrShort
	}
	s, end, err := utfAt(b, offTNName, "name")
	if err != nil {
		return end, err
	}
	m.ThreadID = get16(b[offTID:])
	m.RelTime = get32(b[offTNTime:])
	m.Text = s
	return end, nil
}

func parseMapMethodSignature(_ Dialect, m *Msg, b []byte) (int, error) {
	if len(b) < MapMethodSignatureMinSize {
		return MapMethodSignatureMinSize, ErrShort
	}
	s, end, err := utfAt(b, offIDText, "signature")
	if err != nil {
		return end, err
	}
	m.MethodID = get32(b[offField1:])
	m.Text = s
	return end, nil
}

func parseMapException(_ Dialect, m *Msg, b []byte) (int, error) {
	if len(b) < MapExceptionMinSize {
		return MapExceptionMinSize, ErrShort
	}
	s, end, err := utfAt(b, offIDText, "class name")
	if err != nil {
		return end, err
	}
	m.ExceptionID = get32(b[offField1:])
	m.Text = s
	return end, nil
}

func parseMapSourceLocation(_ Dialect, m *Msg, b []byte) (int, error) {
	if len(b) < MapSourceLocationSize {
		return MapSourceLocationSize, ErrShort
	}
	b = b[:MapSourceLocationSize]
	m.SourceLocationID = get32(b[offField1:])
	m.MethodID = get32(b[offField2:])
	m.StartLine = get32(b[offField3:])
	m.EndLine = get32(b[offField4:])
	m.StartChar = int16(get16(b[offField5:]))
	m.EndChar = int16(get16(b[offField6:]))
	return MapSourceLocationSize, nil
}

// getEventHead reads relTime, seq and methodId, which every event starts
// with.
func getEventHead(m *Msg, b []byte) {
	b = b[:offField4]
	m.RelTime = get32(b[offField1:])
	m.Seq = get32(b[offField2:])
	m.MethodID = get32(b[offField3:])
}

func parseMethodVisit(_ Dialect, m *Msg, b []byte) (int, error) {
	if len(b) < MethodVisitSize {
		return MethodVisitSize, ErrShort
	}
	b = b[:MethodVisitSize]
	getEventHead(m, b)
	m.SourceLocationID = get32(b[offField4:])
	m.ThreadID = get16(b[offField5:])
	return MethodVisitSize, nil
}

func parseSourceLocationCount(_ Dialect, m *Msg, b []byte) (int, error) {
	if len(b) < SourceLocationCountSize {
		return SourceLocationCountSize, ErrShort
	}
	b = b[:SourceLocationCountSize]
	m.MethodID = get32(b[offField1:])
	m.Count = get32(b[offField2:])
	return SourceLocationCountSize, nil
}

func parseMethodEntry(_ Dialect, m *Msg, b []byte) (int, error) {
	if len(b) < MethodEntrySize {
		return MethodEntrySize, ErrShort
	}
	b = b[:MethodEntrySize]
	getEventHead(m, b)
	m.ThreadID = get16(b[offField4:])
	return MethodEntrySize, nil
}

// parseMethodExit reads the layout of d.Flavor: the spec's MethodExit has
// "[2 bytes: line number][2 bytes: thread ID]"; Code Pulse replaced the
// line by a one-byte exceptionThrown flag without a version change.
func parseMethodExit(d Dialect, m *Msg, b []byte) (int, error) {
	if d.Flavor == FlavorCodePulse {
		if len(b) < MethodExitCodePulseSize {
			return MethodExitCodePulseSize, ErrShort
		}
		b = b[:MethodExitCodePulseSize]
		getEventHead(m, b)
		m.ExceptionThrown = b[offField4] != 0 // any non-zero byte is true
		m.ThreadID = get16(b[offExitCP:])
		return MethodExitCodePulseSize, nil
	}
	if len(b) < MethodExitSize {
		return MethodExitSize, ErrShort
	}
	b = b[:MethodExitSize]
	getEventHead(m, b)
	m.Line = get16(b[offField4:])
	m.ThreadID = get16(b[offExit2:])
	return MethodExitSize, nil
}

func parseException(_ Dialect, m *Msg, b []byte) (int, error) {
	if len(b) < ExceptionSize {
		return ExceptionSize, ErrShort
	}
	b = b[:ExceptionSize]
	getEventHead(m, b)
	m.ExceptionID = get32(b[offField4:])
	m.Line = get16(b[offField5:])
	m.ThreadID = get16(b[offField6:])
	return ExceptionSize, nil
}

func parseExceptionBubble(_ Dialect, m *Msg, b []byte) (int, error) {
	if len(b) < ExceptionBubbleSize {
		return ExceptionBubbleSize, ErrShort
	}
	b = b[:ExceptionBubbleSize]
	getEventHead(m, b)
	m.ExceptionID = get32(b[offField4:])
	m.ThreadID = get16(b[offField5:])
	return ExceptionBubbleSize, nil
}

func parseDataHello(_ Dialect, m *Msg, b []byte) (int, error) {
	if len(b) < DataHelloSize {
		return DataHelloSize, ErrShort
	}
	m.RunID = b[offField1]
	return DataHelloSize, nil
}

func parseClassMsg(_ Dialect, m *Msg, b []byte) (int, error) {
	s, end, err := utfAt(b, offString, "class name")
	if err != nil {
		return end, err
	}
	m.Text = s
	return end, nil
}

func parseError(_ Dialect, m *Msg, b []byte) (int, error) {
	s, end, err := utfAt(b, offString, "message")
	if err != nil {
		return end, err
	}
	m.Text = s
	return end, nil
}

func parseMarker(_ Dialect, m *Msg, b []byte) (int, error) {
	keyEnd, ok := utfEnd(b, offMarker)
	if !ok {
		// The value's length prefix is needed next in any case.
		return max(keyEnd+u16Size, MarkerMinSize), ErrShort
	}
	end, ok := utfEnd(b, keyEnd)
	if !ok {
		return end, ErrShort
	}
	key := b[offMarker+u16Size : keyEnd : keyEnd]
	val := b[keyEnd+u16Size : end : end]
	if err := checkUTF(b, key, "key"); err != nil {
		return end, err
	}
	if err := checkUTF(b, val, "value"); err != nil {
		return end, err
	}
	m.RelTime = get32(b[offField1:])
	m.Seq = get32(b[offField2:])
	m.Text = key
	m.Value = val
	return end, nil
}

// parseConfiguration reads the payload in the encoding of d.Version.
func parseConfiguration(d Dialect, m *Msg, b []byte) (int, error) {
	switch {
	case d.Version == Version1:
		return parseConfigV1(d, m, b)
	case d.Version >= Version2 && d.Version <= MaxVersion:
		return parseConfigJSON(d, m, b)
	}
	return 0, fmt.Errorf("%w: Configuration under protocol version %d", ErrVersion, d.Version)
}

// parseConfigV1: "[1 byte: type ID (1)][4 bytes: length, in bytes, of
// configuration data][n bytes: encoded configuration data]". The seed calls
// the length 32-bit unsigned and the HQ writes a Java int: either way a
// value with the top bit set is far above any cap.
func parseConfigV1(d Dialect, m *Msg, b []byte) (int, error) {
	if len(b) < ConfigV1MinSize {
		return ConfigV1MinSize, ErrShort
	}
	n := int64(binary.BigEndian.Uint32(b[offField1:]))
	if limit := d.maxConfig(); n > int64(limit) {
		return 0, fmt.Errorf("%w: Configuration payload of %d bytes (max %d)", ErrTooLarge, n, limit)
	}
	end := offConfV1 + int(n)
	if len(b) < end {
		return end, ErrShort
	}
	c, err := ParseJavaConfig(b[offConfV1:end:end])
	if err != nil {
		return end, configError(err)
	}
	m.Config = c
	return end, nil
}

// parseConfigJSON reads the v2+ payload: writeUTF of a JSON text.
func parseConfigJSON(d Dialect, m *Msg, b []byte) (int, error) {
	if len(b) < ConfigJSONMinSize {
		return ConfigJSONMinSize, ErrShort
	}
	n := int(get16(b[offField1:]))
	if limit := d.maxConfig(); n > limit {
		return 0, fmt.Errorf("%w: Configuration payload of %d bytes (max %d)", ErrTooLarge, n, limit)
	}
	js, end, err := utfAt(b, offField1, "JSON")
	if err != nil {
		return end, err
	}
	c, err := ParseJSONConfig(js)
	if err != nil {
		return end, configError(err)
	}
	m.Config = c
	return end, nil
}

// configError makes sure a payload error matches ErrBadConfig.
func configError(err error) error {
	if errors.Is(err, ErrBadConfig) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrBadConfig, err)
}

// decoderBufSize is the initial size of a Decoder's read buffer.
const decoderBufSize = 64 << 10

// maxEmptyReads bounds successive (0, nil) reads before io.ErrNoProgress.
const maxEmptyReads = 100

// A Decoder reads a stream of concatenated messages from an io.Reader.
//
// Its read buffer starts at 64 KiB and grows only when a message does not
// fit, never beyond the largest message its Dialect accepts; it never
// shrinks. Decoding a fixed-size message allocates nothing. The slices a
// decoded Msg holds (Text, Value, Raw) alias that buffer and are valid only
// until the next call to Next. A Decoder is not safe for concurrent use.
type Decoder struct {
	r     io.Reader
	d     Dialect
	buf   []byte
	start int   // buf[start:end] holds the bytes read but not yet decoded
	end   int   //
	err   error // first error from r
}

// NewDecoder returns a Decoder that reads from r in dialect d.
func NewDecoder(r io.Reader, d Dialect) *Decoder {
	return &Decoder{r: r, d: d, buf: make([]byte, decoderBufSize)}
}

// SetDialect changes the dialect for the messages not yet decoded, for
// example once Hello has told the protocol version.
func (dec *Decoder) SetDialect(d Dialect) { dec.d = d }

// Reset discards the buffered bytes and any read error and makes dec read
// from r, keeping its buffer and dialect.
func (dec *Decoder) Reset(r io.Reader) {
	dec.r = r
	dec.start, dec.end = 0, 0
	dec.err = nil
}

// Buffered returns the number of bytes read from the stream but not yet
// decoded.
func (dec *Decoder) Buffered() int { return dec.end - dec.start }

// Next decodes the next message into m, as Parse does.
//
// It returns io.EOF when the stream ends cleanly between messages, and an
// error wrapping ErrTruncated when it ends inside one; other read errors are
// returned as they are. After an error wrapping ErrInvalidUTF or
// ErrBadConfig the bad message has been consumed and Next may be called
// again. After any other error the Decoder does not advance: the stream
// has no way to resynchronise, and later calls fail the same way (a
// Configuration refused with ErrVersion reads once SetDialect supplies a
// version).
func (dec *Decoder) Next(m *Msg) error {
	for {
		n, err := dec.d.parse(m, dec.buf[dec.start:dec.end])
		if err == nil {
			dec.start += n
			if dec.start == dec.end {
				dec.start, dec.end = 0, 0
			}
			return nil
		}
		if err != ErrShort {
			dec.start += n
			return err
		}
		if err := dec.fill(n); err != nil {
			return err
		}
	}
}

// fill reads until the buffer holds need undecoded bytes or the reader
// fails; need never exceeds the dialect's largest message.
func (dec *Decoder) fill(need int) error {
	if dec.err != nil {
		return dec.readErr(need)
	}
	if need > len(dec.buf)-dec.start {
		have := dec.end - dec.start
		if need > len(dec.buf) {
			size := max(need, min(2*len(dec.buf), dec.d.maxMsgSize()))
			nb := make([]byte, size)
			copy(nb, dec.buf[dec.start:dec.end])
			dec.buf = nb
		} else {
			copy(dec.buf, dec.buf[dec.start:dec.end])
		}
		dec.start, dec.end = 0, have
	}
	for empty := 0; dec.end-dec.start < need; {
		k, err := dec.r.Read(dec.buf[dec.end:])
		dec.end += k
		if err != nil {
			dec.err = err
			return nil // decode what arrived; the error comes back next time
		}
		if k > 0 {
			empty = 0
		} else if empty++; empty >= maxEmptyReads {
			dec.err = io.ErrNoProgress
			return nil
		}
	}
	return nil
}

// readErr turns the reader's error into the error for Next.
func (dec *Decoder) readErr(need int) error {
	have := dec.end - dec.start
	if dec.err != io.EOF {
		return dec.err
	}
	if have == 0 {
		return io.EOF
	}
	return fmt.Errorf("%w: stream ended %d bytes into a %v message (of at least %d)",
		ErrTruncated, have, MsgType(dec.buf[dec.start]), need)
}
