package web

import (
	"errors"
	"fmt"
	"time"

	"github.com/tadpole-trace/tadpole/hq/calltree"
)

// Errors of the package.
var (
	// ErrConfig: a Config field is out of range.
	ErrConfig = errors.New("web: bad config")
	// ErrNotLoopback: the page would listen beyond loopback and
	// Config.AllowRemote is off.
	ErrNotLoopback = errors.New("web: refusing to serve beyond loopback")
	// ErrClosed: the server was closed.
	ErrClosed = errors.New("web: server closed")
)

// Defaults of Config.
const (
	DefaultTick          = 250 * time.Millisecond
	DefaultBatch         = 4096    // events handed to the tree under one lock
	DefaultMaxNodes      = 200_000 // call paths a page gets
	DefaultDeltaNodes    = 20_000  // call paths in one answer
	DefaultSpans         = 1 << 16 // timeline spans kept per run
	DefaultDeltaSpans    = 20_000  // spans in one answer
	DefaultSpanDepth     = 8       // call depths the timeline shows
	DefaultMarkers       = 10_000  // markers and log records kept per run
	DefaultDeltaMarkers  = 2_000   // markers in one answer
	DefaultBubblePaths   = 1_000   // distinct exception bubble paths kept per run
	DefaultEndedRuns     = 16      // ended runs still shown
	DefaultEndedPaths    = 2 << 20 // call paths of the ended runs still shown
	DefaultRateSamples   = 240     // event rate history per run (one per tick)
	maxTextLen           = 1024    // bytes of a marker key or value kept
	maxBubbleLen         = 64      // methods of a bubble path kept
	maxStack             = 4096    // open calls of a thread the timeline follows
	maxQueryLen          = 256     // bytes of a filter
	maxNames             = 1 << 20 // method names kept per run
	maxThreadNames       = 1 << 16
	maxTickHistory       = 1 << 14
	maxSpanDepthLimit    = 64
	maxDeltaLimit        = 1 << 20
	maxRetainedRunsLimit = 1024
)

// Config configures a Server. A zero field means its default.
type Config struct {
	// AllowRemote lets Listen bind an address beyond loopback. The page
	// has no authentication: anyone who reaches it can pause and stop
	// runs.
	AllowRemote bool
	// Tick is how often live runs are sampled (event rates, flame graph
	// versions, timeline spans).
	Tick time.Duration
	// Batch is the number of events a run hands to its call tree under
	// one lock.
	Batch int
	// MaxNodes caps the call paths of a run the page gets (by index: the
	// first ones found); the flame graph says how many it lacks.
	MaxNodes int
	// DeltaNodes, DeltaSpans and DeltaMarkers cap one answer; the page
	// asks again for the rest.
	DeltaNodes, DeltaSpans, DeltaMarkers int
	// Spans is the number of timeline spans kept per run (a ring).
	Spans int
	// SpanDepth is the number of call depths the timeline shows.
	SpanDepth int
	// Markers is the number of markers and log records kept per run.
	Markers int
	// BubblePaths caps the distinct exception bubble paths per run.
	BubblePaths int
	// EndedRuns is the number of ended runs still shown, and EndedPaths
	// caps their call paths in all (each keeps its call tree: about 100
	// bytes a path): the oldest go first.
	EndedRuns, EndedPaths int
	// RateSamples is the length of a run's event-rate history.
	RateSamples int
	// Tree bounds each run's call tree (nil: calltree's defaults without
	// its timeline, which the page does not use).
	Tree *calltree.Config
}

// DefaultConfig returns the defaults.
func DefaultConfig() *Config {
	return &Config{Tick: DefaultTick, Batch: DefaultBatch, MaxNodes: DefaultMaxNodes, DeltaNodes: DefaultDeltaNodes,
		DeltaSpans: DefaultDeltaSpans, DeltaMarkers: DefaultDeltaMarkers, Spans: DefaultSpans, SpanDepth: DefaultSpanDepth,
		Markers: DefaultMarkers, BubblePaths: DefaultBubblePaths, EndedRuns: DefaultEndedRuns, EndedPaths: DefaultEndedPaths,
		RateSamples: DefaultRateSamples}
}

// Verify checks c and fills zero fields with their defaults.
func (c *Config) Verify() error {
	d := DefaultConfig()
	if c.Tick == 0 {
		c.Tick = d.Tick
	}
	if c.Tick < time.Millisecond || c.Tick > time.Minute {
		return fmt.Errorf("%w: Tick %v (1ms..1m)", ErrConfig, c.Tick)
	}
	type lim struct {
		name     string
		v        *int
		def, max int
	}
	for _, l := range []lim{
		{"Batch", &c.Batch, d.Batch, 1 << 20},
		{"MaxNodes", &c.MaxNodes, d.MaxNodes, 1 << 30},
		{"DeltaNodes", &c.DeltaNodes, d.DeltaNodes, maxDeltaLimit},
		{"DeltaSpans", &c.DeltaSpans, d.DeltaSpans, maxDeltaLimit},
		{"DeltaMarkers", &c.DeltaMarkers, d.DeltaMarkers, maxDeltaLimit},
		{"Spans", &c.Spans, d.Spans, 1 << 26},
		{"SpanDepth", &c.SpanDepth, d.SpanDepth, maxSpanDepthLimit},
		{"Markers", &c.Markers, d.Markers, 1 << 24},
		{"BubblePaths", &c.BubblePaths, d.BubblePaths, 1 << 20},
		{"EndedRuns", &c.EndedRuns, d.EndedRuns, maxRetainedRunsLimit},
		{"EndedPaths", &c.EndedPaths, d.EndedPaths, 1 << 30},
		{"RateSamples", &c.RateSamples, d.RateSamples, maxTickHistory},
	} {
		if *l.v == 0 {
			*l.v = l.def
		}
		if *l.v < 1 || *l.v > l.max {
			return fmt.Errorf("%w: %s %d (1..%d)", ErrConfig, l.name, *l.v, l.max)
		}
	}
	if c.Tree != nil {
		t := *c.Tree
		if err := t.Verify(); err != nil {
			return fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	return nil
}
