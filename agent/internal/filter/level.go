package filter

import (
	"fmt"
	"math"
)

// LevelType is the loglevel_type of an ENABLE; the values are the wire
// values.
type LevelType uint8

// Level types.
const (
	// LevelAll: every level.
	LevelAll LevelType = 0
	// LevelRange: "this level or more severe", level >= value.
	LevelRange LevelType = 1
	// LevelSingle: exactly this level, level == value.
	LevelSingle LevelType = 2
)

var levelTypeNames = [...]string{LevelAll: "ALL", LevelRange: "RANGE", LevelSingle: "SINGLE"}

func (t LevelType) String() string {
	if int(t) < len(levelTypeNames) {
		return levelTypeNames[t]
	}
	return fmt.Sprintf("UNKNOWN_LEVEL_TYPE_%d", uint8(t))
}

// NoLevel is the value the CLI sends with LevelAll when the user gives no
// level (JUL and log4j: INT32_MIN).
const NoLevel = math.MinInt32

// Level is the level rule of an enabled event.
type Level struct {
	Type  LevelType
	Value int32
}

// Match applies the rule to a record's level. Levels are numbers where
// more severe is larger (JUL SEVERE 1000, INFO 800; log4j FATAL 50000;
// Python CRITICAL 50). An unknown type matches nothing.
func (l Level) Match(level int32) bool {
	switch l.Type {
	case LevelAll:
		return true
	case LevelRange:
		return level >= l.Value
	case LevelSingle:
		return level == l.Value
	}
	return false
}
