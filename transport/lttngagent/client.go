package lttngagent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
)

// loopState is where one daemon's connection loop stands, for
// WaitRegistered.
type loopState uint8

const (
	stateStarting   loopState = iota // no attempt has finished yet
	stateDown                        // the last attempt found no daemon or ended
	stateTrying                      // connecting, or connected and not yet registered
	stateRegistered                  // REG_DONE received on the current connection
	stateDisabled                    // no port file configured
)

// Client registers the process with the root and the user session daemon
// and serves their commands through a Handler. Each daemon has its own
// connection loop: it re-reads the daemon's port file, dials 127.0.0.1,
// registers, serves commands until the connection ends, then waits
// RetryDelay and starts over, forever, until Close. Nothing in it ever
// blocks the host: creating a Client returns at once, and WaitRegistered is
// the only way to wait for a daemon, bounded by its context.
//
// A Client is safe for concurrent use.
type Client struct {
	cfg    Config
	h      Handler
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	states  [numDaemons]loopState
	changed chan struct{} // closed and replaced on every state change
	closed  bool
}

// connIDs numbers Conns process-wide.
var connIDs atomic.Uint64

// NewClient verifies cfg (nil means DefaultConfig()), fills the zero fields
// with defaults and starts the connection loops.
func NewClient(cfg *Config, h Handler) (*Client, error) {
	var c Config
	if cfg == nil {
		c = DefaultConfig()
	} else {
		c = *cfg
	}
	if h == nil {
		return nil, fmt.Errorf("%w: nil handler", ErrBadConfig)
	}
	if err := c.Verify(); err != nil {
		return nil, err
	}
	if c.Port == 0 && c.RootPortFile == "" && c.UserPortFile == "" {
		return nil, fmt.Errorf("%w: no port file", ErrBadConfig)
	}
	cl := &Client{cfg: c.withDefaults(), h: h, changed: make(chan struct{})}
	cl.ctx, cl.cancel = context.WithCancel(context.Background())
	for d := Daemon(0); d < numDaemons; d++ {
		if (cl.cfg.Port > 0 && d != DaemonUser) || (cl.cfg.Port == 0 && cl.portFile(d) == "") {
			cl.states[d] = stateDisabled
			continue
		}
		cl.wg.Add(1)
		go cl.loop(d)
	}
	return cl, nil
}

// Close stops the connection loops, closes their connections (each Conn
// gets its Closed call) and waits for every goroutine of the client to
// return. It is idempotent and always returns nil.
func (c *Client) Close() error {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		c.broadcastLocked()
	}
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
	return nil
}

// Registered reports whether some daemon has completed the registration of
// its current connection.
func (c *Client) Registered() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.states {
		if s == stateRegistered {
			return true
		}
	}
	return false
}

