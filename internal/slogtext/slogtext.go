// Package slogtext writes log/slog attributes as text, the one way every
// slog handler of tadpole does: " key=value", group members as
// "group.key=value", values quoted when they would not read back as one
// word, times in RFC 3339 with nanoseconds.
package slogtext

import (
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// AppendAttr writes a to b as " prefix+key=value"; a group writes each of
// its members, its key added to the prefix. An empty attribute writes
// nothing.
func AppendAttr(b *strings.Builder, prefix string, a slog.Attr) {
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
			AppendAttr(b, p, g)
		}
		return
	}
	b.WriteByte(' ')
	b.WriteString(prefix)
	b.WriteString(a.Key)
	b.WriteByte('=')
	s := a.Value.String()
	if a.Value.Kind() == slog.KindTime {
		s = a.Value.Time().Format(time.RFC3339Nano)
	}
	if needsQuote(s) {
		s = strconv.Quote(s)
	}
	b.WriteString(s)
}

// needsQuote reports whether s must be quoted to read back as one value.
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
