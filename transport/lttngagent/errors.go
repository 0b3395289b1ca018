package lttngagent

import (
	"errors"
	"fmt"
)

// Sentinel errors. Errors returned by this package wrap one of them; match
// with errors.Is.
var (
	// ErrShort: the buffer holds only the start of a message.
	ErrShort = errors.New("lttngagent: need more bytes")
	// ErrTooLarge: a command announces a data_size above MaxDataSize, or a
	// length field exceeds its limit. The stream cannot be trusted after it.
	ErrTooLarge = errors.New("lttngagent: data size too large")
	// ErrBadSize: data_size does not match what the command carries.
	ErrBadSize = errors.New("lttngagent: data size does not match the command")
	// ErrBadPayload: a length, type or terminator inside a payload is wrong.
	ErrBadPayload = errors.New("lttngagent: malformed payload")
	// ErrBadName: a name is empty, longer than MaxNameLen bytes, contains a
	// NUL, or is not NUL-terminated inside its field.
	ErrBadName = errors.New("lttngagent: bad name")
	// ErrBadDialect: a dialect name ParseDialect does not know.
	ErrBadDialect = errors.New("lttngagent: unknown dialect")
	// ErrUnknownCommand: the command id is not part of the dialect.
	ErrUnknownCommand = errors.New("lttngagent: unknown command")
	// ErrTruncated: the connection ended inside a command.
	ErrTruncated = errors.New("lttngagent: truncated command")
	// ErrTimeout: a command did not arrive completely, or its reply could
	// not be written, within the configured timeout.
	ErrTimeout = errors.New("lttngagent: command timed out")
	// ErrBadReply: a reply (parsed on the daemon side) is malformed.
	ErrBadReply = errors.New("lttngagent: malformed reply")
	// ErrBadPortFile: an agent.port file is empty, not a number, or out of
	// the range 1–65535.
	ErrBadPortFile = errors.New("lttngagent: bad port file")
	// ErrNoDaemon: no session daemon could be reached.
	ErrNoDaemon = errors.New("lttngagent: no session daemon")
	// ErrBadDomain: not an agent domain.
	ErrBadDomain = errors.New("lttngagent: bad domain")
	// ErrBadConfig: a Config field is out of range.
	ErrBadConfig = errors.New("lttngagent: bad config")
	// ErrClosed: the client was closed.
	ErrClosed = errors.New("lttngagent: client closed")
)

// CommandError reports a command that could not be decoded or served. It
// wraps one of the sentinels.
type CommandError struct {
	Cmd      Command
	DataSize uint64
	Err      error
}

func (e *CommandError) Error() string {
	return fmt.Sprintf("%v (command %v, data_size %d)", e.Err, e.Cmd, e.DataSize)
}

func (e *CommandError) Unwrap() error { return e.Err }
