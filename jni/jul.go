package jni

/*
#include <stdint.h>
#include "jvmhost.h"
*/
import "C"

import (
	"encoding/binary"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/tadpole-trace/tadpole/internal/host"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// JUL records in the probe buffers: JulHandler appends a record of an HQ
// logger to its thread's Probe.Buf (Probe.Jul), as two words among the
// method events, its strings in the buffer's char array, which crosses
// JNI with the words (probe.c, tpj_jul_take). Layout, low byte first:
//
//	probeJul      word 1: kind, bits 8–31 logger handle, bits 32–63 message length (chars)
//	              word 2: bits 0–31 level (JUL's int value), bits 32–63 message offset (chars)
//	probeJulName  word 1: kind, bits 8–31 offset, bits 32–63 length (chars): the thread's name
//	              word 2: 0
//
// A record becomes the marker the native path records (natives.c, tpj_log):
// "log:<logger>" = "<level name> <message>", modified UTF-8; a name, the
// thread's BatchName. Each is stamped with the latest time word before it.
const (
	probeJul     = 5 // Probe.JUL
	probeJulName = 6 // Probe.JNAME
)

// maxThreadName and maxString are TADPOLE_MAX_THREAD_NAME and
// TADPOLE_MAX_STRING: bytes of a thread name and of a marker value kept.
const (
	maxThreadName = C.TADPOLE_MAX_THREAD_NAME
	maxString     = C.TADPOLE_MAX_STRING
)

// julLevels are java.util.logging's standard levels, the only ones
// JulHandler puts into the probe buffers: their values and names.
var julLevels = [...]struct {
	v    int32
	name string
}{{1000, "SEVERE"}, {900, "WARNING"}, {800, "INFO"}, {700, "CONFIG"}, {500, "FINE"}, {400, "FINER"}, {300, "FINEST"}}

// julLevel returns the index in julLevels of the level of value v, -1 for
// none.
func julLevel(v int32) int {
	switch v {
	case 1000:
		return 0
	case 900:
		return 1
	case 800:
		return 2
	case 700:
		return 3
	case 500:
		return 4
	case 400:
		return 5
	case 300:
		return 6
	}
	return -1
}

// julLogger is what the converter keeps of a logger: its marker key, and
// per standard level the start of a record's marker, all but its time and
// message, made once: the batch record's header, then the key and
// "<level name> " (modified UTF-8). A record copies it in one append.
type julLogger struct {
	key []byte
	pre [len(julLevels)][]byte
}

// newJulLogger makes the julLogger of marker key k.
func newJulLogger(k []byte) *julLogger {
	l := &julLogger{key: k}
	// A record's value is valid modified UTF-8 as appendMUTF8 makes it, so
	// with a valid key the drain copies both to the wire as they are.
	flags := uint8(host.BatchFlagMUTF8)
	if len(k) <= 0xFFFF && bytefrog.ValidUTF(k) == nil {
		flags |= host.BatchFlagWire
	}
	for i, lv := range julLevels {
		p := host.BeginBatchRecord(nil, host.BatchMarker, flags, 0xFFFF, 0, 0, 0)
		p = append(append(append(p, k...), lv.name...), ' ')
		l.pre[i] = p
	}
	return l
}

// Offsets in a batch record's header (host.BatchHeaderSize's layout), which
// appendJulMarker sets in a copied header: the strings' u16 lengths and
// the time.
const (
	batchLen1Off = 12
	batchLen2Off = 14
	batchTimeOff = 16
)

// julKeys caches the loggers by handle (a handle's name never changes):
// read without a lock, replaced whole.
var julKeys struct {
	sync.Mutex
	k atomic.Pointer[[]*julLogger]
}

// julKey returns logger h, nil when it has no marker key.
func julKey(h int32) *julLogger {
	if k := julKeys.k.Load(); k != nil && uint32(h) < uint32(len(*k)) && (*k)[h] != nil {
		return (*k)[h]
	}
	var n C.uint32_t
	var mutf8 C.int
	p := C.tp_jlog_key(C.int32_t(h), &n, &mutf8)
	if p == nil || h < 0 {
		return nil
	}
	b := C.GoBytes(unsafe.Pointer(p), C.int(n))
	if mutf8 == 0 {
		b = mutf8FromUTF8(b)
	}
	l := newJulLogger(b)
	julKeys.Lock()
	defer julKeys.Unlock()
	var k []*julLogger
	if old := julKeys.k.Load(); old != nil {
		k = append(k, *old...)
	}
	for len(k) <= int(h) {
		k = append(k, nil)
	}
	k[h] = l
	julKeys.k.Store(&k)
	return l
}

// mutf8FromUTF8 converts a UTF-8 key (a logger the C API registered first)
// to modified UTF-8.
func mutf8FromUTF8(b []byte) []byte {
	out := make([]byte, 0, len(b)+8)
	var u [2]uint16
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		b = b[n:]
		s := utf16.AppendRune(u[:0], r)
		out = appendMUTF8(out, s, len(out)+8)
	}
	return out
}

