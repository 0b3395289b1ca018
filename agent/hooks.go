package agent

import (
	"sync/atomic"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// Hooks let a host keep its own copy of the state its hot path tests, so
// that a C or JVM thread checks a plain flag instead of calling into Go.

var (
	modeHook   atomic.Pointer[func(bytefrog.Mode)]
	loggerHook atomic.Pointer[func(*Logger, bool)]
)

// SetModeHook installs f, called with the new mode each time the active
// session changes mode (ModeShutdown when tracing ends). f must not block.
// A nil f removes the hook.
func SetModeHook(f func(bytefrog.Mode)) {
	if f == nil {
		modeHook.Store(nil)
		return
	}
	modeHook.Store(&f)
}

// SetLoggerHook installs f, called with a logger and its new state each time
// a logger is registered or its enabled state changes. f must not block.
func SetLoggerHook(f func(l *Logger, enabled bool)) {
	if f == nil {
		loggerHook.Store(nil)
		return
	}
	loggerHook.Store(&f)
}

func notifyMode(m bytefrog.Mode) {
	if f := modeHook.Load(); f != nil {
		(*f)(m)
	}
}

func notifyLogger(l *Logger, enabled bool) {
	if f := loggerHook.Load(); f != nil {
		(*f)(l, enabled)
	}
}

// Gate is for hosts whose hot path found the mode other than Tracing: it
// blocks while tracing is paused and reports whether events are recorded
// now (false when suspended, stopped, or no agent traces).
func Gate() bool {
	s := active.Load()
	if s == nil {
		return false
	}
	return s.mode.Load() == modeTracing || s.gate()
}

// CurrentMode is the mode of the active session; ModeShutdown when none.
func CurrentMode() bytefrog.Mode {
	if s := active.Load(); s != nil {
		return s.currentMode()
	}
	return bytefrog.ModeShutdown
}
