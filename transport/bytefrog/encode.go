package bytefrog

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The Append functions append one whole message to b and return the
// extended slice, like strconv.AppendInt: they allocate only when b lacks
// capacity, and the fixed-size ones grow b once and then store each field at
// its fixed offset. Strings are encoded as by AppendUTF (truncated to
// MaxStringLen encoded bytes on a character boundary).

// Field offsets (offset 0 is the type byte). Events share their first
// fields: i32 relTime, i32 seq, i32 methodId.
const (
	offField1 = typeSize            // first field after the type byte
	offField2 = offField1 + i32Size // after one i32
	offField3 = offField2 + i32Size // after two i32
	offField4 = offField3 + i32Size // after three i32
	offField5 = offField4 + i32Size // after four i32
	offField6 = offField5 + u16Size // after four i32 and one 16-bit field
	offExit2  = offField4 + u16Size // MethodExit (Bytefrog): thread id after the line
	offExitCP = offField4 + u8Size  // MethodExit (Code Pulse): thread id after the flag
	offTID    = offField1           // MapThreadName: thread id comes first
	offTNTime = offTID + u16Size    // MapThreadName: relTime after the thread id
	offTNName = offTNTime + i32Size // MapThreadName: name
	offHBBufs = offField1 + u8Size  // Heartbeat: buffer count after the mode
	offPHProj = offField1 + u8Size  // ProjectHello: project id after the version
	offIDText = offField2           // MapMethodSignature, MapException: string after the id
	offMarker = offField3           // Marker: key after relTime and seq
	offConfV1 = offField2           // Configuration v1: payload after the i32 length
	offConfV2 = offField1 + u16Size // Configuration v2+: JSON after the u16 length
	offString = offField1           // ClassTransformed…, Error: string right after the type
)

// grow extends b by n bytes and returns the extended slice and the new
// n-byte tail. The tail's contents are unspecified; callers set every byte.
func grow(b []byte, n int) ([]byte, []byte) {
	l := len(b)
	if cap(b)-l < n {
		nb := make([]byte, l, 2*cap(b)+n)
		copy(nb, b)
		b = nb
	}
	b = b[:l+n]
	return b, b[l:]
}

func put32(p []byte, v int32) { binary.BigEndian.PutUint32(p, uint32(v)) }

// AppendHello appends Hello: the first message on the control connection.
func AppendHello(b []byte, version uint8) []byte {
	return append(b, byte(MsgHello), version)
}

// AppendProjectHello appends ProjectHello (Code Pulse v4), sent instead of
// Hello to attach the trace to a project.
func AppendProjectHello(b []byte, version uint8, projectID int32) []byte {
	b, p := grow(b, ProjectHelloSize)
	p[0] = byte(MsgProjectHello)
	p[1] = version
	put32(p[offPHProj:], projectID)
	return b
}

// isCommand reports whether t is a body-less message.
func isCommand(t MsgType) bool {
	return (t >= MsgStart && t <= MsgUnsuspend) || t == MsgDataHelloReply
}

// AppendCommand appends a body-less message: Start, Stop, Pause, Unpause,
// Suspend, Unsuspend or DataHelloReply. Any other t is a programming error
// and panics.
func AppendCommand(b []byte, t MsgType) []byte {
	if !isCommand(t) {
		panic(fmt.Sprintf("bytefrog: AppendCommand: %v is not a command", t))
	}
	return append(b, byte(t))
}

// AppendHeartbeat appends a Heartbeat. buffers is the number of send
// buffers waiting to be written; callers clamp larger counts to 65535.
func AppendHeartbeat(b []byte, mode Mode, buffers uint16) []byte {
	b, p := grow(b, HeartbeatSize)
	p[0] = byte(MsgHeartbeat)
	p[1] = byte(mode)
	binary.BigEndian.PutUint16(p[offHBBufs:], buffers)
	return b
}

// AppendDataBreak appends a DataBreak announcing that the data flow breaks
// before sequence number nextSeq.
func AppendDataBreak(b []byte, nextSeq int32) []byte {
	b, p := grow(b, DataBreakSize)
	p[0] = byte(MsgDataBreak)
	put32(p[offField1:], nextSeq)
	return b
}

// AppendMapThreadName appends MapThreadName. Note the field order: the
// thread id comes before the time.
func AppendMapThreadName(b []byte, tid uint16, relTime int32, name string) []byte {
	b, p := grow(b, offTNName)
	p[0] = byte(MsgMapThreadName)
	binary.BigEndian.PutUint16(p[offTID:], tid)
	put32(p[offTNTime:], relTime)
	return AppendUTF(b, name)
}

