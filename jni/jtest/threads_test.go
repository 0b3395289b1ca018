package jtest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/internal/testhq"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// nameLog is an HQ processor in front of a testhq.Collector that keeps
// every thread mapping in arrival order: the collector keeps only the
// latest name of each wire id.
type nameLog struct {
	hq.Processor
	mu    sync.Mutex
	names map[uint16][]string
}

func (n *nameLog) Message(m *bytefrog.Msg) {
	if m.Type == bytefrog.MsgMapThreadName {
		n.mu.Lock()
		h := n.names[m.ThreadID]
		if name := bytefrog.String(m.Text); len(h) == 0 || h[len(h)-1] != name {
			n.names[m.ThreadID] = append(h, name)
		}
		n.mu.Unlock()
	}
	n.Processor.Message(m)
}

// startNamesHQ starts a test HQ whose runs also log thread mappings.
func startNamesHQ(t *testing.T) (*testHQ, func() map[uint16][]string) {
	var mu sync.Mutex
	var logs []*nameLog
	h := &testHQ{testhq.Start(t, func(cfg *hq.Config) {
		orig := cfg.NewProcessor
		cfg.NewProcessor = func(r *hq.Run) hq.Processor {
			n := &nameLog{Processor: orig(r), names: make(map[uint16][]string)}
			mu.Lock()
			logs = append(logs, n)
			mu.Unlock()
			return n
		}
	})}
	return h, func() map[uint16][]string {
		mu.Lock()
		n := logs[len(logs)-1]
		mu.Unlock()
		n.mu.Lock()
		defer n.mu.Unlock()
		return n.names
	}
}

// TestThreadNames: each Java thread is announced under a wire id of its
// own with its name from ThreadStart, then its new name after
// Thread.setName; every record arrives and the run is clean.
func TestThreadNames(t *testing.T) {
	e := Build(t)
	h, names := startNamesHQ(t)
	const n = 6
	runJava(t, e, h.env(), true, "", "threads", strconv.Itoa(n))
	rep, c := h.waitRun(t)
	testhq.CheckClean(t, rep, c, -1)
	var want, got []string
	for i := range n {
		want = append(want, "INFO before "+strconv.Itoa(i), "INFO after "+strconv.Itoa(i))
	}
	got = c.Markers("log:thr")
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("log:thr markers: got %q; want %q", got, want)
	}
	byName := make(map[string]uint16)
	for id, hist := range names() {
		if len(hist) > 0 && strings.HasPrefix(hist[0], "w-") {
			if prev, dup := byName[hist[0]]; dup {
				t.Errorf("%s announced under wire ids %d and %d", hist[0], prev, id)
			}
			byName[hist[0]] = id
			if want := []string{hist[0], "r-" + hist[0][2:]}; !slices.Equal(hist, want) {
				t.Errorf("wire id %d named %q; want %q", id, hist, want)
			}
		}
	}
	if len(byName) != n {
		t.Errorf("got %d worker threads announced (%v); want %d", len(byName), byName, n)
	}
	mains := 0
	for _, hist := range names() {
		if slices.Contains(hist, "main") {
			mains++
		}
	}
	if mains != 1 {
		t.Errorf("main announced under %d wire ids; want 1", mains)
	}
}

// TestThreadChurn: thousands of short threads that log once each: every
// record arrives, each thread under its own wire id, and the C side's
// thread states do not pile up (ThreadEnd retires them).
func TestThreadChurn(t *testing.T) {
	e := Build(t)
	h, names := startNamesHQ(t)
	const total, par = 3000, 8
	r := runJava(t, e, h.env(), true, "", "churn", strconv.Itoa(total), strconv.Itoa(par))
	rep, c := h.waitRun(t)
	testhq.CheckClean(t, rep, c, -1)
	got := c.Markers("log:churn")
	if len(got) != total {
		t.Fatalf("got %d churn records; want %d", len(got), total)
	}
	seen := make(map[string]bool, total)
	for _, v := range got {
		seen[v] = true
	}
	for i := range total {
		if !seen[fmt.Sprintf("INFO c %d", i)] {
			t.Fatalf("record of thread %d missing", i)
		}
	}
	named := 0
	for _, hist := range names() {
		if len(hist) == 1 && strings.HasPrefix(hist[0], "c-") {
			named++
		}
	}
	if named != total {
		t.Errorf("got %d churn threads under wire ids of their own; want %d", named, total)
	}
	var before, after int
	if _, err := fmt.Sscanf(r.Stdout[strings.Index(r.Stdout, "churn states="):], "churn states=%d %d", &before, &after); err != nil {
		t.Fatalf("no state counts in %q: %v", r.Stdout, err)
	}
	// Threads that never end (main, tadpole-jul, JVM service threads) keep
	// theirs; the churn threads must leave none behind but the orphans of
	// one flush period.
	if after > before+2*par {
		t.Errorf("C thread states: %d before the churn, %d after %d threads; want at most %d", before, after, total, before+2*par)
	}
	t.Logf("C thread states: %d before, %d after %d threads", before, after, total)
}
