package host

import (
	"sync/atomic"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
	"github.com/tadpole-trace/tadpole/transport/j4p"
)

// Level is the level of a host's log line (Log).
type Level uint8

// Levels of Log.
const (
	LevelWarn Level = iota + 1
	LevelError
)

// Agent is what package agent provides to hosts: each call of this package
// of the same name is the field's. Register sets them all.
type Agent struct {
	SubmitBatch func(thread uint64, b []byte) (int, error)
	// WireBatch and SubmitWireBatch: see the functions of those names.
	WireBatch       func() *[]byte
	SubmitWireBatch func(thread uint64, bp *[]byte, n int) int
	SubmitProbes    func(thread uint64, ev []int64) (int, error)
	HandProbes      func(thread uint64, ev []int64, owner ProbeOwner) bool
	Gate            func() bool
	CurrentMode     func() bytefrog.Mode
	AddModeHook     func(f func(bytefrog.Mode)) (remove func())
	ReportClass     func(t bytefrog.MsgType, name string) bool
	ClassFilters    func() (exclusions, inclusions []string, ok bool)
	Log             func(opts string, level Level, key, msg string)
}

// impl is set once, by package agent's init, before any host's init runs
// (hosts import package agent): read without synchronisation.
var impl Agent

// Register installs the agent's implementation; package agent calls it from
// its init function. A missing call panics there, at process start, rather
// than at a host's first event.
func Register(a Agent) {
	if a.SubmitBatch == nil || a.WireBatch == nil || a.SubmitWireBatch == nil || a.SubmitProbes == nil || a.HandProbes == nil || a.Gate == nil || a.CurrentMode == nil ||
		a.AddModeHook == nil || a.ReportClass == nil || a.ClassFilters == nil || a.Log == nil {
		panic("host: incomplete agent registration")
	}
	impl = a
}

// SubmitBatch records a host thread's batch of events (see BatchHeaderSize
// for the layout). thread identifies the host thread (a Java thread id, or
// an id the C host gives each OS thread). It returns the number of records
// taken: 0 with a nil error when nothing is tracing or tracing is
// suspended; a malformed batch is refused whole (ErrBadBatch). b is copied:
// the caller may reuse it at once. The batch's events get consecutive
// sequence numbers. While tracing is paused it blocks.
func SubmitBatch(thread uint64, b []byte) (int, error) { return impl.SubmitBatch(thread, b) }

// WireBatch returns an empty buffer of the agent's for a batch that
// SubmitWireBatch hands over.
func WireBatch() *[]byte { return impl.WireBatch() }

// SubmitWireBatch is SubmitBatch for a batch that the agent's own code
// built (the JVM's JUL converter) in a buffer from WireBatch: no pass over
// the records and no copy. *bp must hold n well-formed records
// (BeginBatchRecord, EndBatchRecord) of the kinds BatchMarker and
// BatchName only, and a marker flagged BatchFlagWire valid modified UTF-8
// in its key and value (each at most 65535 bytes). The agent takes bp in
// every case: the caller must not touch it again. It returns the records
// taken (0 when not tracing). While tracing is paused it blocks.
func SubmitWireBatch(thread uint64, bp *[]byte, n int) int {
	return impl.SubmitWireBatch(thread, bp, n)
}

// SubmitProbes records a JVM thread's probe words (see ProbeEntry; thread:
// its Java thread id) as one batch: consecutive sequence numbers, the
// thread's order kept. It returns the number of events taken (0 when not
// tracing); bad words are left out and reported (ErrBadProbe) while the
// rest is recorded.
func SubmitProbes(thread uint64, ev []int64) (int, error) { return impl.SubmitProbes(thread, ev) }

// A ProbeOwner owns memory holding probe words that it lends to the agent
// (HandProbes): Release gives it back, once.
type ProbeOwner interface {
	Release()
}

// HandProbes is SubmitProbes without the copy: the agent keeps ev, which
// must stay unchanged until it calls owner.Release, reads the words in
// place once, off the calling thread, and releases them then. A bad word
// is left out, as SubmitProbes does, but not reported. It reports whether
// it took ev; when false (not tracing, or no agent) owner keeps ev and
// Release is not called. ev holds at most 8192 words (a JVM probe
// buffer's).
func HandProbes(thread uint64, ev []int64, owner ProbeOwner) bool {
	return impl.HandProbes(thread, ev, owner)
}

// Gate is for hosts whose hot path found the mode other than Tracing: it
// blocks while tracing is paused and reports whether events are recorded
// now (false when suspended, stopped, or no agent traces).
func Gate() bool { return impl.Gate() }

// CurrentMode is the mode of the active run; bytefrog.ModeShutdown when
// none.
func CurrentMode() bytefrog.Mode { return impl.CurrentMode() }

// AddModeHook adds f, called with the new mode each time the active run
// changes mode (ModeShutdown when tracing ends), so that a host keeps its
// own copy of the mode its hot path tests. f must not block. Several hosts
// in one process (the C API and the JVM agent) each add their own; the
// returned function removes f.
func AddModeHook(f func(bytefrog.Mode)) (remove func()) { return impl.AddModeHook(f) }

// ReportClass queues a class report for HQ: t is MsgClassTransformed,
// MsgClassIgnored or MsgClassTransformFailed, name the internal class name.
// It never blocks: false when no run is on or the control queue is full.
func ReportClass(t bytefrog.MsgType, name string) bool { return impl.ReportClass(t, name) }

// ClassFilters returns HQ's class exclusions and inclusions (Java regexes
// matched with lookingAt against internal class names; an inclusion
// overrides the exclusions) of the active run; ok is false when no run is
// on. The slices are HQ's: do not modify them.
func ClassFilters() (exclusions, inclusions []string, ok bool) { return impl.ClassFilters() }

// Log writes one line for a problem that a host's glue (the JVM agent, the
// C library) finds outside a running agent, where the options string opts
// — after the TADPOLE_* environment, as agent.LoadConfig reads them — sends
// the agent's log: nothing under log=none or a higher log_level, and one
// line per key for the process's life. Bad options do not stop the line:
// the settings that parse are used, the rest keep their defaults.
func Log(opts string, level Level, key, msg string) { impl.Log(opts, level, key, msg) }

type platformBox struct{ j4p.MBeanServer }

var platform atomic.Pointer[platformBox]

// SetPlatformMBeans plugs the host runtime's MBean server (a JVM's
// platform MBeans) into the management endpoint, running or not; nil
// removes it. Its names are searched and listed after tadpole's and the
// host registry's.
func SetPlatformMBeans(s j4p.MBeanServer) {
	if s == nil {
		platform.Store(nil)
		return
	}
	platform.Store(&platformBox{s})
}

// PlatformMBeans is the server SetPlatformMBeans plugged in, or nil.
func PlatformMBeans() j4p.MBeanServer {
	if p := platform.Load(); p != nil {
		return p.MBeanServer
	}
	return nil
}
