package instrument

import (
	"errors"
	"fmt"
)

// Malformed code. Decoding never panics: every problem is one of these,
// wrapped in a *CodeError naming the offset.
var (
	ErrTruncated  = errors.New("instrument: code truncated")
	ErrBadOpcode  = errors.New("instrument: invalid opcode")
	ErrBadWide    = errors.New("instrument: invalid wide instruction")
	ErrBadSwitch  = errors.New("instrument: invalid switch")
	ErrBadBranch  = errors.New("instrument: branch target not at an instruction")
	ErrBadOffset  = errors.New("instrument: table offset not at an instruction")
	ErrBadFrames  = errors.New("instrument: malformed StackMapTable")
	ErrBadPoolRef = errors.New("instrument: bad constant pool reference")
)

// Reasons a well-formed method is left as it is.
var (
	// ErrTooLarge: the instrumented code would exceed 65535 bytes.
	ErrTooLarge = errors.New("instrument: method too large to instrument")
	// ErrBranchOverflow: a conditional branch must be widened where the
	// StackMapTable has no frame for the new fall-through point.
	ErrBranchOverflow = errors.New("instrument: branch overflow needs a new stack map frame")
	// ErrCtorFlow: the paths of a constructor before its super() or this()
	// call do not all reach one call with the same stack, or a handler
	// covers them.
	ErrCtorFlow = errors.New("instrument: constructor flow before super() not supported")
	// ErrNoStackMap: class version >= 50 with branches but no StackMapTable
	// (JDK-8228604 retransform input): no frame can be added for the handler.
	ErrNoStackMap = errors.New("instrument: StackMapTable missing")
)

// errNoSites: with Config.SitesOnly, a method without a site call, which
// is left as it is and not listed.
var errNoSites = errors.New("instrument: no call site")

// CodeError is a problem at a bytecode offset of one method.
type CodeError struct {
	Offset int
	Err    error
	Detail string
}

func (e *CodeError) Error() string {
	if e.Detail != "" {
		return fmt.Sprintf("%v at offset %d: %s", e.Err, e.Offset, e.Detail)
	}
	return fmt.Sprintf("%v at offset %d", e.Err, e.Offset)
}

func (e *CodeError) Unwrap() error { return e.Err }

func codeErr(off int, err error, format string, a ...any) error {
	ce := &CodeError{Offset: off, Err: err}
	if format != "" {
		ce.Detail = fmt.Sprintf(format, a...)
	}
	return ce
}
