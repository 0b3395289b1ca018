package hq

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// The reference model of the threads' calls: the nesting check and the
// call timing as two separate per-thread stacks, as HQ kept them before
// events.go merged them into one. TestEventsMatchModel holds the core to
// it on random traffic.

type refModel struct {
	calls refCalls
	disc  refDisc
}

type refCalls struct {
	stacks [][]frame
	open   []openPath
	self   []int64
	paths  []BubblePath
	nOpen  int
}

type refDisc struct {
	stacks    [][]int32
	lost      []bool
	faults    int64
	unmatched int64
	deep      int64
}

func (c *refCalls) dataBreak() {
	for i := range c.stacks {
		c.stacks[i] = c.stacks[i][:0]
		c.open[i] = openPath{}
	}
	c.nOpen = 0
}

func (d *refDisc) dataBreak() {
	for i := range d.stacks {
		d.stacks[i] = d.stacks[i][:0]
	}
	clear(d.lost)
}

func (d *refDisc) event(m *bytefrog.Msg) {
	switch m.Type {
	case bytefrog.MsgMethodEntry, bytefrog.MsgMethodExit, bytefrog.MsgException, bytefrog.MsgExceptionBubble:
	default:
		return
	}
	tid := int(m.ThreadID)
	for len(d.stacks) <= tid {
		d.stacks = append(d.stacks, nil)
		d.lost = append(d.lost, false)
	}
	if d.lost[tid] {
		return
	}
	st := d.stacks[tid]
	switch m.Type {
	case bytefrog.MsgMethodEntry:
		if len(st) == maxStackDepth {
			d.lost[tid] = true
			d.stacks[tid] = st[:0]
			d.deep++
			return
		}
		d.stacks[tid] = append(st, m.MethodID)
	case bytefrog.MsgMethodExit, bytefrog.MsgExceptionBubble:
		if len(st) == 0 {
			d.unmatched++
			return
		}
		if st[len(st)-1] != m.MethodID {
			d.faults++
		}
		d.stacks[tid] = st[:len(st)-1]
	case bytefrog.MsgException:
		if len(st) > 0 && st[len(st)-1] != m.MethodID {
			d.faults++
		}
	}
}
func (c *refCalls) event(m *bytefrog.Msg) {
	switch m.Type {
	case bytefrog.MsgMethodEntry, bytefrog.MsgMethodExit, bytefrog.MsgException, bytefrog.MsgExceptionBubble:
	default:
		return
	}
	tid := int(m.ThreadID)
	for len(c.stacks) <= tid {
		c.stacks = append(c.stacks, nil)
		c.open = append(c.open, openPath{})
	}
	st := c.stacks[tid]
	var op *openPath // nil: no path open on this thread
	if c.nOpen > 0 {
		op = &c.open[tid]
		if op.on && m.Type != bytefrog.MsgExceptionBubble {
			// The exception stopped: the frame it reached caught it.
			if len(st) > 0 {
				op.path.caughtID = st[len(st)-1].method
			}
			c.closePathRef(op)
		}
	}
	switch m.Type {
	case bytefrog.MsgMethodEntry:
		if len(st) == maxTimedDepth {
			st = st[:0]
		}
		c.stacks[tid] = append(st, frame{method: m.MethodID, start: m.RelTime})
	case bytefrog.MsgMethodExit, bytefrog.MsgExceptionBubble:
		if m.Type == bytefrog.MsgExceptionBubble {
			op = &c.open[tid]
			if !op.on || op.path.excID != m.ExceptionID {
				// Thrown where no probe saw it (JDK code, or a throw before tracing).
				c.closePathRef(op)
				*op = openPath{on: true, path: BubblePath{excID: m.ExceptionID, throwerID: -1}}
				c.nOpen++
			}
			if len(op.path.bubbledIDs) < maxPathFrames {
				op.path.bubbledIDs = append(op.path.bubbledIDs, m.MethodID)
			} else {
				op.path.bubbledIDs[maxPathFrames-1] = -1 // stands for "more"
			}
		}
		if len(st) == 0 || st[len(st)-1].method != m.MethodID {
			c.stacks[tid] = st[:0]
			return
		}
		f := st[len(st)-1]
		st = st[:len(st)-1]
		total := int64(m.RelTime - f.start)
		if total < 0 {
			total = 0
		}
		if id := f.method; id >= 0 && id < maxTimedMethod {
			for int(id) >= len(c.self) {
				c.self = append(c.self, 0)
			}
			c.self[id] += max(total-f.child, 0)
		}
		if len(st) > 0 {
			st[len(st)-1].child += total
		}
		c.stacks[tid] = st
		if op != nil && op.on && len(st) == 0 {
			op.path.caughtID = 0
			c.closePathRef(op)
		}
	case bytefrog.MsgException:
		// Any path open on the thread was closed above.
		c.open[tid] = openPath{on: true, path: BubblePath{excID: m.ExceptionID, throwerID: m.MethodID, Line: m.Line}}
		c.nOpen++
	}
}
func (c *refCalls) closePathRef(op *openPath) {
	if !op.on {
		return
	}
	op.on = false
	c.nOpen--
	p := op.path
	for i := range c.paths {
		if c.paths[i].excID == p.excID {
			if len(p.bubbledIDs) > len(c.paths[i].bubbledIDs) {
				p.bubbledIDs = slices.Clone(p.bubbledIDs)
				c.paths[i] = p
			}
			return
		}
	}
	if len(c.paths) < maxPaths {
		p.bubbledIDs = slices.Clone(p.bubbledIDs)
		c.paths = append(c.paths, p)
	}
}

