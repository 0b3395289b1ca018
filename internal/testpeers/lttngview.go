package testpeers

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// JULFields are the payload fields of lttng_jul:event, in lttng-ust
// 2.13's order (liblttng-ust-jul-jni).
var JULFields = []string{"msg", "logger_name", "class_name", "method_name", "long_millis", "int_loglevel", "int_threadid"}

// LTTngEvent is one event `lttng view` printed: its name and its payload
// fields in order.
type LTTngEvent struct {
	Name   string
	Keys   []string
	Fields map[string]string
}

var (
	viewLine  = regexp.MustCompile(`^\[[^\]]*\] \([^)]*\) \S+ (\S+): \{ [^}]* \}, \{ (.*) \}$`)
	viewField = regexp.MustCompile(`(\w+) = ("(?:[^"\\]|\\.)*"|[-\w.]+)`)
)

// ParseView parses babeltrace2's text output (lttng view).
func ParseView(t testing.TB, out string) []LTTngEvent {
	t.Helper()
	var evs []LTTngEvent
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		m := viewLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("lttng view: unexpected line %q", line)
		}
		ev := LTTngEvent{Name: m[1], Fields: map[string]string{}}
		for _, f := range viewField.FindAllStringSubmatch(m[2], -1) {
			v := f[2]
			if s, err := strconv.Unquote(v); err == nil {
				v = s
			}
			ev.Keys = append(ev.Keys, f[1])
			ev.Fields[f[1]] = v
		}
		evs = append(evs, ev)
	}
	return evs
}

// ViewSession returns the events of session s (lttng view); none when no
// application wrote any trace.
func ViewSession(t testing.TB, sd *Sessiond, s string) []LTTngEvent {
	t.Helper()
	out, err := sd.Lttng("view", s)
	if err != nil {
		if strings.Contains(err.Error(), "No trace was found") {
			return nil
		}
		t.Fatal(err)
	}
	return ParseView(t, out)
}

// Messages returns the msg field of each event.
func Messages(evs []LTTngEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Fields["msg"])
	}
	return out
}