// appendIDString appends a message made of an i32 id and one string.
func appendIDString(b []byte, t MsgType, id int32, s string) []byte {
	b, p := grow(b, offIDText)
	p[0] = byte(t)
	put32(p[offField1:], id)
	return AppendUTF(b, s)
}

// AppendMapMethodSignature appends MapMethodSignature, binding id to sig.
func AppendMapMethodSignature(b []byte, id int32, sig string) []byte {
	return appendIDString(b, MsgMapMethodSignature, id, sig)
}

// AppendMapException appends MapException, binding id to an exception
// class name.
func AppendMapException(b []byte, id int32, name string) []byte {
	return appendIDString(b, MsgMapException, id, name)
}

// AppendMapSourceLocation appends MapSourceLocation (v3+). Note the field
// order: the source location id comes before the method id. startChar and
// endChar are -1 when unknown.
func AppendMapSourceLocation(b []byte, slID, methodID, startLine, endLine int32, startChar, endChar int16) []byte {
	b, p := grow(b, MapSourceLocationSize)
	_ = p[MapSourceLocationSize-1]
	p[0] = byte(MsgMapSourceLocation)
	put32(p[offField1:], slID)
	put32(p[offField2:], methodID)
	put32(p[offField3:], startLine)
	put32(p[offField4:], endLine)
	binary.BigEndian.PutUint16(p[offField5:], uint16(startChar))
	binary.BigEndian.PutUint16(p[offField6:], uint16(endChar))
	return b
}

// putEventHead stores the type byte and the relTime, seq and methodId
// fields that every event starts with.
func putEventHead(p []byte, t MsgType, relTime, seq, methodID int32) {
	_ = p[offField4-1]
	p[0] = byte(t)
	put32(p[offField1:], relTime)
	put32(p[offField2:], seq)
	put32(p[offField3:], methodID)
}

// AppendMethodVisit appends MethodVisit (v3+).
func AppendMethodVisit(b []byte, relTime, seq, methodID, slID int32, tid uint16) []byte {
	b, p := grow(b, MethodVisitSize)
	_ = p[MethodVisitSize-1]
	putEventHead(p, MsgMethodVisit, relTime, seq, methodID)
	put32(p[offField4:], slID)
	binary.BigEndian.PutUint16(p[offField5:], tid)
	return b
}

// AppendSourceLocationCount appends SourceLocationCount (v3+).
func AppendSourceLocationCount(b []byte, methodID, count int32) []byte {
	b, p := grow(b, SourceLocationCountSize)
	_ = p[SourceLocationCountSize-1]
	p[0] = byte(MsgSourceLocationCount)
	put32(p[offField1:], methodID)
	put32(p[offField2:], count)
	return b
}

// AppendMethodEntry appends MethodEntry.
func AppendMethodEntry(b []byte, relTime, seq, methodID int32, tid uint16) []byte {
	b, p := grow(b, MethodEntrySize)
	PutMethodEntry(p, relTime, seq, methodID, tid)
	return b
}

// PutMethodEntry writes MethodEntry at the start of p, which holds at least
// MethodEntrySize bytes: AppendMethodEntry for a caller that made room.
func PutMethodEntry(p []byte, relTime, seq, methodID int32, tid uint16) {
	_ = p[MethodEntrySize-1]
	putEventHead(p, MsgMethodEntry, relTime, seq, methodID)
	binary.BigEndian.PutUint16(p[offField4:], tid)
}

// AppendMethodExit appends the Bytefrog flavour of MethodExit (17 bytes,
// with the line of the return; NoLine when unknown).
func AppendMethodExit(b []byte, relTime, seq, methodID int32, line, tid uint16) []byte {
	b, p := grow(b, MethodExitSize)
	PutMethodExit(p, relTime, seq, methodID, line, tid)
	return b
}

// PutMethodExit writes the Bytefrog flavour of MethodExit at the start of
// p, which holds at least MethodExitSize bytes.
func PutMethodExit(p []byte, relTime, seq, methodID int32, line, tid uint16) {
	_ = p[MethodExitSize-1]
	putEventHead(p, MsgMethodExit, relTime, seq, methodID)
	binary.BigEndian.PutUint16(p[offField4:], line)
	binary.BigEndian.PutUint16(p[offExit2:], tid)
}

// Wide stores: encoders of long runs of method entries and exits (the
// agent's drain) write each message as two big-endian 64-bit words (and a
// byte), not field by field. The first word of an event message is its
// type, relTime and the three high bytes of seq: EventWord0 with the run's
// type and time, ORed with the sequence number's bytes (EventSeqHigh).
// The second holds the low byte of seq, methodID and what follows.

