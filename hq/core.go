package hq

import (
	"fmt"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// coreConfig is what a core needs to know; a trace file's header carries
// the same, so that Replay decides as the live run did.
type coreConfig struct {
	dialect         bytefrog.Dialect
	maxHeldEvents   int
	maxHeldBytes    int64
	maxMappingBytes int64
	topN            int
	hbInterval      int32 // ms, as configured for the agent
	lenient         bool  // unmapped and re-mapped ids are warnings, not failures
}

// hooks connect a core to its live connections; Replay runs a core without
// them.
type hooks interface {
	// send writes bytes HQ has recorded as sent on the control connection.
	send(raw []byte)
	// autoStop marks Stop as sent, reporting false if it already was.
	autoStop() bool
	// heartbeat publishes the agent's reported mode and buffer count.
	heartbeat(mode bytefrog.Mode, buffers uint16)
	// fail tears the run down: the Error message in raw goes to the agent
	// and every connection closes.
	fail(reason string, raw []byte)
	// note logs a remark about the run.
	note(msg string)
}

// controlAllowed lists what the agent may send on the control connection
// after Hello: "only ids 8, 9, 40, 41, 42 and 99".
var controlAllowed = [256]bool{
	bytefrog.MsgHeartbeat: true, bytefrog.MsgDataBreak: true, bytefrog.MsgClassTransformed: true,
	bytefrog.MsgClassIgnored: true, bytefrog.MsgClassTransformFailed: true, bytefrog.MsgError: true,
}

// core is the single goroutine's worth of state of one run: it takes units
// (chunks received, commands sent, connections opened and closed) in one
// order, routes and checks messages, reorders events and builds the Report.
// Replay drives a core with the recorded units and gets the same Report.
type core struct {
	cc    coreConfig
	procs []Processor
	live  hooks       // nil when replaying
	rec   func(*unit) // records a unit; nil when no trace is written

	evs  []Processor      // procs that take events one Message at a time
	blks []BlockProcessor // procs that take events by Block

	m bytefrog.Msg
	v bytefrog.EventView // reads released events and routed messages
	// onUnmapped is c.firstUnmapped, made once rather than per event.
	onUnmapped onUnmapped
	st         stats
	rep        Report
	disc       discipline
	call       calls // threads' calls: nesting, self time, bubble paths (calls.go)
	// exitSize and exitTID are the size of a MethodExit and its thread
	// id's offset, in the run's flavour.
	exitSize, exitTID int
	recBuf            [maxFixed]byte // a record's Bytefrog bytes (colcore.go)

	// control connection
	ctlBuf    []byte // bytes of an incomplete control message
	ctlClosed bool
	sawX      bool // an 'X' heartbeat arrived
	stopSent  bool
	lastHB    uint32 // time of the last heartbeat (ms)

	srcs     []*source // by connection index; [0] is unused (control)
	openData int

	reorder

	t        uint32 // time of the latest unit
	failed   bool
	finished bool
	notes    int // remarks logged, to bound the log
}

func newCore(cc coreConfig, procs []Processor, live hooks) *core {
	c := &core{cc: cc, procs: flatten(procs), live: live, srcs: []*source{nil}, disc: newDiscipline()}
	c.st.maxMappingBytes = cc.maxMappingBytes
	c.st.checkThreads = cc.dialect.Flavor == bytefrog.FlavorBytefrog
	c.call.anyThread = !c.st.checkThreads
	c.reorder.c = c
	for _, p := range c.procs {
		if b, ok := p.(BlockProcessor); ok {
			c.blks = append(c.blks, b)
		} else {
			c.evs = append(c.evs, p)
		}
	}
	c.v.Init(nil, cc.dialect)
	c.exitSize, c.exitTID = bytefrog.MethodExitSize, offTIDExit
	if cc.dialect.Flavor == bytefrog.FlavorCodePulse {
		c.exitSize, c.exitTID = bytefrog.MethodExitCodePulseSize, offTIDCP
	}
	c.onUnmapped = c.firstUnmapped
	return c
}

// handle takes one unit. The core keeps the slab reference meant for it;
// the trace writer gets the unit (and its own reference) first.
func (c *core) handle(u *unit) {
	if c.finished || (c.failed && u.kind != RecordSent) {
		c.drop(u)
		if c.rec != nil && u.s != nil {
			u.s.unref() // the trace writer's reference: it will not get the unit
		}
		return
	}
	if c.rec != nil {
		c.rec(u)
	}
	c.t = u.t
	switch u.kind {
	case RecordRecv:
		if u.wireSet {
			c.rep.Bytes += u.wire
		} else {
			c.rep.Bytes += int64(len(u.raw))
		}
		if u.conn == controlConn {
			c.control(u.raw)
		} else {
			c.data(u)
		}
	case RecordSent:
		c.sent(u)
		if c.live != nil && !c.failed {
			c.live.send(u.raw)
		}
	case RecordOpen:
		c.open(u.conn)
	case RecordClose:
		c.closed(u)
	case RecordNote:
		c.rep.warn(string(u.raw))
	}
}

// drop releases the core's slab reference of a unit it does not take.
func (c *core) drop(u *unit) {
	if u.s != nil {
		u.s.unref()
	}
}

// note records a remark in the report and, live, in the log (bounded).
func (c *core) note(msg string) {
	c.rep.warn(msg)
	if c.live != nil && c.notes < maxWarnings {
		c.notes++
		c.live.note(msg)
	}
}

// fail ends the run with reason: the agent gets Error(reason).
func (c *core) fail(reason string) {
	if c.failed || c.finished {
		return
	}
	c.failed = true
	c.rep.Reason = reason
	if c.live == nil {
		return
	}
	raw := bytefrog.AppendError(nil, reason)
	u := unit{kind: RecordSent, t: c.t, raw: raw}
	if c.rec != nil {
		c.rec(&u)
	}
	c.sent(&u)
	c.live.fail(reason, raw)
}

// control parses bytes from the control connection.
func (c *core) control(raw []byte) {
	b := append(c.ctlBuf, raw...)
	off := 0
	for off < len(b) && !c.failed {
		t := b[off]
		if !controlAllowed[t] {
			c.fail(fmt.Sprintf("Bad control message: %v (type id %d)", bytefrog.MsgType(t), t))
			return
		}
		n, err := c.cc.dialect.Parse(&c.m, b[off:])
		if err == bytefrog.ErrShort {
			break
		}
		if err != nil {
			c.fail(fmt.Sprintf("Bad control message: %v", err))
			return
		}
		off += n
		c.controlMsg(&c.m)
	}
	c.ctlBuf = append(b[:0], b[off:]...)
}

func (c *core) controlMsg(m *bytefrog.Msg) {
	c.st.counts[m.Type]++
	switch m.Type {
	case bytefrog.MsgHeartbeat:
		if !m.Mode.Valid() {
			c.fail(fmt.Sprintf("unknown heartbeat mode 0x%02x", uint8(m.Mode)))
			return
		}
		c.heartbeat(m)
	case bytefrog.MsgDataBreak:
		c.dataBreak(m.Seq)
	case bytefrog.MsgError:
		c.fail("agent error: " + bytefrog.String(m.Text))
		return
	default:
		c.st.class(m)
	}
	for _, p := range c.procs {
		p.Message(m)
	}
}

func (c *core) heartbeat(m *bytefrog.Msg) {
	c.rep.Heartbeats++
	c.rep.LastMode = m.Mode
	gap := c.t - c.lastHB
	c.lastHB = c.t
	if d := time.Duration(gap) * time.Millisecond; d > c.rep.MaxHeartbeatGap {
		c.rep.MaxHeartbeatGap = d
	}
	// A heartbeat is late when it follows the one before by more than 1.5
	// intervals; the first one is timed by the agent's start, not its timer.
	if c.rep.Heartbeats > 1 && c.cc.hbInterval > 0 && int64(gap)*2 > 3*int64(c.cc.hbInterval) {
		c.rep.LateHeartbeats++
	}
	if int64(gap) > unhealthyIntervals*int64(c.cc.hbInterval) {
		c.rep.UnhealthyEpisodes++
	}
	c.disc.heartbeat(m.Mode, int64(c.t))
	if c.live != nil {
		c.live.heartbeat(m.Mode, m.Buffers)
	}
	if m.Mode != bytefrog.ModeShutdown || c.sawX {
		return
	}
	// "The first 'X' moves the trace to ShuttingDown, and HQ sends Stop."
	c.sawX = true
	if c.live == nil {
		c.stopSent = true // the recorded Stop follows
		return
	}
	if c.live.autoStop() {
		raw := bytefrog.AppendCommand(nil, bytefrog.MsgStop)
		u := unit{kind: RecordSent, t: c.t, raw: raw}
		if c.rec != nil {
			c.rec(&u)
		}
		c.sent(&u)
		c.live.send(raw)
	}
}

// sent notes a message HQ sent (one per unit).
func (c *core) sent(u *unit) {
	if len(u.raw) == 0 {
		return
	}
	t := bytefrog.MsgType(u.raw[0])
	if t == bytefrog.MsgStop {
		c.stopSent = true
	}
	c.disc.sent(t, int64(u.t))
	if len(c.rep.Commands) < maxListed {
		c.rep.Commands = append(c.rep.Commands, Command{Type: t, At: time.Duration(u.t) * time.Millisecond})
	}
}

func (c *core) open(conn uint16) {
	if conn == controlConn || int(conn) > MaxDataConnsLimit {
		c.note(fmt.Sprintf("record for a data connection with index %d ignored", conn))
		return
	}
	for len(c.srcs) <= int(conn) {
		c.srcs = append(c.srcs, nil)
	}
	if c.srcs[conn] != nil {
		c.note(fmt.Sprintf("data connection %d opened twice", conn))
		return
	}
	c.srcs[conn] = &source{conn: conn, open: true}
	c.openData++
	c.rep.DataConns++
}

func (c *core) closed(u *unit) {
	cause := ""
	if len(u.raw) > 0 {
		cause = " (" + string(u.raw) + ")"
	}
	if u.conn == controlConn {
		if c.ctlClosed {
			return
		}
		c.ctlClosed = true
		// "EOF or connection reset → fatal, unless the trace is already
		// shutting down: an 'X' was received or HQ sent Stop."
		if !c.sawX && !c.stopSent {
			c.fail("control connection closed before the shutdown heartbeat ('X')" + cause)
			return
		}
		if len(c.ctlBuf) > 0 {
			c.note(fmt.Sprintf("control connection ended inside a %v message (%d bytes)",
				bytefrog.MsgType(c.ctlBuf[0]), len(c.ctlBuf)))
		}
		return
	}
	src := c.source(u.conn)
	if src == nil || !src.open {
		return
	}
	src.open = false
	c.openData--
	if u.pending > 0 {
		c.fail(fmt.Sprintf("data connection %d ended inside a message (%d bytes)%s", u.conn, u.pending, cause))
		return
	}
	if cause != "" {
		c.note(fmt.Sprintf("data connection %d ended with an error%s", u.conn, cause))
	}
}

func (c *core) source(conn uint16) *source {
	if int(conn) < len(c.srcs) {
		return c.srcs[conn]
	}
	return nil
}

// data takes a parsed chunk of a data connection.
func (c *core) data(u *unit) {
	src := c.source(u.conn)
	if src == nil || !src.open {
		c.note(fmt.Sprintf("data for connection %d, which is not open, ignored", u.conn))
		c.drop(u)
		return
	}
	for _, off := range u.un {
		c.route(u.conn, u.s.raw[off:])
		if c.failed {
			c.drop(u)
			return
		}
	}
	if u.perr != nil {
		c.drop(u)
		c.fail(fmt.Sprintf("data connection %d: %v", u.conn, u.perr))
		return
	}
	if len(u.ev) == 0 {
		c.drop(u)
	} else {
		c.enqueue(src, u.s, u.ev)
	}
	c.advance()
	switch {
	case c.held > c.cc.maxHeldEvents:
		// (Not the buffers: a run reads into larger ones than its replay
		// decodes into, and both must give the same reason.)
		c.fail(fmt.Sprintf("gap at seq %d: waited for it while holding %d events", c.next, c.held))
	case c.heldBytes > c.cc.maxHeldBytes:
		c.fail(fmt.Sprintf("gap at seq %d: waited for it while holding %d events (%d MiB of buffers)",
			c.next, c.held, c.heldBytes>>20))
	}
}

// route handles an unsequenced data message on arrival.
func (c *core) route(conn uint16, raw []byte) {
	m := &c.m
	if !c.v.Load(m, raw) { // cannot happen: the parser framed it
		c.fail(fmt.Sprintf("data connection %d: %v message does not parse again", conn, bytefrog.MsgType(raw[0])))
		return
	}
	if m.Type == bytefrog.MsgError {
		c.st.counts[m.Type]++
		c.fail(fmt.Sprintf("agent error on data connection %d: %s", conn, bytefrog.String(m.Text)))
		return
	}
	err := c.st.mapping(m)
	if m.Type == bytefrog.MsgMapThreadName {
		c.call.name(m.ThreadID) // as st.threads has it
	}
	if err != nil {
		c.fail(err.Error())
		return
	}
	for _, p := range c.procs {
		p.Message(m)
	}
}

// block hands events just released, in order, to the block processors.
func (c *core) block(s *slab, ev []event) {
	for _, p := range c.blks {
		p.Events(Block{s: s, ev: ev})
	}
}

func (c *core) firstUnmapped(kind IDKind, id int64, seq int32) {
	if c.live != nil && c.notes < maxWarnings {
		c.notes++
		c.live.note(fmt.Sprintf("%s id %d used before its mapping (seq %d)", kind, id, seq))
	}
}

// done reports whether the run has reached its normal end: the control
// connection and every data connection are closed.
func (c *core) done() bool { return c.ctlClosed && c.openData == 0 }

// finish releases everything held, delivers the remaining data breaks and
// completes the report; it is called once, when the run has ended.
func (c *core) finish() *Report {
	if c.finished {
		return &c.rep
	}
	c.drainAll()
	for _, b := range c.breaks {
		c.deliverBreak(b)
	}
	c.breaks = c.breaks[:0]
	c.finished = true
	r := &c.rep
	r.Version = c.cc.dialect.Version
	r.Flavor = c.cc.dialect.Flavor
	c.st.fill(r, c.cc.topN)
	c.call.fill(r, &c.st, c.cc.topN)
	for _, src := range c.srcs {
		if src != nil && src.backwards > 0 {
			r.warn(fmt.Sprintf("data connection %d: sequence numbers went backwards %d time(s)", src.conn, src.backwards))
		}
	}
	switch {
	case c.failed:
	case !c.ctlClosed:
		c.failed = true
		r.Reason = "the run ended before its control connection closed"
	case r.GapCount > 0:
		c.failed = true
		r.Reason = fmt.Sprintf("incomplete data: %d gap(s), %d events missing", r.GapCount, r.Missing)
	case r.DuplicateCount > 0:
		c.failed = true
		r.Reason = fmt.Sprintf("%d duplicate sequence number(s)", r.DuplicateCount)
	case c.cc.lenient:
	case len(r.Unmapped) > 0:
		// Bytefrog maps every id before the first event that uses it.
		c.failed = true
		r.Reason = fmt.Sprintf("%d id(s) used before their mapping", len(r.Unmapped))
	case r.Remapped > 0:
		// An id names one method, exception or thread for the whole run.
		c.failed = true
		r.Reason = fmt.Sprintf("%d id(s) mapped again to a different name", r.Remapped)
	case r.StackFaults > 0:
		// A thread's exits and bubbles leave its calls in the order they
		// were entered.
		c.failed = true
		r.Reason = fmt.Sprintf("%d event(s) break their thread's call nesting", r.StackFaults)
	case r.InWindow > 0:
		// "Upon receipt of this message, the agent shall stop collecting
		// trace data as quickly as it can." (suspend; pause and stop alike)
		c.failed = true
		r.Reason = fmt.Sprintf("%d event(s) stamped while HQ had told the agent not to collect", r.InWindow)
	}
	r.OK = !c.failed
	for _, p := range c.procs {
		p.Finish(r)
	}
	return r
}
