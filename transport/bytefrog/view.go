package bytefrog

import (
	"errors"
	"fmt"
	"slices"
)

// ErrNotData: a message that is not a data message of the view's dialect
// (a control message, or a protocol version 3 message under an earlier
// version).
var ErrNotData = errors.New("bytefrog: not a data message")

// ViewError is an error of an EventView: the offset in its buffer of the
// message that stopped it, and the cause, which wraps a sentinel.
type ViewError struct {
	Offset int
	Type   MsgType
	Err    error
}

func (e *ViewError) Error() string {
	return fmt.Sprintf("bytefrog: at offset %d: %v", e.Offset, e.Err)
}

func (e *ViewError) Unwrap() error { return e.Err }

// View message kinds: how a type is framed.
const (
	viewNone   uint8 = iota // not a data message
	viewFixed               // fixed size, no string
	viewUTF1                // one string at a fixed offset
	viewMarker              // two strings
)

// viewTables holds the framing of each type byte for one dialect.
type viewTables struct {
	kind   [256]uint8
	size   [256]uint8 // fixed kinds: the message size; viewUTF1: the string's offset
	fixed  [256]uint8 // fixed kinds: the message size; others 0
	seqFix [256]uint8 // fixed-size sequenced kinds: the message size; others 0
	what   [256]string
	flavor Flavor
	// Field offsets by type; 0: the type has no such field.
	seq, time, method, tid, exc, line, sl [256]uint8
}

// viewFor returns the shared tables of the dialect's data messages.
func viewFor(d Dialect) *viewTables {
	v3 := d.Version >= Version3
	i := 0
	if v3 {
		i = 1
	}
	if d.Flavor == FlavorCodePulse {
		i += 2
	}
	return &viewTablesAll[i]
}

var viewTablesAll = func() (t [4]viewTables) {
	for i := range t {
		v := &t[i]
		v.flavor = FlavorBytefrog
		if i >= 2 {
			v.flavor = FlavorCodePulse
		}
		fixed := func(m MsgType, n int) { v.kind[m], v.size[m], v.fixed[m] = viewFixed, uint8(n), uint8(n) }
		utf := func(m MsgType, off int, what string) { v.kind[m], v.size[m], v.what[m] = viewUTF1, uint8(off), what }
		fixed(MsgMethodEntry, MethodEntrySize)
		if v.flavor == FlavorCodePulse {
			fixed(MsgMethodExit, MethodExitCodePulseSize)
		} else {
			fixed(MsgMethodExit, MethodExitSize)
		}
		fixed(MsgException, ExceptionSize)
		fixed(MsgExceptionBubble, ExceptionBubbleSize)
		fixed(MsgDataBreak, DataBreakSize)
		v.kind[MsgMarker] = viewMarker
		utf(MsgMapThreadName, offTNName, "name")
		utf(MsgMapMethodSignature, offIDText, "signature")
		utf(MsgMapException, offIDText, "class name")
		utf(MsgError, offString, "message")
		if i%2 == 1 { // "v3+ (13–15)"
			fixed(MsgMapSourceLocation, MapSourceLocationSize)
			fixed(MsgMethodVisit, MethodVisitSize)
			fixed(MsgSourceLocationCount, SourceLocationCountSize)
		}
		for _, m := range []MsgType{MsgMethodEntry, MsgMethodExit, MsgException, MsgExceptionBubble, MsgMethodVisit} {
			v.seq[m], v.time[m], v.method[m] = offField2, offField1, offField3
			v.seqFix[m] = v.fixed[m]
		}
		v.seq[MsgMarker], v.time[MsgMarker] = offField2, offField1
		v.seq[MsgDataBreak] = offField1
		v.time[MsgMapThreadName] = offTNTime
		v.method[MsgMapMethodSignature], v.method[MsgSourceLocationCount] = offField1, offField1
		v.method[MsgMapSourceLocation] = offField2
		v.tid[MsgMethodEntry], v.tid[MsgException] = offField4, offField6
		v.tid[MsgExceptionBubble], v.tid[MsgMethodVisit], v.tid[MsgMapThreadName] = offField5, offField5, offTID
		v.tid[MsgMethodExit], v.line[MsgMethodExit] = offExit2, offField4
		if v.flavor == FlavorCodePulse {
			v.tid[MsgMethodExit], v.line[MsgMethodExit] = offExitCP, 0
		}
		v.line[MsgException] = offField5
		v.exc[MsgException], v.exc[MsgExceptionBubble], v.exc[MsgMapException] = offField4, offField4, offField1
		v.sl[MsgMethodVisit], v.sl[MsgMapSourceLocation] = offField4, offField1
	}
	return t
}()

