package lttngagent

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"time"
)

// Defaults.
const (
	// RootPortFile is where a root sessiond writes its agent port.
	RootPortFile = "/var/run/lttng/agent.port"
	// userPortFileRel is where a non-root sessiond writes it, under
	// $LTTNG_HOME (or $HOME).
	userPortFileRel = ".lttng/agent.port"

	DefaultRetryDelay     = 3 * time.Second
	DefaultDialTimeout    = 3 * time.Second
	DefaultCommandTimeout = 5 * time.Second
	DefaultWriteTimeout   = 5 * time.Second
	DefaultMaxListBytes   = 1 << 20
)

// Clock is the time source of the reconnect delay. Socket deadlines always
// use the real clock.
type Clock interface {
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Config configures a Client. Start from DefaultConfig. Zero durations and
// sizes mean the default; negative ones are rejected by Verify.
type Config struct {
	// Domain the agent registers for. Default JUL.
	Domain Domain
	// Dialect of the wire format. Default Dialect20.
	Dialect Dialect
	// PID sent in the registration; 0 means os.Getpid(). The lttng CLI lists
	// an agent only if /proc/<PID>/cmdline is readable.
	PID int

	// RootPortFile and UserPortFile are the agent.port files of the root
	// and the user session daemon, re-read before every connection attempt.
	// An empty path disables that daemon. When both files give the same
	// port only the root connection runs.
	RootPortFile string
	UserPortFile string
	// FallbackPort is dialled when a port file does not exist. 0 (the
	// default) follows lttng-ust 2.13: no file means no daemon. The RFC v0.1
	// agents used the fixed port 5345.
	FallbackPort int
	// Port, when > 0, names the one session daemon to use: the client dials
	// 127.0.0.1:Port as the user daemon and reads no port file.
	Port int

	// RetryDelay is the wait before each new attempt after a failed
	// connection or a lost one. Default 3 s, as the Java agent.
	RetryDelay time.Duration
	// DialTimeout bounds one connection attempt. Default 3 s.
	DialTimeout time.Duration
	// CommandTimeout bounds one command, from its first header byte to its
	// last payload byte. A daemon that stalls mid-command is dropped.
	// Default 5 s.
	CommandTimeout time.Duration
	// WriteTimeout bounds writing the registration or one reply. Default 5 s.
	WriteTimeout time.Duration
	// MaxListBytes caps the names of a LIST reply (their bytes plus NULs);
	// names beyond it are left out. Default 1 MiB.
	MaxListBytes int

	// Dial opens a connection; default net.Dialer.DialContext. The client
	// always dials network "tcp", address "127.0.0.1:<port>".
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// Clock paces reconnects; default the real clock.
	Clock Clock
	// Logger receives the client's diagnostics. Each kind of problem is
	// logged once per daemon, until a registered connection ends cleanly
	// (the daemon exited); expected events (no daemon, daemon exit) are at
	// Debug level. nil discards everything. Nothing is ever written to
	// stdout by this package.
	Logger *slog.Logger
}

// DefaultConfig returns the defaults: JUL, protocol 2.0, the root port file
// and the user's ($LTTNG_HOME, else $HOME, else the passwd home directory).
func DefaultConfig() Config {
	return Config{
		Domain:         DomainJUL,
		Dialect:        Dialect20,
		RootPortFile:   RootPortFile,
		UserPortFile:   DefaultUserPortFile(),
		RetryDelay:     DefaultRetryDelay,
		DialTimeout:    DefaultDialTimeout,
		CommandTimeout: DefaultCommandTimeout,
		WriteTimeout:   DefaultWriteTimeout,
		MaxListBytes:   DefaultMaxListBytes,
	}
}

// DefaultUserPortFile is $LTTNG_HOME/.lttng/agent.port, falling back to
// $HOME and then to the passwd entry, as lttng-sessiond does. It is "" when
// no home directory is known.
func DefaultUserPortFile() string {
	home := os.Getenv("LTTNG_HOME")
	if home == "" {
		home = os.Getenv("HOME")
	}
	if home == "" {
		if u, err := user.Current(); err == nil {
			home = u.HomeDir
		}
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, userPortFileRel)
}

// Verify checks the fields' ranges.
func (c *Config) Verify() error {
	switch {
	case !c.Domain.Agent():
		return fmt.Errorf("%w: domain %v is not an agent domain", ErrBadConfig, c.Domain)
	case !c.Dialect.Valid():
		return fmt.Errorf("%w: dialect %v", ErrBadConfig, c.Dialect)
	case c.PID < 0 || uint64(c.PID) > 1<<32-1:
		return fmt.Errorf("%w: pid %d", ErrBadConfig, c.PID)
	case c.FallbackPort < 0 || c.FallbackPort > maxPort:
		return fmt.Errorf("%w: fallback port %d", ErrBadConfig, c.FallbackPort)
	case c.Port < 0 || c.Port > maxPort:
		return fmt.Errorf("%w: port %d", ErrBadConfig, c.Port)
	case c.RetryDelay < 0, c.DialTimeout < 0, c.CommandTimeout < 0, c.WriteTimeout < 0:
		return fmt.Errorf("%w: negative duration", ErrBadConfig)
	case c.MaxListBytes < 0:
		return fmt.Errorf("%w: max list bytes %d", ErrBadConfig, c.MaxListBytes)
	}
	return nil
}

// withDefaults returns a copy with every zero field set to its default.
func (c Config) withDefaults() Config {
	if c.PID == 0 {
		c.PID = os.Getpid()
	}
	if c.RetryDelay == 0 {
		c.RetryDelay = DefaultRetryDelay
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.CommandTimeout == 0 {
		c.CommandTimeout = DefaultCommandTimeout
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.MaxListBytes == 0 {
		c.MaxListBytes = DefaultMaxListBytes
	}
	if c.Dial == nil {
		var d net.Dialer
		c.Dial = d.DialContext
	}
	if c.Clock == nil {
		c.Clock = realClock{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(discardHandler{})
	}
	return c
}
