package filter

import (
	"errors"
	"fmt"
)

// Sentinel errors; match with errors.Is.
var (
	// ErrSyntax: the expression is not valid. The error is a *SyntaxError
	// with the byte offset of the problem.
	ErrSyntax = errors.New("filter: syntax error")
	// ErrTooLong: the expression exceeds MaxLen bytes.
	ErrTooLong = errors.New("filter: expression too long")
)

// SyntaxError reports a parse or type error at a byte offset of the
// expression. It matches ErrSyntax.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("filter: offset %d: %s", e.Offset, e.Msg)
}

// Is makes errors.Is(err, ErrSyntax) true.
func (e *SyntaxError) Is(target error) bool { return target == ErrSyntax }
