package calltree

import "errors"

// Sentinel errors; match with errors.Is.
var (
	// ErrConfig: a Config field is out of range.
	ErrConfig = errors.New("calltree: invalid configuration")
	// ErrFormat: an export format name is not known.
	ErrFormat = errors.New("calltree: unknown export format")
)
