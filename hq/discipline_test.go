package hq

import (
	"strings"
	"testing"

	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// disciplineRun feeds a core one data connection's events, after the
// commands HQ sent (type and time in ms), and returns its report.
type disciplineRun struct {
	t *testing.T
	c *core
	p *chunkParser
	g *hqtest.Gen
}

func newDisciplineRun(t *testing.T, lenient bool) *disciplineRun {
	d := bytefrog.Dialect{Version: bytefrog.Version1}
	cc := testCoreConfig(d)
	cc.lenient = lenient
	r := &disciplineRun{t: t, c: newCore(cc, nil, nil), p: newChunkParser(d, 1), g: hqtest.NewGen(bytefrog.FlavorBytefrog)}
	t.Cleanup(r.p.close)
	r.c.handle(&unit{kind: RecordOpen, conn: 1})
	return r
}

func (r *disciplineRun) sent(t bytefrog.MsgType, at uint32) {
	r.c.handle(&unit{kind: RecordSent, t: at, raw: bytefrog.AppendCommand(nil, t)})
}

func (r *disciplineRun) control(at uint32, raw []byte) {
	r.c.handle(&unit{kind: RecordRecv, conn: controlConn, t: at, raw: raw})
}

// flush sends what the generator holds on the data connection.
func (r *disciplineRun) flush() {
	r.p.feed(r.g.Take(), func(u *unit) {
		u.conn = 1
		r.c.handle(u)
	})
}

func (r *disciplineRun) finish() *Report {
	r.flush()
	r.control(r.c.t, bytefrog.AppendHeartbeat(nil, bytefrog.ModeShutdown, 0))
	r.c.handle(&unit{kind: RecordClose, conn: controlConn})
	r.c.handle(&unit{kind: RecordClose, conn: 1})
	return r.c.finish()
}

// TestCallNesting: exits, bubbles and throws must be of the innermost call
// on their thread; exits of calls entered before tracing or before a data
// break are counted, not faults.
func TestCallNesting(t *testing.T) {
	const a, b, c = 1, 2, 3
	for _, tc := range []struct {
		name        string
		events      func(g *hqtest.Gen, r *disciplineRun)
		faults      int64
		unmatched   int64
		wantWarning string
	}{
		{name: "nested", events: func(g *hqtest.Gen, r *disciplineRun) {
			g.Entry(1, a)
			g.Entry(2, a) // another thread, its own stack
			g.Entry(1, b)
			g.Throw(1, b, 7, 10)
			g.Bubble(1, b, 7)
			g.Entry(1, c)
			g.Exit(2, a, 3)
			g.Exit(1, c, 4)
			g.Exit(1, a, 5)
		}},
		{name: "exit of an outer call", faults: 1, wantWarning: "MethodExit of method 1 while method 2", events: func(g *hqtest.Gen, r *disciplineRun) {
			g.Entry(1, a)
			g.Entry(1, b)
			g.Exit(1, a, 5)
		}},
		{name: "bubble of another call", faults: 1, events: func(g *hqtest.Gen, r *disciplineRun) {
			g.Entry(1, a)
			g.Bubble(1, b, 7)
		}},
		{name: "throw outside the innermost call", faults: 1, wantWarning: "exception thrown in method 1", events: func(g *hqtest.Gen, r *disciplineRun) {
			g.Entry(1, a)
			g.Entry(1, b)
			g.Throw(1, a, 7, 3)
			g.Exit(1, b, 4)
			g.Exit(1, a, 5)
		}},
		{name: "calls entered before tracing", unmatched: 2, events: func(g *hqtest.Gen, r *disciplineRun) {
			g.Exit(1, c, 1)
			g.Entry(1, a)
			g.Exit(1, a, 2)
			g.Bubble(1, b, 7)
		}},
		{name: "a data break forgets the stacks", unmatched: 1, events: func(g *hqtest.Gen, r *disciplineRun) {
			g.Entry(1, a)
			g.Entry(1, b)
			r.flush()
			r.control(0, bytefrog.AppendDataBreak(nil, g.Seq))
			g.Exit(1, a, 3)
			g.Entry(1, c)
			g.Exit(1, c, 4)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, lenient := range []bool{false, true} {
				r := newDisciplineRun(t, lenient)
				tc.events(r.g, r)
				rep := r.finish()
				if rep.StackFaults != tc.faults || rep.UnmatchedExits != tc.unmatched {
					t.Errorf("lenient=%v: %d stack fault(s), %d unmatched exit(s); want %d, %d (%v)",
						lenient, rep.StackFaults, rep.UnmatchedExits, tc.faults, tc.unmatched, rep.Warnings)
				}
				if wantOK := tc.faults == 0 || lenient; rep.OK != wantOK {
					t.Errorf("lenient=%v: OK %v (%s); want %v", lenient, rep.OK, rep.Reason, wantOK)
				}
				if tc.wantWarning != "" && !strings.Contains(strings.Join(rep.Warnings, "\n"), tc.wantWarning) {
					t.Errorf("warnings %q; want one with %q", rep.Warnings, tc.wantWarning)
				}
				if tc.faults > 0 && !strings.Contains(rep.Checks(), "out of call nesting") {
					t.Errorf("Checks() = %q; want the nesting faults named", rep.Checks())
				}
			}
		})
	}
}

// TestModeWindows: an event stamped more than ModeSlack ms after the agent
// reported that it took Suspend, Pause or Stop, and before HQ sent
// Unsuspend or Unpause, is a finding; the agent's clock starts when HQ sends
// Start.
func TestModeWindows(t *testing.T) {
	const start = 100 // HQ time Start was sent
	for _, tc := range []struct {
		name   string
		cmds   []bytefrog.MsgType
		at     []uint32 // HQ times of cmds
		stamps []int32  // events' RelTime, on the agent's clock
		faults int64
		ack    uint32 // how long after each order the agent reports taking it
		noAck  bool   // the agent never reports it
	}{
		{name: "a suspend taken late", cmds: []bytefrog.MsgType{bytefrog.MsgSuspend, bytefrog.MsgUnsuspend},
			at: []uint32{1000, 2000}, ack: 300, stamps: []int32{1100, 1200 + ModeSlack, 1201 + ModeSlack}, faults: 1},
		{name: "a suspend never taken", cmds: []bytefrog.MsgType{bytefrog.MsgSuspend, bytefrog.MsgUnsuspend},
			at: []uint32{1000, 2000}, noAck: true, stamps: []int32{1500}},
		{name: "before and after a suspend", cmds: []bytefrog.MsgType{bytefrog.MsgSuspend, bytefrog.MsgUnsuspend},
			at: []uint32{1000, 2000}, stamps: []int32{0, 900, 900 + ModeSlack, 1900 - ModeSlack, 1950, 5000}},
		{name: "inside a suspend", cmds: []bytefrog.MsgType{bytefrog.MsgSuspend, bytefrog.MsgUnsuspend},
			at: []uint32{1000, 2000}, stamps: []int32{500, 900 + ModeSlack + 1, 1400, 1900 - ModeSlack - 1, 2500}, faults: 3},
		{name: "inside a pause", cmds: []bytefrog.MsgType{bytefrog.MsgPause, bytefrog.MsgUnpause},
			at: []uint32{1000, 2000}, stamps: []int32{1400}, faults: 1},
		{name: "a second window", cmds: []bytefrog.MsgType{bytefrog.MsgPause, bytefrog.MsgUnpause, bytefrog.MsgSuspend, bytefrog.MsgUnsuspend},
			at: []uint32{1000, 2000, 3000, 4000}, stamps: []int32{1400, 2500, 3400, 4500}, faults: 2},
		{name: "a suspend still open", cmds: []bytefrog.MsgType{bytefrog.MsgSuspend},
			at: []uint32{1000}, stamps: []int32{800, 4000}, faults: 1},
		{name: "after stop", cmds: []bytefrog.MsgType{bytefrog.MsgStop},
			at: []uint32{3000}, stamps: []int32{2900 + ModeSlack, 2900 + ModeSlack + 1}, faults: 1},
		{name: "pause inside a suspend", cmds: []bytefrog.MsgType{bytefrog.MsgSuspend, bytefrog.MsgPause, bytefrog.MsgUnpause, bytefrog.MsgUnsuspend},
			at: []uint32{1000, 1200, 1400, 2000}, stamps: []int32{1500, 2000}, faults: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newDisciplineRun(t, false)
			r.sent(bytefrog.MsgStart, start)
			for i, cmd := range tc.cmds {
				r.sent(cmd, tc.at[i])
				if m, ok := modeOf[cmd]; ok && !tc.noAck {
					r.control(tc.at[i]+tc.ack, bytefrog.AppendHeartbeat(nil, m, 0))
				}
			}
			for _, at := range tc.stamps {
				r.g.RelTime = at
				r.g.Marker("k", "v")
				r.g.Entry(1, 1)
				r.g.Exit(1, 1, 2)
			}
			rep := r.finish()
			if want := 3 * tc.faults; rep.InWindow != want { // a marker, an entry, an exit
				t.Errorf("%d event(s) in a window; want %d (%v)", rep.InWindow, want, rep.Warnings)
			}
			if rep.OK != (tc.faults == 0) {
				t.Errorf("OK %v (%s); want %v", rep.OK, rep.Reason, tc.faults == 0)
			}
		})
	}
}

// TestLateHeartbeats counts heartbeats that follow the previous one by more
// than 1.5 intervals (1000 ms here); the first one is not timed.
func TestLateHeartbeats(t *testing.T) {
	r := newDisciplineRun(t, false)
	for _, at := range []uint32{4000, 5000, 6500, 8001, 9000, 12000} {
		r.control(at, bytefrog.AppendHeartbeat(nil, bytefrog.ModeTracing, 0))
	}
	rep := r.finish()
	if rep.LateHeartbeats != 2 {
		t.Errorf("%d late heartbeat(s); want 2 (8001 after 6500, 12000 after 9000)", rep.LateHeartbeats)
	}
	if !rep.OK || !strings.Contains(rep.Checks(), "2 heartbeat(s) late") {
		t.Errorf("OK %v (%s), checks %q; want OK with the late heartbeats named", rep.OK, rep.Reason, rep.Checks())
	}
}
