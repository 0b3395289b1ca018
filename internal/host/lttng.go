package host

import "sync/atomic"

// LTTngRecord is one log record bound for the LTTng sessions that enabled
// its logger, with what the agent tracepoints of lttng-ust (lttng_jul:event
// and its log4j and Python equivalents) carry.
type LTTngRecord struct {
	Logger    string
	Level     int32 // on the scale of the process's LTTng domain
	LevelName string
	Message   string
	// Source of the record when known (option lttng_source): for Go, Class
	// is the function's package path and receiver ("example.com/shop.(*Cart)")
	// or package ("main"), Method its name ("Add", "main.func1" for a
	// closure), with its File and Line.
	Class, Method, File string
	Line                int
	Millis              int64 // Unix time in milliseconds
	Thread              int64 // goroutine id
}

// LTTngRecorder records log records into the LTTng sessions of the process,
// through lttng-ust. It must never block: lttng-ust's discard and overwrite
// modes apply. Package agent/lttngust provides one for Go programs built
// with cgo.
type LTTngRecorder interface {
	Record(r LTTngRecord)
}

// LTTngConfig is what a loader needs of the agent's configuration.
type LTTngConfig struct {
	Lib    string // option lttng_lib: the companion library's path; "" to find it
	Domain string // option lttng_domain: "jul", "log4j" or "python"
	Source bool   // option lttng_source: records carry their source
}

// LTTngLoader makes the process's LTTngRecorder from its configuration. A
// nil recorder with a nil error means the host records into LTTng by
// itself (libtadpole.so does, in C); an error is said once, when a session
// first enables one of the process's loggers.
type LTTngLoader func(cfg LTTngConfig) (LTTngRecorder, error)

var lttngLoader atomic.Pointer[LTTngLoader]

// SetLTTngLoader sets how the process records into LTTng sessions; a host
// (package capi, agent/lttngust) sets it before it registers with LTTng,
// in an init function. nil removes it.
func SetLTTngLoader(f LTTngLoader) {
	if f == nil {
		lttngLoader.Store(nil)
		return
	}
	lttngLoader.Store(&f)
}

// LTTngLoaderOf is the loader SetLTTngLoader set, or nil.
func LTTngLoaderOf() LTTngLoader {
	if p := lttngLoader.Load(); p != nil {
		return *p
	}
	return nil
}