// PaddedSize is the room the Padded encoders need after their offset: they
// may write up to this many bytes, of which the message's own are first.
const PaddedSize = 2 * u64Size

// EventWord0 is the first 64-bit word of an event message of type t at
// relTime, without its sequence number (see EventSeqHigh).
func EventWord0(t MsgType, relTime int32) uint64 {
	return uint64(t)<<56 | uint64(uint32(relTime))<<24
}

// EventSeqHigh is the part of the first 64-bit word of an event message
// that seq fills: its three high bytes.
func EventSeqHigh(seq int32) uint64 { return uint64(uint32(seq) >> 8) }

// PutMethodEntryPadded writes MethodEntry at the start of p, which holds
// at least PaddedSize bytes: the byte after the message's
// MethodEntrySize is overwritten with scratch. w0 is
// EventWord0(MsgMethodEntry, relTime).
func PutMethodEntryPadded(p []byte, w0 uint64, seq, methodID int32, tid uint16) {
	_ = p[PaddedSize-1]
	binary.BigEndian.PutUint64(p, w0|EventSeqHigh(seq))
	binary.BigEndian.PutUint64(p[u64Size:], uint64(uint8(seq))<<56|uint64(uint32(methodID))<<24|uint64(tid)<<8)
}

// PutMethodExitWide writes the Bytefrog flavour of MethodExit at the start
// of p, which holds at least MethodExitSize bytes, as PutMethodExit does,
// in three stores. w0 is EventWord0(MsgMethodExit, relTime).
func PutMethodExitWide(p []byte, w0 uint64, seq, methodID int32, line, tid uint16) {
	_ = p[MethodExitSize-1]
	binary.BigEndian.PutUint64(p, w0|EventSeqHigh(seq))
	binary.BigEndian.PutUint64(p[u64Size:], uint64(uint8(seq))<<56|uint64(uint32(methodID))<<24|uint64(line)<<8|
		uint64(tid>>8))
	p[MethodExitSize-1] = byte(tid)
}

// EntryOrExitRoom is the room PutEntryOrExit needs after its offset.
const EntryOrExitRoom = MethodExitSize

// PutEntryOrExit relies on it: compiling fails unless MsgMethodExit is
// MsgMethodEntry+1.
var _ = [1]struct{}{}[MsgMethodExit-MsgMethodEntry-1]

// PutEntryOrExit writes MethodEntry (exit 0) or the Bytefrog flavour of
// MethodExit (exit 1, with line) at the start of p, which holds at least
// EntryOrExitRoom bytes, without a branch between the two: the bytes after
// a MethodEntry's own are scratch. w0 is EventWord0(MsgMethodEntry,
// relTime). It returns the size of the message.
func PutEntryOrExit(p []byte, w0 uint64, seq, methodID int32, exit uint64, line, tid uint16) int {
	_ = p[EntryOrExitRoom-1]
	// MsgMethodExit is MsgMethodEntry+1: the type byte is w0's plus exit.
	binary.BigEndian.PutUint64(p, w0+exit<<56|uint64(uint32(seq)>>8))
	// Entry: thread id at offset 13. Exit: line at 13, thread id at 15.
	t := uint64(tid) << 8
	t ^= (t ^ (uint64(line)<<8 | uint64(tid>>8))) & -exit
	binary.BigEndian.PutUint64(p[u64Size:], uint64(uint8(seq))<<56|uint64(uint32(methodID))<<24|t)
	p[MethodExitSize-1] = byte(tid)
	return MethodEntrySize + int(exit)*(MethodExitSize-MethodEntrySize)
}

// PutMethodExitCodePulseWide writes the Code Pulse flavour of MethodExit
// at the start of p, which holds at least MethodExitCodePulseSize bytes,
// in two stores. w0 is EventWord0(MsgMethodExit, relTime).
func PutMethodExitCodePulseWide(p []byte, w0 uint64, seq, methodID int32, thrown bool, tid uint16) {
	_ = p[MethodExitCodePulseSize-1]
	binary.BigEndian.PutUint64(p, w0|EventSeqHigh(seq))
	binary.BigEndian.PutUint64(p[u64Size:], uint64(uint8(seq))<<56|uint64(uint32(methodID))<<24|
		uint64(boolByte(thrown))<<16|uint64(tid))
}

