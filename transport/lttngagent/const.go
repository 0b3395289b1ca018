package lttngagent

import (
	"fmt"
	"strings"
)

// Protocol version sent in the registration. lttng-sessiond 2.8 to 2.13 (and
// later) accept exactly 2.0 and close any other version without a reply.
const (
	ProtocolMajor = 2
	ProtocolMinor = 0
)

// Field sizes of the wire format. Every integer is big-endian.
const (
	u32Size = 4
	u64Size = 8

	// NameFieldSize is the fixed size of an event name field in ENABLE and
	// DISABLE (LTTNG_SYMBOL_NAME_LEN), NUL terminator included.
	NameFieldSize = 256
	// MaxNameLen is the longest name, in bytes, that fits a name field and
	// that the sessiond accepts in a LIST reply.
	MaxNameLen = NameFieldSize - 1
	// MaxFilterSize is the largest filter_len accepted in ENABLE, the NUL
	// included (LTTNG_FILTER_MAX_LEN).
	MaxFilterSize = 65536
)

// Message sizes, summed from their fields.
const (
	// RegistrationSize: u32 domain, u32 pid, u32 major, u32 minor.
	RegistrationSize = 4 * u32Size
	// headerSize20: u64 data_size, u32 cmd, u32 cmd_version.
	headerSize20 = u64Size + u32Size + u32Size
	// headerSizeRFC01: u64 data_size, u64 cmd, u64 version.
	headerSizeRFC01 = 3 * u64Size
	// enableFixedSize: s32 loglevel_value, u32 loglevel_type, name field,
	// u32 filter_len; the filter follows.
	enableFixedSize = u32Size + u32Size + NameFieldSize + u32Size
	// disableSize: the name field alone.
	disableSize = NameFieldSize
	// appCtxFixedSize: u32 len1 and u32 len2; both strings follow.
	appCtxFixedSize = 2 * u32Size
	// ReplySize is the generic reply: u32 ret_code.
	ReplySize = u32Size
	// listHeaderSize20: u32 ret_code, u32 data_size, u32 nb_event.
	listHeaderSize20 = 3 * u32Size
	// listHeaderSizeRFC01 (u64 nb) and listTrailerSizeRFC01 (u32 ret_code)
	// frame the names of an RFC v0.1 list reply.
	listHeaderSizeRFC01  = u64Size
	listTrailerSizeRFC01 = u32Size

	// MaxDataSize is the largest data_size the client reads: an ENABLE with
	// the largest filter. A command announcing more is a protocol error that
	// ends the connection before any payload byte is read or allocated.
	MaxDataSize = enableFixedSize + MaxFilterSize
)

// Domain is the tracing domain an agent registers for
// (include/lttng/domain.h).
type Domain uint32

// Domains. Agents register as JUL, LOG4J or PYTHON; LOG4J2 exists from
// lttng-tools 2.14 only and must not be sent to a 2.13 sessiond.
const (
	DomainNone   Domain = 0
	DomainKernel Domain = 1
	DomainUST    Domain = 2
	DomainJUL    Domain = 3
	DomainLog4j  Domain = 4
	DomainPython Domain = 5
	DomainLog4j2 Domain = 6
)

var domainNames = [...]string{
	DomainNone:   "NONE",
	DomainKernel: "KERNEL",
	DomainUST:    "UST",
	DomainJUL:    "JUL",
	DomainLog4j:  "LOG4J",
	DomainPython: "PYTHON",
	DomainLog4j2: "LOG4J2",
}

func (d Domain) String() string {
	if uint64(d) < uint64(len(domainNames)) {
		return domainNames[d]
	}
	return fmt.Sprintf("UNKNOWN_DOMAIN_%d", uint32(d))
}

// Agent reports whether d is a domain an agent may register for.
func (d Domain) Agent() bool { return d >= DomainJUL && d <= DomainLog4j2 }

// ParseDomain parses an agent domain name as the lttng CLI spells it: jul,
// log4j, python or log4j2 (any case).
func ParseDomain(s string) (Domain, error) {
	for d := DomainJUL; d <= DomainLog4j2; d++ {
		if strings.EqualFold(s, domainNames[d]) {
			return d, nil
		}
	}
	return DomainNone, fmt.Errorf("%w %q", ErrBadDomain, s)
}

// Command is a command id sent by the sessiond. It is 64 bits wide because
// the RFC v0.1 header carries a u64; protocol 2.0 sends a u32.
type Command uint64

// Commands of protocol 2.0. RFC v0.1 knows only the first three.
const (
	CmdList          Command = 1
	CmdEnable        Command = 2
	CmdDisable       Command = 3
	CmdRegDone       Command = 4
	CmdAppCtxEnable  Command = 5
	CmdAppCtxDisable Command = 6
)

var commandNames = [...]string{
	CmdList:          "LIST",
	CmdEnable:        "ENABLE",
	CmdDisable:       "DISABLE",
	CmdRegDone:       "REG_DONE",
	CmdAppCtxEnable:  "APP_CTX_ENABLE",
	CmdAppCtxDisable: "APP_CTX_DISABLE",
}

