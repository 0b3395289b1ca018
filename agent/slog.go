package agent

import (
	"context"
	"log/slog"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tadpole-trace/tadpole/agent/internal/filter"
	"github.com/tadpole-trace/tadpole/internal/slogtext"
)

// Logger is a named source of log records, as LTTng lists them with
// "lttng list -j". Loggers are process-wide and live as long as the
// process. Records of a logger become trace markers (see LogMarker) while it
// is enabled and an agent traces.
type Logger struct {
	name    string
	enabled atomic.Bool
	// rules are the LTTng rules that name the logger; nil means every
	// record while enabled.
	rules atomic.Pointer[[]*filter.Rule]
	// lttng is the LogAccept (packAccept) of the records that LTTng
	// sessions enabled and that go into LTTng (option logs=POLICY:TO).
	lttng atomic.Uint64
	// announced: the logger hook has seen this logger (under logControl.mu).
	announced bool
	// override is a LoggerOverride set through the management endpoint.
	override atomic.Uint32
}

// LTTngAccept summarises which of the logger's records an LTTng session
// daemon enabled for recording into its sessions (by name and level; a
// filter expression makes it AcceptLog, and lttng-ust's own filter then
// decides). It does not depend on an HQ run. Hosts that record into LTTng
// (libtadpole.so with libtadpole-lttng.so) copy it from the logger hook.
func (l *Logger) LTTngAccept() LogAccept { return unpackAccept(l.lttng.Load()) }

func packAccept(a LogAccept) uint64 { return uint64(uint32(a.Level))<<32 | uint64(a.Kind) }

func unpackAccept(v uint64) LogAccept {
	return LogAccept{Kind: LogAcceptKind(v & 0xFF), Level: int32(uint32(v >> 32))}
}

// Name is the logger's name.
func (l *Logger) Name() string { return l.name }

// Enabled reports whether the logger's records are recorded now: one
// atomic load when disabled, cheap enough to test before building a record.
func (l *Logger) Enabled() bool {
	return l.enabled.Load() && active.Load() != nil
}

// Log records one record of the logger as a marker when the logger is
// enabled and the record passes the LTTng level rules and filters that
// enabled it. level is on the scale of the LTTng domain (JUL: SEVERE 1000 …
// FINEST 300); levelName is the host's name for it.
//
// Records of loggers an LTTng session enabled also go into that session,
// through the process's LTTng recorder (agent/lttngust for Go), with the
// caller as their source.
func (l *Logger) Log(level int32, levelName, msg string) {
	if lttngWantsSource(l) {
		var pc [1]uintptr
		runtime.Callers(2, pc[:])
		l.log(level, levelName, msg, pc[0])
		return
	}
	l.log(level, levelName, msg, 0)
}

// log is Log with the caller's pc, 0 when unknown.
func (l *Logger) log(level int32, levelName, msg string, pc uintptr) {
	l.recordLTTng(level, levelName, msg, pc)
	if !l.Enabled() || !l.accepts(level, msg) {
		return
	}
	k, v := LogMarker(l.name, levelName, msg)
	Mark(k, v)
}

// accepts applies the LTTng rules naming the logger to one record.
func (l *Logger) accepts(level int32, msg string) bool {
	rules := l.rules.Load()
	if rules == nil {
		return true
	}
	rec := filter.Record{LoggerName: l.name, Level: level, Message: msg}
	for _, r := range *rules {
		if r.Level.Match(level) && (r.Filter == nil || r.Filter.Eval(&rec)) {
			return true
		}
	}
	return false
}

// LogAcceptKind says which records of a logger a host may decide on in its
// own code, without calling Log: see Logger.Accept.
type LogAcceptKind uint8

// Accept kinds.
const (
	// AcceptNone: no record (the logger is disabled, or no rule can match).
	AcceptNone LogAcceptKind = iota
	// AcceptAll: every record.
	AcceptAll
	// AcceptRange: records whose level is LogAccept.Level or more severe.
	AcceptRange
	// AcceptSingle: records whose level is exactly LogAccept.Level.
	AcceptSingle
	// AcceptLog: only Log decides (a filter expression reads the message,
	// or the level rules are too many to summarise).
	AcceptLog
)

