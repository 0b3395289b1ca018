package ctf

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/tadpole-trace/tadpole/transport/live"
)

// Pacer defaults.
const (
	// DefaultServeShare is the share of one core live serving may take
	// while a run is being ingested.
	DefaultServeShare = 0.05
	// DefaultServeRate is the packet bytes per second delivered to all
	// viewers together while a run is being ingested: about 20 k events/s
	// of method calls, more than anyone reads live, and what keeps the
	// viewers' own CPU (babeltrace2 decodes an event in about 0.6 µs
	// with -o dummy, more printing text) at a few percent of a core
	// whatever the ingest rate.
	DefaultServeRate = 1 << 20
	// DefaultPaceAbove is the ingest rate (events/s) above which serving
	// is paced. HQ ingests one event in a few tens of ns, so below it the
	// ingest takes a few percent of a core and viewers at full speed
	// cannot hold it back; above it, the ingest may need the whole machine.
	DefaultPaceAbove = 1e6
	// rateWindow is the span over which the ingest rate is measured.
	rateWindow = 50 * time.Millisecond
	// ingestQuiet is how long after the last block ingested serving runs
	// unpaced: longer than a busy machine keeps HQ's core off the CPU,
	// short enough that viewers catch up soon after a run ends.
	ingestQuiet = 300 * time.Millisecond
	// paceBurst is the serving time allowed at once before pacing.
	paceBurst = 5 * time.Millisecond
	// rateBurst is the share of a second of DefaultServeRate's bytes
	// delivered at once before pacing.
	rateBurst = 8
	// maxPause bounds one pause of a viewer.
	maxPause = 500 * time.Millisecond
)

// Pacer holds live serving back while HQ ingests, so that viewers cost
// the ingest little however fast they read: the serving work (encoding
// on demand, sending packets, answering polls; done in the viewers'
// goroutines) to a share of one core, and the packet bytes delivered to
// all viewers together to a rate. A viewer held back waits for its
// reply, so its own CPU follows the rate too. Pacing holds while the
// ingest runs above a rate of events (a heavy run); when no run is being
// ingested, or the ingest is light, viewers are served at full speed
// (they catch up, or keep up). Its methods are safe for concurrent use.
type Pacer struct {
	share    float64
	rate     float64      // bytes/s; 0: unlimited
	above    float64      // events/s; 0: any ingest is heavy
	ingestAt atomic.Int64 // unix ns of the last block of a heavy ingest

	winStart atomic.Int64 // unix ns the current rate window began
	winN     atomic.Int64 // events ingested in it

	mu    sync.Mutex
	busy  time.Duration // serving time charged while paced, in all
	sent  int64         // bytes delivered while paced, in all
	debt  time.Duration // serving time beyond the share; negative: credit
	bytes float64       // bytes delivered beyond the rate; negative: credit
	last  time.Time
}

// NewPacer returns a pacer allowing share of one core (≤ 0: no limit)
// and rate packet bytes a second (≤ 0: no limit) while runs are ingested
// at more than above events a second (≤ 0: at any rate).
func NewPacer(share, rate, above float64) *Pacer {
	return &Pacer{share: max(share, 0), rate: max(rate, 0), above: max(above, 0)}
}

// Stats returns the serving time and the packet bytes delivered while a
// run was being ingested (serving paced), since the pacer was made.
func (p *Pacer) Stats() (busy time.Duration, sent int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.busy, p.sent
}

// ingesting notes that n events of a run arrived (one call per block).
func (p *Pacer) ingesting(n int) {
	if p == nil {
		return
	}
	now := time.Now().UnixNano()
	if p.above <= 0 {
		p.ingestAt.Store(now)
		return
	}
	// Heavy once the window's events pass the rate's share of a whole
	// window, however early in it; a window that ended below it starts
	// the next.
	got := p.winN.Add(int64(n))
	start := p.winStart.Load()
	if float64(got) >= p.above*rateWindow.Seconds() {
		p.ingestAt.Store(now)
	}
	if now-start >= int64(rateWindow) && p.winStart.CompareAndSwap(start, now) {
		p.winN.Add(-got)
	}
}

var _ live.Pacer = (*Pacer)(nil)

// Paced implements live.Pacer: serving is paced while a run is being
// ingested.
func (p *Pacer) Paced() bool { return p.active() }

// active reports whether serving is paced now: a run is being ingested.
func (p *Pacer) active() bool {
	return p != nil && (p.share > 0 || p.rate > 0) && time.Now().UnixNano()-p.ingestAt.Load() <= int64(ingestQuiet)
}

// Pace implements live.Pacer: it charges busy to the serving budget and
// sent to the delivery budget, and sleeps while either is over its share
// of the time since ingest began.
func (p *Pacer) Pace(busy time.Duration, sent int) {
	if p == nil || p.share <= 0 && p.rate <= 0 {
		return
	}
	now := time.Now()
	p.mu.Lock()
	if now.UnixNano()-p.ingestAt.Load() > int64(ingestQuiet) {
		p.debt, p.bytes, p.last = 0, 0, now
		p.mu.Unlock()
		return
	}
	if !p.last.IsZero() {
		dt := now.Sub(p.last)
		p.debt -= time.Duration(p.share * float64(dt))
		p.bytes -= p.rate * dt.Seconds()
	}
	p.last = now
	p.busy += busy
	p.sent += int64(sent)
	var pause time.Duration
	if p.share > 0 {
		p.debt = max(p.debt, -paceBurst) + busy
		if p.debt > 0 {
			pause = time.Duration(float64(p.debt) / p.share)
		}
	}
	if p.rate > 0 {
		p.bytes = max(p.bytes, -p.rate/rateBurst) + float64(sent)
		if p.bytes > 0 {
			pause = max(pause, time.Duration(p.bytes/p.rate*float64(time.Second)))
		}
	}
	p.mu.Unlock()
	if pause > 0 {
		time.Sleep(min(pause, maxPause))
	}
}
