package bytefrog

import (
	"errors"
	"fmt"
	"net"
	"strings"
)

// HQ addresses. An agent reaches HQ, and HQ listens, on one of:
//
//	host:port        TCP (the protocol's own transport)
//	tcp:host:port    the same, spelled out
//	unix:/path/sock  a Unix-domain stream socket at a file path
//	unix:@name       a Unix-domain socket in Linux's abstract namespace
//	@name            the same
//
// Bytefrog runs unchanged over a Unix-domain socket: the control
// connection and every data connection are stream connections to the same
// address, as over TCP.
const (
	unixPrefix = "unix:"
	tcpPrefix  = "tcp:"
	// abstractMark begins the name of a socket in the abstract namespace
	// (Go's spelling of sun_path's leading NUL byte).
	abstractMark = "@"
	// MaxUnixPath is the longest Unix-domain socket path, in bytes: Linux's
	// sun_path holds 108 bytes with the terminating NUL (unix(7)); an
	// abstract name has the same room, its leading NUL counted.
	MaxUnixPath = 107
)

// Networks of an Addr.
const (
	NetTCP  = "tcp"
	NetUnix = "unix"
)

// ErrBadAddr: an HQ address is none of the forms above.
var ErrBadAddr = errors.New("bytefrog: bad HQ address")

// Addr is a parsed HQ address: the network and address net.Dial and
// net.Listen take.
type Addr struct {
	Net  string // NetTCP or NetUnix
	Addr string // host:port; a socket path; "@name" for an abstract socket
}

// ParseAddr parses an HQ address (see the forms above).
func ParseAddr(s string) (Addr, error) {
	if rest, ok := strings.CutPrefix(s, unixPrefix); ok {
		return unixAddr(s, rest)
	}
	if strings.HasPrefix(s, abstractMark) {
		return unixAddr(s, s)
	}
	rest, _ := strings.CutPrefix(s, tcpPrefix)
	host, port, err := net.SplitHostPort(rest)
	if err != nil || !validPort(port) || strings.HasPrefix(host, abstractMark) || strings.HasPrefix(rest, unixPrefix) {
		return Addr{}, fmt.Errorf("%w %q: want host:port, unix:/path or @name", ErrBadAddr, s)
	}
	return Addr{Net: NetTCP, Addr: rest}, nil
}

// validPort accepts a port number or a service name (letters, digits, '-').
func validPort(p string) bool {
	if p == "" {
		return false
	}
	for _, c := range p {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-') {
			return false
		}
	}
	return true
}

func unixAddr(s, path string) (Addr, error) {
	switch {
	case path == "" || path == abstractMark:
		return Addr{}, fmt.Errorf("%w %q: no socket path or name", ErrBadAddr, s)
	case len(path) > MaxUnixPath:
		return Addr{}, fmt.Errorf("%w %q: a Unix socket path has at most %d bytes, this one %d", ErrBadAddr, s, MaxUnixPath, len(path))
	case strings.IndexByte(path, 0) >= 0:
		return Addr{}, fmt.Errorf("%w %q: NUL byte in the socket path", ErrBadAddr, s)
	}
	return Addr{Net: NetUnix, Addr: path}, nil
}

// Abstract reports whether a is a socket in the abstract namespace (no file).
func (a Addr) Abstract() bool { return a.Net == NetUnix && strings.HasPrefix(a.Addr, abstractMark) }

// String is a's form as ParseAddr takes it: host:port, unix:/path or
// unix:@name.
func (a Addr) String() string {
	if a.Net == NetUnix {
		return unixPrefix + a.Addr
	}
	return a.Addr
}

// AddrOf gives a listener's or a connection's address in ParseAddr's form.
func AddrOf(a net.Addr) string {
	if ua, ok := a.(*net.UnixAddr); ok {
		return Addr{Net: NetUnix, Addr: ua.Name}.String()
	}
	if a == nil {
		return ""
	}
	return a.String()
}