var acceptKindNames = [...]string{"NONE", "ALL", "RANGE", "SINGLE", "LOG"}

func (k LogAcceptKind) String() string {
	if int(k) < len(acceptKindNames) {
		return acceptKindNames[k]
	}
	return "UNKNOWN_ACCEPT_" + strconv.Itoa(int(k))
}

// LogAccept summarises which records of a logger are recorded, for hosts
// (the C API, the JVM agent) that copy it into their own code and build
// the record's marker themselves (LogMarker) when it accepts: a record is
// recorded when an agent traces and the summary accepts its level.
type LogAccept struct {
	Kind  LogAcceptKind
	Level int32 // AcceptRange and AcceptSingle
}

// Accepts applies the summary to a record's level; AcceptLog accepts
// (Log then decides).
func (a LogAccept) Accepts(level int32) bool {
	switch a.Kind {
	case AcceptAll, AcceptLog:
		return true
	case AcceptRange:
		return level >= a.Level
	case AcceptSingle:
		return level == a.Level
	}
	return false
}

// Accept summarises the logger's enabled state and rules. Hosts keeping a
// copy refresh it from the logger hook (AddLoggerHook), which is called
// whenever either changes.
func (l *Logger) Accept() LogAccept {
	if !l.enabled.Load() {
		return LogAccept{Kind: AcceptNone}
	}
	rules := l.rules.Load()
	if rules == nil {
		return LogAccept{Kind: AcceptAll}
	}
	return summarise(*rules)
}

// summarise reduces the rules naming a logger to one level test when no
// rule has a filter expression: ranges merge into the lowest, a single
// level a range covers drops out.
func summarise(rules []*filter.Rule) LogAccept {
	filtered, haveRange := false, false
	low := int32(math.MaxInt32)
	var singles []int32
	for _, r := range rules {
		if r.Filter != nil {
			filtered = true
			continue
		}
		switch r.Level.Type {
		case filter.LevelAll:
			return LogAccept{Kind: AcceptAll}
		case filter.LevelRange:
			haveRange = true
			low = min(low, r.Level.Value)
		case filter.LevelSingle:
			if !slices.Contains(singles, r.Level.Value) {
				singles = append(singles, r.Level.Value)
			}
		} // an unknown type matches nothing
	}
	if filtered {
		return LogAccept{Kind: AcceptLog}
	}
	if haveRange {
		singles = slices.DeleteFunc(singles, func(v int32) bool { return v >= low })
	}
	switch {
	case haveRange && len(singles) == 0:
		return LogAccept{Kind: AcceptRange, Level: low}
	case !haveRange && len(singles) == 1:
		return LogAccept{Kind: AcceptSingle, Level: singles[0]}
	case !haveRange && len(singles) == 0:
		return LogAccept{Kind: AcceptNone}
	}
	return LogAccept{Kind: AcceptLog}
}

var loggers struct {
	mu     sync.Mutex
	byName map[string]*Logger
}

// RegisterLogger returns the logger with name, creating it; whether it is
// enabled follows the log policy and the LTTng rules.
func RegisterLogger(name string) *Logger {
	loggers.mu.Lock()
	if l, ok := loggers.byName[name]; ok {
		loggers.mu.Unlock()
		return l
	}
	if loggers.byName == nil {
		loggers.byName = make(map[string]*Logger)
	}
	l := &Logger{name: name}
	loggers.byName[name] = l
	loggers.mu.Unlock()
	refreshLogger(l)
	return l
}

// Loggers returns every registered logger, sorted by name.
func Loggers() []*Logger {
	loggers.mu.Lock()
	out := make([]*Logger, 0, len(loggers.byName))
	for _, l := range loggers.byName {
		out = append(out, l)
	}
	loggers.mu.Unlock()
	slices.SortFunc(out, func(a, b *Logger) int { return strings.Compare(a.name, b.name) })
	return out
}

