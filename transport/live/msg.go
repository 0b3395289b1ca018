package live

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

var be = binary.BigEndian

// Header is the 16-byte request header (struct lttng_viewer_cmd).
type Header struct {
	DataSize   uint64
	Cmd        Command
	CmdVersion uint32
}

// ParseHeader decodes a request header.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, fmt.Errorf("%w: header of %d bytes", ErrShort, len(b))
	}
	return Header{DataSize: be.Uint64(b), Cmd: Command(be.Uint32(b[8:])), CmdVersion: be.Uint32(b[12:])}, nil
}

// Check verifies that the command is known and that data_size is its fixed
// payload size; it returns that size.
func (h Header) Check() (int, error) {
	n, ok := h.Cmd.PayloadSize()
	if !ok {
		return 0, &CommandError{Cmd: h.Cmd, DataSize: h.DataSize, Err: ErrUnknownCommand}
	}
	// lttng-relayd reads the payload by command type; a mismatch would
	// desynchronise the stream, so it is refused here.
	if h.DataSize != uint64(n) {
		return 0, &CommandError{Cmd: h.Cmd, DataSize: h.DataSize, Err: fmt.Errorf("%w: want %d", ErrSize, n)}
	}
	return n, nil
}

// AppendHeader encodes a request header.
func AppendHeader(b []byte, h Header) []byte {
	b = be.AppendUint64(b, h.DataSize)
	b = be.AppendUint32(b, uint32(h.Cmd))
	return be.AppendUint32(b, h.CmdVersion)
}

// AppendRequest encodes a whole request: header plus payload.
func AppendRequest(b []byte, c Command, payload []byte) []byte {
	b = AppendHeader(b, Header{DataSize: uint64(len(payload)), Cmd: c})
	return append(b, payload...)
}

// Connect is the CONNECT request and reply (struct lttng_viewer_connect).
type Connect struct {
	ViewerSessionID uint64
	Major, Minor    uint32
	Type            ConnType
}

// ParseConnect decodes a CONNECT payload.
func ParseConnect(b []byte) (Connect, error) {
	if len(b) < ConnectSize {
		return Connect{}, fmt.Errorf("%w: CONNECT of %d bytes", ErrShort, len(b))
	}
	return Connect{ViewerSessionID: be.Uint64(b), Major: be.Uint32(b[8:]), Minor: be.Uint32(b[12:]),
		Type: ConnType(be.Uint32(b[16:]))}, nil
}

// Append encodes c.
func (c Connect) Append(b []byte) []byte {
	b = be.AppendUint64(b, c.ViewerSessionID)
	b = be.AppendUint32(b, c.Major)
	b = be.AppendUint32(b, c.Minor)
	return be.AppendUint32(b, uint32(c.Type))
}

// AttachRequest is the ATTACH_SESSION payload.
type AttachRequest struct {
	SessionID uint64
	Offset    uint64 // unused
	Seek      Seek
}

// ParseAttach decodes an ATTACH_SESSION payload.
func ParseAttach(b []byte) (AttachRequest, error) {
	if len(b) < AttachRequestSize {
		return AttachRequest{}, fmt.Errorf("%w: ATTACH_SESSION of %d bytes", ErrShort, len(b))
	}
	return AttachRequest{SessionID: be.Uint64(b), Offset: be.Uint64(b[8:]), Seek: Seek(be.Uint32(b[16:]))}, nil
}

// Append encodes r.
func (r AttachRequest) Append(b []byte) []byte {
	b = be.AppendUint64(b, r.SessionID)
	b = be.AppendUint64(b, r.Offset)
	return be.AppendUint32(b, uint32(r.Seek))
}

// PacketRequest is the GET_PACKET payload.
type PacketRequest struct {
	StreamID uint64
	Offset   uint64 // bytes
	Len      uint32
}

// ParsePacketRequest decodes a GET_PACKET payload.
func ParsePacketRequest(b []byte) (PacketRequest, error) {
	if len(b) < GetPacketSize {
		return PacketRequest{}, fmt.Errorf("%w: GET_PACKET of %d bytes", ErrShort, len(b))
	}
	return PacketRequest{StreamID: be.Uint64(b), Offset: be.Uint64(b[8:]), Len: be.Uint32(b[16:])}, nil
}

// Append encodes r.
func (r PacketRequest) Append(b []byte) []byte {
	b = be.AppendUint64(b, r.StreamID)
	b = be.AppendUint64(b, r.Offset)
	return be.AppendUint32(b, r.Len)
}

// ParseID decodes the u64 payload of GET_NEXT_INDEX, GET_METADATA,
// GET_NEW_STREAMS and DETACH_SESSION.
func ParseID(b []byte) (uint64, error) {
	if len(b) < StreamIDSize {
		return 0, fmt.Errorf("%w: id of %d bytes", ErrShort, len(b))
	}
	return be.Uint64(b), nil
}

