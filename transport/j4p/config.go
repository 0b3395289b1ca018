package j4p

import (
	"net"
	"strings"
	"time"
)

// Config configures a Handler and a Server. Start from DefaultConfig.
type Config struct {
	// Addr is the listen address of a Server. Default 127.0.0.1:8778.
	Addr string
	// Dialect chooses Jolokia 2.x (default) or j4p 0.30 forms.
	Dialect Dialect
	// Base is the URL path the endpoint answers under. Default /jolokia.
	Base string
	// AgentVersion is the version the version operation reports.
	AgentVersion string
	// AgentID identifies this agent in version answers.
	AgentID string

	// AllowWrite and AllowExec enable write and exec on every MBean the
	// Policy does not deny. Default false: only <allow> entries of the
	// Policy permit them.
	AllowWrite, AllowExec bool
	// Policy restricts hosts, methods, operations and MBeans; nil = none.
	Policy *Policy
	// AllowRemote admits clients that are not on a loopback address.
	// Default false. A Policy with <remote> hosts admits those hosts.
	AllowRemote bool
	// TrustProxyHeaders skips checking the clients named by X-Forwarded-For,
	// X-Real-IP and Forwarded against the host rule. Default false.
	TrustProxyHeaders bool
	// User and Password, when User is set, require HTTP Basic
	// authentication (compared in constant time). Realm names it.
	User, Password, Realm string
	// AllowOrigins is the CORS allow-list (patterns with '*'); empty: no
	// CORS headers at all. StrictOrigin refuses a request whose Origin is
	// not on the list.
	AllowOrigins []string
	StrictOrigin bool
	// AllowErrorDetails lets requests ask for stacktrace
	// (includeStackTrace) and error_value (serializeException) in errors.
	// Default false.
	AllowErrorDetails bool

	// MaxBodyBytes bounds a POST body. Default 1 MiB.
	MaxBodyBytes int64
	// MaxJSONDepth bounds the nesting of a POST body. Default 32.
	MaxJSONDepth int
	// MaxBulk bounds the requests of one bulk POST. Default 256.
	MaxBulk int
	// MaxResponseBytes bounds one response. Default 8 MiB.
	MaxResponseBytes int
	// MaxDepth, MaxObjects and MaxCollectionSize are the serialization
	// caps requests can only lower. Defaults 15, 100000 and 0 (none).
	// MaxDepth must be > 0: it also bounds the walk of cyclic values.
	MaxDepth, MaxObjects, MaxCollectionSize int

	// Timeouts of a Server's connections: headers, whole request, response
	// write, idle keep-alive. Defaults 5s, 10s, 10s, 60s.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// MaxConns bounds concurrent connections of a Server; more are closed
	// at once. Default 256.
	MaxConns int
	// MaxHeaderBytes bounds request headers. Default 16 KiB.
	MaxHeaderBytes int

	// Now is the clock of timestamps; nil = time.Now.
	Now func() time.Time
}

// DefaultPort is the Jolokia JVM agent's port.
const DefaultPort = "8778"

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		Addr:              "127.0.0.1:" + DefaultPort,
		Base:              "/jolokia",
		AgentVersion:      "tadpole",
		Realm:             "tadpole",
		MaxBodyBytes:      1 << 20,
		MaxJSONDepth:      32,
		MaxBulk:           256,
		MaxResponseBytes:  8 << 20,
		MaxDepth:          15,
		MaxObjects:        100000,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxConns:          256,
		MaxHeaderBytes:    16 << 10,
	}
}

// Verify checks the settings. A non-loopback listen address needs
// authentication or a Policy naming the admitted hosts.
func (c *Config) Verify() error {
	switch {
	case c.Dialect > Dialect030:
		return errorf(ErrBadConfig, "dialect %v", c.Dialect)
	case !strings.HasPrefix(c.Base, "/") || strings.HasSuffix(c.Base, "/") && c.Base != "/":
		return errorf(ErrBadConfig, "base %q: want /path without a trailing slash", c.Base)
	case c.MaxBodyBytes <= 0 || c.MaxJSONDepth <= 0 || c.MaxBulk <= 0 || c.MaxResponseBytes <= 0:
		return errorf(ErrBadConfig, "body, depth, bulk and response limits must be > 0")
	case c.MaxDepth <= 0 || c.MaxObjects < 0 || c.MaxCollectionSize < 0:
		return errorf(ErrBadConfig, "maxDepth must be > 0, maxObjects and maxCollectionSize ≥ 0")
	case c.MaxConns <= 0 || c.MaxHeaderBytes <= 0:
		return errorf(ErrBadConfig, "connection and header limits must be > 0")
	case c.ReadHeaderTimeout <= 0 || c.ReadTimeout <= 0 || c.WriteTimeout <= 0 || c.IdleTimeout <= 0:
		return errorf(ErrBadConfig, "timeouts must be > 0")
	case c.Password != "" && c.User == "":
		return errorf(ErrBadConfig, "password without user")
	}
	if c.Addr != "" && !loopbackAddr(c.Addr) && c.User == "" && !c.Policy.HasRemote() {
		return errorf(ErrBadConfig, "listening on %s, beyond loopback, needs a user and password or a policy with <remote> hosts", c.Addr)
	}
	return nil
}

// loopbackAddr reports whether a listen address binds loopback only.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
