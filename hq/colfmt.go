package hq

import (
	"encoding/binary"
	"fmt"
)

// The columnar trace file (TraceFormatColumns): docs/tracefile.md has the
// whole layout. After the header, uncompressed as in format 1, come blocks
// (rawLen u32, compLen u32, one zstd frame); a block's payload holds whole
// units (what the core took, in its order) and, for the sequenced events of
// its data units, the columns: the thread slot of each event in arrival
// order, the sequence numbers as runs, and per thread its kinds, time
// differences, method id bytes and the other fields, column by column.
// Unsequenced messages and markers are kept whole in the blob. Every block
// starts afresh: thread slots, call stacks, previous times and the expected
// sequence number are not carried over.

// colKind is the kind of an event in a thread stream.
type colKind uint8

const (
	colEntry     colKind = 1
	colExit      colKind = 2
	colException colKind = 3
	colBubble    colKind = 4
	colVisit     colKind = 5
	colMask      colKind = 0x07
	// colTop marks an event whose method is the top of its thread's call
	// stack, so that the method id is not written.
	colTop = 0x08
	// colTime marks an event whose time differs from its thread's
	// previous event's, so that the difference is written.
	colTime = 0x10
)

// The columns of a thread, in the order their sections follow each other.
const (
	colKinds     = iota // event code: colKind | colTop | colTime, one byte
	colTimes            // zigzag(relTime − thread's previous), when colTime
	colMethods          // method id's first varint byte, unless colTop
	colMethodsHi        // the rest of the varint, when the first byte says so
	colExtras           // per kind: see the format
	colThreadCols
)

var colKindNames = [...]string{colEntry: "entry", colExit: "exit", colException: "exception", colBubble: "bubble",
	colVisit: "visit"}

func (k colKind) String() string {
	if int(k) < len(colKindNames) && colKindNames[k] != "" {
		return colKindNames[k]
	}
	return fmt.Sprintf("UNKNOWN_COLUMN_KIND_%d", uint8(k))
}

// Unit modes of data received.
const (
	colParsed   = 0
	colUnparsed = 1
)

const (
	// TraceFormatColumns is the format of the columnar trace file.
	TraceFormatColumns = 2
	// colSections is the number of payload sections.
	colSections = 5 + colThreadCols
	// blockHeaderSize is a block's rawLen and compLen.
	blockHeaderSize = 2 * i32Size
	// maxColBlock caps a block's payload; the writer ends a block long
	// before (colFlushBytes).
	maxColBlock = 64 << 20
	// maxColComp caps a block's compressed size.
	maxColComp = maxColBlock + maxColBlock/64 + 1024
	// colFlushEvents and colFlushBytes end a block: zstd needs a few
	// hundred kilobytes to find the repeats of a run, and a reader holds
	// one block at a time.
	colFlushEvents = 1 << 18
	colFlushBytes  = 8 << 20
	// colFlushMs ends a block when the run's clock has moved on this far
	// since the block began, so that the file keeps up with a slow run.
	colFlushMs = 1000
	// maxNibbleSlots is the most threads a block may have for its order
	// column to hold two slots a byte.
	maxNibbleSlots = 15
	// maxStack bounds the call stack a thread keeps for colTop.
	maxStack = 256
	// maxVerbatim caps a message kept as it is in the blob: the largest
	// data message (a Marker with two full strings) is 131083 bytes.
	maxVerbatim = 1<<17 + 512
)

// zigzag maps a signed difference to an unsigned varint value.
func zigzag(v int32) uint64 { return uint64(uint32(v<<1) ^ uint32(v>>31)) }

func unzigzag(u uint64) int32 { return int32(uint32(u>>1)) ^ -int32(u&1) }

// putSplit appends v as a varint whose first byte goes to lo and the rest,
// if any, to hi: ids below 128 cost one byte, and the columns of low and
// high bytes each compress better than their mix.
func putSplit(lo, hi []byte, v uint64) ([]byte, []byte) {
	if v < 0x80 {
		return append(lo, byte(v)), hi
	}
	return append(lo, byte(v)|0x80), putUvarint(hi, v>>7)
}

// putUvarint appends v; the common one-byte case is inlined.
func putUvarint(b []byte, v uint64) []byte {
	if v < 0x80 {
		return append(b, byte(v))
	}
	return binary.AppendUvarint(b, v)
}

// Field offsets of the fixed-size events (offset 0 is the type byte), with
// which the columnar trace file's reader rebuilds them: every one starts
// with i32 relTime, i32 seq, i32 methodId. Events are read with
// bytefrog.EventView.
const (
	offRelTime = u8Size
	offSeq     = offRelTime + i32Size
	offMethod  = offSeq + i32Size
	offField4  = offMethod + i32Size // tid (entry), line (exit), flag (Code Pulse exit), exception or source location id
	offTIDExit = offField4 + u16Size // MethodExit (Bytefrog): tid after the line
	offTIDCP   = offField4 + u8Size  // MethodExit (Code Pulse): tid after the flag
	offField5  = offField4 + i32Size // Exception: line; ExceptionBubble, MethodVisit: tid
	offTIDExc  = offField5 + u16Size // Exception: tid after the line
)
