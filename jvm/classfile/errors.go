package classfile

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every decoding error is a *FormatError wrapping one of
// them; match with errors.Is, and read the offset with errors.As.
var (
	// ErrTruncated: the input ended inside a structure, or a count or
	// length claims more bytes than remain.
	ErrTruncated = errors.New("classfile: truncated class file")
	// ErrBadMagic: the first four bytes are not 0xCAFEBABE.
	ErrBadMagic = errors.New("classfile: bad magic")
	// ErrUnsupportedVersion: the major version is outside MinMajor..MaxMajor.
	ErrUnsupportedVersion = errors.New("classfile: unsupported class file version")
	// ErrBadConstant: an unknown constant pool tag, an index out of range,
	// or an index naming a constant of the wrong kind.
	ErrBadConstant = errors.New("classfile: bad constant pool entry")
	// ErrBadAttribute: an attribute whose content disagrees with its
	// declared length, or a reserved value inside a decoded attribute.
	ErrBadAttribute = errors.New("classfile: bad attribute")
	// ErrTrailingBytes: bytes follow the end of the class file.
	ErrTrailingBytes = errors.New("classfile: extra bytes at the end of the class file")
	// ErrTooLarge: a count, length or index does not fit its field when
	// writing (more than 65535 constants, methods, ...; code over 4 GiB).
	ErrTooLarge = errors.New("classfile: value too large for the class file format")
	// ErrPoolFull: appending would exceed 65535 constant pool slots.
	ErrPoolFull = errors.New("classfile: constant pool full")
)

// FormatError reports a malformed class file: the byte offset (from the
// start of the class file) where the problem was found, what was being
// read, and the sentinel it wraps.
type FormatError struct {
	Offset int    // byte offset in the class file
	What   string // the structure being decoded, e.g. "constant pool entry 12"
	Err    error  // one of the ErrXxx sentinels
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%v at offset %d (%s)", e.Err, e.Offset, e.What)
}

// Unwrap returns the sentinel.
func (e *FormatError) Unwrap() error { return e.Err }

func formatErr(off int, err error, what string) *FormatError {
	return &FormatError{Offset: off, What: what, Err: err}
}

// tooLarge reports a value that cannot be written.
func tooLarge(what string, n int) error {
	return fmt.Errorf("%w: %s is %d", ErrTooLarge, what, n)
}
