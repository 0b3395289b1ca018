package agent

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
	"github.com/tadpole-trace/tadpole/transport/j4p"
	"github.com/tadpole-trace/tadpole/transport/lttngagent"
)

// Config holds every agent setting. The zero value is not usable; start from
// DefaultConfig. The same settings come from an options string
// ("hq=127.0.0.1:8765,connect_timeout=5s") and from TADPOLE_* environment
// variables (TADPOLE_HQ, TADPOLE_CONNECT_TIMEOUT, ...): see the Options table.
type Config struct {
	// HQ is the HQ's address: host:port (TCP), unix:/path/of/socket or
	// unix:@name / @name (a Unix-domain socket, by path or in Linux's
	// abstract namespace; for an HQ on the same host, cheaper per byte than
	// loopback TCP). Empty means tracing is off.
	HQ string
	// ConnectTimeout bounds connecting to HQ and the Hello/Configuration
	// exchange. Default 5s.
	ConnectTimeout time.Duration
	// StartTimeout bounds the wait for HQ's Start after the configuration.
	// Default 10s; 0 waits as long as the connection lives.
	StartTimeout time.Duration
	// HQRetry, when HQ cannot be reached at start (connection refused, or
	// no answer within 50 ms), makes Start return at once with an agent
	// that runs untraced and tries again every HQRetry in the background,
	// tracing once HQ answers and sends Start. Default 1s; 0 is the seed's
	// blocking start: Start tries for ConnectTimeout, then fails.
	HQRetry time.Duration
	// StallTimeout bounds Bytefrog's back-pressure: when HQ has taken no
	// byte of a data connection's write for this long (frozen, or its host
	// gone without a reset), the run ends with one log line and the error
	// hook, and the host goes on untraced instead of waiting on recording
	// calls. Default 5s; 0 waits without a bound, as the seed does.
	StallTimeout time.Duration
	// Version is the Bytefrog protocol version sent in Hello (1–4). Default 1.
	Version uint8
	// Flavor chooses the MethodExit layout. Default bytefrog.
	Flavor bytefrog.Flavor
	// ProjectID, when non-zero with Version 4, is sent in a ProjectHello.
	ProjectID int32
	// DataConnections overrides HQ's numDataSenders when > 0.
	DataConnections int
	// BufferBudget overrides HQ's bufferMemoryBudget (bytes) when > 0.
	BufferBudget int
	// FlushInterval is how long a partly filled send buffer may wait for more
	// events before it is sent. Default 20ms.
	FlushInterval time.Duration
	// RingSize is the number of event slots, per P that records, between
	// instrumented code and the encoder (a power of two, 80 bytes each).
	// Default 16384.
	RingSize int
	// LogLevel is the least severe level logged. Default warn.
	LogLevel LogLevel
	// Log is where the agent logs: "stderr" (default), "none", or a file path.
	Log string
	// LTTngDomain is the LTTng agent domain loggers are listed under
	// ("jul", "log4j", "python"). Default jul.
	LTTngDomain string
	// LTTngDialect is the wire format of the session daemon agent protocol:
	// lttngagent.Dialect20 (default), which lttng-sessiond 2.8 to 2.13
	// speak, or lttngagent.DialectRFC01, the 2013 RFC v0.1 layout; an RFC
	// v0.1 daemon publishes no port file, so without one the agent dials
	// lttngagent.RFC01Port.
	LTTngDialect lttngagent.Dialect
	// LTTng registers the process with the LTTng session daemon(s), found
	// like the official agents do. Default true.
	LTTng bool
	// LTTngPort, when > 0, is the one session daemon agent port to use
	// instead of the agent.port files.
	LTTngPort int
	// LTTngRetry is the delay between attempts to reach a session daemon.
	// Default 3s.
	LTTngRetry time.Duration
	// LTTngWait bounds how long Start waits for the registration with a
	// session daemon. Default 0: never wait.
	LTTngWait time.Duration
	// Logs decides which log records are recorded. Default auto.
	Logs LogPolicy
	// LogsTo is where the records of loggers an LTTng session enabled go:
	// the LTTng trace, HQ, or both (option logs=POLICY:TO). Default both.
	LogsTo LogDest
	// LTTngLib is the path of libtadpole-lttng.so, the LTTng tracepoint
	// providers a host built with cgo loads at run time; "" looks next to
	// libtadpole.so, "none" records nothing into LTTng.
	LTTngLib string
	// LTTngSource fills a record's class_name and method_name in the
	// LTTng event as the official agent does (JUL's source of the record;
	// a Go record's caller); off leaves them empty, for about 1 µs less a
	// JVM record and 0.2 µs less a Go one. Default true.
	LTTngSource bool
	// Procs, when > 0, bounds how many threads of libtadpole.so's own Go
	// runtime, which does the agent's background work inside a JVM or C
	// program, run Go code at once (its GOMAXPROCS). 1 makes the agent
	// compete with its host for one CPU at most, which spares a host
	// thread that logs on a machine of few cores, at the cost of the
	// agent's throughput when it is the bottleneck. Default 0: the
	// runtime's choice (the CPUs, or GOMAXPROCS); the JVM agent puts
	// procs=1 before its options. The agent package in a Go program
	// shares the program's runtime and leaves it alone.
	Procs int
	// HCE is the HCE hub the process registers with, "host:port" or
	// "pipe:/path/of/the/hub/fifo" (see StartHCE). Empty: none.
	HCE string
	// HCERetry is the delay between attempts to reach the HCE hub.
	// Default 3s.
	HCERetry time.Duration
	// J4P is the listen address of the management endpoint (Jolokia 2.x
	// and j4p 0.30 over HTTP, see StartManagement). Empty: off (default).
	// "on" means 127.0.0.1:8778; an address beyond loopback needs J4PUser
	// or a J4PPolicy naming the admitted hosts.
	J4P string
	// J4PWrite enables write and exec on every MBean the policy does not
	// deny. Default false: only the policy's <allow> entries permit them.
	J4PWrite bool
	// J4PPolicy is the path of an access policy in Jolokia's
	// jolokia-access.xml format. Default none.
	J4PPolicy string
	// J4PUser and J4PPassword, when set, require HTTP Basic authentication.
	J4PUser, J4PPassword string
	// J4PDialect is the protocol form: j4p.Dialect2 (Jolokia 2.x, under
	// /jolokia, default) or j4p.Dialect030 (j4p 0.30, under /j4p).
	J4PDialect j4p.Dialect
	// Clock drives the agent's timers: heartbeats, the start timeout, the
	// background retry, waits on the control queue. nil (the default) is
	// the system clock; tests set a fake one. Event timestamps and the
	// network's own deadlines (stall_timeout) always use the system clock.
	Clock Clock
}

