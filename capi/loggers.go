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
// the logger hook each logger's state; the hook keeps the C flag array that
// tadpole_logger_enabled reads.
var logs struct {
	mu       sync.Mutex
	state    map[*agent.Logger]bool // last state the hook reported
	handles  map[*agent.Logger]int32
	byHandle []*agent.Logger // byHandle[h-1]
}

func loggerChanged(l *agent.Logger, on bool) {
	logs.mu.Lock()
	defer logs.mu.Unlock()
	if logs.state == nil {
		logs.state = make(map[*agent.Logger]bool)
	}
	logs.state[l] = on
	if h, ok := logs.handles[l]; ok {
		C.tp_set_logger(C.int32_t(h), cBool(on))
	}
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
	on, known := logs.state[l]
	if !known {
		on = l.Enabled()
	}
	C.tp_set_logger(C.int32_t(h), cBool(on))
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

func cBool(b bool) C.int {
	if b {
		return 1
	}
	return 0
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
