package capi

/*
#include "tp.h"
*/
import "C"

import (
	"sync"

	"github.com/tadpole-trace/tadpole/agent"
)

// logs maps C logger handles (1, 2, …) to agent loggers. The agent tells
// the logger hook of every change of a logger's state; the hook copies the
// logger's Accept summary into the C table that tadpole_logger_enabled,
// tadpole_log and the JVM agent's natives read.
var logs struct {
	mu       sync.Mutex
	handles  map[*agent.Logger]int32
	byHandle []*agent.Logger // byHandle[h-1]
}

// loggerChanged is the logger hook. The summary is read under logs.mu, so
// whatever order hooks and registrations run in, the last store holds the
// logger's latest state.
func loggerChanged(l *agent.Logger, _ bool) {
	logs.mu.Lock()
	defer logs.mu.Unlock()
	if h, ok := logs.handles[l]; ok {
		setAccept(h, l)
	}
}

// setAccept copies a logger's summaries, for HQ and for LTTng, into the C
// tables; logs.mu is held.
func setAccept(h int32, l *agent.Logger) {
	a := l.Accept()
	C.tp_set_logger(C.int32_t(h), C.int(a.Kind), C.int32_t(a.Level))
	lt := l.LTTngAccept()
	C.tp_set_logger_lttng(C.int32_t(h), C.int(lt.Kind), C.int32_t(lt.Level))
}

// registerLogger is tadpole_logger_register.
func registerLogger(name string) (int32, error) {
	// The agent calls the hook from RegisterLogger: not under logs.mu.
	l := agent.RegisterLogger(name)
	logs.mu.Lock()
	defer logs.mu.Unlock()
	if h, ok := logs.handles[l]; ok {
		return h, nil
	}
	if len(logs.byHandle) >= C.TADPOLE_MAX_LOGGERS {
		return 0, ErrTooManyLoggers
	}
	if logs.handles == nil {
		logs.handles = make(map[*agent.Logger]int32)
	}
	logs.byHandle = append(logs.byHandle, l)
	h := int32(len(logs.byHandle))
	logs.handles[l] = h
	setAccept(h, l)
	return h, nil
}

func loggerByHandle(h int32) *agent.Logger {
	logs.mu.Lock()
	defer logs.mu.Unlock()
	if h < 1 || int(h) > len(logs.byHandle) {
		return nil
	}
	return logs.byHandle[h-1]
}

// levelName is one named level of an LTTng domain's scale.
type levelName struct {
	level int32
	name  string
}

// domainLevels lists each domain's level names from the most severe down,
// as the Java and Python agents name them.
var domainLevels = map[string][]levelName{
	"jul": {
		{1000, "SEVERE"}, {900, "WARNING"}, {800, "INFO"}, {700, "CONFIG"},
		{500, "FINE"}, {400, "FINER"}, {300, "FINEST"},
	},
	"log4j": {
		{50000, "FATAL"}, {40000, "ERROR"}, {30000, "WARN"}, {20000, "INFO"},
		{10000, "DEBUG"}, {5000, "TRACE"},
	},
	"python": {
		{50, "CRITICAL"}, {40, "ERROR"}, {30, "WARNING"}, {20, "INFO"}, {10, "DEBUG"},
	},
}

// levelNameOf names level on domain's scale: the name of the highest named
// level at or below it (the lowest name below every named level).
func levelNameOf(domain string, level int32) string {
	names, ok := domainLevels[domain]
	if !ok {
		names = domainLevels["jul"]
	}
	for _, n := range names {
		if level >= n.level {
			return n.name
		}
	}
	return names[len(names)-1].name
}