// DefaultConfig returns the defaults documented on Config.
func DefaultConfig() Config {
	return Config{
		ConnectTimeout: 5 * time.Second,
		StartTimeout:   10 * time.Second,
		StallTimeout:   5 * time.Second,
		HQRetry:        time.Second,
		Version:        bytefrog.Version1,
		Flavor:         bytefrog.FlavorBytefrog,
		FlushInterval:  20 * time.Millisecond,
		RingSize:       1 << 14,
		LogLevel:       LevelWarn,
		Log:            "stderr",
		LTTngDomain:    "jul",
		LTTng:          true,
		LTTngSource:    true,
		LTTngRetry:     3 * time.Second,
		HCERetry:       3 * time.Second,
	}
}

// Errors reported by option parsing and Verify.
var (
	ErrUnknownOption = errors.New("tadpole: unknown option")
	ErrBadOption     = errors.New("tadpole: bad option value")
)

// option describes one setting as spelled in options strings and the
// environment.
type option struct {
	key string
	doc string
	set func(c *Config, v string) error
}

// Options lists the keys accepted in an options string; the environment
// variable of a key is TADPOLE_ followed by the key in upper case.
var options = []option{
	{"hq", "HQ's address: host:port, unix:/path/of/socket or @name (abstract Unix socket); tracing is off when empty", func(c *Config, v string) error {
		if v != "" {
			if _, err := bytefrog.ParseAddr(v); err != nil {
				return err
			}
		}
		c.HQ = v
		return nil
	}},
	{"connect_timeout", "duration bounding the connection to HQ (5s)", durationOpt(func(c *Config) *time.Duration { return &c.ConnectTimeout })},
	{"start_timeout", "duration bounding the wait for HQ's Start (10s; 0 = no bound)", durationOpt(func(c *Config) *time.Duration { return &c.StartTimeout })},
	{"hq_retry", "when HQ is unreachable at start: run untraced and try again this often (1s; 0 = wait for HQ up to connect_timeout, then fail)", durationOpt(func(c *Config) *time.Duration { return &c.HQRetry })},
	{"stall_timeout", "how long HQ may take no data before the run ends and the host goes on untraced (5s; 0 = no bound)", durationOpt(func(c *Config) *time.Duration { return &c.StallTimeout })},
	{"protocol", "Bytefrog protocol version 1-4 (1)", func(c *Config, v string) error {
		n, err := strconv.ParseUint(v, 10, 8)
		if err != nil || n < 1 || n > uint64(bytefrog.MaxVersion) {
			return fmt.Errorf("want 1 to %d", bytefrog.MaxVersion)
		}
		c.Version = uint8(n)
		return nil
	}},
	{"flavor", "MethodExit layout: bytefrog or codepulse (bytefrog)", func(c *Config, v string) error {
		f, err := bytefrog.ParseFlavor(v)
		c.Flavor = f
		return err
	}},
	{"project_id", "Code Pulse project id sent in a v4 ProjectHello (0 = plain Hello)", func(c *Config, v string) error {
		n, err := strconv.ParseInt(v, 10, 32)
		c.ProjectID = int32(n)
		return err
	}},
	{"data_connections", "number of data connections, overriding HQ's (0 = HQ's)", intOpt(func(c *Config) *int { return &c.DataConnections }, 0, 64)},
	{"buffer_budget", "bytes of send buffers, overriding HQ's (0 = HQ's)", intOpt(func(c *Config) *int { return &c.BufferBudget }, 0, 1<<30)},
	{"flush_interval", "longest wait of a partly filled send buffer (20ms)", durationOpt(func(c *Config) *time.Duration { return &c.FlushInterval })},
	{"ring_size", "event slots per processor that records, between the traced code and the encoder, a power of two (16384)", intOpt(func(c *Config) *int { return &c.RingSize }, 64, 1<<20)},
	{"log_level", "debug, info, warn, error or off (warn)", func(c *Config, v string) error {
		l, err := ParseLogLevel(v)
		c.LogLevel = l
		return err
	}},
	{"log", "stderr, none, or a file path (stderr)", func(c *Config, v string) error {
		c.Log = v
		return nil
	}},
	{"lttng_domain", "LTTng agent domain: jul, log4j or python (jul)", func(c *Config, v string) error {
		switch v {
		case "jul", "log4j", "python":
			c.LTTngDomain = v
			return nil
		}
		return errors.New("want jul, log4j or python")
	}},
	{"lttng_dialect", "session daemon protocol: 2.13 or rfc01 (2.13)", func(c *Config, v string) error {
		d, err := lttngagent.ParseDialect(v)
		c.LTTngDialect = d
		return err
	}},
	{"lttng", "register with the LTTng session daemon: on or off (on)", func(c *Config, v string) error {
		b, err := parseBool(v)
		c.LTTng = b
		return err
	}},
	{"lttng_port", "session daemon agent port, instead of the agent.port files (0 = the files)", intOpt(func(c *Config) *int { return &c.LTTngPort }, 0, 65535)},
	{"lttng_retry", "delay between attempts to reach a session daemon (3s)", durationOpt(func(c *Config) *time.Duration { return &c.LTTngRetry })},
	{"lttng_wait", "how long start waits for the session daemon registration (0 = no wait)", durationOpt(func(c *Config) *time.Duration { return &c.LTTngWait })},
	{"logs", "log records recorded: auto, lttng, all or none, then :both, :hq or :lttng, where an LTTng session's records go (auto:both)", func(c *Config, v string) error {
		pol, to, _ := strings.Cut(v, ":")
		p, err := ParseLogPolicy(pol)
		if err != nil {
			return err
		}
		d := LogsToBoth
		if to != "" {
			if d, err = ParseLogDest(to); err != nil {
				return err
			}
		}
		c.Logs, c.LogsTo = p, d
		return nil
	}},
	{"lttng_source", "a record's source (JVM: class and method; Go: package and function) in its LTTng event: on or off (on)", func(c *Config, v string) error {
		b, err := parseBool(v)
		c.LTTngSource = b
		return err
	}},
	{"hce", "HCE hub to register with: host:port or pipe:/path (none when empty)", func(c *Config, v string) error {
		if err := checkHCEAddr(v); err != nil {
			return err
		}
		c.HCE = v
		return nil
	}},
	{"hce_retry", "delay between attempts to reach the HCE hub (3s)", durationOpt(func(c *Config) *time.Duration { return &c.HCERetry })},
	{"j4p", "management endpoint (Jolokia over HTTP) address, on (127.0.0.1:8778) or off (off)", func(c *Config, v string) error {
		switch strings.ToLower(v) {
		case "", "off", "false", "no", "0":
			c.J4P = ""
			return nil
		case "on", "true", "yes", "1":
			c.J4P = "127.0.0.1:8778"
			return nil
		}
		if _, port, err := net.SplitHostPort(v); err != nil || port == "" {
			return errors.New("want host:port, on or off")
		}
		c.J4P = v
		return nil
	}},
	{"j4p_write", "management endpoint: allow write and exec where the policy does not deny them: on or off (off)", func(c *Config, v string) error {
		b, err := parseBool(v)
		c.J4PWrite = b
		return err
	}},
	{"j4p_policy", "management endpoint: access policy file in jolokia-access.xml format (none)", func(c *Config, v string) error {
		c.J4PPolicy = v
		return nil
	}},
	{"j4p_dialect", "management endpoint protocol: jolokia2 (under /jolokia) or j4p030 (under /j4p) (jolokia2)", func(c *Config, v string) error {
		d, err := j4p.ParseDialect(v)
		if err != nil {
			return errors.New("want jolokia2 or j4p030")
		}
		c.J4PDialect = d
		return nil
	}},
	{"j4p_user", "management endpoint: Basic authentication user (none)", func(c *Config, v string) error {
		c.J4PUser = v
		return nil
	}},
	{"j4p_password", "management endpoint: Basic authentication password", func(c *Config, v string) error {
		c.J4PPassword = v
		return nil
	}},
	{"lttng_lib", "path of libtadpole-lttng.so, which records into LTTng sessions (next to libtadpole.so, or a Go program's executable; none = no LTTng recording)", func(c *Config, v string) error {
		c.LTTngLib = v
		return nil
	}},
	{"procs", "threads of libtadpole.so's Go runtime running agent code at once (1 in a JVM, else 0 = the runtime's choice)", intOpt(func(c *Config) *int { return &c.Procs }, 0, 1024)},
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "on", "true", "yes", "1":
		return true, nil
	case "off", "false", "no", "0":
		return false, nil
	}
	return false, errors.New("want on or off")
}

