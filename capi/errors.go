package capi

/*
#include "tp.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"io/fs"
	"unsafe"

	"github.com/tadpole-trace/tadpole/agent"
)

// Errors of the C API besides the agent's.
var (
	ErrNotStarted     = errors.New("tadpole: not tracing (not started, stopped, or HQ ended the run)")
	ErrAlreadyStarted = errors.New("tadpole: already tracing")
	ErrTooManyLoggers = fmt.Errorf("tadpole: more than %d loggers", C.TADPOLE_MAX_LOGGERS)
	ErrBadHandle      = errors.New("tadpole: unknown handle")
	ErrInternal       = errors.New("tadpole: internal error")
	ErrLTTngOff       = errors.New("tadpole: lttng_lib=none")
	ErrLTTngNoPath    = errors.New("tadpole: the path of libtadpole.so is unknown: set lttng_lib")
)

// LTTngLoadError is why libtadpole-lttng.so could not be loaded: missing
// (lttng-ust's headers were not there at build time), or lttng-ust itself
// is not installed.
type LTTngLoadError struct {
	Path, Reason string
}

func (e *LTTngLoadError) Error() string {
	return fmt.Sprintf("tadpole: cannot load %s (install lttng-ust and build it with ./build.sh lib): %s", e.Path, e.Reason)
}

// Return codes of the C API (include/tadpole.h).
const (
	codeOK          = C.TADPOLE_OK
	codeBadHandle   = C.TADPOLE_EBADF
	codeChild       = C.TADPOLE_ECHILD
	codeNoMem       = C.TADPOLE_ENOMEM
	codeInvalid     = C.TADPOLE_EINVAL
	codeNoSpace     = C.TADPOLE_ENOSPC
	codeProtocol    = C.TADPOLE_EPROTO
	codeNotTracing  = C.TADPOLE_ENOTCONN
	codeTimedOut    = C.TADPOLE_ETIMEDOUT
	codeRefused     = C.TADPOLE_ECONNREFUSED
	codeAlready     = C.TADPOLE_EALREADY
	codeInternalErr = C.TADPOLE_EINTERNAL
)

// errorCodes maps errors to return codes, first match wins; anything else
// is codeInternalErr.
var errorCodes = [...]struct {
	err  error
	code C.int
}{
	{agent.ErrUnknownOption, codeInvalid},
	{agent.ErrBadOption, codeInvalid},
	{agent.ErrNoHQ, codeRefused},
	{agent.ErrRejected, codeRefused},
	{agent.ErrStartTimeout, codeTimedOut},
	{agent.ErrProtocol, codeProtocol},
	{agent.ErrAlreadyRunning, codeAlready},
	{agent.ErrStopped, codeNotTracing},
	{ErrNotStarted, codeNotTracing},
	{ErrAlreadyStarted, codeAlready},
	{ErrTooManyLoggers, codeNoSpace},
	{ErrBadHandle, codeBadHandle},
	{fs.ErrNotExist, codeInvalid},   // log=<file> in a missing directory
	{fs.ErrPermission, codeInvalid}, // log=<file> not writable
}

// codeOf returns the C return code of err (codeOK for nil).
func codeOf(err error) C.int {
	if err == nil {
		return codeOK
	}
	for _, e := range errorCodes {
		if errors.Is(err, e.err) {
			return e.code
		}
	}
	return codeInternalErr
}

// setErr copies err's text into the caller's buffer, truncated and always
// NUL-terminated. A nil buffer (a background flush) discards it.
func setErr(buf *C.char, n C.size_t, err error) {
	if buf == nil || n == 0 {
		return
	}
	dst := unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(n))
	m := copy(dst[:len(dst)-1], err.Error())
	dst[m] = 0
}

// fail reports err to the C caller: the message into its buffer, the code
// as the result.
func fail(buf *C.char, n C.size_t, err error) C.int {
	setErr(buf, n, err)
	return codeOf(err)
}

// recovered turns a panic of an exported function into codeInternalErr:
// no panic may cross into C. Use it as "defer recovered(&rc, buf, n)".
func recovered(rc *C.int, buf *C.char, n C.size_t) {
	if r := recover(); r != nil {
		err := fmt.Errorf("%w: %v", ErrInternal, r)
		setErr(buf, n, err)
		warnOnce("panic:"+err.Error(), "%v", err)
		*rc = codeInternalErr
	}
}

// survive turns a panic of a background goroutine into a warning: no panic
// may end the host process. Use it as "defer survive(what)".
func survive(what string) {
	if r := recover(); r != nil {
		warnOnce("panic:"+what, "%v in the %s: %v", ErrInternal, what, r)
	}
}
