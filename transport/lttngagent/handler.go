package lttngagent

import (
	"fmt"
	"sync/atomic"
)

// Handler is the agent side of the protocol: it answers the session
// daemon's commands. The agent core implements it.
//
// Calls for one connection come from that connection's goroutine, one at a
// time and in wire order; calls for different connections (the root and the
// user daemon) may run concurrently. Every call must return promptly: the
// sessiond holds its session-list lock while it waits for the reply, so a
// slow handler stalls every lttng command on the host. A panic in a call is
// recovered and answered with ReplyInvalid (an empty list for List).
//
// The sessiond counts enables per (name, level, filter) and sends one
// DISABLE for every variant whose count drops to zero, so the same name may
// be enabled and disabled several times on one connection: count enables
// per (connection, name), or per (connection, name, level type, level,
// filter) when the variants are kept apart.
type Handler interface {
	// List returns the logger names to report (LIST). The client leaves
	// out names that are empty, longer than MaxNameLen bytes or hold a NUL
	// (one such name would make the whole lttng list fail), sorts the rest,
	// drops duplicates and stops at Config.MaxListBytes. An agent reporting
	// no name is not shown by lttng list at all.
	List(c *Conn) []string
	// Enable applies an ENABLE and returns ReplySuccess, or ReplyInvalid to
	// refuse it (the sessiond then stops and the CLI prints an error).
	Enable(c *Conn, ev Event) ReplyCode
	// Disable undoes one Enable of name. It returns ReplyUnknownName when
	// name is not enabled on c.
	Disable(c *Conn, name string) ReplyCode
	// AppContext handles APP_CTX_ENABLE (enable true) and APP_CTX_DISABLE:
	// the filters of c use, or no longer use, the application context
	// $app.<provider>:<ctx>.
	AppContext(c *Conn, enable bool, provider, ctx string) ReplyCode
	// Closed reports that c is gone: drop everything enabled through it.
	// It is called exactly once per Conn, after its last other call.
	Closed(c *Conn)
}

// Conn identifies one connection to one session daemon. A reconnect makes
// a new Conn. It is comparable and may key a map; its methods are safe for
// concurrent use.
type Conn struct {
	id         uint64
	daemon     Daemon
	port       int
	domain     Domain
	dialect    Dialect
	registered atomic.Bool
}

// ID is unique among the Conns of a process.
func (c *Conn) ID() uint64 { return c.id }

// Daemon is the session daemon the connection goes to.
func (c *Conn) Daemon() Daemon { return c.daemon }

// Port is the TCP port dialled on 127.0.0.1.
func (c *Conn) Port() int { return c.port }

// Domain is the domain registered on this connection.
func (c *Conn) Domain() Domain { return c.domain }

// Dialect is the wire layout of this connection.
func (c *Conn) Dialect() Dialect { return c.dialect }

// Registered reports whether the daemon finished registering this
// connection (REG_DONE). ENABLEs for events that already exist arrive
// before that.
func (c *Conn) Registered() bool { return c.registered.Load() }

func (c *Conn) String() string {
	return fmt.Sprintf("%v@%d#%d", c.daemon, c.port, c.id)
}
