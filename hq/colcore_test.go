package hq

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// rawLog is a Processor that keeps every message's bytes, the fields of
// events and markers, and every data break, in order.
type rawLog struct{ lines []string }

func (l *rawLog) Message(m *bytefrog.Msg) {
	var text, value []byte
	if m.Type == bytefrog.MsgMarker {
		text, value = m.Text, m.Value
	}
	l.lines = append(l.lines, fmt.Sprintf("%x %v seq=%d t=%d tid=%d m=%d x=%d sl=%d line=%d thrown=%v text=%q value=%q",
		m.Raw, m.Type, m.Seq, m.RelTime, m.ThreadID, m.MethodID, m.ExceptionID, m.SourceLocationID, m.Line,
		m.ExceptionThrown, text, value))
}
func (l *rawLog) DataBreak(seq int32) { l.lines = append(l.lines, fmt.Sprintf("break %d", seq)) }
func (l *rawLog) Finish(*Report)      {}

// blockLog is a BlockProcessor that keeps the bytes of the events it is
// given by Block.
type blockLog struct{ rawLog }

func (l *blockLog) Events(b Block) {
	var v bytefrog.EventView
	v.Init(nil, bytefrog.Dialect{Version: bytefrog.Version1})
	for i := range b.Len() {
		var m bytefrog.Msg
		if !v.Load(&m, b.Event(i)) {
			l.lines = append(l.lines, "bad event")
			continue
		}
		l.lines = append(l.lines, fmt.Sprintf("%x", m.Raw))
	}
}

// recordsTrace is a run whose events make the core take every way: calls
// that nest and calls that do not, exits on empty stacks, throws and
// bubbles, markers, data breaks, a deep stack, events of a thread never
// named and of methods never mapped, a suspend window and the events
// stamped inside it, two data connections taking turns.
func recordsTrace(seed uint64, flavor bytefrog.Flavor) *scripted {
	rnd := rand.New(rand.NewPCG(seed, 2))
	s := &scripted{name: fmt.Sprintf("records-%d-%v", seed, flavor), h: header(bytefrog.Version1, flavor)}
	g := hqtest.NewGen(flavor)
	stacks := make([][]int32, 6)
	s.add(RecordSent, 0, 0, cmd(bytefrog.MsgStart))
	s.add(RecordOpen, 1, 0, nil)
	s.add(RecordOpen, 2, 0, nil)
	ms, bufs, full := 0, 0, 0
	take := func() {
		if g.Len() == 0 {
			return
		}
		s.add(RecordRecv, uint16(1+bufs%2), ms, g.Take())
		bufs++
	}
	deep := seed%2 == 0
	for i := range 30000 {
		tid := uint16(rnd.IntN(len(stacks)))
		st := stacks[tid]
		g.RelTime += int32(rnd.IntN(3))
		switch r := rnd.IntN(200); {
		case deep && r == 0:
			for k := range maxStackDepth + 10 {
				g.Entry(tid, int32(k%7+1))
			}
			for k := maxStackDepth + 9; k >= maxStackDepth+10-maxTimedDepth-100; k-- {
				g.Exit(tid, int32(k%7+1), 1)
			}
			deep = false
			stacks[tid] = nil
		case r < 90 && len(st) < 40:
			m := int32(rnd.IntN(200) + 1) // some ids take two varint bytes
			g.Entry(tid, m)
			stacks[tid] = append(st, m)
		case r < 170 && len(st) > 0:
			g.Exit(tid, st[len(st)-1], uint16(rnd.IntN(3)*100+r))
			stacks[tid] = st[:len(st)-1]
		case r < 174:
			g.Exit(tid, int32(rnd.IntN(30)+1), 1) // any method, any depth
			if len(st) > 0 {
				stacks[tid] = st[:len(st)-1]
			}
		case r < 184 && len(st) > 0:
			exc := int32(rnd.IntN(3) + 1)
			if rnd.IntN(4) > 0 {
				g.Throw(tid, st[len(st)-1], exc, uint16(r))
			}
			for k := rnd.IntN(len(st)) + 1; k > 0 && len(st) > 0; k-- {
				g.Bubble(tid, st[len(st)-1], exc)
				st = st[:len(st)-1]
			}
			stacks[tid] = st
		case r < 186:
			g.Marker("k", fmt.Sprint(i))
		case r < 187:
			// A method never mapped, on a thread never named.
			b := bytefrog.AppendMethodEntry(nil, g.RelTime, g.Seq, 5000, 40)
			if flavor == bytefrog.FlavorCodePulse {
				b = bytefrog.AppendMethodExitCodePulse(b, g.RelTime+1, g.Seq+1, 5000, r%2 == 0, 40)
			} else {
				b = bytefrog.AppendMethodExit(b, g.RelTime+1, g.Seq+1, 5000, 7, 40)
			}
			g.Raw(b)
			g.Seq += 2
		case r < 188 && rnd.IntN(8) == 0:
			take()
			s.add(RecordRecv, 0, ms, bytefrog.AppendDataBreak(nil, g.Seq))
			for i := range stacks {
				stacks[i] = nil
			}
		}
		if g.Len() > 8<<10 {
			ms = int(g.RelTime)
			take()
			full++
			switch full {
			case 5:
				s.add(RecordSent, 0, ms, cmd(bytefrog.MsgSuspend))
				s.add(RecordRecv, 0, ms, hb(bytefrog.ModeSuspended))
			case 10:
				s.add(RecordSent, 0, ms, cmd(bytefrog.MsgUnsuspend))
			}
		}
	}
	take()
	s.add(RecordRecv, 0, ms, hb(bytefrog.ModeShutdown))
	s.add(RecordSent, 0, ms, cmd(bytefrog.MsgStop))
	s.add(RecordClose, 1, ms, nil)
	s.add(RecordClose, 2, ms, nil)
	s.add(RecordClose, 0, ms, nil)
	s.add(RecordEnd, 0, ms, appendEnd(nil, true, ""))
	return s
}

