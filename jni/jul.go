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
	for i, lv := range julLevels {
		p := host.BeginBatchRecord(nil, host.BatchMarker, host.BatchFlagMUTF8, 0xFFFF, 0, 0, 0)
		p = append(append(append(p, k...), lv.name...), ' ')
		l.pre[i] = p
	}
	return l
}

// batchTimeOff is the offset of a batch record's time (host.BatchHeaderSize's
// layout), which appendJulMarker sets in a copied header.
const batchTimeOff = 16

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

// packUnits packs the low bytes of v's four units into the low 32 bits.
func packUnits(v uint64) uint64 {
	return v&0xFF | v>>8&0xFF00 | v>>16&0xFF0000 | v>>24&0xFF000000
}

// julBatches are the converters' batch buffers.
var julBatches = sync.Pool{New: func() any { b := make([]byte, 0, 32<<10); return &b }}

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
	bp := julBatches.Get().(*[]byte)
	*bp = submitJul(uint64(tid), ev, chars, (*bp)[:0], host.SubmitProbes, host.SubmitBatch)
	julBatches.Put(bp)
}

// submitJul hands ev, probe words among which JUL records are, over in
// their order: each run of method events as probe words (submitProbes),
// each run of JUL records as a host batch of markers and names built in
// b (submitBatch). The word after a JUL record's first is overwritten
// with the time word in force, so that the run of method events after it
// can start there. It returns b for reuse.
func submitJul(thread uint64, ev []int64, chars []uint16, b []byte,
	submitProbes func(uint64, []int64) (int, error), submitBatch func(uint64, []byte) (int, error)) []byte {
	seg, events := 0, false // the run of method words from seg; whether it holds an event
	last := int64(-1)       // the time word in force
	flushEvents := func(end int) {
		if events {
			submitProbes(thread, ev[seg:end])
		}
		events = false
	}
	flushRecords := func() {
		if len(b) > 0 {
			submitBatch(thread, b)
			b = b[:0]
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
		w := uint64(ev[i+1])
		if k == probeJul {
			b = appendJulMarker(b, v, w, mono, chars)
		} else {
			b = appendJulName(b, v, mono, chars)
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
	flushRecords()
	return b
}

// appendJulMarker appends the marker of a JUL record (words v, w); a record
// whose logger has no key or whose chars are not there is left out.
func appendJulMarker(b []byte, v, w uint64, mono int64, chars []uint16) []byte {
	h := int32(v >> 8 & 0xFFFFFF)
	n, off := int(v>>32), int(w>>32)
	lv := julLevel(int32(uint32(w)))
	lg := julKey(h)
	if lg == nil || lv < 0 || off+n > len(chars) || len(lg.key) > 0xFFFF {
		return b
	}
	pre := lg.pre[lv]
	start := len(b)
	b = slices.Grow(b, len(pre)+n+host.BatchAlign) // an ASCII message's record
	b = append(b, pre...)                          // header, key, level
	binary.LittleEndian.PutUint64(b[start+batchTimeOff:], uint64(mono))
	b = appendMUTF8(b, chars[off:off+n], len(b)+maxString-(len(pre)-host.BatchHeaderSize-len(lg.key)))
	return host.EndBatchRecord(b, start, len(lg.key))
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