func (c Command) String() string {
	if c < Command(len(commandNames)) && commandNames[c] != "" {
		return commandNames[c]
	}
	return fmt.Sprintf("UNKNOWN_CMD_%d", uint64(c))
}

// ReplyCode is the ret_code of a reply. 0 is not success.
type ReplyCode uint32

// Reply codes.
const (
	// ReplySuccess: the command was applied.
	ReplySuccess ReplyCode = 1
	// ReplyInvalid: malformed or unknown command; the CLI prints
	// "Unknown error".
	ReplyInvalid ReplyCode = 2
	// ReplyUnknownName: DISABLE of a name that is not enabled; the CLI
	// prints "UST event not found".
	ReplyUnknownName ReplyCode = 3
)

var replyNames = [...]string{
	ReplySuccess:     "SUCCESS",
	ReplyInvalid:     "INVALID",
	ReplyUnknownName: "UNKNOWN_NAME",
}

func (r ReplyCode) String() string {
	if r < ReplyCode(len(replyNames)) && replyNames[r] != "" {
		return replyNames[r]
	}
	return fmt.Sprintf("UNKNOWN_CODE_%d", uint32(r))
}

// LogLevelType says how an ENABLE's loglevel_value applies.
type LogLevelType uint32

// Log level types.
const (
	// LogLevelAll: every level matches. The CLI sends it, with INT32_MIN
	// (JUL, log4j) or 10 (Python), when the user gives no level.
	LogLevelAll LogLevelType = 0
	// LogLevelRange: "this level or more severe", level >= value.
	LogLevelRange LogLevelType = 1
	// LogLevelSingle: exactly this level, level == value.
	LogLevelSingle LogLevelType = 2
)

var logLevelTypeNames = [...]string{
	LogLevelAll:    "ALL",
	LogLevelRange:  "RANGE",
	LogLevelSingle: "SINGLE",
}

func (t LogLevelType) String() string {
	if t < LogLevelType(len(logLevelTypeNames)) {
		return logLevelTypeNames[t]
	}
	return fmt.Sprintf("UNKNOWN_LOGLEVEL_TYPE_%d", uint32(t))
}

// Valid reports whether t is one of the three defined types.
func (t LogLevelType) Valid() bool { return t <= LogLevelSingle }

// Match applies the level rule of an ENABLE to a record's level.
func (t LogLevelType) Match(value, level int32) bool {
	switch t {
	case LogLevelAll:
		return true
	case LogLevelRange:
		return level >= value
	case LogLevelSingle:
		return level == value
	}
	return false
}

// Dialect selects the wire layout.
type Dialect uint8

// Dialects. The zero value is the protocol every supported sessiond speaks.
const (
	// Dialect20 is protocol 2.0 (lttng-tools 2.8 and later): 16-byte
	// registration, 16-byte header, six commands, REG_DONE.
	Dialect20 Dialect = 0
	// DialectRFC01 is the 2013 RFC v0.1 layout: no registration message,
	// header {u64 data_size, u64 cmd, u64 version}, LIST/ENABLE/DISABLE with
	// a bare name, list reply {u64 nb; names; u32 ret_code}.
	DialectRFC01 Dialect = 1
)

var dialectNames = [...]string{
	Dialect20:    "2.0",
	DialectRFC01: "RFC-0.1",
}

func (d Dialect) String() string {
	if int(d) < len(dialectNames) {
		return dialectNames[d]
	}
	return fmt.Sprintf("UNKNOWN_DIALECT_%d", uint8(d))
}

// Valid reports whether d is a known dialect.
func (d Dialect) Valid() bool { return d <= DialectRFC01 }

// RFC01Port is the fixed agent port of RFC v0.1 session daemons, which
// published no agent.port file.
const RFC01Port = 5345

// ParseDialect reads a dialect as an option names it: "2.13" (or "2.0", the
// protocol version lttng-tools 2.8 to 2.13 speak) and "rfc01".
func ParseDialect(s string) (Dialect, error) {
	switch strings.ToLower(s) {
	case "2.13", "2.0":
		return Dialect20, nil
	case "rfc01", "rfc-0.1":
		return DialectRFC01, nil
	}
	return Dialect20, fmt.Errorf("%w: dialect %q (want 2.13 or rfc01)", ErrBadDialect, s)
}

// HeaderSize is the size of a command header in d.
func (d Dialect) HeaderSize() int {
	if d == DialectRFC01 {
		return headerSizeRFC01
	}
	return headerSize20
}

// Registers reports whether d starts a connection with a registration
// message and marks its end with REG_DONE. RFC v0.1 has neither: the agent
// counts as registered once connected.
func (d Dialect) Registers() bool { return d == Dialect20 }

// Daemon says which session daemon a connection goes to.
type Daemon uint8

// Daemons. An agent talks to the root daemon and the user's daemon at once.
const (
	DaemonRoot Daemon = 0
	DaemonUser Daemon = 1
	numDaemons        = 2
)

var daemonNames = [...]string{DaemonRoot: "root", DaemonUser: "user"}

func (d Daemon) String() string {
	if int(d) < len(daemonNames) {
		return daemonNames[d]
	}
	return fmt.Sprintf("UNKNOWN_DAEMON_%d", uint8(d))
}
