package capi

/*
#include <string.h>
#include "tp.h"
*/
import "C"

import (
	"unsafe"

	"github.com/tadpole-trace/tadpole/agent"
	"github.com/tadpole-trace/tadpole/internal/host"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// The Go entry points of the C API. Their names are private: the C
// functions tadpole_* in api.c and the recorder (recorder.c) call them,
// and the library's version script keeps them out of its dynamic symbols.
// Each recovers from panics into TADPOLE_EINTERNAL and writes a failure's
// text into the calling thread's error buffer (errbuf, errlen; nil for
// background flushes).

//export tadpoleGoStart
func tadpoleGoStart(opts *C.char, errbuf *C.char, errlen C.size_t) (rc C.int) {
	defer recovered(&rc, errbuf, errlen)
	if err := start(C.GoString(opts)); err != nil {
		return fail(errbuf, errlen, err)
	}
	return codeOK
}

//export tadpoleGoStop
func tadpoleGoStop(errbuf *C.char, errlen C.size_t) (rc C.int) {
	defer recovered(&rc, errbuf, errlen)
	if err := stop(); err != nil {
		return fail(errbuf, errlen, err)
	}
	return codeOK
}

//export tadpoleGoMethod
func tadpoleGoMethod(signature *C.char, errbuf *C.char, errlen C.size_t) (rc C.int) {
	defer recovered(&rc, errbuf, errlen)
	return C.int(agent.NewMethod(C.GoString(signature)).ID())
}

//export tadpoleGoExc
func tadpoleGoExc(name *C.char, errbuf *C.char, errlen C.size_t) (rc C.int) {
	defer recovered(&rc, errbuf, errlen)
	return C.int(agent.NewExceptionType(C.GoString(name)).ID())
}

//export tadpoleGoLogger
func tadpoleGoLogger(name *C.char, mutf8 C.int, errbuf *C.char, errlen C.size_t) (rc C.int) {
	defer recovered(&rc, errbuf, errlen)
	h, err := registerLogger(goString(name, mutf8))
	if err != nil {
		return fail(errbuf, errlen, err)
	}
	return C.int(h)
}

//export tadpoleGoSubmit
func tadpoleGoSubmit(thread C.uint64_t, p unsafe.Pointer, n C.size_t, errbuf *C.char, errlen C.size_t) (rc C.int) {
	defer recovered(&rc, errbuf, errlen)
	if n == 0 {
		return codeOK
	}
	if err := submit(uint64(thread), unsafe.Slice((*byte)(p), int(n))); err != nil {
		warnOnce("submit:"+err.Error(), "events lost: %v", err)
		return fail(errbuf, errlen, err)
	}
	return codeOK
}

//export tadpoleGoLog
func tadpoleGoLog(thread C.uint64_t, p unsafe.Pointer, n C.size_t, h C.int32_t, level C.int, levelName, msg *C.char, mutf8 C.int, errbuf *C.char, errlen C.size_t) (rc C.int) {
	defer recovered(&rc, errbuf, errlen)
	if n > 0 {
		if err := submit(uint64(thread), unsafe.Slice((*byte)(p), int(n))); err != nil {
			warnOnce("submit:"+err.Error(), "events lost: %v", err)
			return fail(errbuf, errlen, err)
		}
	}
	l := loggerByHandle(int32(h))
	if l == nil {
		return fail(errbuf, errlen, ErrBadHandle)
	}
	name := ""
	if levelName != nil {
		name = goString(levelName, mutf8)
	}
	if name == "" {
		name = levelNameOf(agent.Domain(), int32(level))
	}
	l.Log(int32(level), name, goString(msg, mutf8))
	return codeOK
}

//export tadpoleGoGate
func tadpoleGoGate() (rc C.int) {
	defer recovered(&rc, nil, 0)
	if host.Gate() {
		return 1
	}
	return 0
}

// goString copies a NUL-terminated C string: UTF-8, or Java's modified
// UTF-8 (from the JVM agent) when mutf8 is non-zero.
func goString(p *C.char, mutf8 C.int) string {
	if mutf8 == 0 {
		return C.GoString(p)
	}
	return bytefrog.String(unsafe.Slice((*byte)(unsafe.Pointer(p)), int(C.strlen(p))))
}