// SessionRecord is one entry of the LIST_SESSIONS reply.
type SessionRecord struct {
	ID        uint64
	LiveTimer uint32 // µs; 0 means not live
	Clients   uint32
	Streams   uint32
	Hostname  string // at most HostNameMax-1 bytes
	Name      string // at most NameMax-1 bytes
}

// Append encodes r; names are cut to fit their arrays.
func (r SessionRecord) Append(b []byte) []byte {
	b = be.AppendUint64(b, r.ID)
	b = be.AppendUint32(b, r.LiveTimer)
	b = be.AppendUint32(b, r.Clients)
	b = be.AppendUint32(b, r.Streams)
	b = appendFixed(b, r.Hostname, HostNameMax)
	return appendFixed(b, r.Name, NameMax)
}

// ParseSessionRecord decodes a session record.
func ParseSessionRecord(b []byte) (SessionRecord, error) {
	if len(b) < SessionRecordSize {
		return SessionRecord{}, fmt.Errorf("%w: session record of %d bytes", ErrShort, len(b))
	}
	return SessionRecord{ID: be.Uint64(b), LiveTimer: be.Uint32(b[8:]), Clients: be.Uint32(b[12:]),
		Streams: be.Uint32(b[16:]), Hostname: cString(b[20 : 20+HostNameMax]),
		Name: cString(b[20+HostNameMax : SessionRecordSize])}, nil
}

// StreamRecord is one stream of an ATTACH_SESSION or GET_NEW_STREAMS reply.
type StreamRecord struct {
	ID         uint64
	CTFTraceID uint64
	Metadata   bool
	Path       string
	Channel    string
}

// Append encodes r.
func (r StreamRecord) Append(b []byte) []byte {
	b = be.AppendUint64(b, r.ID)
	b = be.AppendUint64(b, r.CTFTraceID)
	var m uint32
	if r.Metadata {
		m = 1
	}
	b = be.AppendUint32(b, m)
	b = appendFixed(b, r.Path, PathMax)
	return appendFixed(b, r.Channel, NameMax)
}

// ParseStreamRecord decodes a stream record.
func ParseStreamRecord(b []byte) (StreamRecord, error) {
	if len(b) < StreamRecordSize {
		return StreamRecord{}, fmt.Errorf("%w: stream record of %d bytes", ErrShort, len(b))
	}
	const pathAt = 2*u64Size + u32Size
	return StreamRecord{ID: be.Uint64(b), CTFTraceID: be.Uint64(b[8:]), Metadata: be.Uint32(b[16:]) == 1,
		Path: cString(b[pathAt : pathAt+PathMax]), Channel: cString(b[pathAt+PathMax : StreamRecordSize])}, nil
}

// Index is a GET_NEXT_INDEX reply (struct lttng_viewer_index).
type Index struct {
	Offset          uint64 // bytes in the stream
	PacketSize      uint64 // bits
	ContentSize     uint64 // bits
	TimestampBegin  uint64 // clock cycles
	TimestampEnd    uint64
	EventsDiscarded uint64 // cumulative
	StreamClassID   uint64 // CTF stream class id, constant per stream
	Status          Status
	Flags           Flags
}

// Append encodes x.
func (x Index) Append(b []byte) []byte {
	for _, v := range [...]uint64{x.Offset, x.PacketSize, x.ContentSize, x.TimestampBegin, x.TimestampEnd,
		x.EventsDiscarded, x.StreamClassID} {
		b = be.AppendUint64(b, v)
	}
	b = be.AppendUint32(b, uint32(x.Status))
	return be.AppendUint32(b, uint32(x.Flags))
}

// ParseIndex decodes an index reply.
func ParseIndex(b []byte) (Index, error) {
	if len(b) < IndexReplySize {
		return Index{}, fmt.Errorf("%w: index of %d bytes", ErrShort, len(b))
	}
	return Index{Offset: be.Uint64(b), PacketSize: be.Uint64(b[8:]), ContentSize: be.Uint64(b[16:]),
		TimestampBegin: be.Uint64(b[24:]), TimestampEnd: be.Uint64(b[32:]), EventsDiscarded: be.Uint64(b[40:]),
		StreamClassID: be.Uint64(b[48:]), Status: Status(be.Uint32(b[56:])), Flags: Flags(be.Uint32(b[60:]))}, nil
}

// appendFixed appends s as a NUL-padded char[n], cut to n-1 bytes so that
// the last byte stays NUL.
func appendFixed(b []byte, s string, n int) []byte {
	if len(s) > n-1 {
		s = s[:n-1]
	}
	b = append(b, s...)
	return append(b, make([]byte, n-len(s))...)
}

// cString returns the bytes of a char array up to its first NUL; the
// array's last byte counts as NUL, as babeltrace forces it.
func cString(b []byte) string {
	b = b[:len(b)-1]
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
