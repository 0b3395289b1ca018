package agent

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// ConnError is a failure to reach HQ or to agree with it on a connection
// (the control connection or a data connection). Its Err wraps the
// sentinel that says what happened (ErrNoHQ, ErrRejected, ErrProtocol) and
// the cause, so errors.Is matches both.
//
// Fatal separates failures that trying again cannot mend (HQ refused the
// agent, HQ spoke out of protocol, the address is not one) from those
// that may pass (connection refused or reset, a timeout, HQ closing
// before it answered): the background retry (Config.HQRetry) gives up on
// a fatal one.
type ConnError struct {
	Op    string // what failed: "dial", "hello", "configuration", "data hello"
	Addr  string // HQ's address
	Err   error
	Fatal bool
}

func (e *ConnError) Error() string { return e.Err.Error() }

func (e *ConnError) Unwrap() error { return e.Err }

// Temporary reports whether trying again may succeed.
func (e *ConnError) Temporary() bool { return !e.Fatal }

// connError makes a ConnError of err, fatal as fatalCause says.
func connError(op, addr string, err error) *ConnError {
	return &ConnError{Op: op, Addr: addr, Err: err, Fatal: fatalCause(err)}
}

// fatalCause reports whether err is one that a new attempt cannot mend: HQ
// said no or broke the protocol, or the address is malformed or names no
// host. Refused, reset and unreachable connections, timeouts and early
// closes may pass.
func fatalCause(err error) bool {
	if errors.Is(err, ErrRejected) && !transient(err) || errors.Is(err, ErrProtocol) || errors.Is(err, ErrBadOption) ||
		errors.Is(err, bytefrog.ErrBadAddr) || errors.Is(err, errNoAccess) {
		return true
	}
	var addr *net.AddrError
	var parse *net.ParseError
	var unknown net.UnknownNetworkError
	if errors.As(err, &addr) || errors.As(err, &parse) || errors.As(err, &unknown) {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.IsNotFound
	}
	return false
}

// errNoAccess marks a Unix socket the agent's user may not connect to:
// the same user will not get in by trying again.
var errNoAccess = errors.New("permission denied")

// dialErr explains a failed dial of a Unix socket: no socket file yet
// (HQ not started, or started elsewhere; may pass), a file no HQ listens
// on any more (may pass), or no permission (fatal). TCP errors are kept.
func dialErr(a bytefrog.Addr, err error) error {
	if a.Net != bytefrog.NetUnix {
		return err
	}
	switch {
	case errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM):
		return fmt.Errorf("%w: user %d may not connect to the socket %s (it needs write permission on the socket "+
			"file and search permission on its directories): %w", errNoAccess, os.Geteuid(), a.Addr, err)
	case errors.Is(err, syscall.ENOENT):
		return fmt.Errorf("no socket %s: is HQ listening there (tadpole-hq -listen %s)? %w", a.Addr, a, err)
	case errors.Is(err, syscall.ECONNREFUSED) && !a.Abstract():
		return fmt.Errorf("no HQ listens on the socket file %s (left by an HQ that ended?): %w", a.Addr, err)
	}
	return err
}

// transient reports whether err comes from the network rather than from
// HQ's answer: a connection that closed, reset or timed out while the
// agent waited for HQ's reply.
func transient(err error) bool {
	var ne net.Error
	var op *net.OpError
	return errors.Is(err, errEarlyClose) || errors.As(err, &ne) || errors.As(err, &op)
}

// errEarlyClose marks a connection HQ closed before it answered.
var errEarlyClose = errors.New("tadpole: HQ closed the connection before answering")

// retryable reports whether a failed attempt to begin a run may succeed
// later: a temporary connection error, HQ not sending Start in time, the
// control connection lost before Start; not HQ's refusal or a protocol
// error.
func retryable(err error) bool {
	var ce *ConnError
	if errors.As(err, &ce) {
		return !ce.Fatal
	}
	return !errors.Is(err, ErrRejected) && !errors.Is(err, ErrProtocol) && !errors.Is(err, ErrBadOption)
}

// readErr marks a read that found the connection closed as errEarlyClose.
func readErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: %w", errEarlyClose, err)
	}
	return err
}
