package capi

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "tp.h"
*/
import "C"

import (
	"path/filepath"
	"sync"
	"unsafe"

	"github.com/tadpole-trace/tadpole/agent"
	"github.com/tadpole-trace/tadpole/internal/host"
)

// LTTngLibName is the companion library libtadpole.so loads, from its own
// directory unless the option lttng_lib names another path.
const LTTngLibName = "libtadpole-lttng.so"

// lttngDomains numbers the LTTng domains as the session daemon does.
var lttngDomains = map[string]C.int{"jul": 3, "log4j": 4, "python": 5}

var lttngOnce sync.Once

// The agent loads the companion once, when the process first registers
// with LTTng; libtadpole.so records into LTTng in C (tp_lttng_log), so
// the loader gives the agent no recorder of its own. Without the companion
// (or lttng-ust) the agent says so in one warning, when a session first
// enables one of the process's loggers, and the process is listed and
// obeys the daemon as before.
func init() {
	host.SetLTTngLoader(func(cfg host.LTTngConfig) (host.LTTngRecorder, error) { return nil, loadLTTng(cfg) })
}

// startLTTng registers the process with the LTTng session daemon(s),
// whether or not an HQ run follows; once per process.
func startLTTng(cfg agent.Config) {
	if !cfg.LTTng {
		return
	}
	lttngOnce.Do(func() {
		if agent.RegisterLTTng(cfg) == nil {
			C.tp_lttng_set_registered(1)
		}
	})
}

// loadLTTng dlopen()s libtadpole-lttng.so.
func loadLTTng(cfg host.LTTngConfig) error {
	path := cfg.Lib
	switch path {
	case "none":
		return ErrLTTngOff
	case "":
		var buf [4096]C.char
		if C.tp_lttng_self_path(&buf[0], C.size_t(len(buf))) != 0 {
			return ErrLTTngNoPath
		}
		path = filepath.Join(filepath.Dir(C.GoString(&buf[0])), LTTngLibName)
	}
	if !cfg.Source {
		C.tp_lttng_set_source(0)
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var msg [512]C.char
	if C.tp_lttng_open(cpath, lttngDomains[cfg.Domain], &msg[0], C.size_t(len(msg))) != 0 {
		return &LTTngLoadError{Path: path, Reason: C.GoString(&msg[0])}
	}
	return nil
}
