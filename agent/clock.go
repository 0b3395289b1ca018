package agent

import "time"

// Clock is the source of the agent's timers (Config.Clock). Its methods
// are safe for concurrent use.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that sends on its channel once d has
	// passed.
	NewTimer(d time.Duration) Timer
	// NewTicker returns a ticker that sends on its channel every d.
	NewTicker(d time.Duration) Ticker
}

// Timer is a Clock's one-shot timer, as time.Timer.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
	Reset(d time.Duration) bool
}

// Ticker is a Clock's periodic timer, as time.Ticker.
type Ticker interface {
	C() <-chan time.Time
	Stop()
	Reset(d time.Duration)
}

// systemClock is the Clock of the time package.
type systemClock struct{}

func (systemClock) Now() time.Time                   { return time.Now() }
func (systemClock) NewTimer(d time.Duration) Timer   { return sysTimer{time.NewTimer(d)} }
func (systemClock) NewTicker(d time.Duration) Ticker { return sysTicker{time.NewTicker(d)} }

type sysTimer struct{ t *time.Timer }

func (t sysTimer) C() <-chan time.Time        { return t.t.C }
func (t sysTimer) Stop() bool                 { return t.t.Stop() }
func (t sysTimer) Reset(d time.Duration) bool { return t.t.Reset(d) }

type sysTicker struct{ t *time.Ticker }

func (t sysTicker) C() <-chan time.Time   { return t.t.C }
func (t sysTicker) Stop()                 { t.t.Stop() }
func (t sysTicker) Reset(d time.Duration) { t.t.Reset(d) }

// clock returns cfg's Clock, the system clock when none is set.
func (c *Config) clock() Clock {
	if c.Clock == nil {
		return systemClock{}
	}
	return c.Clock
}