// appendMUTF8 appends the UTF-16 units s in modified UTF-8 (what
// GetStringUTFRegion writes), stopping before a unit that would take dst
// beyond max bytes.
func appendMUTF8(dst []byte, s []uint16, max int) []byte {
	// ASCII without NUL, the usual message, byte for unit: eight units at
	// a time while they all are, then one at a time.
	n := len(dst)
	a := min(len(s), max-n)
	if a > 0 {
		dst = slices.Grow(dst, a)[:n+a]
		d := dst[n : n+a]
		i := 0
		for ; i+8 <= a; i += 8 {
			u := (*[2]uint64)(unsafe.Pointer(&s[i])) // units i to i+7, little-endian as amd64 and arm64 are
			v, w := u[0], u[1]
			if !asciiUnits(v) || !asciiUnits(w) {
				break
			}
			binary.LittleEndian.PutUint64(d[i:], packUnits(v)|packUnits(w)<<32)
		}
		for ; i < a; i++ {
			c := s[i]
			if c-1 >= 0x7F { // 0 wraps
				break
			}
			d[i] = byte(c)
		}
		dst, s = dst[:n+i], s[i:]
	}
	for _, c := range s {
		switch {
		case c != 0 && c < 0x80:
			if len(dst)+1 > max {
				return dst
			}
			dst = append(dst, byte(c))
		case c < 0x800:
			if len(dst)+2 > max {
				return dst
			}
			dst = append(dst, 0xC0|byte(c>>6), 0x80|byte(c&0x3F))
		default:
			if len(dst)+3 > max {
				return dst
			}
			dst = append(dst, 0xE0|byte(c>>12), 0x80|byte(c>>6&0x3F), 0x80|byte(c&0x3F))
		}
	}
	return dst
}

// asciiUnits reports whether the four UTF-16 units of v (the first in the
// low bits) are all ASCII without NUL, one byte each in modified UTF-8.
func asciiUnits(v uint64) bool {
	const high, ones, tops = 0xFF80FF80FF80FF80, 0x0001000100010001, 0x8000800080008000
	// Below 0x80 all four, a unit's 1 is borrowed only from a 0 unit,
	// whose top bit the subtraction then sets.
	return v&high == 0 && (v-ones)&tops == 0
}

// packUnits packs the low bytes of v's four units, whose high bytes are 0
// (asciiUnits), into the low 32 bits.
func packUnits(v uint64) uint64 {
	v = (v | v>>8) & 0x0000FFFF0000FFFF
	return (v | v>>16) & 0xFFFFFFFF
}

// tpjGoProbeFlushJul hands a thread's probe words holding JUL records to
// the agent, with the chars the records point into.
//
//export tpjGoProbeFlushJul
func tpjGoProbeFlushJul(tid C.int64_t, p *C.int64_t, n C.int, c *C.uint16_t, nc C.int) {
	defer func() { recover() }()
	if n <= 0 || p == nil {
		return
	}
	ev := unsafe.Slice((*int64)(unsafe.Pointer(p)), int(n))
	var chars []uint16
	if c != nil && nc > 0 {
		chars = unsafe.Slice((*uint16)(unsafe.Pointer(c)), int(nc))
	}
	submitJul(uint64(tid), ev, chars, julAgent)
}

// julSink is where submitJul hands over: the agent (julAgent), or a
// test's.
type julSink struct {
	probes func(thread uint64, ev []int64) (int, error)
	// batch returns an empty batch buffer; submit hands it over with its
	// n records and gives up the buffer (host.WireBatch,
	// host.SubmitWireBatch).
	batch  func() *[]byte
	submit func(thread uint64, bp *[]byte, n int) int
}

var julAgent = &julSink{probes: host.SubmitProbes, batch: host.WireBatch, submit: host.SubmitWireBatch}

// submitJul hands ev, probe words among which JUL records are, over in
// their order: each run of method events as probe words (to.probes), each
// run of JUL records as a host batch of markers and names, built in a
// buffer of the agent's (to.batch) and handed over as it is (to.submit):
// the records are well formed and their strings valid modified UTF-8 by
// construction, so the agent neither checks nor copies them. The word after
// a JUL record's first is overwritten with the time word in force, so that
// the run of method events after it can start there.
func submitJul(thread uint64, ev []int64, chars []uint16, to *julSink) {
	seg, events := 0, false // the run of method words from seg; whether it holds an event
	last := int64(-1)       // the time word in force
	var bp *[]byte          // the batch being built, nrec records
	var b []byte
	nrec := 0
	lastH, lg := int32(-1), (*julLogger)(nil) // the logger of the last record
	flushEvents := func(end int) {
		if events {
			to.probes(thread, ev[seg:end])
		}
		events = false
	}
	flushRecords := func() {
		if bp != nil {
			*bp = b
			to.submit(thread, bp, nrec)
			bp, b, nrec = nil, nil, 0
		}
	}
	for i := 0; i < len(ev); i++ {
		v := uint64(ev[i])
		k := byte(v)
		if k == host.ProbeTime {
			last = int64(v)
			continue
		}
		if k != probeJul && k != probeJulName {
			if !events {
				flushRecords() // the records before it go first
				events = true
			}
			if k == host.ProbeThrown || k == host.ProbeBubble {
				i++ // the exception type's word
			}
			continue
		}
		if i+1 >= len(ev) {
			break // a record lacking its second word: the buffer is cut
		}
		flushEvents(i)
		mono := int64(0)
		if last >= 0 {
			mono = last >> 8 * 1e6
		}
		if bp == nil {
			bp = to.batch()
			b = (*bp)[:0]
		}
		w := uint64(ev[i+1])
		n := len(b)
		if k == probeJul {
			if h := int32(v >> 8 & 0xFFFFFF); h != lastH {
				lastH, lg = h, julKey(h)
			}
			b = appendJulMarker(b, v, w, mono, chars, lg)
		} else {
			b = appendJulName(b, v, mono, chars)
		}
		if len(b) != n {
			nrec++
		}
		i++
		if last >= 0 {
			ev[i] = last
			seg = i
		} else {
			seg = i + 1
		}
	}
	flushEvents(len(ev))
	if bp != nil && nrec == 0 {
		*bp = b // given back: none of its records was made
	}
	flushRecords()
}