func (c *refCalls) fill(r *Report, st *stats, topN int) {
	cc := calls{self: c.self, paths: c.paths, open: c.open, nOpen: c.nOpen}
	cc.fill(r, st, topN)
}

// eventsTraffic is random traffic of a few threads whose calls mostly
// nest, with exits of other methods than the innermost, exits on empty
// stacks, throws and bubbles (caught, uncaught and unseen throws), data
// breaks, markers and now and then one very deep stack: the buffers and
// the data breaks (control messages, with the buffer index each follows).
func eventsTraffic(seed uint64, flavor bytefrog.Flavor) (bufs [][]byte, breaks map[int][]int32) {
	rnd := rand.New(rand.NewPCG(seed, 1))
	g := hqtest.NewGen(flavor)
	stacks := make([][]int32, 4)
	breaks = map[int][]int32{}
	deep := rnd.IntN(3) == 0
	for range 20000 {
		tid := uint16(rnd.IntN(len(stacks)))
		st := stacks[tid]
		g.RelTime += int32(rnd.IntN(3))
		switch r := rnd.IntN(100); {
		case deep && r == 0:
			for k := range maxStackDepth + 10 {
				g.Entry(tid, int32(k%7+1))
				if g.Len() > 8<<10 {
					bufs = append(bufs, g.Take())
				}
			}
			// Unwind part of it, past the timing's depth: the thread
			// is lost, and its timing starts over on the way.
			for k := maxStackDepth + 9; k >= maxStackDepth+10-maxTimedDepth-100; k-- {
				g.Exit(tid, int32(k%7+1), 1)
				if g.Len() > 8<<10 {
					bufs = append(bufs, g.Take())
				}
			}
			deep = false
			stacks[tid] = nil
		case r < 45 && len(st) < 40:
			m := int32(rnd.IntN(30) + 1)
			g.Entry(tid, m)
			stacks[tid] = append(st, m)
		case r < 85 && len(st) > 0:
			g.Exit(tid, st[len(st)-1], uint16(r))
			stacks[tid] = st[:len(st)-1]
		case r < 87:
			g.Exit(tid, int32(rnd.IntN(30)+1), 1) // any method, any depth
			if len(st) > 0 {
				stacks[tid] = st[:len(st)-1]
			}
		case r < 92 && len(st) > 0:
			exc := int32(rnd.IntN(3) + 1)
			if rnd.IntN(4) > 0 {
				g.Throw(tid, st[len(st)-1], exc, uint16(r))
			}
			for k := rnd.IntN(len(st)) + 1; k > 0 && len(st) > 0; k-- {
				g.Bubble(tid, st[len(st)-1], exc)
				st = st[:len(st)-1]
			}
			stacks[tid] = st
		case r < 93:
			g.Marker("k", "v")
		case r < 94:
			bufs = append(bufs, g.Take())
			breaks[len(bufs)-1] = append(breaks[len(bufs)-1], g.Seq)
			for i := range stacks {
				stacks[i] = nil
			}
		}
		if g.Len() > 8<<10 {
			bufs = append(bufs, g.Take())
		}
	}
	return append(bufs, g.Take()), breaks
}

