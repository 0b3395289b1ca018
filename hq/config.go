package hq

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// Defaults for Config.
const (
	DefaultListen          = "127.0.0.1:8765" // the Code Pulse HQ port
	DefaultMaxHeldEvents   = 4 << 20          // events held while waiting for a missing number
	DefaultMaxHeldBytes    = 512 << 20        // bytes of read buffers held for them
	DefaultMaxMappingBytes = 256 << 20        // bytes of mapped names kept per run
	DefaultMaxDataConns    = 64               // data connections per run
	DefaultGreetTimeout    = 5 * time.Second  // to read the first bytes of a connection
	DefaultDataHelloWait   = 500 * time.Millisecond
	DefaultTopN            = 10 // methods listed in a summary

	// MaxDataConnsLimit bounds Config.MaxDataConns (and what a trace file
	// may replay).
	MaxDataConnsLimit = 255
)

// Config configures a Server. Use DefaultConfig and change fields; a zero
// duration or limit means its default. Verify checks it; New calls Verify.
type Config struct {
	// Listen is the address Start listens on (default DefaultListen).
	Listen string
	// Versions lists the protocol versions accepted in Hello (default 1–4).
	Versions []uint8
	// Flavor selects the MethodExit layout (default bytefrog: 17 bytes).
	Flavor bytefrog.Flavor
	// Agent is the configuration sent to each agent; RunID is set per run.
	// Default bytefrog.DefaultConfig() with a DefaultAgentBudget buffer
	// budget.
	Agent bytefrog.Config
	// AutoStart makes HQ send Start right after the Configuration
	// (default true). Without it the run waits for Run.Start.
	AutoStart bool
	// StartSuspended makes HQ send Suspend before Start, so the agent starts
	// in Suspended mode.
	StartSuspended bool
	// Script is a lifecycle script run against every run once its
	// Configuration is sent (see ParseScript), e.g.
	// "wait 200ms; pause; wait 1s; unpause; stop".
	Script string
	// TraceDir is the directory trace files are written to; "" writes none.
	TraceDir string
	// Compression is the layout trace files are written in (default
	// CompressColumns: tadpole's columnar layout, 10× and more smaller
	// than the Bytefrog bytes; see Compression and docs/tracefile.md).
	Compression Compression
	// MaxHeldEvents caps the sequenced events held while waiting for a
	// missing number; reaching it fails the run.
	MaxHeldEvents int
	// MaxHeldBytes caps the read-buffer bytes those events keep alive.
	MaxHeldBytes int64
	// MaxMappingBytes caps the bytes of method, exception and thread names
	// kept per run; exceeding it fails the run.
	MaxMappingBytes int64
	// MaxDataConns caps the data connections of one run (at most 255).
	MaxDataConns int
	// MaxConfigSize caps a Configuration payload HQ would parse
	// (bytefrog.Dialect.MaxConfigSize; 0 means the codec's default).
	MaxConfigSize int
	// GreetTimeout bounds the wait for a connection's first bytes.
	GreetTimeout time.Duration
	// DataHelloWait bounds the wait for the run a DataHello names.
	DataHelloWait time.Duration
	// TopN is the number of methods a Report lists by calls.
	TopN int
	// Logger receives HQ's log records; nil discards them.
	Logger *slog.Logger
	// NewProcessor, if set, is called for every new run; a non-nil result
	// receives the run's messages besides HQ's own analysis.
	NewProcessor func(*Run) Processor
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Lenient keeps a run OK that used an id before its mapping, mapped an
	// id again to a different name, broke a thread's call nesting or
	// stamped events inside a suspend, pause or stop the agent had taken
	// (the findings are still counted). By default each fails the run, as
	// gaps and duplicates do.
	Lenient bool
}

// DefaultAgentBudget is the send-buffer budget HQ gives agents: 16
// buffers of 64 KiB. The original HQ's 25600 bytes make 2 KiB buffers,
// so a busy agent writes to HQ once per 40 or so events, and the system
// calls cost the traced process more than the events.
const DefaultAgentBudget = 1 << 20

