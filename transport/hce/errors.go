package hce

import (
	"errors"
	"fmt"
)

// Sentinel errors; decoding errors wrap one of them (match with errors.Is).
var (
	// ErrTooLarge: a declared payload size exceeds Config.MaxPayload. The
	// stream cannot be trusted: the connection ends.
	ErrTooLarge = errors.New("hce: payload too large")
	// ErrChecksum: the MD5 of a payload differs from the envelope's. The
	// envelope was consumed and dropped; the stream goes on.
	ErrChecksum = errors.New("hce: MD5 mismatch")
	// ErrBadFlags: unknown flag bits, or more than one message type. The
	// envelope was consumed and dropped; the stream goes on.
	ErrBadFlags = errors.New("hce: bad envelope flags")
	// ErrTruncated: data ends inside a field or a block.
	ErrTruncated = errors.New("hce: truncated")
	// ErrTrailing: bytes left after the last field or block.
	ErrTrailing = errors.New("hce: trailing bytes")
	// ErrBadHeaderID: a command block's header ID lacks the fixed upper bits.
	ErrBadHeaderID = errors.New("hce: not a command block header")
	// ErrHeaderVersion: the fixed bits are right, the format is unknown.
	ErrHeaderVersion = errors.New("hce: unknown command block version")
	// ErrString: a string is longer than MaxString or not UTF-8.
	ErrString = errors.New("hce: bad string")
	// ErrHandshake: the handshake failed (refused, timed out, out of order).
	ErrHandshake = errors.New("hce: handshake failed")
	// ErrClosed: the connection or hub is closed.
	ErrClosed = errors.New("hce: closed")
	// ErrBadConfig: a Config field is out of range.
	ErrBadConfig = errors.New("hce: bad config")
)

// Recoverable reports whether err left the stream at an envelope boundary:
// the message alone is lost and reading may go on.
func Recoverable(err error) bool {
	return errors.Is(err, ErrChecksum) || errors.Is(err, ErrBadFlags)
}

// ReasonError is a refusal or rejection received from the peer.
type ReasonError struct {
	Op     string
	Reason Reason
	Text   string
}

func (e *ReasonError) Error() string {
	if e.Text != "" {
		return fmt.Sprintf("hce: %s: %v: %s", e.Op, e.Reason, e.Text)
	}
	return fmt.Sprintf("hce: %s: %v", e.Op, e.Reason)
}
