package agent

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Logger is a named source of log records, as LTTng lists them with
// "lttng list -j". Loggers are process-wide and live as long as the
// process. Records of a logger become trace markers (see LogMarker) while it
// is enabled and an agent traces.
type Logger struct {
	name    string
	enabled atomic.Bool
}

// Name is the logger's name.
func (l *Logger) Name() string { return l.name }

// Enabled reports whether the logger's records are recorded now: one
// atomic load when disabled, cheap enough to test before building a record.
func (l *Logger) Enabled() bool {
	return l.enabled.Load() && active.Load() != nil
}

// SetEnabled switches the logger's records on or off.
func (l *Logger) SetEnabled(on bool) { l.enabled.Store(on) }

// Log records one record of the logger as a marker, if enabled.
func (l *Logger) Log(level LogLevel, msg string) {
	if !l.Enabled() {
		return
	}
	k, v := LogMarker(l.name, level.String(), msg)
	Mark(k, v)
}

var loggers struct {
	mu     sync.Mutex
	byName map[string]*Logger
	// onNew is called, outside the lock, for each logger registered.
	onNew []func(*Logger)
}

// RegisterLogger returns the logger with name, creating it enabled.
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
	l.enabled.Store(true)
	loggers.byName[name] = l
	hooks := slices.Clone(loggers.onNew)
	loggers.mu.Unlock()
	for _, f := range hooks {
		f(l)
	}
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
	return level >= h.level.Level() && h.logger.Enabled()
}

// Handle implements slog.Handler.
func (h *SlogHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.Grow(len(r.Message) + len(h.attrs) + 32)
	b.WriteString(r.Message)
	b.WriteString(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		appendAttr(&b, h.prefix, a)
		return true
	})
	k, v := LogMarker(h.logger.name, r.Level.String(), b.String())
	Mark(k, v)
	return nil
}

// WithAttrs implements slog.Handler.
func (h *SlogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	var b strings.Builder
	b.WriteString(h.attrs)
	for _, a := range as {
		appendAttr(&b, h.prefix, a)
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

func appendAttr(b *strings.Builder, prefix string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, g := range a.Value.Group() {
			appendAttr(b, p, g)
		}
		return
	}
	b.WriteByte(' ')
	b.WriteString(prefix)
	b.WriteString(a.Key)
	b.WriteByte('=')
	var s string
	switch a.Value.Kind() {
	case slog.KindString:
		s = a.Value.String()
	case slog.KindTime:
		s = a.Value.Time().Format(time.RFC3339Nano)
	default:
		s = a.Value.String()
	}
	if needsQuote(s) {
		s = strconv.Quote(s)
	}
	b.WriteString(s)
}

func needsQuote(s string) bool {
	if s == "" {
		return true
	}
	for _, r := range s {
		if r == ' ' || r == '=' || r == '"' || r < 0x20 || r == utf8.RuneError {
			return true
		}
	}
	return false
}