// DataMsg reports whether a message of type t is one an EventView in
// dialect d reads: method events, markers, the mappings and Error that a
// data connection carries, and DataBreak.
func (d Dialect) DataMsg(t MsgType) bool { return viewFor(d).kind[t] != viewNone }

// An EventView reads the data messages of a buffer in place: method
// entries, exits, exceptions and bubbles, method visits, markers, the
// mappings (thread names, method signatures, exception names, source
// locations), Error and DataBreak, in either MethodExit flavour. Next
// frames one message at a time and checks its strings; the accessors read
// the current message's fields where they lie. Nothing is allocated or
// copied: the slices it returns alias the buffer.
//
// A string is at most MaxStringLen bytes by its u16 length prefix, so a
// message is never longer than a Marker with two full strings. A view is
// not safe for concurrent use.
type EventView struct {
	t    *viewTables
	buf  []byte
	off  int // start of the current message
	next int // start of the next one
	typ  MsgType
	key  int // Marker: the end of its key, from the message's start
	err  error
}

// NewEventView returns a view of the data messages of b in dialect d:
// d.Flavor is the MethodExit layout, d.Version ≥ 3 admits ids 13–15.
func NewEventView(b []byte, d Dialect) *EventView {
	v := &EventView{}
	v.Init(b, d)
	return v
}

// Init makes v read b in dialect d from its start, as NewEventView.
func (v *EventView) Init(b []byte, d Dialect) {
	*v = EventView{t: viewFor(d), buf: b}
}

// Reset makes v read b from its start, keeping the dialect.
func (v *EventView) Reset(b []byte) {
	v.buf, v.off, v.next, v.typ, v.err = b, 0, 0, 0, nil
}

// Next moves to the next message and reports whether there is one. It
// returns false at the end of the buffer, before a message the buffer holds
// only the start of (see Rest), and at a message it refuses (see Err),
// after which it stays stopped.
func (v *EventView) Next() bool {
	b, off := v.buf, v.next
	if off < len(b) {
		// A fixed-size data message, whole: the common case. (A view
		// stops only at a type that has no fixed size.)
		if n := int(v.t.fixed[b[off]]); n != 0 && n <= len(b)-off {
			v.off, v.typ, v.next = off, MsgType(b[off]), off+n
			return true
		}
	}
	return v.nextVar()
}

// SeqOff is a sequenced message's number and its offset in a buffer.
type SeqOff struct {
	Seq int32
	Off uint32
}

// AppendSequenced reads on as Next does while the messages are sequenced
// ones (method events, visits and markers), appending the number of each
// and its offset in the buffer plus base to idx, then calls Next for the
// message after them and returns its result: a reader that indexes events
// takes a run of them in one call, and whatever else comes as with Next.
// Next never returns a whole, valid marker there (it returns the marker
// only to refuse it, see Err).
//
// The index is written into idx's spare capacity, grown only when that is
// full: the loop stores each entry without append's check, and keeps the
// table and the buffer in registers.
func (v *EventView) AppendSequenced(idx []SeqOff, base uint32) ([]SeqOff, bool) {
	b, off := v.buf, v.next
	fix := &v.t.seqFix
	for off < len(b) {
		out := idx[len(idx):cap(idx)]
		k := 0
		for k < len(out) {
			if off <= len(b)-minSequenced {
				h := (*[minSequenced]byte)(b[off : off+minSequenced])
				if n := int(fix[h[0]]); n != 0 && n <= len(b)-off {
					out[k] = SeqOff{Seq: get32(h[offField2:]), Off: base + uint32(off)}
					off += n
					k++
					continue
				}
			}
			// A log record: a marker, framed and checked here, or else
			// by Next, which names what is wrong with it.
			n := markerLen(b[off:])
			if n == 0 {
				break
			}
			out[k] = SeqOff{Seq: get32(b[off+offField2:]), Off: base + uint32(off)}
			off += n
			k++
		}
		idx = idx[:len(idx)+k]
		if k < len(out) {
			break // the run ended
		}
		idx = slices.Grow(idx, max(len(idx), minIndexGrow))
	}
	v.next = off
	return idx, v.Next()
}

