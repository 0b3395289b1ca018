package hq

import (
	"fmt"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// ModeSlack is how far, in ms, an event's timestamp may reach into a window
// in which the agent had taken HQ's order not to collect before it is a
// finding. A window opens when the agent's heartbeat reports the mode it
// took (Suspended, Paused, ShuttingDown) and closes when HQ sends Unsuspend
// or Unpause; the agent's clock starts when Start arrives, so the slack
// covers Start's delay on the way.
const ModeSlack = 50

// maxStackDepth bounds the call stack kept per thread; deeper calls are
// counted, not kept, and the thread's stack is checked again from its next
// data break.
const maxStackDepth = 1 << 16

// window is a span of HQ time (ms since the run began) in which the agent
// had taken an order not to collect; end < 0 while it is open.
type window struct {
	cmd        bytefrog.MsgType // Suspend, Pause or Stop
	start, end int64
}

// discipline checks what HQ can see in each released event besides its
// number: that each thread's calls nest (an exit or bubble leaves the method
// last entered on its thread, a throw happens in it), and that no event is
// stamped inside a window in which HQ had told the agent not to collect.
// A data break drops the stacks: what came before it no longer counts. The
// stacks are the threads' calls (calls.go), which the call timing shares;
// events.go checks each event against them.
type discipline struct {
	startAt int64 // HQ time Start was sent; -1 until then
	windows []window
	open    int              // index of the open window, -1 when none
	pending bytefrog.MsgType // Suspend, Pause or Stop sent, not yet taken; 0 when none
	// listed counts the faults of each check listed as warnings.
	listed struct{ stack, window int }
}

func newDiscipline() discipline { return discipline{startAt: -1, open: -1} }

// sent notes a command HQ sent at t (ms since the run began).
func (d *discipline) sent(t bytefrog.MsgType, at int64) {
	switch t {
	case bytefrog.MsgStart:
		if d.startAt < 0 {
			d.startAt = at
		}
	case bytefrog.MsgSuspend, bytefrog.MsgPause, bytefrog.MsgStop:
		if d.open < 0 && d.pending == 0 {
			d.pending = t // nested (pause while suspended): the outer order holds
		}
	case bytefrog.MsgUnsuspend, bytefrog.MsgUnpause:
		undoes := func(cmd bytefrog.MsgType) bool { return (t == bytefrog.MsgUnsuspend) == (cmd == bytefrog.MsgSuspend) }
		if d.pending != 0 && undoes(d.pending) {
			d.pending = 0
		}
		if d.open >= 0 && undoes(d.windows[d.open].cmd) {
			d.windows[d.open].end = at
			d.open = -1
		}
	}
}

// modeOf is the mode an agent reports once it has taken a command.
var modeOf = map[bytefrog.MsgType]bytefrog.Mode{
	bytefrog.MsgSuspend: bytefrog.ModeSuspended, bytefrog.MsgPause: bytefrog.ModePaused, bytefrog.MsgStop: bytefrog.ModeShutdown,
}

// heartbeat notes the mode an agent reported at t: the window of a pending
// command opens when the agent says it took it.
func (d *discipline) heartbeat(m bytefrog.Mode, at int64) {
	if d.pending == 0 || modeOf[d.pending] != m || len(d.windows) >= maxListed {
		return
	}
	d.open = len(d.windows)
	d.windows = append(d.windows, window{cmd: d.pending, start: at, end: -1})
	d.pending = 0
}

// timed checks an event's timestamp against the windows HQ drove.
func (d *discipline) timed(m *bytefrog.Msg, r *Report) {
	if d.startAt < 0 {
		return
	}
	at := d.startAt + int64(m.RelTime) // on HQ's clock
	for i := len(d.windows) - 1; i >= 0; i-- {
		w := d.windows[i]
		if at <= w.start+ModeSlack {
			continue
		}
		if w.end >= 0 && at >= w.end-ModeSlack {
			return // windows are in time order: later ones start after this one ends
		}
		d.finding(r, &r.InWindow, &d.listed.window, fmt.Sprintf("seq %d thread %d: %s stamped %d ms, inside %s (%d–%s ms)",
			m.Seq, m.ThreadID, m.Type, at, w.cmd, w.start, windowEnd(w.end)))
		return
	}
}

func windowEnd(end int64) string {
	if end < 0 {
		return "…"
	}
	return fmt.Sprint(end)
}

// finding counts one fault and keeps the first few as warnings.
func (d *discipline) finding(r *Report, n *int64, listed *int, what string) {
	*n++
	if *listed < maxFindingsListed {
		*listed++
		r.warn(what)
	}
}

// maxFindingsListed is how many faults of each discipline check are listed
// as warnings; all are counted.
const maxFindingsListed = 10
