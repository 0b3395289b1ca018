package hq

import (
	"encoding/binary"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// Field offsets of the fixed-size events (offset 0 is the type byte):
// every one starts with i32 relTime, i32 seq, i32 methodId.
const (
	offRelTime = u8Size
	offSeq     = offRelTime + i32Size
	offMethod  = offSeq + i32Size
	offField4  = offMethod + i32Size // tid (entry), line (exit), flag (Code Pulse exit), exception or source location id
	offTIDExit = offField4 + u16Size // MethodExit (Bytefrog): tid after the line
	offTIDCP   = offField4 + u8Size  // MethodExit (Code Pulse): tid after the flag
	offField5  = offField4 + i32Size // Exception: line; ExceptionBubble, MethodVisit: tid
	offTIDExc  = offField5 + u16Size // Exception: tid after the line
	// A Marker has relTime and seq, then its key and value, each after a
	// u16 length: the key starts after its length where methodId would be.
	offMarkerKey = offMethod + u16Size
)

func get32(b []byte) int32  { return int32(binary.BigEndian.Uint32(b)) }
func get16(b []byte) uint16 { return binary.BigEndian.Uint16(b) }

// decodeEvent fills m from a fixed-size event or a Marker at the start of
// raw, which the connection's parser has already framed and checked,
// setting the same fields as bytefrog's Parse. It reports false for other
// messages.
func decodeEvent(d bytefrog.Dialect, m *bytefrog.Msg, raw []byte) bool {
	var n int
	switch t := bytefrog.MsgType(raw[0]); t {
	case bytefrog.MsgMarker:
		// The parser checked the lengths and the modified UTF-8.
		keyEnd := offMarkerKey + int(get16(raw[offMarkerKey-u16Size:]))
		end := keyEnd + u16Size + int(get16(raw[keyEnd:]))
		m.Type = t
		m.RelTime = get32(raw[offRelTime:])
		m.Seq = get32(raw[offSeq:])
		m.Text = raw[offMarkerKey:keyEnd:keyEnd]
		m.Value = raw[keyEnd+u16Size : end : end]
		m.Raw = raw[:end:end]
		return true
	case bytefrog.MsgMethodEntry:
		n = bytefrog.MethodEntrySize
		m.ThreadID = get16(raw[offField4:n])
	case bytefrog.MsgMethodExit:
		if d.Flavor == bytefrog.FlavorCodePulse {
			n = bytefrog.MethodExitCodePulseSize
			m.ExceptionThrown = raw[offField4] != 0
			m.ThreadID = get16(raw[offTIDCP:n])
		} else {
			n = bytefrog.MethodExitSize
			m.Line = get16(raw[offField4:])
			m.ThreadID = get16(raw[offTIDExit:n])
		}
	case bytefrog.MsgException:
		n = bytefrog.ExceptionSize
		m.ExceptionID = get32(raw[offField4:])
		m.Line = get16(raw[offField5:])
		m.ThreadID = get16(raw[offTIDExc:n])
	case bytefrog.MsgExceptionBubble:
		n = bytefrog.ExceptionBubbleSize
		m.ExceptionID = get32(raw[offField4:])
		m.ThreadID = get16(raw[offField5:n])
	case bytefrog.MsgMethodVisit:
		n = bytefrog.MethodVisitSize
		m.SourceLocationID = get32(raw[offField4:])
		m.ThreadID = get16(raw[offField5:n])
	default:
		return false
	}
	m.Type = bytefrog.MsgType(raw[0])
	m.RelTime = get32(raw[offRelTime:])
	m.Seq = get32(raw[offSeq:])
	m.MethodID = get32(raw[offMethod:])
	m.Raw = raw[:n:n]
	return true
}
