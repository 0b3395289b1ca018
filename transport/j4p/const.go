package j4p

import (
	"strconv"
	"strings"
)

// Type is a request's operation.
type Type uint8

// Operations.
const (
	TypeUnknown Type = iota
	TypeRead
	TypeWrite
	TypeExec
	TypeSearch
	TypeList
	TypeVersion
)

var typeNames = [...]string{"unknown", "read", "write", "exec", "search", "list", "version"}

// String is the name as requests and responses spell it (lower case).
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "UNKNOWN_TYPE_" + strconv.Itoa(int(t))
}

// ParseType parses an operation name in any case.
func ParseType(s string) (Type, error) {
	for i := TypeRead; int(i) < len(typeNames); i++ {
		if strings.EqualFold(s, typeNames[i]) {
			return i, nil
		}
	}
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return TypeUnknown, errorf(ErrUnsupported, "invalid request type %q", s)
}

// Dialect selects the protocol forms: escaping of GET paths, the version
// value, search misses, HTTP statuses and the error fields.
type Dialect uint8

// Dialects.
const (
	// Dialect2 is Jolokia 2.x: "!" escaping, version object, empty
	// search = [], JMX errors in HTTP 200, application/json.
	Dialect2 Dialect = iota
	// Dialect030 is j4p 0.30: "/-/" escaping, version string, empty search =
	// 404, HTTP status = JSON status, text/plain, no error_type or request in
	// errors.
	Dialect030
)

var dialectNames = [...]string{"jolokia2", "j4p030"}

func (d Dialect) String() string {
	if int(d) < len(dialectNames) {
		return dialectNames[d]
	}
	return "UNKNOWN_DIALECT_" + strconv.Itoa(int(d))
}

// ParseDialect parses "jolokia2" (or "2") and "j4p030" (or "0.30").
func ParseDialect(s string) (Dialect, error) {
	switch strings.ToLower(s) {
	case "jolokia2", "2", "jolokia":
		return Dialect2, nil
	case "j4p030", "0.30", "j4p":
		return Dialect030, nil
	}
	return Dialect2, errorf(ErrBadConfig, "dialect %q: want jolokia2 or j4p030", s)
}

// ProtocolVersion is the Jolokia protocol version reported by version.
const ProtocolVersion = "7.2"