// replayBoth replays the file at path feeding the core records and, with
// replayRecords off, Bytefrog slabs, with fresh processors from procs
// each time, and returns both reports and processors.
func replayBoth(t *testing.T, path string, procs func() []Processor) (recs, bf *Report, precs, pbf []Processor) {
	t.Helper()
	defer func(old bool) { replayRecords = old }(replayRecords)
	for _, on := range []bool{true, false} {
		replayRecords = on
		ps := procs()
		rep, err := ReplayFile(path, &ReplayOptions{Processors: ps})
		if err != nil {
			t.Fatalf("replay (records %v): %v", on, err)
		}
		if on {
			recs, precs = rep, ps
		} else {
			bf, pbf = rep, ps
		}
	}
	return
}

// TestColumnsRecordsSameReplay: replay feeding the core records from the
// columns makes the report, and hands processors the messages, that
// Bytefrog slabs give: the same counts, checks, timings and findings, the
// same bytes in the same order.
func TestColumnsRecordsSameReplay(t *testing.T) {
	dir := t.TempDir()
	traces := append(seedTraces(t), bigTrace(t, 50_000))
	for seed := range uint64(4) {
		for _, f := range []bytefrog.Flavor{bytefrog.FlavorBytefrog, bytefrog.FlavorCodePulse} {
			traces = append(traces, recordsTrace(seed, f))
		}
	}
	var faults, paths, unmapped, window, breaks int64
	for _, s := range traces {
		t.Run(s.name, func(t *testing.T) {
			path := filepath.Join(dir, s.name+CompressColumns.Ext())
			s.write(t, path, CompressColumns)
			for _, withProcs := range []bool{false, true} {
				procs := func() []Processor {
					if !withProcs {
						return nil
					}
					return []Processor{&rawLog{}, &countProc{}}
				}
				rr, rb, pr, pb := replayBoth(t, path, procs)
				sameReport(t, rb, rr)
				for i := range pr {
					var lr, lb []string
					switch p := pr[i].(type) {
					case *countProc:
						if p.n != pb[i].(*countProc).n {
							t.Errorf("processor %d: %d messages; want %d", i, p.n, pb[i].(*countProc).n)
						}
						continue
					case *rawLog:
						lr, lb = p.lines, pb[i].(*rawLog).lines
					}
					if len(lr) != len(lb) || int64(len(lr)) < rr.Sequenced {
						t.Fatalf("processor %d: %d messages; want %d (%d events)", i, len(lr), len(lb), rr.Sequenced)
					}
					for j := range lr {
						if lr[j] != lb[j] {
							t.Fatalf("processor %d, message %d: %s; want %s", i, j, lr[j], lb[j])
						}
					}
				}
				if withProcs {
					continue
				}
				faults += rr.StackFaults
				paths += int64(len(rr.BubblePaths))
				unmapped += int64(len(rr.Unmapped))
				window += rr.InWindow
				breaks += int64(len(rr.DataBreaks))
			}
		})
	}
	if faults == 0 || paths == 0 || unmapped == 0 || window == 0 || breaks == 0 {
		t.Errorf("the files lack stack faults (%d), bubble paths (%d), unmapped ids (%d), events in a window (%d) or data breaks (%d)",
			faults, paths, unmapped, window, breaks)
	}
}

// TestColumnsRecordsBlocks: a replay with a BlockProcessor gets Bytefrog
// slabs, whose events the processor reads as it did.
func TestColumnsRecordsBlocks(t *testing.T) {
	s := recordsTrace(1, bytefrog.FlavorBytefrog)
	path := filepath.Join(t.TempDir(), s.name+CompressColumns.Ext())
	s.write(t, path, CompressColumns)
	rr, rb, pr, pb := replayBoth(t, path, func() []Processor { return []Processor{&blockLog{}} })
	sameReport(t, rb, rr)
	lr, lb := pr[0].(*blockLog).lines, pb[0].(*blockLog).lines
	if len(lr) != len(lb) || int64(len(lr)) < rr.Sequenced {
		t.Fatalf("%d messages; want %d (%d events)", len(lr), len(lb), rr.Sequenced)
	}
	for j := range lr {
		if lr[j] != lb[j] {
			t.Fatalf("message %d: %s; want %s", j, lr[j], lb[j])
		}
	}
}