// markerLen returns the size of the marker at the start of b when b holds
// all of it and both its strings are valid modified UTF-8; else 0 (another
// type, a marker b holds only the start of, or one Next refuses). Every
// dialect has markers.
func markerLen(b []byte) int {
	if len(b) < MarkerMinSize || MsgType(b[0]) != MsgMarker {
		return 0
	}
	keyEnd := offMarker + u16Size + int(get16(b[offMarker:]))
	if keyEnd > len(b)-u16Size {
		return 0
	}
	end := keyEnd + u16Size + int(get16(b[keyEnd:]))
	if end > len(b) {
		return 0
	}
	key, val := b[offMarker+u16Size:keyEnd], b[keyEnd+u16Size:end]
	// The usual marker, a log record: both strings plain ASCII.
	if (asciiBits(key)|asciiBits(val))&asciiMask != 0 && (invalidUTFAt(key) >= 0 || invalidUTFAt(val) >= 0) {
		return 0
	}
	return end
}

// minSequenced is the size of the smallest fixed-size sequenced message,
// a MethodEntry: every one holds type, time and number.
const minSequenced = MethodEntrySize

// minIndexGrow is the least room AppendSequenced makes when idx is full.
const minIndexGrow = 64

// Revisit makes the message at the start of b the current one, b being a
// buffer this view or another of its dialect has already read that message
// in: it frames the message again without checking its strings. Next then
// goes on with the messages after it in b. Revisit reports false, with v
// stopped and Type 0, when b does not start with a whole data message of
// the dialect. A reader that indexed messages with Next comes back to them
// with Revisit, for no more than the cost of their framing.
func (v *EventView) Revisit(b []byte) bool {
	if len(b) > 0 && v.err == nil {
		if n := int(v.t.fixed[b[0]]); n != 0 && n <= len(b) {
			v.buf, v.off, v.next, v.typ = b, 0, n, MsgType(b[0])
			return true
		}
	}
	return v.revisit(b)
}

// revisit is Revisit's path for messages with strings.
func (v *EventView) revisit(b []byte) bool {
	v.buf, v.off, v.next, v.typ, v.err = b, 0, 0, 0, nil
	if len(b) == 0 {
		return false
	}
	t := b[0]
	var end int
	switch v.t.kind[t] {
	case viewFixed:
		end = int(v.t.size[t])
	case viewUTF1:
		end = int(v.t.size[t]) + u16Size
		if len(b) >= end {
			end += int(get16(b[end-u16Size:]))
		}
	case viewMarker:
		end = offMarker + u16Size
		if len(b) >= end {
			v.key = end + int(get16(b[offMarker:]))
			end = v.key + u16Size
			if len(b) >= end {
				end += int(get16(b[v.key:]))
			}
		}
	default:
		v.buf = nil
		return false
	}
	if len(b) < end {
		v.buf = nil
		return false
	}
	v.typ, v.next = MsgType(t), end
	return true
}

// nextVar frames a message with strings, or refuses the type.
func (v *EventView) nextVar() bool {
	v.off = v.next
	if v.err != nil || v.off >= len(v.buf) {
		return false
	}
	b := v.buf[v.off:]
	t := b[0]
	switch v.t.kind[t] {
	case viewFixed: // not all there yet
		return false
	case viewUTF1:
		end, ok := utfEnd(b, int(v.t.size[t]))
		if !ok {
			return false
		}
		if err := checkUTF(b, b[int(v.t.size[t])+u16Size:end], v.t.what[t]); err != nil {
			return v.fail(t, err)
		}
		v.typ, v.next = MsgType(t), v.off+end
		return true
	case viewMarker:
		keyEnd, ok := utfEnd(b, offMarker)
		if !ok {
			return false
		}
		end, ok := utfEnd(b, keyEnd)
		if !ok {
			return false
		}
		// The usual marker, a log record: both strings plain ASCII, seen
		// in one pass each; else each is checked and its error named.
		key, val := b[offMarker+u16Size:keyEnd], b[keyEnd+u16Size:end]
		if (asciiBits(key)|asciiBits(val))&asciiMask != 0 {
			if err := checkUTF(b, key, "key"); err != nil {
				return v.fail(t, err)
			}
			if err := checkUTF(b, val, "value"); err != nil {
				return v.fail(t, err)
			}
		}
		v.typ, v.next, v.key = MsgMarker, v.off+end, keyEnd
		return true
	}
	var err error = &UnknownTypeError{Type: t}
	if int(t) < len(msgNames) && msgNames[t] != "" {
		err = fmt.Errorf("%w: %v", ErrNotData, MsgType(t))
	}
	return v.fail(t, err)
}

