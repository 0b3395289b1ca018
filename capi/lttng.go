package capi

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "tp.h"
*/
import "C"

import (
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/tadpole-trace/tadpole/agent"
)

// LTTngLibName is the companion library libtadpole.so loads, from its own
// directory unless the option lttng_lib names another path.
const LTTngLibName = "libtadpole-lttng.so"

// lttngDomains numbers the LTTng domains as the session daemon does.
var lttngDomains = map[string]C.int{"jul": 3, "log4j": 4, "python": 5}

var lttngOnce sync.Once

// lttngUnavailable is the options and the line to log, NUL-separated,
// when a session enables a logger and the companion library is not
// loaded; nil once said, or when there is nothing to say.
var lttngUnavailable atomic.Pointer[string]

// lttngWarn logs lttngUnavailable's line once, if l is enabled for LTTng.
func lttngWarn(l *agent.Logger) {
	p := lttngUnavailable.Load()
	if p == nil || l.LTTngAccept().Kind == agent.AcceptNone || !lttngUnavailable.CompareAndSwap(p, nil) {
		return
	}
	opts, msg, _ := strings.Cut(*p, "\x00")
	agent.HostLog(opts, agent.LevelWarn, "lttng-lib", msg)
}

// startLTTng registers the process with the LTTng session daemon(s),
// whether or not an HQ run follows, and loads the companion library that
// records enabled loggers' records into the daemon's sessions; once per
// process. Without the companion (or lttng-ust) it says so in one warning,
// when a session first enables one of the process's loggers, and the
// process is listed and obeys the daemon as before.
func startLTTng(opts string, cfg agent.Config) {
	if !cfg.LTTng {
		return
	}
	lttngOnce.Do(func() {
		if err := loadLTTng(cfg); err != nil && !errors.Is(err, ErrLTTngOff) {
			// Said once, when a session first enables a logger: a process
			// no LTTng session asks anything of has nothing to be told.
			msg := opts + "\x00LTTng recording unavailable (records of loggers LTTng sessions enable are not " +
				"recorded into them): " + err.Error()
			lttngUnavailable.Store(&msg)
			for _, l := range agent.Loggers() {
				lttngWarn(l)
			}
		}
		if agent.RegisterLTTng(cfg) == nil {
			C.tp_lttng_set_registered(1)
		}
	})
}

// loadLTTng dlopen()s libtadpole-lttng.so.
func loadLTTng(cfg agent.Config) error {
	path := cfg.LTTngLib
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
	if !cfg.LTTngSource {
		C.tp_lttng_set_source(0)
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var msg [512]C.char
	if C.tp_lttng_open(cpath, lttngDomains[cfg.LTTngDomain], &msg[0], C.size_t(len(msg))) != 0 {
		return &LTTngLoadError{Path: path, Reason: C.GoString(&msg[0])}
	}
	return nil
}
