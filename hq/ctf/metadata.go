package ctf

import (
	"fmt"
	"strconv"
	"strings"
)

// EventClass is a CTF event class id of a tadpole trace.
type EventClass uint16

// Event classes. Ids are fixed: the metadata declares them all up front,
// so a live viewer never needs a metadata update.
const (
	EvMethodEntry         EventClass = 0
	EvMethodExit          EventClass = 1
	EvException           EventClass = 2
	EvExceptionBubble     EventClass = 3
	EvMethodVisit         EventClass = 4
	EvMarker              EventClass = 5
	EvThreadName          EventClass = 6
	EvMethodSignature     EventClass = 7
	EvExceptionClass      EventClass = 8
	EvDataBreak           EventClass = 9
	EvSourceLocation      EventClass = 10
	EvSourceLocationCount EventClass = 11
	numEventClasses                  = 12
)

// eventDecl is an event class: its name and TSDL fields.
type eventDecl struct {
	name   string
	fields string
}

const (
	fSeq    = "int32_t seq; "
	fThread = "uint16_t tid; "
	fMethod = "int32_t method_id; string method; "
)

var eventDecls = [numEventClasses]eventDecl{
	EvMethodEntry:         {"method_entry", fSeq + fThread + fMethod},
	EvMethodExit:          {"method_exit", fSeq + fThread + fMethod + "int32_t line; uint8_t exception_thrown; "},
	EvException:           {"exception", fSeq + fThread + fMethod + "int32_t exception_id; string exception; int32_t line; "},
	EvExceptionBubble:     {"exception_bubble", fSeq + fThread + fMethod + "int32_t exception_id; string exception; "},
	EvMethodVisit:         {"method_visit", fSeq + fThread + fMethod + "int32_t source_location_id; "},
	EvMarker:              {"marker", fSeq + "string key; string value; "},
	EvThreadName:          {"thread_name", fThread + "string name; "},
	EvMethodSignature:     {"method_signature", "int32_t method_id; string signature; "},
	EvExceptionClass:      {"exception_class", "int32_t exception_id; string name; "},
	EvDataBreak:           {"data_break", fSeq},
	EvSourceLocation:      {"source_location", "int32_t source_location_id; " + fMethod + "int32_t start_line; int32_t end_line; int16_t start_char; int16_t end_char; "},
	EvSourceLocationCount: {"source_location_count", fMethod + "int32_t count; "},
}

// EventPrefix starts every event class name ("tadpole:method_entry").
const EventPrefix = "tadpole:"

func (e EventClass) String() string {
	if int(e) < len(eventDecls) {
		return EventPrefix + eventDecls[e].name
	}
	return fmt.Sprintf("UNKNOWN_EVENT_CLASS_%d", uint16(e))
}

// Packet layout, little-endian and fully packed (align = 8 bits).
const (
	PacketMagic uint32 = 0xC1FC1FC1
	// StreamClassID is the one stream class: every stream is an instance.
	StreamClassID = 0

	// packet header: magic, stream_id, stream_instance_id
	headerSize = 4 + 4 + 8
	// packet context: timestamp_begin, timestamp_end, content_size,
	// packet_size, packet_seq_num, events_discarded
	contextSize = 6 * 8
	// PacketOverhead is the size of an empty packet.
	PacketOverhead = headerSize + contextSize
	// event header: id, timestamp
	eventHeaderSize = 2 + 8

	offBegin   = headerSize
	offEnd     = offBegin + 8
	offContent = offEnd + 8
	offPacket  = offContent + 8
	offSeqNum  = offPacket + 8
	offDiscard = offSeqNum + 8
)

// Metadata returns the TSDL of a tadpole trace: one stream class whose
// instances are the run stream (instance 0) and one stream per traced
// thread (instance tid+1), all event classes, a nanosecond clock on the
// Unix epoch, and env fields describing the run.
func Metadata(env map[string]string, envKeys []string) []byte {
	var b strings.Builder
	b.WriteString(`/* CTF 1.8 */
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 16; align = 8; signed = false; } := uint16_t;
typealias integer { size = 16; align = 8; signed = true; } := int16_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 32; align = 8; signed = true; } := int32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;

trace {
	major = 1;
	minor = 8;
	byte_order = le;
	packet.header := struct {
		uint32_t magic;
		uint32_t stream_id;
		uint64_t stream_instance_id;
	};
};

env {
	domain = "tadpole";
	tracer_name = "tadpole";
`)
	for _, k := range envKeys {
		v := env[k]
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			v = quote(v) // numbers stay integers (babeltrace reads vpid as one)
		}
		fmt.Fprintf(&b, "\t%s = %s;\n", k, v)
	}
	b.WriteString(`};

clock {
	name = "tadpole";
	description = "Unix time, ns; strictly increasing in HQ's order of events";
	freq = 1000000000;
	offset = 0;
	absolute = true;
};

typealias integer { size = 64; align = 8; signed = false; map = clock.tadpole.value; } := ts_t;

stream {
	id = 0;
	packet.context := struct {
		ts_t timestamp_begin;
		ts_t timestamp_end;
		uint64_t content_size;
		uint64_t packet_size;
		uint64_t packet_seq_num;
		uint64_t events_discarded;
	};
	event.header := struct {
		uint16_t id;
		ts_t timestamp;
	};
};
`)
	for i, d := range eventDecls {
		fmt.Fprintf(&b, "\nevent {\n\tname = \"%s%s\";\n\tid = %d;\n\tstream_id = 0;\n\tfields := struct { %s};\n};\n",
			EventPrefix, d.name, i, d.fields)
	}
	return []byte(b.String())
}

// quote makes a TSDL string literal.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