func (v *EventView) fail(t byte, err error) bool {
	v.err = &ViewError{Offset: v.off, Type: MsgType(t), Err: err}
	return false
}

// Err returns the error that stopped the view, a *ViewError wrapping
// ErrUnknownType, ErrNotData or ErrInvalidUTF; nil when it stopped at the
// end of its buffer or before an incomplete message.
func (v *EventView) Err() error { return v.err }

// Rest returns the bytes after the last message read; once Next has
// returned false without an error, they are the start of a message the
// buffer does not hold all of (empty at a clean end).
func (v *EventView) Rest() []byte { return v.buf[v.next:] }

// Offset returns the offset of the current message in the buffer, or,
// once Next has returned false, of the first byte not read.
func (v *EventView) Offset() int { return v.off }

// Type returns the current message's type.
func (v *EventView) Type() MsgType { return v.typ }

// Raw returns the current message as it is on the wire.
func (v *EventView) Raw() []byte { return v.buf[v.off:v.next:v.next] }

// at returns the current message.
func (v *EventView) at() []byte { return v.buf[v.off:v.next:v.next] }

// Sequenced reports whether the current message takes part in the
// sequence (method events, visits and markers).
func (v *EventView) Sequenced() bool { return v.typ.Sequenced() }

// Seq returns the sequence number of a sequenced message, the next number
// of a DataBreak, else 0.
func (v *EventView) Seq() int32 { return v.i32(v.t.seq[v.typ]) }

// RelTime returns the ms since the trace start of an event, a marker or a
// thread name mapping, else 0.
func (v *EventView) RelTime() int32 { return v.i32(v.t.time[v.typ]) }

// MethodID returns the method id of an event, a signature mapping, a source
// location or its count, else 0.
func (v *EventView) MethodID() int32 { return v.i32(v.t.method[v.typ]) }

// ThreadID returns the thread id of an event or a thread name mapping,
// else 0.
func (v *EventView) ThreadID() uint16 {
	if o := int(v.t.tid[v.typ]); o != 0 {
		return get16(v.buf[v.off+o:])
	}
	return 0
}

// Line returns the line of a MethodExit (Bytefrog flavour) or an Exception;
// NoLine for other messages.
func (v *EventView) Line() uint16 {
	if o := int(v.t.line[v.typ]); o != 0 {
		return get16(v.buf[v.off+o:])
	}
	return NoLine
}

// i32 reads the i32 at offset o of the current message; 0 when o is 0.
func (v *EventView) i32(o uint8) int32 {
	if o != 0 {
		return get32(v.buf[v.off+int(o):])
	}
	return 0
}

// ExceptionThrown returns the flag of a Code Pulse MethodExit: any non-zero
// byte is true.
func (v *EventView) ExceptionThrown() bool {
	return v.typ == MsgMethodExit && v.t.flavor == FlavorCodePulse && v.buf[v.off+offField4] != 0
}

// ExceptionID returns the exception id of an Exception, an ExceptionBubble
// or an exception mapping, else 0.
func (v *EventView) ExceptionID() int32 { return v.i32(v.t.exc[v.typ]) }

// SourceLocationID returns the source location id of a MethodVisit or a
// MapSourceLocation, else 0.
func (v *EventView) SourceLocationID() int32 { return v.i32(v.t.sl[v.typ]) }

