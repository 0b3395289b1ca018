package calltree

import "fmt"

// Defaults and limits of Config.
const (
	DefaultMaxPaths    = 1 << 20 // distinct call paths (about 100 MB when full)
	DefaultMaxDepth    = 4096    // frames kept per thread
	DefaultMaxTimeline = 8 << 20 // timeline events (8 bytes each)

	maxThreads = 1 << 16 // thread ids are 16 bits
	maxPaths   = 1<<31 - 2
)

// Config bounds what a Tree keeps. The zero value of a field means its
// default.
type Config struct {
	// MaxPaths caps the distinct call paths (nodes) of the tree. Calls on
	// paths beyond it count as their caller's self time.
	MaxPaths int
	// MaxDepth caps the frames kept per thread; deeper calls are counted
	// per method but not placed in the tree.
	MaxDepth int
	// MaxTimeline caps the open and close events kept for the per-thread
	// exports (speedscope, Chrome); -1 keeps none (the tree and the flame
	// graph still see every call).
	MaxTimeline int
}

// DefaultConfig returns the defaults: DefaultMaxPaths, DefaultMaxDepth,
// DefaultMaxTimeline.
func DefaultConfig() *Config {
	return &Config{MaxPaths: DefaultMaxPaths, MaxDepth: DefaultMaxDepth, MaxTimeline: DefaultMaxTimeline}
}

// Verify checks c and fills in zero fields with their defaults.
func (c *Config) Verify() error {
	if c.MaxPaths == 0 {
		c.MaxPaths = DefaultMaxPaths
	}
	if c.MaxDepth == 0 {
		c.MaxDepth = DefaultMaxDepth
	}
	if c.MaxTimeline == 0 {
		c.MaxTimeline = DefaultMaxTimeline
	}
	switch {
	case c.MaxPaths < 1 || c.MaxPaths > maxPaths:
		return fmt.Errorf("%w: MaxPaths %d (1..%d)", ErrConfig, c.MaxPaths, maxPaths)
	case c.MaxDepth < 1:
		return fmt.Errorf("%w: MaxDepth %d", ErrConfig, c.MaxDepth)
	case c.MaxTimeline < -1:
		return fmt.Errorf("%w: MaxTimeline %d", ErrConfig, c.MaxTimeline)
	}
	return nil
}
