package lttngagent

import (
	"context"
	"log/slog"
	"strings"

	"github.com/tadpole-trace/tadpole/internal/slogtext"
)

// discardHandler drops every record.
type discardHandler struct{}

func (discardHandler) Enabled(context.Context, slog.Level) bool  { return false }
func (discardHandler) Handle(context.Context, slog.Record) error { return nil }
func (d discardHandler) WithAttrs([]slog.Attr) slog.Handler      { return d }
func (d discardHandler) WithGroup(string) slog.Handler           { return d }

// NewFuncLogger returns a logger that formats each record at or above min as
// one line, "message key=value …", and hands it to f. It lets a host with
// its own log sink receive the client's diagnostics.
func NewFuncLogger(min slog.Level, f func(level slog.Level, line string)) *slog.Logger {
	return slog.New(&funcHandler{min: min, f: f})
}

type funcHandler struct {
	min    slog.Level
	f      func(slog.Level, string)
	prefix string // formatted attributes from WithAttrs
	group  string // key prefix from WithGroup
}

func (h *funcHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.min }

func (h *funcHandler) Handle(_ context.Context, r slog.Record) error {
	var sb strings.Builder
	sb.WriteString(r.Message)
	sb.WriteString(h.prefix)
	r.Attrs(func(a slog.Attr) bool {
		slogtext.AppendAttr(&sb, h.group, a)
		return true
	})
	h.f(r.Level, sb.String())
	return nil
}

func (h *funcHandler) WithAttrs(as []slog.Attr) slog.Handler {
	var sb strings.Builder
	sb.WriteString(h.prefix)
	for _, a := range as {
		slogtext.AppendAttr(&sb, h.group, a)
	}
	h2 := *h
	h2.prefix = sb.String()
	return &h2
}

func (h *funcHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := *h
	h2.group = h.group + name + "."
	return &h2
}

// problemLog logs each kind of problem of one connection loop once, until a
// successful registration shows the problem is over. It belongs to the
// loop's goroutine. Keys come from a fixed set, so the map stays small.
type problemLog struct {
	l    *slog.Logger
	seen map[string]struct{}
}

func newProblemLog(l *slog.Logger) *problemLog {
	return &problemLog{l: l, seen: make(map[string]struct{})}
}

// once logs msg unless key was logged since the last reset.
func (p *problemLog) once(key string, level slog.Level, msg string, args ...any) {
	if _, dup := p.seen[key]; dup {
		return
	}
	p.seen[key] = struct{}{}
	p.l.Log(context.Background(), level, msg, args...)
}

func (p *problemLog) reset() { clear(p.seen) }