// AppendMethodExitCodePulse appends the Code Pulse flavour of MethodExit
// (16 bytes, with a flag telling whether the method exited by exception).
func AppendMethodExitCodePulse(b []byte, relTime, seq, methodID int32, thrown bool, tid uint16) []byte {
	b, p := grow(b, MethodExitCodePulseSize)
	_ = p[MethodExitCodePulseSize-1]
	putEventHead(p, MsgMethodExit, relTime, seq, methodID)
	p[offField4] = boolByte(thrown)
	binary.BigEndian.PutUint16(p[offExitCP:], tid)
	return b
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// AppendException appends Exception: excID thrown at line (NoLine when
// unknown) in methodID.
func AppendException(b []byte, relTime, seq, methodID, excID int32, line, tid uint16) []byte {
	b, p := grow(b, ExceptionSize)
	_ = p[ExceptionSize-1]
	putEventHead(p, MsgException, relTime, seq, methodID)
	put32(p[offField4:], excID)
	binary.BigEndian.PutUint16(p[offField5:], line)
	binary.BigEndian.PutUint16(p[offField6:], tid)
	return b
}

// AppendExceptionBubble appends ExceptionBubble: methodID exited by letting
// excID propagate. It replaces MethodExit for that frame.
func AppendExceptionBubble(b []byte, relTime, seq, methodID, excID int32, tid uint16) []byte {
	b, p := grow(b, ExceptionBubbleSize)
	_ = p[ExceptionBubbleSize-1]
	putEventHead(p, MsgExceptionBubble, relTime, seq, methodID)
	put32(p[offField4:], excID)
	binary.BigEndian.PutUint16(p[offField5:], tid)
	return b
}

// AppendMarker appends a Marker with a key and a value string.
func AppendMarker(b []byte, relTime, seq int32, key, value string) []byte {
	b, p := grow(b, offMarker)
	p[0] = byte(MsgMarker)
	put32(p[offField1:], relTime)
	put32(p[offField2:], seq)
	b = AppendUTF(b, key)
	return AppendUTF(b, value)
}

// AppendMarkerMUTF8 appends a Marker whose key and value are already
// modified UTF-8, as a JVM hands strings over: they are copied as they are,
// truncated like AppendUTFBytes.
func AppendMarkerMUTF8(b []byte, relTime, seq int32, key, value []byte) []byte {
	b, p := grow(b, offMarker)
	p[0] = byte(MsgMarker)
	put32(p[offField1:], relTime)
	put32(p[offField2:], seq)
	b = AppendUTFBytes(b, key)
	return AppendUTFBytes(b, value)
}

// AppendDataHello appends DataHello: the first message on a data
// connection.
func AppendDataHello(b []byte, runID uint8) []byte {
	return append(b, byte(MsgDataHello), runID)
}

// isClassMsg reports whether t is ClassTransformed, ClassIgnored or
// ClassTransformFailed.
func isClassMsg(t MsgType) bool {
	return t >= MsgClassTransformed && t <= MsgClassTransformFailed
}

// AppendClassMsg appends ClassTransformed, ClassIgnored or
// ClassTransformFailed (t) for a class name in internal form. Any other t
// is a programming error and panics.
func AppendClassMsg(b []byte, t MsgType, name string) []byte {
	if !isClassMsg(t) {
		panic(fmt.Sprintf("bytefrog: AppendClassMsg: %v is not a class message", t))
	}
	return AppendUTF(append(b, byte(t)), name)
}

// AppendError appends Error, the fatal-error report either end may send.
func AppendError(b []byte, msg string) []byte {
	return AppendUTF(append(b, byte(MsgError)), msg)
}

// AppendConfig appends a Configuration message for protocol version: v1
// carries an i32 length and the Java serialization of c; v2 and later carry
// c as writeUTF JSON, and a JSON text longer than MaxStringLen encoded bytes
// is an error wrapping ErrTooLarge. Other versions (0, above MaxVersion)
// give ErrVersion. On error b is returned unchanged.
func AppendConfig(b []byte, version uint8, c *Config) ([]byte, error) {
	switch {
	case version == Version1:
		return appendConfigV1(b, c)
	case version >= Version2 && version <= MaxVersion:
		return appendConfigJSON(b, c)
	}
	return b, fmt.Errorf("%w: protocol version %d", ErrVersion, version)
}

func appendConfigV1(b []byte, c *Config) ([]byte, error) {
	start := len(b)
	b, p := grow(b, offConfV1)
	p[0] = byte(MsgConfiguration)
	b = AppendJavaConfig(b, c)
	n := len(b) - start - offConfV1
	if n > math.MaxInt32 {
		return b[:start], fmt.Errorf("%w: java configuration of %d bytes", ErrTooLarge, n)
	}
	put32(b[start+offField1:], int32(n))
	return b, nil
}

func appendConfigJSON(b []byte, c *Config) ([]byte, error) {
	start := len(b)
	b, p := grow(b, offConfV2)
	p[0] = byte(MsgConfiguration)
	b, err := AppendJSONConfig(b, c)
	if err != nil {
		return b[:start], err
	}
	// The wire carries modified UTF-8: rewrite NUL and 4-byte forms should
	// the JSON text hold any.
	if js := b[start+offConfV2:]; needsMUTF(js) {
		conv := mutfFromUTF8(nil, js)
		b = append(b[:start+offConfV2], conv...)
	}
	n := len(b) - start - offConfV2
	if n > MaxStringLen {
		return b[:start], fmt.Errorf("%w: JSON configuration of %d bytes (max %d)", ErrTooLarge, n, MaxStringLen)
	}
	binary.BigEndian.PutUint16(b[start+offField1:], uint16(n))
	return b, nil
}

// AppendMsg appends any message held in m, as Parse would have decoded it
// under dialect d (d decides the MethodExit layout and the Configuration
// encoding). m.Text and m.Value are taken as modified UTF-8 and written as
// they are, cut to MaxStringLen bytes if longer; m.Raw is ignored. An
// unknown m.Type gives an *UnknownTypeError. On error b is returned
// unchanged.
func AppendMsg(b []byte, d Dialect, m *Msg) ([]byte, error) {
	switch t := m.Type; t {
	case MsgHello:
		return AppendHello(b, m.Version), nil
	case MsgProjectHello:
		return AppendProjectHello(b, m.Version, m.ProjectID), nil
	case MsgConfiguration:
		return AppendConfig(b, d.Version, &m.Config)
	case MsgStart, MsgStop, MsgPause, MsgUnpause, MsgSuspend, MsgUnsuspend, MsgDataHelloReply:
		return AppendCommand(b, t), nil
	case MsgHeartbeat:
		return AppendHeartbeat(b, m.Mode, m.Buffers), nil
	case MsgDataBreak:
		return AppendDataBreak(b, m.Seq), nil
	case MsgMapThreadName:
		b, p := grow(b, offTNName)
		p[0] = byte(t)
		binary.BigEndian.PutUint16(p[offTID:], m.ThreadID)
		put32(p[offTNTime:], m.RelTime)
		return AppendUTFBytes(b, m.Text), nil
	case MsgMapMethodSignature, MsgMapException:
		id := m.MethodID
		if t == MsgMapException {
			id = m.ExceptionID
		}
		b, p := grow(b, offIDText)
		p[0] = byte(t)
		put32(p[offField1:], id)
		return AppendUTFBytes(b, m.Text), nil
	case MsgMapSourceLocation:
		return AppendMapSourceLocation(b, m.SourceLocationID, m.MethodID, m.StartLine, m.EndLine, m.StartChar, m.EndChar), nil
	case MsgMethodVisit:
		return AppendMethodVisit(b, m.RelTime, m.Seq, m.MethodID, m.SourceLocationID, m.ThreadID), nil
	case MsgSourceLocationCount:
		return AppendSourceLocationCount(b, m.MethodID, m.Count), nil
	case MsgMethodEntry:
		return AppendMethodEntry(b, m.RelTime, m.Seq, m.MethodID, m.ThreadID), nil
	case MsgMethodExit:
		if d.Flavor == FlavorCodePulse {
			return AppendMethodExitCodePulse(b, m.RelTime, m.Seq, m.MethodID, m.ExceptionThrown, m.ThreadID), nil
		}
		return AppendMethodExit(b, m.RelTime, m.Seq, m.MethodID, m.Line, m.ThreadID), nil
	case MsgException:
		return AppendException(b, m.RelTime, m.Seq, m.MethodID, m.ExceptionID, m.Line, m.ThreadID), nil
	case MsgExceptionBubble:
		return AppendExceptionBubble(b, m.RelTime, m.Seq, m.MethodID, m.ExceptionID, m.ThreadID), nil
	case MsgDataHello:
		return AppendDataHello(b, m.RunID), nil
	case MsgClassTransformed, MsgClassIgnored, MsgClassTransformFailed, MsgError:
		return AppendUTFBytes(append(b, byte(t)), m.Text), nil
	case MsgMarker:
		b, p := grow(b, offMarker)
		p[0] = byte(t)
		put32(p[offField1:], m.RelTime)
		put32(p[offField2:], m.Seq)
		b = AppendUTFBytes(b, m.Text)
		return AppendUTFBytes(b, m.Value), nil
	}
	return b, &UnknownTypeError{Type: uint8(m.Type)}
}
