package hq

import (
	"errors"
	"fmt"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// RecordKind is the kind of a trace record and of a unit of work for the core.
type RecordKind uint8

const (
	RecordRecv  RecordKind = 1 // bytes received on a connection
	RecordSent  RecordKind = 2 // bytes HQ sent on the control connection
	RecordOpen  RecordKind = 3 // a data connection was accepted
	RecordClose RecordKind = 4 // a connection ended; the bytes say why ("" = EOF)
	RecordNote  RecordKind = 5 // a remark of HQ's own, kept as a warning
	RecordEnd   RecordKind = 6 // the run ended: u8 ok, then the reason
)

var recNames = [...]string{
	RecordRecv: "recv", RecordSent: "sent", RecordOpen: "open", RecordClose: "close", RecordNote: "note", RecordEnd: "end",
}

func (k RecordKind) String() string {
	if int(k) < len(recNames) && recNames[k] != "" {
		return recNames[k]
	}
	return fmt.Sprintf("UNKNOWN_RECORD_%d", uint8(k))
}

// controlConn is the connection index of the control connection; data
// connections are numbered from 1 in the order they are accepted.
const controlConn = 0

// unit is one piece of work for a run's core, in the order the core takes
// them; it is also what the trace writer records.
type unit struct {
	kind RecordKind
	conn uint16
	t    uint32 // ms since the run started
	raw  []byte // the bytes received or sent; close: the cause; note: text
	// Data received: the slab raw lies in, the sequenced and unsequenced
	// messages this chunk completed, and the parse error that stopped the
	// connection, if any. The unit holds one slab reference per consumer.
	s    *slab
	ev   []event
	un   []uint32
	perr error
	// Close of a data connection: bytes of an incomplete message left.
	pending int
	// wire, when set, is the count of bytes received the unit stands for
	// (a columnar trace file keeps whole messages, not the reads).
	wire    int64
	wireSet bool
}

// Message classes on a data connection.
const (
	classRefused     uint8 = iota // not allowed on a data connection
	classUnsequenced              // routed on arrival
	classSequenced                // released in sequence order
)

// Every sequenced message starts with i32 relTime and then i32 seq.
const seqOffset = 1 + 4

// dataClasses returns the classes of message types on a data connection
// of protocol version v.
func dataClasses(v uint8) *[256]uint8 {
	var c [256]uint8
	for _, t := range []bytefrog.MsgType{
		bytefrog.MsgMapThreadName, bytefrog.MsgMapMethodSignature, bytefrog.MsgMapException, bytefrog.MsgError,
	} {
		c[t] = classUnsequenced
	}
	for _, t := range []bytefrog.MsgType{
		bytefrog.MsgMethodEntry, bytefrog.MsgMethodExit, bytefrog.MsgException, bytefrog.MsgExceptionBubble,
		bytefrog.MsgMarker,
	} {
		c[t] = classSequenced
	}
	if v >= bytefrog.Version3 { // "v3+ (13–15)"
		c[bytefrog.MsgMapSourceLocation] = classUnsequenced
		c[bytefrog.MsgSourceLocationCount] = classUnsequenced
		c[bytefrog.MsgMethodVisit] = classSequenced
	}
	return &c
}

// fixedSizes returns the sizes of the fixed-size sequenced messages, which
// the parser frames without a full decode; 0 for the others.
func fixedSizes(d bytefrog.Dialect) *[256]uint8 {
	var f [256]uint8
	f[bytefrog.MsgMethodEntry] = bytefrog.MethodEntrySize
	f[bytefrog.MsgMethodExit] = bytefrog.MethodExitSize
	if d.Flavor == bytefrog.FlavorCodePulse {
		f[bytefrog.MsgMethodExit] = bytefrog.MethodExitCodePulseSize
	}
	f[bytefrog.MsgException] = bytefrog.ExceptionSize
	f[bytefrog.MsgExceptionBubble] = bytefrog.ExceptionBubbleSize
	if d.Version >= bytefrog.Version3 {
		f[bytefrog.MsgMethodVisit] = bytefrog.MethodVisitSize
	}
	return &f
}

// knownType reports whether t is a message type of the protocol.
func knownType(t uint8) bool {
	switch bytefrog.MsgType(t) {
	case bytefrog.MsgHello, bytefrog.MsgConfiguration, bytefrog.MsgStart, bytefrog.MsgStop, bytefrog.MsgPause,
		bytefrog.MsgUnpause, bytefrog.MsgSuspend, bytefrog.MsgUnsuspend, bytefrog.MsgHeartbeat,
		bytefrog.MsgDataBreak, bytefrog.MsgMapThreadName, bytefrog.MsgMapMethodSignature,
		bytefrog.MsgMapException, bytefrog.MsgMapSourceLocation, bytefrog.MsgMethodVisit,
		bytefrog.MsgSourceLocationCount, bytefrog.MsgProjectHello, bytefrog.MsgMethodEntry,
		bytefrog.MsgMethodExit, bytefrog.MsgException, bytefrog.MsgExceptionBubble, bytefrog.MsgDataHello,
		bytefrog.MsgDataHelloReply, bytefrog.MsgClassTransformed, bytefrog.MsgClassIgnored,
		bytefrog.MsgClassTransformFailed, bytefrog.MsgMarker, bytefrog.MsgError:
		return true
	}
	return false
}

// chunkParser frames and checks the messages of one data connection as
// chunks of it arrive, indexing them in the slab they were read into. It is
// used by the connection's reader goroutine, and by Replay.
type chunkParser struct {
	d       bytefrog.Dialect
	class   *[256]uint8
	holders int32 // slab references each unit carries
	size    int   // bytes of the slabs read into: slabSize unless set
	s       *slab
	r, w    int   // s.raw[r:w]: bytes of a message not yet complete
	off     int64 // stream offset of s.raw[r]
	v       bytefrog.EventView
	err     error // the first error; nothing is parsed after it
	u       unit  // the unit feed hands on, valid during the call
}

func newChunkParser(d bytefrog.Dialect, holders int32) *chunkParser {
	p := &chunkParser{d: d, class: dataClasses(d.Version), holders: holders, size: slabSize}
	p.v.Init(nil, d)
	return p
}

// space returns the free part of the current slab to read into. When less
// than minRead is free it moves on to a fresh slab, carrying the bytes of the
// incomplete message.
func (p *chunkParser) space() []byte {
	switch {
	case p.s == nil:
		p.s, p.r, p.w = getSlabOf(p.size), 0, 0
	case len(p.s.raw)-p.w < minRead:
		ns := getSlabOf(p.size)
		k := copy(ns.raw, p.s.raw[p.r:p.w])
		p.s.unref()
		p.s, p.r, p.w = ns, 0, k
	}
	return p.s.raw[p.w:]
}

// commit takes the n bytes just written at the start of space() and parses
// every message they complete. The unit it returns carries p.holders slab
// references.
func (p *chunkParser) commit(n int) unit {
	s := p.s
	end := p.w + n
	u := unit{kind: RecordRecv, s: s, raw: s.raw[p.w:end:end]}
	p.w = end
	e0, u0 := len(s.ev), len(s.un)
	r := p.r
	if p.err == nil {
		v := &p.v
		v.Reset(s.raw[r:end:end])
		for {
			// Runs of method events in one call, then one other message.
			var ok bool
			if s.ev, ok = v.AppendSequenced(s.ev, uint32(r)); !ok {
				break
			}
			at := r + v.Offset()
			switch p.class[v.Type()] {
			case classSequenced: // a Marker
				s.ev = append(s.ev, event{Seq: v.Seq(), Off: uint32(at)})
				continue
			case classUnsequenced:
				s.un = append(s.un, uint32(at))
				continue
			}
			p.err = p.refused(uint8(v.Type()), at) // a DataBreak
			break
		}
		if err := v.Err(); err != nil {
			var ve *bytefrog.ViewError
			errors.As(err, &ve)
			if errors.Is(err, bytefrog.ErrNotData) {
				p.err = p.refused(uint8(ve.Type), r+ve.Offset)
			} else {
				p.err = fmt.Errorf("at stream offset %d: %w", p.off+int64(ve.Offset), ve.Err)
			}
		}
		r += v.Offset()
	}
	p.off += int64(r - p.r)
	p.r = r
	u.ev = s.ev[e0:len(s.ev):len(s.ev)]
	u.un = s.un[u0:len(s.un):len(s.un)]
	u.perr = p.err
	s.ref(p.holders)
	return u
}

// refused describes a type byte that may not appear on a data connection.
func (p *chunkParser) refused(t uint8, r int) error {
	at := p.off + int64(r-p.r)
	if !knownType(t) {
		return fmt.Errorf("at stream offset %d: %w", at, &bytefrog.UnknownTypeError{Type: t})
	}
	if t == uint8(bytefrog.MsgMapSourceLocation) || t == uint8(bytefrog.MsgMethodVisit) ||
		t == uint8(bytefrog.MsgSourceLocationCount) {
		return fmt.Errorf("at stream offset %d: %v needs protocol version 3 (run speaks %d)", at, bytefrog.MsgType(t), p.d.Version)
	}
	return fmt.Errorf("at stream offset %d: unexpected %v message on a data connection", at, bytefrog.MsgType(t))
}

// pending returns the number of bytes of an incomplete message.
func (p *chunkParser) pending() int { return p.w - p.r }

// feed parses b as if it had been read from the connection, in as many
// units as the slab space needs.
func (p *chunkParser) feed(b []byte, emit func(*unit)) {
	for len(b) > 0 {
		n := copy(p.space(), b)
		b = b[n:]
		p.u = p.commit(n)
		emit(&p.u)
	}
}

// close drops the parser's reference to its slab.
func (p *chunkParser) close() {
	if p.s != nil {
		p.s.unref()
		p.s = nil
	}
}
