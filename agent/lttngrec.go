package agent

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/timandy/routine"

	"github.com/tadpole-trace/tadpole/internal/host"
)

// errNoLTTngRecorder: a Go program without a recorder cannot record into
// LTTng sessions; it is still listed and obeys the session daemon.
var errNoLTTngRecorder = errors.New("tadpole: a Go program records into LTTng sessions only with " +
	"github.com/tadpole-trace/tadpole/agent/lttngust imported (built with cgo)")

// lttngRec is the process's LTTng recorder, loaded with the loader a host
// set (host.SetLTTngLoader).
var lttngRec struct {
	once     sync.Once
	recorder atomic.Pointer[recorderBox]
	source   atomic.Bool
	// unavailable is why nothing is recorded into LTTng, to say once when
	// a session first enables a logger; nil once said or when all is well.
	unavailable atomic.Pointer[unavailable]
}

type recorderBox struct{ r host.LTTngRecorder }

type unavailable struct {
	cfg Config
	msg string
}

// loadLTTngRecorder runs the loader once per process, when it first
// registers with LTTng.
func loadLTTngRecorder(cfg Config) {
	if cfg.LTTngLib == "none" {
		return
	}
	lttngRec.once.Do(func() {
		var r host.LTTngRecorder
		err := errNoLTTngRecorder
		if f := host.LTTngLoaderOf(); f != nil {
			r, err = f(host.LTTngConfig{Lib: cfg.LTTngLib, Domain: cfg.LTTngDomain, Source: cfg.LTTngSource})
		}
		if err != nil {
			lttngRec.unavailable.Store(&unavailable{cfg: cfg, msg: "LTTng recording unavailable (records of " +
				"loggers LTTng sessions enable are not recorded into them): " + err.Error()})
			for _, l := range Loggers() {
				lttngWarn(l.LTTngAccept())
			}
			return
		}
		if r != nil {
			lttngRec.source.Store(cfg.LTTngSource)
			lttngRec.recorder.Store(&recorderBox{r})
		}
	})
}

// lttngWarn says once why nothing is recorded into LTTng, when a: a logger
// is enabled for LTTng.
func lttngWarn(a LogAccept) {
	if a.Kind == AcceptNone {
		return
	}
	u := lttngRec.unavailable.Load()
	if u == nil || !lttngRec.unavailable.CompareAndSwap(u, nil) {
		return
	}
	hostLog(u.cfg, LevelWarn, "lttng-lib", u.msg)
}

// recordLTTng hands one record of l to the recorder when an LTTng session
// enabled it. pc is the record's caller, 0 when unknown.
func (l *Logger) recordLTTng(level int32, levelName, msg string, pc uintptr) {
	b := lttngRec.recorder.Load()
	if b == nil || !l.LTTngAccept().Accepts(level) {
		return
	}
	r := host.LTTngRecord{Logger: l.name, Level: level, LevelName: levelName, Message: msg,
		Millis: time.Now().UnixMilli(), Thread: int64(routine.Goid())}
	if pc != 0 {
		s := sourceOf(pc)
		r.Class, r.Method, r.File, r.Line = s.class, s.method, s.file, s.line
	}
	b.r.Record(r)
}

// lttngWantsSource reports whether records into LTTng carry their source.
func lttngWantsSource(l *Logger) bool {
	return lttngRec.source.Load() && lttngRec.recorder.Load() != nil && l.LTTngAccept().Kind != AcceptNone
}

type source struct {
	class, method, file string
	line                int
}

// sources caches the source of each caller pc: resolving one costs about
// a microsecond, a lookup tens of nanoseconds.
var sources sync.Map // uintptr → *source

func sourceOf(pc uintptr) *source {
	if s, ok := sources.Load(pc); ok {
		return s.(*source)
	}
	f, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	s := &source{file: f.File, line: f.Line}
	s.class, s.method = splitFunc(f.Function)
	sources.Store(pc, s)
	return s
}

// splitFunc splits a Go function name into the "class" and method fields
// of a JUL record: "example.com/shop.(*Cart).Add" → "example.com/shop.(*Cart)",
// "Add"; "main.main.func1" → "main", "main.func1".
func splitFunc(fn string) (class, method string) {
	slash := strings.LastIndexByte(fn, '/')
	dot := strings.IndexByte(fn[slash+1:], '.')
	if dot < 0 {
		return "", fn
	}
	pkg, rest := fn[:slash+1+dot], fn[slash+1+dot+1:]
	if strings.HasPrefix(rest, "(") {
		if end := strings.Index(rest, ")."); end >= 0 {
			return pkg + "." + rest[:end+1], rest[end+2:]
		}
	}
	return pkg, rest
}