// Text returns the string of a mapping or an Error, or a marker's key, as
// sent (checked modified UTF-8); nil for other messages.
func (v *EventView) Text() []byte {
	b := v.at()
	switch k := v.t.kind[v.typ]; {
	case v.typ == MsgMarker:
		return b[offMarker+u16Size : v.key : v.key]
	case k == viewUTF1:
		return b[int(v.t.size[v.typ])+u16Size:]
	}
	return nil
}

// Value returns a marker's value; nil for other messages.
func (v *EventView) Value() []byte {
	if v.typ != MsgMarker {
		return nil
	}
	b := v.at()
	return b[v.key+u16Size:]
}

// Event is one fixed-size method event (entry, exit, exception, bubble,
// visit) by value. It holds no pointer, so a reader may keep one anywhere
// and fill it again and again for nothing but the loads and stores.
type Event struct {
	Type             MsgType
	Flag             uint8 // MethodExit (Code Pulse): the exceptionThrown byte as sent
	ThreadID         uint16
	Line             uint16 // MethodExit (Bytefrog), Exception; else NoLine
	RelTime          int32
	Seq              int32
	MethodID         int32
	ExceptionID      int32 // Exception, ExceptionBubble
	SourceLocationID int32 // MethodVisit
	Size             int   // bytes on the wire
}

// LoadEvent decodes the method event at the start of b into e and reports
// whether b starts with a whole one; for any other message it reports false
// and leaves e alone. Like Load it leaves v's position alone.
func (v *EventView) LoadEvent(e *Event, b []byte) bool {
	if len(b) == 0 {
		return false
	}
	t := MsgType(b[0])
	n := int(v.t.fixed[t])
	if n == 0 || n > len(b) || v.t.method[t] != offField3 {
		return false
	}
	b = b[:n:n]
	h := (*[MethodEntrySize]byte)(b) // every method event is at least as long: one bounds check
	e.Type, e.Size, e.Flag, e.Line, e.ExceptionID, e.SourceLocationID = t, n, 0, NoLine, 0, 0
	e.RelTime = get32(h[offField1:offField2])
	e.Seq = get32(h[offField2:offField3])
	e.MethodID = get32(h[offField3:offField4])
	switch t {
	case MsgMethodEntry:
		e.ThreadID = get16(h[offField4:])
	case MsgMethodExit:
		if v.t.flavor == FlavorCodePulse {
			e.Flag = b[offField4]
			e.ThreadID = get16(b[offExitCP:])
		} else {
			e.Line = get16(b[offField4:])
			e.ThreadID = get16(b[offExit2:])
		}
	case MsgException:
		e.ExceptionID = get32(b[offField4:])
		e.Line = get16(b[offField5:])
		e.ThreadID = get16(b[offField6:])
	case MsgExceptionBubble:
		e.ExceptionID = get32(b[offField4:])
		e.ThreadID = get16(b[offField5:])
	case MsgMethodVisit:
		e.SourceLocationID = get32(b[offField4:])
		e.ThreadID = get16(b[offField5:])
	}
	return true
}

// Load decodes the data message at the start of b into m, as Revisit and
// then Msg would, for a message a view of this dialect has already read
// (its strings are not checked again), and reports whether b starts with a
// whole data message. It leaves v's position alone: it is the cheapest way
// back to an indexed message when all of its fields are wanted.
func (v *EventView) Load(m *Msg, b []byte) bool {
	if len(b) == 0 {
		return false
	}
	t := MsgType(b[0])
	switch n := int(v.t.fixed[t]); {
	case t == MsgMethodEntry && n <= len(b):
		b = b[:MethodEntrySize:MethodEntrySize]
		m.ThreadID = get16(b[offField4:])
	case t == MsgMethodExit && n <= len(b):
		b = b[:n:n]
		if v.t.flavor == FlavorCodePulse {
			m.ExceptionThrown = b[offField4] != 0
			m.ThreadID = get16(b[offExitCP:])
		} else {
			m.Line = get16(b[offField4:])
			m.ThreadID = get16(b[offExit2:])
		}
	case t == MsgException && n <= len(b):
		b = b[:ExceptionSize:ExceptionSize]
		m.ExceptionID = get32(b[offField4:])
		m.Line = get16(b[offField5:])
		m.ThreadID = get16(b[offField6:])
	case t == MsgExceptionBubble && n <= len(b):
		b = b[:ExceptionBubbleSize:ExceptionBubbleSize]
		m.ExceptionID = get32(b[offField4:])
		m.ThreadID = get16(b[offField5:])
	case t == MsgMarker && v.t.kind[t] == viewMarker:
		return loadMarker(m, b)
	default:
		var w EventView
		w.t = v.t
		if !w.Revisit(b) {
			return false
		}
		w.Msg(m)
		return true
	}
	h := (*[MethodEntrySize]byte)(b) // every method event is at least as long: one bounds check
	m.Type, m.Raw = t, b
	m.RelTime = get32(h[offField1:offField2])
	m.Seq = get32(h[offField2:offField3])
	m.MethodID = get32(h[offField3:offField4])
	return true
}

