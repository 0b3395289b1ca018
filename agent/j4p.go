package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tadpole-trace/tadpole/internal/host"
	"github.com/tadpole-trace/tadpole/transport/j4p"
)

// The management endpoint: tadpole's own MBeans served with the Jolokia
// protocol (transport/j4p), in any host. The names are the same in Go, C
// and JVM hosts:
//
//	io.tadpole:type=Agent               the agent: mode, HQ, counters;
//	                                    operations mark and flush
//	io.tadpole:type=Logger,name=<name>  one per logger of the registry;
//	                                    operations enable, disable, reset

// MBean names of the agent.
const (
	J4PDomain      = "io.tadpole"
	AgentMBeanName = J4PDomain + ":type=Agent"
)

// LoggerMBeanName is the MBean name of the logger called name.
func LoggerMBeanName(name string) string {
	return J4PDomain + ":type=Logger,name=" + j4p.Quote(name)
}

// LoggerOverride forces a logger on or off whatever the log policy and
// LTTng say; OverrideNone gives the decision back to them.
type LoggerOverride uint8

// Overrides.
const (
	OverrideNone LoggerOverride = iota
	OverrideOn
	OverrideOff
)

var overrideNames = [...]string{"none", "on", "off"}

func (o LoggerOverride) String() string {
	if int(o) < len(overrideNames) {
		return overrideNames[o]
	}
	return "UNKNOWN_OVERRIDE_" + strconv.Itoa(int(o))
}

// SetOverride forces the logger on or off (the management endpoint's
// enable and disable), or back to the policy and LTTng (OverrideNone).
func (l *Logger) SetOverride(o LoggerOverride) {
	l.override.Store(uint32(o))
	refreshLogger(l)
}

// Override is the logger's current override.
func (l *Logger) Override() LoggerOverride { return LoggerOverride(l.override.Load()) }

// EnabledByLTTng reports whether LTTng rules (from enable-event) select the
// logger's records now.
func (l *Logger) EnabledByLTTng() bool { return l.enabled.Load() && l.rules.Load() != nil }

// Management is a running management endpoint. Its methods are safe for
// concurrent use.
type Management struct {
	srv *j4p.Server
	mbs *mbeanServer
}

// ErrManagement reports a management endpoint that cannot start.
var ErrManagement = errors.New("tadpole: management endpoint")

// flushWait bounds the flush operation.
const flushWait = 5 * time.Second

// StartManagement starts the management endpoint configured by cfg.J4P in
// the background and returns once it listens; it returns nil, nil when
// cfg.J4P is empty. It never blocks on clients and never stops the host:
// a failure is returned (and the host goes on without the endpoint).
func StartManagement(cfg Config) (*Management, error) {
	if cfg.J4P == "" {
		return nil, nil
	}
	jc := j4p.DefaultConfig()
	jc.Addr = cfg.J4P
	jc.AgentVersion = agentVersion
	jc.AgentID = "tadpole-" + strconv.Itoa(os.Getpid())
	jc.AllowWrite, jc.AllowExec = cfg.J4PWrite, cfg.J4PWrite
	if jc.Dialect = cfg.J4PDialect; jc.Dialect == j4p.Dialect030 {
		jc.Base = "/j4p"
	}
	jc.User, jc.Password = cfg.J4PUser, cfg.J4PPassword
	if cfg.J4PPolicy != "" {
		f, err := os.Open(cfg.J4PPolicy)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrManagement, err)
		}
		p, err := j4p.ParsePolicy(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrManagement, cfg.J4PPolicy, err)
		}
		jc.Policy = p
	}
	mbs := newMBeanServer(cfg)
	srv, err := j4p.NewServer(&jc, mbs)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrManagement, err)
	}
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrManagement, err)
	}
	return &Management{srv: srv, mbs: mbs}, nil
}

// Addr is the address the endpoint listens on.
func (m *Management) Addr() net.Addr { return m.srv.Addr() }

// Registry holds the host's own MBeans, served beside tadpole's.
func (m *Management) Registry() *j4p.Registry { return m.mbs.host }

// Shutdown stops the endpoint, waiting for requests in flight until ctx
// ends. It is idempotent.
func (m *Management) Shutdown(ctx context.Context) error { return m.srv.Shutdown(ctx) }