// WaitRegistered waits until a session daemon has completed registration
// (REG_DONE), which is after it sent the ENABLEs of the events that already
// exist. It returns nil then; ErrNoDaemon as soon as every daemon's latest
// attempt found no daemon (no port file, nothing listening, or a failed
// connection), so a host without LTTng does not wait; ErrClosed after
// Close; or ctx.Err().
func (c *Client) WaitRegistered(ctx context.Context) error {
	for {
		c.mu.Lock()
		registered, down := false, true
		for _, s := range c.states {
			switch s {
			case stateRegistered:
				registered = true
			case stateStarting, stateTrying:
				down = false
			}
		}
		closed, ch := c.closed, c.changed
		c.mu.Unlock()
		switch {
		case registered:
			return nil
		case closed:
			return ErrClosed
		case down:
			return ErrNoDaemon
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (c *Client) setState(d Daemon, s loopState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.states[d] != s {
		c.states[d] = s
		c.broadcastLocked()
	}
}

func (c *Client) broadcastLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// loop is one daemon's connection loop.
func (c *Client) loop(d Daemon) {
	defer c.wg.Done()
	plog := newProblemLog(c.cfg.Logger.With("daemon", d.String()))
	for {
		c.guardedAttempt(d, plog)
		select {
		case <-c.ctx.Done():
			return
		case <-c.cfg.Clock.After(c.cfg.RetryDelay):
		}
	}
}

// guardedAttempt is attempt with its panics (a bug, of the client or of the
// Handler) costing the connection, never the host process: logged once,
// then retried like a dropped connection.
func (c *Client) guardedAttempt(d Daemon, plog *problemLog) {
	defer func() {
		if r := recover(); r != nil {
			c.setState(d, stateDown)
			plog.once("panic", slog.LevelError, "lttngagent: internal error, connection dropped",
				"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	c.attempt(d, plog)
}

// attempt makes one connection attempt and serves the connection until it
// ends.
func (c *Client) attempt(d Daemon, plog *problemLog) {
	port, err := c.resolvePort(d)
	if err != nil {
		c.setState(d, stateDown)
		path := c.portFile(d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			plog.once("no port file", slog.LevelDebug, "lttngagent: no session daemon (no port file)", "path", path)
		case errors.Is(err, errSharedPort):
			plog.once("shared port", slog.LevelDebug, "lttngagent: user daemon port is the root daemon's", "path", path)
		default:
			plog.once("bad port file", slog.LevelWarn, "lttngagent: unusable port file", "path", path, "err", err)
		}
		return
	}
	if c.ctx.Err() != nil {
		return
	}
	c.setState(d, stateTrying)
	registered, err := c.connect(d, port, plog)
	c.setState(d, stateDown)
	if c.ctx.Err() != nil {
		return
	}
	var de *dialError
	switch {
	case errors.As(err, &de):
		plog.once("dial", slog.LevelDebug, "lttngagent: cannot connect to session daemon", "port", port, "err", de.err)
	case errors.Is(err, io.EOF):
		plog.once("eof", slog.LevelDebug, "lttngagent: session daemon closed the connection", "port", port)
		if registered {
			// A clean end of a working connection (the daemon exited):
			// whatever goes wrong next is a new problem worth a line.
			plog.reset()
		}
	default:
		plog.once(problemKey(err), slog.LevelWarn, "lttngagent: connection to session daemon dropped",
			"port", port, "err", err)
	}
}

// dialError marks a failed connection attempt.
type dialError struct{ err error }

func (e *dialError) Error() string { return "lttngagent: dial: " + e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// connect dials the daemon and serves the connection until it ends. It
// reports whether the connection got registered.
func (c *Client) connect(d Daemon, port int, plog *problemLog) (registered bool, err error) {
	dctx, cancel := context.WithTimeout(c.ctx, c.cfg.DialTimeout)
	// "Dial 127.0.0.1:<port>. Not localhost, because Go may try ::1."
	nc, err := c.cfg.Dial(dctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	cancel()
	if err != nil {
		return false, &dialError{err}
	}
	// Close interrupts any blocked read or write by closing the socket.
	stop := context.AfterFunc(c.ctx, func() { nc.Close() })
	conn := &Conn{
		id:      connIDs.Add(1),
		daemon:  d,
		port:    port,
		domain:  c.cfg.Domain,
		dialect: c.cfg.Dialect,
	}
	defer func() {
		stop()
		// "Don't half-close": a plain close only.
		nc.Close()
		c.closeConn(conn, plog)
	}()
	err = newSession(c, conn, nc, plog).run()
	return conn.Registered(), err
}

// closeConn tells the handler the connection is gone.
func (c *Client) closeConn(conn *Conn, plog *problemLog) {
	defer func() {
		if r := recover(); r != nil {
			plog.once("handler panic", slog.LevelError, "lttngagent: handler panicked in Closed",
				"conn", conn.String(), "panic", r)
		}
	}()
	c.h.Closed(conn)
}

// problemKeys are the sentinels that name a kind of problem.
var problemKeys = []error{
	ErrTooLarge, ErrBadSize, ErrBadPayload, ErrBadName, ErrUnknownCommand,
	ErrTruncated, ErrTimeout, ErrShort,
}

// problemKey names the kind of err, from a fixed set.
func problemKey(err error) string {
	for _, k := range problemKeys {
		if errors.Is(err, k) {
			return k.Error()
		}
	}
	return "i/o error"
}