func durationOpt(field func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil {
			// A bare number is seconds, as in the Java agent's connectTimeout.
			n, nerr := strconv.ParseUint(v, 10, 32)
			if nerr != nil {
				return errors.New("want a duration such as 5s or 250ms")
			}
			d = time.Duration(n) * time.Second
		}
		if d < 0 {
			return errors.New("negative duration")
		}
		*field(c) = d
		return nil
	}
}

func intOpt(field func(*Config) *int, lo, hi int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("want an integer from %d to %d", lo, hi)
		}
		*field(c) = n
		return nil
	}
}

func lookupOption(key string) *option {
	for i := range options {
		if options[i].key == key {
			return &options[i]
		}
	}
	return nil
}

// ParseOptions applies an options string "key=value,key=value" to c. Keys
// are those of OptionHelp; '-' and '_' are interchangeable. Every unknown key
// and bad value is reported, joined in one error naming them.
func (c *Config) ParseOptions(s string) error {
	var errs []error
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			errs = append(errs, fmt.Errorf("%w %q: want key=value", ErrBadOption, kv))
			continue
		}
		if err := c.set(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (c *Config) set(key, v string) error {
	norm := strings.ToLower(strings.ReplaceAll(key, "-", "_"))
	o := lookupOption(norm)
	if o == nil {
		return fmt.Errorf("%w %q", ErrUnknownOption, key)
	}
	if err := o.set(c, v); err != nil {
		return fmt.Errorf("%w %s=%q: %w", ErrBadOption, key, v, err)
	}
	return nil
}

// ApplyEnv applies TADPOLE_<KEY> variables found by lookup (os.LookupEnv
// when nil). Unknown TADPOLE_ variables are ignored; bad values are errors.
func (c *Config) ApplyEnv(lookup func(string) (string, bool)) error {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	var errs []error
	for _, o := range options {
		name := "TADPOLE_" + strings.ToUpper(o.key)
		if v, ok := lookup(name); ok {
			if err := o.set(c, v); err != nil {
				errs = append(errs, fmt.Errorf("%w %s=%q: %w", ErrBadOption, name, v, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Verify checks that the settings are usable together.
func (c *Config) Verify() error {
	var errs []error
	if c.Version < 1 || c.Version > bytefrog.MaxVersion {
		errs = append(errs, fmt.Errorf("%w protocol=%d", ErrBadOption, c.Version))
	}
	if c.RingSize < 64 || c.RingSize&(c.RingSize-1) != 0 {
		errs = append(errs, fmt.Errorf("%w ring_size=%d: want a power of two ≥ 64", ErrBadOption, c.RingSize))
	}
	if c.ConnectTimeout <= 0 {
		errs = append(errs, fmt.Errorf("%w connect_timeout=%v: want > 0", ErrBadOption, c.ConnectTimeout))
	}
	if c.FlushInterval <= 0 {
		errs = append(errs, fmt.Errorf("%w flush_interval=%v: want > 0", ErrBadOption, c.FlushInterval))
	}
	if !c.LTTngDialect.Valid() {
		errs = append(errs, fmt.Errorf("%w lttng_dialect=%v", ErrBadOption, c.LTTngDialect))
	}
	if c.J4PPassword != "" && c.J4PUser == "" {
		errs = append(errs, fmt.Errorf("%w j4p_password needs j4p_user", ErrBadOption))
	}
	if c.HQ != "" {
		if _, err := bytefrog.ParseAddr(c.HQ); err != nil {
			errs = append(errs, fmt.Errorf("%w hq=%q: %w", ErrBadOption, c.HQ, err))
		}
	}
	if c.ProjectID != 0 && c.Version != bytefrog.Version4 {
		errs = append(errs, fmt.Errorf("%w project_id needs protocol=4", ErrBadOption))
	}
	return errors.Join(errs...)
}

// LoadConfig builds the configuration a host uses: defaults, then the
// environment, then the options string, then Verify.
func LoadConfig(opts string) (Config, error) {
	c := DefaultConfig()
	if err := c.ApplyEnv(nil); err != nil {
		return c, err
	}
	if err := c.ParseOptions(opts); err != nil {
		return c, err
	}
	return c, c.Verify()
}

// OptionHelp returns one line per option key: "key  description".
func OptionHelp() string {
	keys := make([]string, 0, len(options))
	for _, o := range options {
		keys = append(keys, fmt.Sprintf("%-17s %s", o.key, o.doc))
	}
	sort.Strings(keys)
	return strings.Join(keys, "\n")
}