// agentVersion is the agent version the endpoint reports.
const agentVersion = "0.15.0"

// mbeanServer serves the agent bean, one bean per registered logger (the
// registry can grow at any time, so they are made on each lookup) and the
// host's registry.
type mbeanServer struct {
	cfg   Config
	agent *j4p.StaticBean
	host  *j4p.Registry

	mu      sync.Mutex
	loggers map[*Logger]loggerEntry
}

// loggerEntry is a logger's MBean, made on first lookup.
type loggerEntry struct {
	name j4p.ObjectName
	bean *j4p.StaticBean
}

var agentName = j4p.MustObjectName(AgentMBeanName)

func newMBeanServer(cfg Config) *mbeanServer {
	m := &mbeanServer{cfg: cfg, host: j4p.NewRegistry(), loggers: make(map[*Logger]loggerEntry)}
	m.agent = agentBean(cfg)
	return m
}

// beans lists every bean with its name.
func (m *mbeanServer) beans() ([]j4p.ObjectName, []j4p.Bean) {
	names := []j4p.ObjectName{agentName}
	beans := []j4p.Bean{m.agent}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, l := range Loggers() {
		e, ok := m.loggers[l]
		if !ok {
			n, err := j4p.ParseObjectName(LoggerMBeanName(l.name))
			if err != nil {
				continue // Quote makes every name valid; never skip silently in tests
			}
			e = loggerEntry{n, loggerBean(l)}
			m.loggers[l] = e
		}
		names = append(names, e.name)
		beans = append(beans, e.bean)
	}
	return names, beans
}

func (m *mbeanServer) Query(p j4p.ObjectName) []j4p.ObjectName {
	var out []j4p.ObjectName
	names, _ := m.beans()
	for _, n := range names {
		if p.Match(n) {
			out = append(out, n)
		}
	}
	out = append(out, m.host.Query(p)...)
	if pl := host.PlatformMBeans(); pl != nil {
		for _, n := range pl.Query(p) {
			if n.Domain != J4PDomain && !m.host.Has(n) { // those are served by the others
				out = append(out, n)
			}
		}
	}
	return out
}

func (m *mbeanServer) bean(n j4p.ObjectName) j4p.Bean {
	if n.Domain != J4PDomain {
		return nil
	}
	names, beans := m.beans()
	for i, x := range names {
		if x.Canonical() == n.Canonical() {
			return beans[i]
		}
	}
	return nil
}

func (m *mbeanServer) Info(n j4p.ObjectName) (*j4p.MBeanInfo, error) {
	if b := m.bean(n); b != nil {
		return b.Info(), nil
	}
	return m.other(n).Info(n)
}

func (m *mbeanServer) GetAttribute(n j4p.ObjectName, attr string) (any, error) {
	if b := m.bean(n); b != nil {
		return b.Get(attr)
	}
	return m.other(n).GetAttribute(n, attr)
}

// GetAttributes implements j4p.MultiGetter: a JVM's MBeans are read in one
// call.
func (m *mbeanServer) GetAttributes(n j4p.ObjectName, names []string) ([]j4p.AttrValue, error) {
	if b := m.bean(n); b != nil {
		if names == nil {
			for _, a := range b.Info().Attrs {
				names = append(names, a.Name)
			}
		}
		out := make([]j4p.AttrValue, len(names))
		for i, a := range names {
			v, err := b.Get(a)
			out[i] = j4p.AttrValue{Name: a, Value: v, Err: err}
		}
		return out, nil
	}
	return j4p.GetAttributes(m.other(n), n, names)
}

func (m *mbeanServer) SetAttribute(n j4p.ObjectName, attr string, v any) error {
	if b := m.bean(n); b != nil {
		return b.Set(attr, v)
	}
	return m.other(n).SetAttribute(n, attr, v)
}

func (m *mbeanServer) Invoke(n j4p.ObjectName, op string, sig []string, args []any) (any, error) {
	if b := m.bean(n); b != nil {
		return b.Invoke(op, sig, args)
	}
	return m.other(n).Invoke(n, op, sig, args)
}

