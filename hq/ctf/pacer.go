package ctf

import (
	"sync"
	"sync/atomic"
	"time"
)

// Pacer defaults.
const (
	// DefaultServeShare is the share of one core live serving may take
	// while a run is being ingested.
	DefaultServeShare = 0.05
	// ingestQuiet is how long after the last block ingested serving runs
	// unpaced.
	ingestQuiet = 100 * time.Millisecond
	// paceBurst is the serving time allowed at once before pacing.
	paceBurst = 5 * time.Millisecond
	// maxPause bounds one pause of a viewer.
	maxPause = 500 * time.Millisecond
)

// Pacer holds live serving (encoding on demand and sending packets, done
// in the viewers' goroutines) to a share of one core while HQ ingests,
// so that viewers, however fast they read, cost the ingest at most about
// that share; when no run is being ingested, viewers are served at full
// speed. Its methods are safe for concurrent use.
type Pacer struct {
	share    float64
	ingestAt atomic.Int64 // unix ns of the last block ingested

	mu   sync.Mutex
	debt time.Duration // serving time beyond the share; negative: credit
	last time.Time
}

// NewPacer returns a pacer allowing share of one core (≤ 0: unpaced).
func NewPacer(share float64) *Pacer { return &Pacer{share: share} }

// ingesting notes that a run's events are arriving (one call per block).
func (p *Pacer) ingesting() {
	if p != nil {
		p.ingestAt.Store(time.Now().UnixNano())
	}
}

// active reports whether serving is paced now: a run is being ingested.
func (p *Pacer) active() bool {
	return p != nil && p.share > 0 && time.Now().UnixNano()-p.ingestAt.Load() <= int64(ingestQuiet)
}

// Pace is live.Config.Pace: it charges busy to the serving budget and
// sleeps while serving is over its share of the time since ingest began.
func (p *Pacer) Pace(busy time.Duration) {
	if p == nil || p.share <= 0 {
		return
	}
	now := time.Now()
	p.mu.Lock()
	if now.UnixNano()-p.ingestAt.Load() > int64(ingestQuiet) {
		p.debt, p.last = 0, now
		p.mu.Unlock()
		return
	}
	if !p.last.IsZero() {
		p.debt -= time.Duration(p.share * float64(now.Sub(p.last)))
	}
	p.last = now
	p.debt = max(p.debt, -paceBurst) + busy
	var pause time.Duration
	if p.debt > 0 {
		pause = min(time.Duration(float64(p.debt)/p.share), maxPause)
	}
	p.mu.Unlock()
	if pause > 0 {
		time.Sleep(pause)
	}
}
