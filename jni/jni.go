package jni

/*
#include <stdlib.h>
#include "jvmhost.h"
#include "tpj.h"
*/
import "C"

import (
	"embed"
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"github.com/tadpole-trace/tadpole/internal/host"
)

// classes are the helper classes, compiled by ./build.sh lib with
// javac --release 8 from java/ into classes/.
//
//go:embed classes/io/tadpole/*.class
var classes embed.FS

// classOrder is the definition order: a class before the classes that
// name it in their constant pool is not needed by DefineClass (it resolves
// lazily), but superclasses must come first; all three extend JDK classes.
var classOrder = [...]string{"io/tadpole/Tadpole", "io/tadpole/JulHandler", "io/tadpole/JulSync",
	"io/tadpole/J4P", // the management endpoint's JVM MBeans (j4p.go)
}

// loaded holds the C copies of the classes, kept for the process's life.
var loaded bool

//export tpjGoLoad
func tpjGoLoad() (n C.int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "tadpole: [ERROR] jni: %v\n", r)
			n = -1
		}
	}()
	if loaded {
		return C.int(len(classOrder))
	}
	for _, name := range classOrder {
		b, err := classes.ReadFile("classes/" + name + ".class")
		if err != nil {
			panic(fmt.Errorf("%w: %s", ErrNoClass, name))
		}
		cname := C.CString(name)
		cb := C.CBytes(b)
		C.tpj_add_class(cname, cb, C.size_t(len(b)))
	}
	loaded = true
	registerPlatform() // j4p.go
	return C.int(len(classOrder))
}

// tpjGoLog writes a problem of the JVM bridge where the agent's options
// (opts, the -agentpath string; NULL for none) send the agent's log: once
// per message, nothing under log=none. isError != 0 logs at error level,
// else warn.
//
//export tpjGoLog
func tpjGoLog(opts *C.char, isError C.int, msg *C.char) {
	defer func() { recover() }() // a log line is never worth the JVM
	o := ""
	if opts != nil {
		o = C.GoString(opts)
	}
	level := host.LevelWarn
	if isError != 0 {
		level = host.LevelError
	}
	m := C.GoString(msg)
	host.Log(o, level, "jvm:"+m, m)
}

//export tpjGoSelfTest
func tpjGoSelfTest(what C.int) (rc C.int) {
	defer func() {
		if r := recover(); r != nil {
			rc = -1
		}
	}()
	switch what {
	case C.TPJ_SELFTEST_PANIC:
		var p *int
		return C.int(*(*int)(unsafe.Pointer(p)))
	case C.TPJ_SELFTEST_EPIPE:
		return C.int(brokenPipe())
	case C.TPJ_SELFTEST_THREADS:
		return C.tp_thread_count()
	case C.TPJ_SELFTEST_PROCS:
		return C.int(runtime.GOMAXPROCS(0))
	}
	return -2
}