// other is the server holding n when it is not tadpole's: the host
// registry, or else the platform's.
func (m *mbeanServer) other(n j4p.ObjectName) j4p.MBeanServer {
	if m.host.Has(n) {
		return m.host
	}
	if p := host.PlatformMBeans(); p != nil {
		return p
	}
	return m.host
}

// sessionGauge reads a value of the current run, or zero without one.
func sessionGauge[T any](f func(*session) T) func() (any, error) {
	return func() (any, error) {
		var zero T
		s := current.Load()
		if s == nil {
			return zero, nil
		}
		return f(s), nil
	}
}

// pipeGauge reads a value of the active pipeline, or zero without one.
func pipeGauge[T any](f func(*pipeline) T) func() (any, error) {
	return func() (any, error) {
		var zero T
		s := active.Load()
		if s == nil {
			return zero, nil
		}
		return f(s), nil
	}
}

func agentBean(cfg Config) *j4p.StaticBean {
	str := "java.lang.String"
	return &j4p.StaticBean{
		Class: "io.tadpole.Agent",
		Desc:  "The tadpole tracing agent of this process",
		Attrs: []j4p.Attr{
			{Name: "Mode", Type: str, Desc: "Bytefrog mode: Tracing, Paused, Suspended, Initializing, Shutdown; Off without a run", Get: func() (any, error) {
				if s := active.Load(); s != nil {
					return s.currentMode().String(), nil
				}
				return "Off", nil
			}},
			{Name: "HQ", Type: str, Desc: "host:port of the HQ of the run (else the configured one)", Get: func() (any, error) {
				if s := current.Load(); s != nil {
					return s.cfg.HQ, nil
				}
				return cfg.HQ, nil
			}},
			{Name: "Connected", Type: "boolean", Desc: "a trace run with HQ is active", Get: func() (any, error) { return active.Load() != nil, nil }},
			{Name: "RunID", Type: "int", Desc: "run id HQ assigned (0 without a run)", Get: sessionGauge(func(s *session) int32 { return int32(s.hq.RunID) })},
			{Name: "ProtocolVersion", Type: "int", Desc: "Bytefrog protocol version of the run (else the configured one)", Get: func() (any, error) {
				if s := current.Load(); s != nil {
					return int32(s.cfg.Version), nil
				}
				return int32(cfg.Version), nil
			}},
			{Name: "Events", Type: "long", Desc: "sequenced events handed to the data connections in this run", Get: pipeGauge(func(s *pipeline) int64 { return s.events.Load() })},
			{Name: "Bytes", Type: "long", Desc: "bytes of encoded events handed to the data connections in this run", Get: pipeGauge(func(s *pipeline) int64 {
				if s.pool == nil {
					return 0
				}
				return s.pool.shipped.Load()
			})},
			{Name: "DataConnections", Type: "int", Desc: "data connections of the run", Get: pipeGauge(func(s *pipeline) int32 { return int32(len(s.data)) })},
			{Name: "SendQueue", Type: "int", Desc: "send buffers queued or being written (the heartbeat's queue depth)", Get: pipeGauge(func(s *pipeline) int32 {
				if s.pool == nil {
					return 0
				}
				return s.pool.waiting.Load()
			})},
			{Name: "FreeBuffers", Type: "int", Desc: "send buffers free for the encoder", Get: pipeGauge(func(s *pipeline) int32 {
				if s.pool == nil {
					return 0
				}
				return int32(len(s.pool.free))
			})},
			{Name: "RingPending", Type: "long", Desc: "events recorded and not yet encoded", Get: pipeGauge(ringPending)},
			{Name: "BatchBytesPending", Type: "long", Desc: "bytes of host batches waiting for the encoder", Get: pipeGauge(func(s *pipeline) int64 { return s.batchBytes.Load() })},
			{Name: "Loggers", Type: "int", Desc: "registered loggers", Get: func() (any, error) { return int32(len(Loggers())), nil }},
			{Name: "LogPolicy", Type: str, Desc: "which log records are recorded: auto, lttng, all, none", Get: func() (any, error) {
				logControl.mu.Lock()
				defer logControl.mu.Unlock()
				return logControl.policy.String(), nil
			}},
			{Name: "LTTngDomain", Type: str, Desc: "LTTng domain of the loggers", Get: func() (any, error) { return Domain(), nil }},
		},
		Ops: []j4p.Op{
			{Name: "mark", Ret: "void", Desc: "record a marker in the trace",
				Args: []j4p.ArgInfo{{Name: "key", Type: str, Desc: "marker key"}, {Name: "value", Type: str, Desc: "marker value"}},
				Call: func(a []any) (any, error) {
					k, _ := a[0].(string)
					v, _ := a[1].(string)
					Mark(k, v)
					return nil, nil
				}},
			{Name: "flush", Ret: "boolean", Desc: "wait (at most 5s) until the events recorded so far are written to HQ; false on timeout",
				Call: func([]any) (any, error) { return flush(flushWait), nil }},
		},
	}
}