// loadMarker is Load of a Marker: framed again, as Revisit and Msg would,
// without a view.
func loadMarker(m *Msg, b []byte) bool {
	if len(b) < offMarker+u16Size {
		return false
	}
	keyEnd := offMarker + u16Size + int(get16(b[offMarker:]))
	if len(b) < keyEnd+u16Size {
		return false
	}
	end := keyEnd + u16Size + int(get16(b[keyEnd:]))
	if len(b) < end {
		return false
	}
	b = b[:end:end]
	m.Type, m.Raw = MsgMarker, b
	m.RelTime = get32(b[offField1:])
	m.Seq = get32(b[offField2:])
	m.Text, m.Value = b[offMarker+u16Size:keyEnd:keyEnd], b[keyEnd+u16Size:]
	return true
}

// Msg sets m.Type, m.Raw and the fields of the current message's type, as
// Dialect.Parse does, and leaves the other fields alone.
func (v *EventView) Msg(m *Msg) {
	b := v.at()
	m.Type, m.Raw = v.typ, v.Raw()
	switch v.typ {
	case MsgMethodEntry, MsgMethodExit, MsgException, MsgExceptionBubble, MsgMethodVisit:
		m.RelTime = get32(b[offField1:])
		m.Seq = get32(b[offField2:])
		m.MethodID = get32(b[offField3:])
		switch v.typ {
		case MsgMethodEntry:
			m.ThreadID = get16(b[offField4:])
		case MsgMethodExit:
			if v.t.flavor == FlavorCodePulse {
				m.ExceptionThrown = b[offField4] != 0
				m.ThreadID = get16(b[offExitCP:])
			} else {
				m.Line = get16(b[offField4:])
				m.ThreadID = get16(b[offExit2:])
			}
		case MsgException:
			m.ExceptionID = get32(b[offField4:])
			m.Line = get16(b[offField5:])
			m.ThreadID = get16(b[offField6:])
		case MsgExceptionBubble:
			m.ExceptionID = get32(b[offField4:])
			m.ThreadID = get16(b[offField5:])
		case MsgMethodVisit:
			m.SourceLocationID = get32(b[offField4:])
			m.ThreadID = get16(b[offField5:])
		}
	case MsgMarker:
		m.RelTime = get32(b[offField1:])
		m.Seq = get32(b[offField2:])
		m.Text, m.Value = v.Text(), v.Value()
	case MsgDataBreak:
		m.Seq = get32(b[offField1:])
	case MsgMapThreadName:
		m.ThreadID = get16(b[offTID:])
		m.RelTime = get32(b[offTNTime:])
		m.Text = v.Text()
	case MsgMapMethodSignature:
		m.MethodID = get32(b[offField1:])
		m.Text = v.Text()
	case MsgMapException:
		m.ExceptionID = get32(b[offField1:])
		m.Text = v.Text()
	case MsgError:
		m.Text = v.Text()
	case MsgMapSourceLocation:
		m.SourceLocationID = get32(b[offField1:])
		m.MethodID = get32(b[offField2:])
		m.StartLine = get32(b[offField3:])
		m.EndLine = get32(b[offField4:])
		m.StartChar = int16(get16(b[offField5:]))
		m.EndChar = int16(get16(b[offField6:]))
	case MsgSourceLocationCount:
		m.MethodID = get32(b[offField1:])
		m.Count = get32(b[offField2:])
	}
}
