package jni

/*
#include <stdint.h>
#include "jvmhost.h"
*/
import "C"

import (
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

// julLevel names java.util.logging's standard levels, the only ones
// JulHandler puts into the probe buffers.
func julLevel(v int32) string {
	switch v {
	case 1000:
		return "SEVERE"
	case 900:
		return "WARNING"
	case 800:
		return "INFO"
	case 700:
		return "CONFIG"
	case 500:
		return "FINE"
	case 400:
		return "FINER"
	case 300:
		return "FINEST"
	}
	return ""
}

// julKeys caches the loggers' marker keys by handle (a handle's name never
// changes), in modified UTF-8: read without a lock, replaced whole.
var julKeys struct {
	sync.Mutex
	k atomic.Pointer[[][]byte]
}

// julKey returns the marker key of logger h, nil when it has none.
func julKey(h int32) []byte {
	if k := julKeys.k.Load(); k != nil && h >= 0 && int(h) < len(*k) && (*k)[h] != nil {
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
	julKeys.Lock()
	defer julKeys.Unlock()
	var k [][]byte
	if old := julKeys.k.Load(); old != nil {
		k = append(k, *old...)
	}
	for len(k) <= int(h) {
		k = append(k, nil)
	}
	k[h] = b
	julKeys.k.Store(&k)
	return b
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
	// ASCII without NUL, the usual message, byte for unit.
	n := len(dst)
	a := min(len(s), max-n)
	if a > 0 {
		dst = slices.Grow(dst, a)[:n+a]
		d := dst[n : n+a]
		for i, c := range s[:a] {
			if c-1 >= 0x7F { // 0 wraps
				dst, a = dst[:n+i], i
				break
			}
			d[i] = byte(c)
		}
		s = s[a:]
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
	key := julKey(h)
	if key == nil || lv == "" || off+n > len(chars) || len(key) > 0xFFFF {
		return b
	}
	start := len(b)
	b = host.BeginBatchRecord(b, host.BatchMarker, host.BatchFlagMUTF8, 0xFFFF, 0, 0, mono)
	b = append(b, key...)
	b = append(b, lv...)
	b = append(b, ' ')
	b = appendMUTF8(b, chars[off:off+n], len(b)+maxString-len(lv)-1)
	return host.EndBatchRecord(b, start, len(key))
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