// ringPending counts events in the lanes that the drain has not consumed.
func ringPending(s *pipeline) int64 {
	if s.lanes == nil || s.lanes.all.Load() == nil {
		return 0
	}
	var n int64
	for _, l := range s.lanes.list() {
		if l != nil {
			if d := int64(atomic.LoadUint64(&l.tail)) - int64(l.head.Load()); d > 0 {
				n += d
			}
		}
	}
	return n
}

// drained: nothing waits in the ring, the host batches or the send queue.
func drained(s *pipeline) bool {
	return ringPending(s) == 0 && s.batchBytes.Load() == 0 && (s.pool == nil || s.pool.waiting.Load() == 0)
}

// flush waits until what was recorded before the call is written to the
// data connections, at most d. A partly filled send buffer goes out after
// the flush interval, so the state is taken as final once it has held
// across two intervals.
func flush(d time.Duration) bool {
	s := active.Load()
	if s == nil {
		return true
	}
	deadline := time.Now().Add(d)
	settle := 2*s.cfg.FlushInterval + 5*time.Millisecond
	var since time.Time
	for {
		select {
		case <-s.done:
			return true
		default:
		}
		now := time.Now()
		if drained(s) {
			if since.IsZero() {
				since = now
			} else if now.Sub(since) >= settle {
				return true
			}
		} else {
			since = time.Time{}
		}
		if now.After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
}

func loggerBean(l *Logger) *j4p.StaticBean {
	str := "java.lang.String"
	return &j4p.StaticBean{
		Class: "io.tadpole.Logger",
		Desc:  "A logger whose records become trace markers",
		Attrs: []j4p.Attr{
			{Name: "Name", Type: str, Desc: "logger name", Get: func() (any, error) { return l.name, nil }},
			{Name: "Enabled", Type: "boolean", Desc: "records are recorded when an agent traces", Get: func() (any, error) { return l.enabled.Load(), nil }},
			{Name: "EnabledByLTTng", Type: "boolean", Desc: "LTTng enable-event rules select the records", Get: func() (any, error) { return l.EnabledByLTTng(), nil }},
			{Name: "Level", Type: str, Desc: "which levels are recorded: NONE, ALL, RANGE, SINGLE or LOG (a filter decides)", Get: func() (any, error) { return l.Accept().Kind.String(), nil }},
			{Name: "LevelValue", Type: "int", Desc: "the level of RANGE (this or more severe) or SINGLE, on the LTTng domain's scale", Get: func() (any, error) { return l.Accept().Level, nil }},
			{Name: "Override", Type: str, Desc: "forced by enable/disable: none, on or off", Get: func() (any, error) { return l.Override().String(), nil }},
		},
		Ops: []j4p.Op{
			{Name: "enable", Ret: "void", Desc: "record every record of the logger, whatever LTTng says", Call: func([]any) (any, error) {
				l.SetOverride(OverrideOn)
				return nil, nil
			}},
			{Name: "disable", Ret: "void", Desc: "record none of the logger's records", Call: func([]any) (any, error) {
				l.SetOverride(OverrideOff)
				return nil, nil
			}},
			{Name: "reset", Ret: "void", Desc: "give the decision back to the log policy and LTTng", Call: func([]any) (any, error) {
				l.SetOverride(OverrideNone)
				return nil, nil
			}},
		},
	}
}
