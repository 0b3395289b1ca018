package bytefrog

import (
	"errors"
	"fmt"
)

// Sentinel errors. Decoding errors wrap one of them; match with errors.Is.
var (
	// ErrUnknownType: the type byte names no message of the protocol.
	ErrUnknownType = errors.New("bytefrog: unknown message type")
	// ErrTruncated: the stream ended inside a message.
	ErrTruncated = errors.New("bytefrog: truncated message")
	// ErrTooLarge: a declared length exceeds the configured maximum.
	ErrTooLarge = errors.New("bytefrog: message too large")
	// ErrInvalidUTF: a string is not valid Java modified UTF-8.
	ErrInvalidUTF = errors.New("bytefrog: invalid modified UTF-8")
	// ErrBadConfig: a Configuration payload could not be understood.
	ErrBadConfig = errors.New("bytefrog: bad configuration")
	// ErrVersion: the dialect's protocol version (0, or above MaxVersion)
	// defines no Configuration encoding.
	ErrVersion = errors.New("bytefrog: no configuration encoding for this protocol version")
	// ErrShort is returned by Parse when b holds only the start of a
	// message; more bytes are needed. A Decoder never returns it.
	ErrShort = errors.New("bytefrog: need more bytes")
)

// UnknownTypeError reports an unknown type id. It matches ErrUnknownType.
type UnknownTypeError struct{ Type uint8 }

func (e *UnknownTypeError) Error() string {
	return fmt.Sprintf("bytefrog: unknown message type id %d", e.Type)
}

// Is makes errors.Is(err, ErrUnknownType) true.
func (e *UnknownTypeError) Is(target error) bool { return target == ErrUnknownType }