// countProc counts the messages it is given.
type countProc struct{ n int }

func (p *countProc) Message(*bytefrog.Msg) { p.n++ }
func (p *countProc) DataBreak(int32)       {}
func (p *countProc) Finish(*Report)        {}

// TestEventsMatchModel: on random traffic, the core's checks and call
// timing, on their fast path or all the general way, find what two
// separate stacks per thread find.
func TestEventsMatchModel(t *testing.T) {
	var deep, paths int
	for seed := range uint64(12) {
		flavor := bytefrog.FlavorBytefrog
		if seed%3 == 2 {
			flavor = bytefrog.FlavorCodePulse
		}
		d := bytefrog.Dialect{Version: bytefrog.Version1, Flavor: flavor}
		bufs, breaks := eventsTraffic(seed, flavor)

		// The model, fed the messages in order.
		var ref refModel
		var st stats
		var m bytefrog.Msg
		br := map[int32]bool{}
		for _, b := range breaks {
			for _, s := range b {
				br[s] = true
			}
		}
		for _, b := range bufs {
			for len(b) > 0 {
				n, err := d.Parse(&m, b)
				if err != nil {
					t.Fatal(err)
				}
				b = b[n:]
				if !m.Type.Sequenced() {
					st.mapping(&m)
					continue
				}
				if br[m.Seq] {
					ref.calls.dataBreak()
					ref.disc.dataBreak()
				}
				ref.disc.event(&m)
				ref.calls.event(&m)
			}
		}
		var want Report
		if ref.disc.deep > 0 {
			deep++
		}
		want.StackFaults, want.UnmatchedExits, want.DeepStacks = ref.disc.faults, ref.disc.unmatched, ref.disc.deep
		ref.calls.fill(&want, &st, 1000)
		paths += len(want.BubblePaths)

		for _, slow := range []bool{false, true} {
			cp := &countProc{}
			c := newCore(testCoreConfig(d), []Processor{cp}, nil)
			c.cc.topN = 1000
			if slow {
				// A mode window keeps every event off the fast path; with
				// Start never sent, no event is found inside it.
				c.disc.windows = []window{{cmd: bytefrog.MsgSuspend, start: 1 << 40, end: -1}}
			}
			c.handle(&unit{kind: RecordOpen, conn: 1})
			p := newChunkParser(d, 1)
			for i, b := range bufs {
				p.feed(b, func(u *unit) {
					u.conn = 1
					c.handle(u)
				})
				for _, s := range breaks[i] {
					c.handle(&unit{kind: RecordRecv, conn: controlConn, raw: bytefrog.AppendDataBreak(nil, s)})
				}
			}
			p.close()
			c.handle(&unit{kind: RecordRecv, conn: controlConn, raw: bytefrog.AppendHeartbeat(nil, bytefrog.ModeShutdown, 0)})
			c.handle(&unit{kind: RecordClose, conn: controlConn})
			c.handle(&unit{kind: RecordClose, conn: 1})
			got := c.finish()
			if got.GapCount != 0 || got.Sequenced == 0 || int64(cp.n) < got.Sequenced {
				t.Fatalf("seed %d: %d events, %d gaps, %d messages to the processor", seed, got.Sequenced, got.GapCount, cp.n)
			}
			if got.StackFaults != want.StackFaults || got.UnmatchedExits != want.UnmatchedExits || got.DeepStacks != want.DeepStacks {
				t.Errorf("seed %d slow %v: faults %d, unmatched %d, deep %d; want %d, %d, %d", seed, slow,
					got.StackFaults, got.UnmatchedExits, got.DeepStacks, want.StackFaults, want.UnmatchedExits, want.DeepStacks)
			}
			self := func(ts []MethodTime) []MethodTime {
				out := slices.Clone(ts)
				for i := range out {
					out[i].Calls = 0 // the model counts no calls
				}
				return out
			}
			if g, w := self(got.TopByTime), self(want.TopByTime); !reflect.DeepEqual(g, w) {
				t.Errorf("seed %d slow %v: self times\n%v\nwant\n%v", seed, slow, g, w)
			}
			if !slices.EqualFunc(got.BubblePaths, want.BubblePaths, func(a, b BubblePath) bool { return a.Path() == b.Path() }) {
				t.Errorf("seed %d slow %v: paths %v; want %v", seed, slow, got.BubblePaths, want.BubblePaths)
			}
			if want.StackFaults == 0 || want.UnmatchedExits == 0 || len(want.TopByTime) == 0 {
				t.Errorf("seed %d: the traffic lacks faults, unmatched exits or timed calls: %+v", seed, want)
			}
		}
	}
	if deep == 0 || paths == 0 {
		t.Errorf("%d runs with a deep stack, %d bubble paths; want some of each", deep, paths)
	}
}