// LogMarkerPrefix starts the key of every marker made from a log record.
const LogMarkerPrefix = "log:"

// LogMarker is the one convention for log records in a Bytefrog trace:
//
//	key   = "log:" + logger name
//	value = level name + " " + message
//
// where the level name is the host's own (JUL's SEVERE…FINEST, slog's
// DEBUG…ERROR, or a C host's), and the message carries any attributes
// already formatted as " key=value" pairs.
func LogMarker(logger, level, msg string) (key, value string) {
	return LogMarkerPrefix + logger, level + " " + msg
}

// SlogHandler is a log/slog Handler whose records become trace markers.
// The logger name of a record is the handler's name, extended by each
// WithGroup: NewSlogHandler("app", nil).WithGroup("db") logs as "app.db",
// the way JUL names child loggers. Attributes are appended to the message
// as " key=value" (groups as "group.key=value").
type SlogHandler struct {
	logger *Logger
	level  slog.Leveler
	prefix string // group path for attribute keys
	attrs  string // preformatted attributes
}

// SlogOptions configures a SlogHandler.
type SlogOptions struct {
	// Level is the least level recorded; default slog.LevelInfo.
	Level slog.Leveler
}

// NewSlogHandler returns a handler recording as logger name.
func NewSlogHandler(name string, opts *SlogOptions) *SlogHandler {
	h := &SlogHandler{logger: RegisterLogger(name), level: slog.LevelInfo}
	if opts != nil && opts.Level != nil {
		h.level = opts.Level
	}
	return h
}

// Logger returns the registry entry the handler records as.
func (h *SlogHandler) Logger() *Logger { return h.logger }

// Enabled implements slog.Handler.
func (h *SlogHandler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= h.level.Level() && (h.logger.Enabled() || lttngRec.recorder.Load() != nil &&
		h.logger.LTTngAccept().Accepts(domainLevel(level)))
}

// Handle implements slog.Handler.
func (h *SlogHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.Grow(len(r.Message) + len(h.attrs) + 32)
	b.WriteString(r.Message)
	b.WriteString(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		slogtext.AppendAttr(&b, h.prefix, a)
		return true
	})
	pc := uintptr(0)
	if lttngRec.source.Load() {
		pc = r.PC
	}
	h.logger.log(domainLevel(r.Level), r.Level.String(), b.String(), pc)
	return nil
}

// WithAttrs implements slog.Handler.
func (h *SlogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	var b strings.Builder
	b.WriteString(h.attrs)
	for _, a := range as {
		slogtext.AppendAttr(&b, h.prefix, a)
	}
	h2 := *h
	h2.attrs = b.String()
	return &h2
}

// WithGroup implements slog.Handler.
func (h *SlogHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := *h
	h2.logger = RegisterLogger(h.logger.name + "." + name)
	h2.prefix = h.prefix + name + "."
	return &h2
}

// domainLevel maps a slog level onto the integer scale of the LTTng domain
// the process registers in, for loglevel rules: JUL (FINE 500, INFO 800,
// WARNING 900, SEVERE 1000), log4j (DEBUG 10000 … ERROR 40000) or Python
// (DEBUG 10 … ERROR 40). Levels between slog's four round down.
func domainLevel(l slog.Level) int32 {
	step := 0
	switch {
	case l >= slog.LevelError:
		step = 3
	case l >= slog.LevelWarn:
		step = 2
	case l >= slog.LevelInfo:
		step = 1
	}
	switch Domain() {
	case "log4j":
		return int32(10000 * (step + 1))
	case "python":
		return int32(10 * (step + 1))
	}
	return [...]int32{500, 800, 900, 1000}[step]
}

var domain atomic.Value // string: the LTTng domain of the process

// Domain is the LTTng domain the process's loggers are listed under.
func Domain() string {
	if d, ok := domain.Load().(string); ok {
		return d
	}
	return "jul"
}
