package agent

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tadpole-trace/tadpole/internal/host"
)

// LogLevel orders the agent's own log messages.
type LogLevel int8

// Log levels.
const (
	LevelDebug LogLevel = iota
	LevelInfo
	LevelWarn
	LevelError
	LevelOff
)

var levelNames = [...]string{"DEBUG", "INFO", "WARN", "ERROR", "OFF"}

func (l LogLevel) String() string {
	if l >= 0 && int(l) < len(levelNames) {
		return levelNames[l]
	}
	return fmt.Sprintf("LEVEL_%d", int8(l))
}

// ParseLogLevel parses debug, info, warn, error or off (any case).
func ParseLogLevel(s string) (LogLevel, error) {
	for i, n := range levelNames {
		if strings.EqualFold(s, n) || (i == int(LevelWarn) && strings.EqualFold(s, "warning")) {
			return LogLevel(i), nil
		}
	}
	return LevelWarn, fmt.Errorf("unknown log level %q", s)
}

// logger writes the agent's own messages, never to stdout. A message given a
// key is written once per key for the agent's life: a repeated problem is
// logged once.
type logger struct {
	mu    sync.Mutex
	w     io.Writer
	c     io.Closer
	level LogLevel
	seen  map[string]struct{}
}

func newLogger(dest string, level LogLevel) (*logger, error) {
	l := &logger{level: level, seen: make(map[string]struct{})}
	switch dest {
	case "", "stderr":
		l.w = os.Stderr
	case "none":
		l.w = io.Discard
		l.level = LevelOff
	default:
		f, err := os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("tadpole: log file: %w", err)
		}
		l.w, l.c = f, f
	}
	return l, nil
}

func (l *logger) enabled(level LogLevel) bool {
	return l != nil && level >= l.level && level < LevelOff
}

// logf writes one line "tadpole: [LEVEL] message".
func (l *logger) logf(level LogLevel, format string, args ...any) {
	if !l.enabled(level) {
		return
	}
	msg := fmt.Sprintf(format, args...)
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "tadpole: %s [%s] %s\n", time.Now().Format("15:04:05.000"), level, msg)
}

// oncef is logf for a problem identified by key: only its first occurrence
// is written.
func (l *logger) oncef(key string, level LogLevel, format string, args ...any) {
	if !l.enabled(level) {
		return
	}
	l.mu.Lock()
	_, dup := l.seen[key]
	if !dup {
		l.seen[key] = struct{}{}
	}
	l.mu.Unlock()
	if !dup {
		l.logf(level, format, args...)
	}
}

func (l *logger) close() {
	if l != nil && l.c != nil {
		l.c.Close()
	}
}

// hostSeen keeps host.Log's once-per-problem promise for the whole process.
var hostSeen sync.Map

// hostLogOptions is host.Log.
func hostLogOptions(opts string, level host.Level, key, msg string) {
	cfg := DefaultConfig()
	_ = cfg.ApplyEnv(nil)
	_ = cfg.ParseOptions(opts)
	l := LevelWarn
	if level == host.LevelError {
		l = LevelError
	}
	hostLog(cfg, l, key, msg)
}

// hostLog is host.Log with the options parsed.
func hostLog(cfg Config, level LogLevel, key, msg string) {
	l, err := newLogger(cfg.Log, cfg.LogLevel)
	if err != nil {
		l, _ = newLogger("stderr", cfg.LogLevel)
	}
	defer l.close()
	if !l.enabled(level) {
		return
	}
	if _, dup := hostSeen.LoadOrStore(key, struct{}{}); dup {
		return
	}
	l.logf(level, "%s", msg)
}
