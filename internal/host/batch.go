package host

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sys/unix"
)

// Host batches: the JVM and C hosts do not call into Go per event. Each host
// thread encodes its events into a thread-owned buffer and hands the whole
// buffer to SubmitBatch, one crossing per buffer.
//
// Record layout, little-endian, each record padded to a multiple of
// BatchAlign bytes:
//
//	off size field
//	0   1    kind: 1 entry, 2 exit, 3 exception, 4 bubble, 5 marker, 6 thread name,
//	         7 thread end (the thread records nothing more; its wire id is not reused)
//	1   1    flags: bit 0 exit by exception; bit 1 strings are modified UTF-8
//	2   2    line (0xFFFF unknown)
//	4   4    method id (from agent.NewMethod)
//	8   4    exception id (from agent.NewExceptionType)
//	12  2    length of the first string (marker key, thread name)
//	14  2    length of the second string (marker value)
//	16  8    CLOCK_MONOTONIC time in nanoseconds (MonoNow)
//	24  …    the strings' bytes
//
// capi/layout.go proves at compile time that capi/tp.h agrees.
const (
	BatchHeaderSize = 1 + 1 + 2 + 4 + 4 + 2 + 2 + 8
	BatchAlign      = 8

	BatchEntry  = 1
	BatchExit   = 2
	BatchThrow  = 3
	BatchBubble = 4
	BatchMarker = 5
	BatchName   = 6
	BatchEnd    = 7

	BatchFlagThrown = 1 << 0
	BatchFlagMUTF8  = 1 << 1
	// BatchFlagWire, with BatchFlagMUTF8, marks a marker whose key and
	// value the agent's own code encoded (the JVM's JUL converter): valid
	// modified UTF-8 by construction, so the drain copies them to the wire
	// without checking them again. Only batches handed over with
	// SubmitWireBatch carry it; SubmitBatch refuses a record that does.
	BatchFlagWire = 1 << 2
)

// Probe events: the JVM agent's method probes (io.tadpole.Probe) append one
// int64 per event to a per-thread Java buffer, and the agent hands a full
// buffer over at once (SubmitProbes). Layout of a word, low byte first:
//
//	bits 0–7    kind: ProbeEntry, ProbeExit, ProbeThrown, ProbeBubble, ProbeTime
//	bits 8–39   method id (from agent.NewMethod); for ProbeTime bits 8–63 are
//	            CLOCK_MONOTONIC milliseconds
//	bits 48–63  line (exit and thrown; 0xFFFF unknown)
//
// ProbeThrown and ProbeBubble take a second word: the exception type id
// (from agent.NewExceptionType). A buffer starts with a ProbeTime word;
// each event is stamped with the latest one before it.
const (
	ProbeEntry  = 0
	ProbeExit   = 1
	ProbeThrown = 2
	ProbeBubble = 3
	ProbeTime   = 4
)

// ErrBadBatch reports a malformed host batch; nothing of it is recorded.
var ErrBadBatch = errors.New("tadpole: malformed event batch")

// ErrBadProbe reports a malformed probe buffer; nothing of it is recorded.
var ErrBadProbe = fmt.Errorf("%w: bad probe buffer", ErrBadBatch)

// AppendBatchRecord appends one record to a batch; it is what the C side
// does, written in Go for tests and Go-side hosts.
func AppendBatchRecord(b []byte, k uint8, flags uint8, line uint16, method, exc int32, monoNs int64, s1, s2 string) []byte {
	start := len(b)
	b = BeginBatchRecord(b, k, flags, line, method, exc, monoNs)
	b = append(b, s1...)
	b = append(b, s2...)
	return EndBatchRecord(b, start, len(s1))
}

// BeginBatchRecord appends the header of a record whose two strings the
// caller appends next, in place; EndBatchRecord then completes it.
func BeginBatchRecord(b []byte, k uint8, flags uint8, line uint16, method, exc int32, monoNs int64) []byte {
	n := len(b)
	b = slices.Grow(b, BatchHeaderSize)[:n+BatchHeaderSize]
	h := b[n:]
	h[0], h[1] = k, flags
	binary.LittleEndian.PutUint16(h[2:], line)
	binary.LittleEndian.PutUint32(h[4:], uint32(method))
	binary.LittleEndian.PutUint32(h[8:], uint32(exc))
	binary.LittleEndian.PutUint32(h[12:], 0) // the strings' lengths: EndBatchRecord
	binary.LittleEndian.PutUint64(h[16:], uint64(monoNs))
	return b
}

// EndBatchRecord sets the string lengths of the record begun at start
// (BeginBatchRecord), the first string being l1 bytes and the second the
// rest of b, and pads it.
func EndBatchRecord(b []byte, start, l1 int) []byte {
	l2 := len(b) - start - BatchHeaderSize - l1
	binary.LittleEndian.PutUint16(b[start+12:], uint16(l1))
	binary.LittleEndian.PutUint16(b[start+14:], uint16(l2))
	var zero [BatchAlign]byte
	return append(b, zero[:(BatchAlign-(len(b)-start)%BatchAlign)%BatchAlign]...)
}

// RecordSize is the size of the record at the start of r (at least
// BatchHeaderSize bytes), padding included.
func RecordSize(r []byte) int {
	l1 := int(binary.LittleEndian.Uint16(r[12:]))
	l2 := int(binary.LittleEndian.Uint16(r[14:]))
	size := BatchHeaderSize + l1 + l2
	return (size + BatchAlign - 1) &^ (BatchAlign - 1)
}

// MonoNow is the CLOCK_MONOTONIC time in nanoseconds, the clock of batch
// records.
func MonoNow() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}
