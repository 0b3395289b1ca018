package agent

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/tadpole-trace/tadpole/internal/host"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// Hooks let a host keep its own copy of the state its hot path tests, so
// that a C or JVM thread checks a plain flag instead of calling into Go.

// hookList is a copy-on-write list of subscribers: hosts add theirs once,
// notifications read the current list without locking.
type hookList[F any] struct {
	mu   sync.Mutex
	next uint64
	list atomic.Pointer[[]hookEntry[F]]
}

type hookEntry[F any] struct {
	id uint64
	f  F
}

func (h *hookList[F]) add(f F) (remove func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next++
	id := h.next
	var cur []hookEntry[F]
	if p := h.list.Load(); p != nil {
		cur = *p
	}
	l := append(slices.Clone(cur), hookEntry[F]{id, f})
	h.list.Store(&l)
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		l := slices.DeleteFunc(slices.Clone(*h.list.Load()), func(e hookEntry[F]) bool { return e.id == id })
		h.list.Store(&l)
	}
}

func (h *hookList[F]) each(call func(F)) {
	if p := h.list.Load(); p != nil {
		for _, e := range *p {
			call(e.f)
		}
	}
}

// The agent's side of internal/host: the calls hosts make through it.
func init() {
	host.Register(host.Agent{
		SubmitBatch:     hostSubmitBatch,
		WireBatch:       hostWireBatch,
		SubmitWireBatch: hostSubmitWireBatch,
		SubmitProbes:    hostSubmitProbes,
		HandProbes:      hostHandProbes,
		Gate:            hostGate,
		CurrentMode:     currentMode,
		AddModeHook:     addModeHook,
		ReportClass:     reportClass,
		ClassFilters:    classFilters,
		Log:             hostLogOptions,
	})
}

var (
	modeHooks   hookList[func(bytefrog.Mode)]
	loggerHooks hookList[func(*Logger, bool)]
	errorHooks  hookList[func(error)]
)

// addModeHook is host.AddModeHook.
func addModeHook(f func(bytefrog.Mode)) (remove func()) { return modeHooks.add(f) }

// AddLoggerHook adds f, called with a logger and its new state each time a
// logger is registered or its enabled state changes. f must not block and
// must not call back into the logger registry.
func AddLoggerHook(f func(l *Logger, enabled bool)) (remove func()) { return loggerHooks.add(f) }

// AddErrorHook adds f, called once with the reason when a run ends by
// failure rather than by a stop: HQ lost, a data connection broken, an
// internal error. Such failures have no caller to return to; the agent also
// logs them. f runs on a goroutine of its own and may call Shutdown; a
// panic in it is recovered. The returned function removes f.
func AddErrorHook(f func(error)) (remove func()) { return errorHooks.add(f) }

// notifyError calls the error hooks with err.
func notifyError(err error) {
	errorHooks.each(func(f func(error)) {
		defer func() { recover() }() // a hook's panic is the host's bug; tracing ends anyway
		f(err)
	})
}

func notifyMode(m bytefrog.Mode) { modeHooks.each(func(f func(bytefrog.Mode)) { f(m) }) }

func notifyLogger(l *Logger, enabled bool) {
	loggerHooks.each(func(f func(*Logger, bool)) { f(l, enabled) })
}

// hostGate is host.Gate.
func hostGate() bool {
	s := active.Load()
	if s == nil {
		return false
	}
	return s.mode.Load() == modeTracing || s.gate()
}

// currentMode is the mode of the active session; ModeShutdown when none
// (host.CurrentMode).
func currentMode() bytefrog.Mode {
	if s := active.Load(); s != nil {
		return s.currentMode()
	}
	return bytefrog.ModeShutdown
}
