package live

import (
	"errors"
	"fmt"
)

// Sentinel errors; match with errors.Is.
var (
	// ErrUnknownCommand: the request header names no viewer command.
	ErrUnknownCommand = errors.New("live: unknown command")
	// ErrSize: a request's data_size is not its command's fixed size.
	ErrSize = errors.New("live: wrong payload size")
	// ErrShort: fewer bytes than the fixed struct size.
	ErrShort = errors.New("live: short message")
	// ErrVersion: the viewer speaks another protocol major.
	ErrVersion = errors.New("live: incompatible protocol major")
	// ErrNotConnected: a command came before CONNECT.
	ErrNotConnected = errors.New("live: command before CONNECT")
	// ErrConfig: a Config field is out of range.
	ErrConfig = errors.New("live: bad config")
	// ErrClosed: the server or trace is closed.
	ErrClosed = errors.New("live: closed")
	// ErrTooLarge: a value exceeds a configured bound.
	ErrTooLarge = errors.New("live: too large")
)

// CommandError reports a request the relay refuses; it matches the
// sentinel in Err.
type CommandError struct {
	Cmd      Command
	DataSize uint64
	Err      error
}

func (e *CommandError) Error() string {
	return fmt.Sprintf("%v (data_size %d): %v", e.Cmd, e.DataSize, e.Err)
}

func (e *CommandError) Unwrap() error { return e.Err }