// appendJulMarker appends the marker of a JUL record (words v, w) of logger
// lg; a record whose logger has no key or whose chars are not there is
// left out.
func appendJulMarker(b []byte, v, w uint64, mono int64, chars []uint16, lg *julLogger) []byte {
	n, off := int(v>>32), int(w>>32)
	lv := julLevel(int32(uint32(w)))
	if lg == nil || lv < 0 || off+n > len(chars) || len(lg.key) > 0xFFFF {
		return b
	}
	pre := lg.pre[lv]
	start := len(b)
	// Room for the record of a message of n units at 3 bytes each, and 8
	// bytes of padding.
	if room := len(pre) + 3*n + host.BatchAlign; cap(b)-start < room {
		b = slices.Grow(b, room)
	}
	msg := start + len(pre)
	b = b[:msg+n]
	copy(b[start:msg], pre) // header, key, level
	binary.LittleEndian.PutUint64(b[start+batchTimeOff:], uint64(mono))
	// The usual message: ASCII without NUL, short of the limit, a byte a
	// unit; else converted again, unit by unit.
	limit := maxString - (len(pre) - host.BatchHeaderSize - len(lg.key))
	if n > limit || !asciiInto(b[msg:msg+n], chars[off:off+n]) {
		b = appendMUTF8(b[:msg], chars[off:off+n], msg+limit)
	}
	l1, end := len(lg.key), len(b)
	binary.LittleEndian.PutUint16(b[start+batchLen1Off:], uint16(l1))
	binary.LittleEndian.PutUint16(b[start+batchLen2Off:], uint16(end-start-host.BatchHeaderSize-l1))
	pad := (host.BatchAlign - (end-start)%host.BatchAlign) % host.BatchAlign
	b = b[:end+host.BatchAlign] // within the room made
	binary.LittleEndian.PutUint64(b[end:], 0)
	return b[:end+pad]
}

// asciiInto writes the units s into d (len(s) bytes) when they are all
// ASCII without NUL, a byte each in modified UTF-8, and reports whether
// they were (d then holds what was written so far).
func asciiInto(d []byte, s []uint16) bool {
	n := len(s)
	if n < 8 {
		for i, c := range s {
			if c-1 >= 0x7F { // 0 wraps
				return false
			}
			d[i] = byte(c)
		}
		return true
	}
	d = d[:n]
	i := 0
	for ; i+8 <= n; i += 8 {
		u := (*[2]uint64)(unsafe.Pointer(&s[i])) // units i to i+7, little-endian as amd64 and arm64 are
		v, w := u[0], u[1]
		if !asciiUnits(v) || !asciiUnits(w) {
			return false
		}
		binary.LittleEndian.PutUint64(d[i:], packUnits(v)|packUnits(w)<<32)
	}
	if i < n { // the last eight, overlapping those written
		i = n - 8
		u := (*[2]uint64)(unsafe.Pointer(&s[i]))
		v, w := u[0], u[1]
		if !asciiUnits(v) || !asciiUnits(w) {
			return false
		}
		binary.LittleEndian.PutUint64(d[i:], packUnits(v)|packUnits(w)<<32)
	}
	return true
}

// appendJulName appends the thread name record of word v.
func appendJulName(b []byte, v uint64, mono int64, chars []uint16) []byte {
	off, n := int(v>>8&0xFFFFFF), int(v>>32)
	if n == 0 || off+n > len(chars) { // an empty name is none, as for the native path
		return b
	}
	start := len(b)
	b = host.BeginBatchRecord(b, host.BatchName, host.BatchFlagMUTF8, 0xFFFF, 0, 0, mono)
	b = appendMUTF8(b, chars[off:off+n], len(b)+maxThreadName)
	return host.EndBatchRecord(b, start, len(b)-start-host.BatchHeaderSize)
}