// TestUnnamedThreadLeavesFastPath: entries and exits of a thread whose name
// is not mapped yet count as unmapped uses, one each, however many of its
// events the fast path would take; once the name is mapped they no longer
// do, and the thread's calls are timed. A Code Pulse run names no thread.
func TestUnnamedThreadLeavesFastPath(t *testing.T) {
	for _, flavor := range []bytefrog.Flavor{bytefrog.FlavorBytefrog, bytefrog.FlavorCodePulse} {
		d := bytefrog.Dialect{Version: bytefrog.Version1, Flavor: flavor}
		var b []byte
		seq := int32(0)
		call := func(tid uint16, m int32, t0, t1 int32) {
			b = bytefrog.AppendMethodEntry(b, t0, seq, m, tid)
			if flavor == bytefrog.FlavorCodePulse {
				b = bytefrog.AppendMethodExitCodePulse(b, t1, seq+1, m, false, tid)
			} else {
				b = bytefrog.AppendMethodExit(b, t1, seq+1, m, 0, tid)
			}
			seq += 2
		}
		b = bytefrog.AppendMapMethodSignature(b, 1, "a/A.m;1;()V")
		if flavor == bytefrog.FlavorBytefrog {
			b = bytefrog.AppendMapThreadName(b, 1, 0, "main")
		}
		for range 10 {
			call(1, 1, 0, 1)
		}
		for range 3 {
			call(9, 1, 0, 5) // thread 9 is not named yet
		}
		// Unsequenced messages take effect on arrival: the name comes in
		// a later read than the events before it.
		b1 := b
		b = nil
		if flavor == bytefrog.FlavorBytefrog {
			b = bytefrog.AppendMapThreadName(b, 9, 0, "worker")
		}
		for range 4 {
			call(9, 1, 10, 17)
		}
		c := newCore(testCoreConfig(d), nil, nil)
		c.handle(&unit{kind: RecordOpen, conn: 1})
		p := newChunkParser(d, 1)
		for _, b := range [][]byte{b1, b} {
			p.feed(b, func(u *unit) {
				u.conn = 1
				c.handle(u)
			})
		}
		p.close()
		rep := c.finish()
		var want []UnmappedID
		if flavor == bytefrog.FlavorBytefrog {
			want = []UnmappedID{{Kind: IDThread, ID: 9, Count: 6, FirstSeq: 20}}
		}
		if rep.Sequenced != int64(seq) || !reflect.DeepEqual(rep.Unmapped, want) {
			t.Errorf("%v: %d events, unmapped %+v; want %d, %+v", flavor, rep.Sequenced, rep.Unmapped, seq, want)
		}
		if len(rep.TopByTime) != 1 || rep.TopByTime[0].SelfMs != 10+3*5+4*7 || rep.TopByTime[0].Calls != 17 {
			t.Errorf("%v: top by time %+v; want method 1, %d ms, 17 calls", flavor, rep.TopByTime, 10+3*5+4*7)
		}
	}
}
