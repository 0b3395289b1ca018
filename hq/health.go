package hq

import (
	"fmt"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// Health is HQ's view of a live agent, from its heartbeats. It is only
// reported: it never ends a run.
type Health uint8

const (
	// HealthOK: heartbeats arrive and the mode is the one HQ expects.
	HealthOK Health = iota
	// HealthConcerned: the reported mode has differed from the one HQ's
	// commands call for for more than 2 s.
	HealthConcerned
	// HealthUnhealthy: no heartbeat for more than 3 intervals.
	HealthUnhealthy
	// HealthEnded: the run is over.
	HealthEnded
)

// Health thresholds ("missed > 3 → Unhealthy"; "a mode different from the
// expected one for more than 2000 ms → Concerned").
const (
	unhealthyIntervals = 3
	concernedAfter     = 2 * time.Second
	healthTick         = time.Second
)

var healthNames = [...]string{
	HealthOK: "ok", HealthConcerned: "concerned", HealthUnhealthy: "unhealthy", HealthEnded: "ended",
}

func (h Health) String() string {
	if int(h) < len(healthNames) {
		return healthNames[h]
	}
	return fmt.Sprintf("UNKNOWN_HEALTH_%d", uint8(h))
}

// expectedMode is the mode the agent should report after HQ's commands;
// r.mu must be held.
func (r *Run) expectedMode() bytefrog.Mode {
	return r.life.Mode
}

// healthLocked computes the health at now; r.mu must be held.
func (r *Run) healthLocked(now time.Time) (Health, string) {
	if r.report != nil {
		return HealthEnded, ""
	}
	interval := time.Duration(r.cfg.Agent.HeartbeatInterval) * time.Millisecond
	if silent := now.Sub(r.lastHB); silent > unhealthyIntervals*interval {
		return HealthUnhealthy, fmt.Sprintf("no heartbeat received for %v", silent.Round(time.Millisecond))
	}
	if !r.mismatchSince.IsZero() {
		if d := now.Sub(r.mismatchSince); d > concernedAfter {
			return HealthConcerned, fmt.Sprintf("mode %v, expected %v for %v", modeName(r.mode), r.expectedMode(),
				d.Round(time.Millisecond))
		}
	}
	return HealthOK, ""
}

// updateMismatch notes when the reported mode started to differ from the
// expected one, after a heartbeat or a command; r.mu must be held.
func (r *Run) updateMismatch() {
	switch {
	case r.mode == r.expectedMode() || r.mode == bytefrog.ModeShutdown:
		r.mismatchSince = time.Time{}
	case r.mismatchSince.IsZero():
		r.mismatchSince = r.cfg.Now()
	}
}

// Health returns the run's health now.
func (r *Run) Health() Health {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, _ := r.healthLocked(r.cfg.Now())
	return h
}

// checkHealth logs a change of health; the server calls it every second.
func (r *Run) checkHealth() {
	r.mu.Lock()
	h, why := r.healthLocked(r.cfg.Now())
	changed := h != r.loggedHealth && h != HealthEnded
	r.loggedHealth = h
	r.mu.Unlock()
	if !changed {
		return
	}
	if h == HealthOK {
		r.log.Info("agent healthy again")
	} else {
		r.log.Warn("agent "+h.String(), "why", why)
	}
}
