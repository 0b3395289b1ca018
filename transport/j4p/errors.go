package j4p

import (
	"errors"
	"fmt"
)

// Errors. An MBeanServer wraps the first five so that clients get the
// status and exception type Jolokia uses for them.
var (
	ErrInstanceNotFound  = errors.New("j4p: no such MBean")
	ErrAttributeNotFound = errors.New("j4p: no such attribute")
	ErrOperationNotFound = errors.New("j4p: no such operation")
	ErrIllegalArgument   = errors.New("j4p: illegal argument")
	ErrReadOnly          = errors.New("j4p: attribute is read-only")
	ErrPathNotFound      = errors.New("j4p: inner path not found")
	ErrAccessDenied      = errors.New("j4p: access denied")
	ErrUnsupported       = errors.New("j4p: unsupported request")
	ErrBadRequest        = errors.New("j4p: bad request")
	ErrBadEscape         = errors.New("j4p: bad escape in path")
	ErrBadObjectName     = errors.New("j4p: malformed object name")
	ErrBadParam          = errors.New("j4p: bad processing parameter")
	ErrBodyTooLarge      = errors.New("j4p: request body too large")
	ErrTooDeep           = errors.New("j4p: JSON nested too deep")
	ErrTooMany           = errors.New("j4p: too many requests in bulk")
	ErrResponseTooLarge  = errors.New("j4p: response too large")
	ErrBadPolicy         = errors.New("j4p: bad policy")
	ErrBadConfig         = errors.New("j4p: bad configuration")
)

// Error is a JMX-level failure of one request: what a response reports as
// status, error_type and error.
type Error struct {
	Status int    // 400, 403, 404 or 500
	Type   string // the Java exception class Jolokia names for it
	Err    error  // the cause, wrapping one of the ErrXxx sentinels
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// errClass maps sentinels to status and Java exception class.
var errClass = []struct {
	err    error
	status int
	typ    string
}{
	{ErrInstanceNotFound, 404, "javax.management.InstanceNotFoundException"},
	{ErrAttributeNotFound, 404, "javax.management.AttributeNotFoundException"},
	{ErrOperationNotFound, 404, "java.lang.NoSuchMethodException"},
	{ErrPathNotFound, 404, "javax.management.AttributeNotFoundException"},
	{ErrAccessDenied, 403, "java.lang.SecurityException"},
	{ErrIllegalArgument, 400, "java.lang.IllegalArgumentException"},
	{ErrBadRequest, 400, "java.lang.IllegalArgumentException"},
	{ErrBadEscape, 400, "java.lang.IllegalArgumentException"},
	{ErrBadObjectName, 400, "javax.management.MalformedObjectNameException"},
	{ErrBadParam, 400, "java.lang.IllegalArgumentException"},
	{ErrReadOnly, 400, "java.lang.IllegalArgumentException"},
	{ErrUnsupported, 400, "java.lang.UnsupportedOperationException"},
	{ErrResponseTooLarge, 500, "java.lang.IllegalStateException"},
}

// classify turns any error into an *Error.
func classify(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	for _, c := range errClass {
		if errors.Is(err, c.err) {
			return &Error{Status: c.status, Type: c.typ, Err: err}
		}
	}
	return &Error{Status: 500, Type: "javax.management.MBeanException", Err: err}
}

func errorf(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))
}
