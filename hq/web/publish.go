package web

import (
	"sync"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/calltree"
)

// published is what readers of a run get: the flame graph's nodes with the
// version each last changed in, the method names, the rates. publish
// replaces it each tick; readers hold mu while they read.
type published struct {
	mu       sync.RWMutex
	version  uint64
	vals     []calltree.NodeValues
	ver      []uint64 // by node: the version it last changed in
	nameIDs  []int32  // method ids, in the order they were mapped
	names    []string // their display names
	paths    int      // call paths of the tree (may exceed len(vals))
	now      int32    // latest event time (ms)
	tree     calltree.Stats
	warnings []string

	stats      hq.RunStats
	commands   []hq.Command
	rates      []float64 // events/s, oldest first
	lastEvents int64
	lastAt     time.Time
	ended      bool
	report     *hq.Report
}

// publish takes a snapshot of the run for readers; it is serialised by
// pubOnce (the publisher and the run's Finish may both call it).
func (t *tracker) publish(now time.Time) {
	t.pubOnce.Lock()
	defer t.pubOnce.Unlock()

	t.mu.Lock()
	t.settleLocked(false)
	t.scratch = t.tree.Snapshot(t.scratch, t.cfg.MaxNodes)
	p := &t.pub
	p.mu.RLock()
	have := len(p.nameIDs)
	p.mu.RUnlock()
	var ids []int32
	var names []string
	for _, id := range t.names[have:] {
		ids = append(ids, id)
		names = append(names, t.tree.MethodName(id))
	}
	st := t.tree.Stats()
	last := max(t.tree.Last(), t.lastEvent)
	finished, rep := t.finished, t.report
	var warns []string
	if finished {
		warns = t.tree.Warnings()
	}
	t.mu.Unlock()

	var rs hq.RunStats
	var cmds []hq.Command
	if t.run != nil {
		rs = t.run.Stats()
		cmds = t.run.Commands()
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	changed := len(t.scratch) != len(p.vals) || len(ids) > 0
	next := p.version + 1
	for len(p.ver) < len(t.scratch) {
		p.ver = append(p.ver, next)
	}
	for i := range t.scratch {
		if i >= len(p.vals) || t.scratch[i] != p.vals[i] {
			p.ver[i] = next
			changed = true
		}
	}
	if changed {
		p.version = next
	}
	p.vals, t.scratch = t.scratch, p.vals
	p.nameIDs = append(p.nameIDs, ids...)
	p.names = append(p.names, names...)
	p.paths, p.now, p.tree = st.Paths, last, st
	if warns != nil {
		p.warnings = warns
	}
	if t.run != nil {
		if !p.lastAt.IsZero() && !p.ended {
			if secs := now.Sub(p.lastAt).Seconds(); secs > 0 {
				rate := float64(rs.Events-p.lastEvents) / secs
				if finished {
					rate = 0
				}
				if len(p.rates) >= t.cfg.RateSamples {
					p.rates = append(p.rates[:0], p.rates[1:]...)
				}
				p.rates = append(p.rates, max(rate, 0))
			}
		}
		p.lastEvents, p.lastAt = rs.Events, now
		p.stats, p.commands = rs, cmds
	}
	if finished {
		p.ended, p.report = true, rep
		if rep != nil {
			p.commands = rep.Commands
			p.stats.Events = rep.Sequenced
			p.stats.Bytes = rep.Bytes
		}
	}
}