// DefaultConfig returns the defaults: listen on DefaultListen, accept
// protocol versions 1–4 in the Bytefrog flavour, start agents right away,
// write no trace file (S2-compressed when TraceDir is set).
func DefaultConfig() *Config {
	return &Config{
		Listen:          DefaultListen,
		Versions:        []uint8{bytefrog.Version1, bytefrog.Version2, bytefrog.Version3, bytefrog.Version4},
		Flavor:          bytefrog.FlavorBytefrog,
		Compression:     CompressColumns,
		Agent:           defaultAgent(),
		AutoStart:       true,
		MaxHeldEvents:   DefaultMaxHeldEvents,
		MaxHeldBytes:    DefaultMaxHeldBytes,
		MaxMappingBytes: DefaultMaxMappingBytes,
		MaxDataConns:    DefaultMaxDataConns,
		GreetTimeout:    DefaultGreetTimeout,
		DataHelloWait:   DefaultDataHelloWait,
		TopN:            DefaultTopN,
	}
}

func defaultAgent() bytefrog.Config {
	c := bytefrog.DefaultConfig()
	c.BufferMemoryBudget = DefaultAgentBudget
	return c
}

// Verify checks c and fills zero fields with their defaults.
func (c *Config) Verify() error {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if len(c.Versions) == 0 {
		c.Versions = DefaultConfig().Versions
	}
	for _, v := range c.Versions {
		if v < bytefrog.Version1 || v > bytefrog.MaxVersion {
			return fmt.Errorf("%w: protocol version %d not supported (1..%d)", ErrConfig, v, bytefrog.MaxVersion)
		}
	}
	if c.Flavor != bytefrog.FlavorBytefrog && c.Flavor != bytefrog.FlavorCodePulse {
		return fmt.Errorf("%w: flavor %v", ErrConfig, c.Flavor)
	}
	if !c.Compression.valid() {
		return fmt.Errorf("%w: compression %v", ErrConfig, c.Compression)
	}
	if c.Agent.HeartbeatInterval <= 0 {
		return fmt.Errorf("%w: agent heartbeat interval %d ms", ErrConfig, c.Agent.HeartbeatInterval)
	}
	if c.Agent.NumDataSenders < 0 {
		return fmt.Errorf("%w: agent numDataSenders %d", ErrConfig, c.Agent.NumDataSenders)
	}
	if _, err := ParseScript(c.Script); err != nil {
		return err
	}
	type limit struct {
		name string
		v    *int64
		def  int64
	}
	held, dataConns, topN := int64(c.MaxHeldEvents), int64(c.MaxDataConns), int64(c.TopN)
	for _, l := range []limit{
		{"MaxHeldEvents", &held, DefaultMaxHeldEvents},
		{"MaxHeldBytes", &c.MaxHeldBytes, DefaultMaxHeldBytes},
		{"MaxMappingBytes", &c.MaxMappingBytes, DefaultMaxMappingBytes},
		{"MaxDataConns", &dataConns, DefaultMaxDataConns},
		{"TopN", &topN, DefaultTopN},
	} {
		switch {
		case *l.v < 0:
			return fmt.Errorf("%w: %s %d", ErrConfig, l.name, *l.v)
		case *l.v == 0:
			*l.v = l.def
		}
	}
	if dataConns > MaxDataConnsLimit {
		return fmt.Errorf("%w: MaxDataConns %d (max %d)", ErrConfig, dataConns, MaxDataConnsLimit)
	}
	if held > 1<<31-1 {
		return fmt.Errorf("%w: MaxHeldEvents %d", ErrConfig, held)
	}
	c.MaxHeldEvents, c.MaxDataConns, c.TopN = int(held), int(dataConns), int(topN)
	if c.MaxConfigSize < 0 {
		return fmt.Errorf("%w: MaxConfigSize %d", ErrConfig, c.MaxConfigSize)
	}
	for _, d := range []*time.Duration{&c.GreetTimeout, &c.DataHelloWait} {
		if *d < 0 {
			return fmt.Errorf("%w: negative duration %v", ErrConfig, *d)
		}
	}
	if c.GreetTimeout == 0 {
		c.GreetTimeout = DefaultGreetTimeout
	}
	if c.DataHelloWait == 0 {
		c.DataHelloWait = DefaultDataHelloWait
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

// accepts reports whether protocol version v is accepted.
func (c *Config) accepts(v uint8) bool { return slices.Contains(c.Versions, v) }

// clone returns a copy of c whose slices are not shared.
func (c *Config) clone() *Config {
	n := *c
	n.Versions = slices.Clone(c.Versions)
	n.Agent.Exclusions = slices.Clone(c.Agent.Exclusions)
	n.Agent.Inclusions = slices.Clone(c.Agent.Inclusions)
	return &n
}
