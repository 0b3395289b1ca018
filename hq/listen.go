package hq

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// staleProbe bounds the connection attempt that tells a socket file some
// process listens on from one left by an HQ that ended.
const staleProbe = time.Second

// listen opens a listening socket on a. A Unix socket file in the way is
// removed when nothing listens on it (ECONNREFUSED: its HQ ended without
// removing it); a live socket, or a file that is not a socket, is left
// alone and reported.
func listen(a bytefrog.Addr, log *slog.Logger) (net.Listener, error) {
	ln, err := net.Listen(a.Net, a.Addr)
	if err == nil || a.Net != bytefrog.NetUnix {
		return ln, listenErr(a, err)
	}
	if a.Abstract() || !errors.Is(err, syscall.EADDRINUSE) {
		return nil, listenErr(a, err)
	}
	fi, serr := os.Lstat(a.Addr)
	if serr != nil {
		return nil, listenErr(a, err)
	}
	if fi.Mode().Type() != os.ModeSocket {
		return nil, fmt.Errorf("%w: listen %s: %s exists and is not a socket (%v); HQ leaves it alone",
			ErrAddrInUse, a, a.Addr, fi.Mode().Type())
	}
	c, derr := net.DialTimeout(a.Net, a.Addr, staleProbe)
	if derr == nil {
		c.Close()
		return nil, fmt.Errorf("%w: listen %s: another process listens on this socket", ErrAddrInUse, a)
	}
	if !errors.Is(derr, syscall.ECONNREFUSED) {
		return nil, listenErr(a, fmt.Errorf("%w (probing the socket file: %w)", err, derr))
	}
	if rerr := os.Remove(a.Addr); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		return nil, listenErr(a, rerr)
	}
	log.Info("removed a stale socket file", "path", a.Addr)
	ln, err = net.Listen(a.Net, a.Addr)
	return ln, listenErr(a, err)
}

// listenErr names what stands in the way of listening on a, or returns nil.
func listenErr(a bytefrog.Addr, err error) error {
	switch {
	case err == nil:
		return nil
	case a.Net == bytefrog.NetUnix && (errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM)):
		return fmt.Errorf("%w: listen %s: user %d may not create a socket in %s (it needs write and search permission there): %w",
			ErrNoAccess, a, os.Geteuid(), filepath.Dir(a.Addr), err)
	case a.Net == bytefrog.NetUnix && errors.Is(err, syscall.ENOENT):
		return fmt.Errorf("hq: listen %s: no directory %s: %w", a, filepath.Dir(a.Addr), err)
	case errors.Is(err, syscall.EADDRINUSE):
		return fmt.Errorf("%w: listen %s: %w", ErrAddrInUse, a, err)
	}
	return fmt.Errorf("hq: listen %s: %w", a, err)
}
