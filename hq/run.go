package hq

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// Queue sizes and timeouts of a run's connections.
const (
	runQueue      = 16              // units waiting for the core: up to 16 big slabs
	ctlQueue      = 64              // messages waiting for the control writer
	ctlReadSize   = 4 << 10         // control connection read buffer
	writeTimeout  = 5 * time.Second // per message HQ writes
	finalWriteMax = time.Second     // for the Error written when a run fails
)

// Run is one agent's trace, from its Hello to the end of its last
// connection. Its methods are safe for concurrent use.
type Run struct {
	srv       *Server
	cfg       *Config
	log       *slog.Logger
	id        uint8
	agent     string
	version   uint8
	projectID int32
	hasProj   bool
	start     time.Time
	dialect   bytefrog.Dialect
	ctl       net.Conn
	holders   int32 // slab references per data unit: core, plus the trace writer
	readSize  int   // bytes of the data connections' read buffers (slab.go)
	tw        *traceWriter

	in          chan unit     // to the core
	ctlIn       chan unit     // control traffic both ways: the core takes it before in
	ctlReadDone chan struct{} // closed when the control reader returns
	ctlOut      chan []byte   // to the control writer
	quit        chan struct{} // closed when the core is done: every goroutine stops
	abort       chan struct{} // closed to make the core fail the run
	done        chan struct{} // closed when the run has ended and its report is final
	wg          sync.WaitGroup
	cmdMu       sync.Mutex // orders commands: validate and enqueue as one step

	abortOnce   sync.Once
	abortReason string

	visible bool // set up and found by DataHello (guarded by srv.mu)

	events atomic.Int64 // sequenced events released
	bytes  atomic.Int64 // bytes received

	mu            sync.Mutex
	life          bytefrog.Lifecycle // as HQ's commands left the agent
	stopSent      bool
	ending        bool // no data connection is accepted any more
	registered    int  // data connections accepted
	dataConns     []net.Conn
	mode          bytefrog.Mode
	buffers       uint16
	lastHB        time.Time
	heartbeats    int64
	mismatchSince time.Time
	loggedHealth  Health
	modeCh        chan struct{} // closed and replaced when the mode changes
	report        *Report
	commands      []Command // sent so far, as the core recorded them
}

// ID returns the run id the agent uses in DataHello.
func (r *Run) ID() uint8 { return r.id }

// Agent returns the agent's address.
func (r *Run) Agent() string { return r.agent }

// Version returns the protocol version from Hello.
func (r *Run) Version() uint8 { return r.version }

// Start sends Start: the agent's program begins (needed when AutoStart is
// off).
func (r *Run) Start() error { return r.command(bytefrog.MsgStart) }

// Stop sends Stop: the agent ends tracing (its program keeps running).
func (r *Run) Stop() error { return r.command(bytefrog.MsgStop) }

// Pause sends Pause: the agent blocks its program until Unpause.
func (r *Run) Pause() error { return r.command(bytefrog.MsgPause) }

// Unpause sends Unpause.
func (r *Run) Unpause() error { return r.command(bytefrog.MsgUnpause) }

// Suspend sends Suspend: the agent stops collecting (and sends a DataBreak).
// Before Start it makes the agent start suspended.
func (r *Run) Suspend() error { return r.command(bytefrog.MsgSuspend) }

// Unsuspend sends Unsuspend. Before Start it cancels a Suspend.
func (r *Run) Unsuspend() error { return r.command(bytefrog.MsgUnsuspend) }

// StartedAt returns when the agent's Hello arrived.
func (r *Run) StartedAt() time.Time { return r.start }

// Mode returns the mode of the agent's last heartbeat (0 before the first).
func (r *Run) Mode() bytefrog.Mode {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mode
}

// Commands returns the commands HQ has sent to the agent so far, in order
// (the control log; the report's Commands once the run has ended).
func (r *Run) Commands() []Command {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.commands)
}

// Done returns a channel closed when the run has ended.
func (r *Run) Done() <-chan struct{} { return r.done }

// Report returns the run's report, or nil while it runs.
func (r *Run) Report() *Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.report
}

// Wait waits until the run has ended and returns its report.
func (r *Run) Wait(ctx context.Context) (*Report, error) {
	select {
	case <-r.done:
		return r.Report(), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// WaitMode waits until a heartbeat reports mode.
func (r *Run) WaitMode(ctx context.Context, mode bytefrog.Mode) error {
	for {
		r.mu.Lock()
		cur, ch := r.mode, r.modeCh
		r.mu.Unlock()
		if cur == mode {
			return nil
		}
		select {
		case <-ch:
		case <-r.quit:
			if r.Mode() == mode {
				return nil
			}
			return fmt.Errorf("%w: run %d never reported mode %v (last %v)", ErrRunEnded, r.id, mode, modeName(cur))
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// RunStats is a snapshot of a live run for status displays.
type RunStats struct {
	ID            uint8
	Agent         string
	Mode          bytefrog.Mode
	Buffers       uint16 // agent send buffers waiting, from the last heartbeat
	Health        Health
	Events        int64 // sequenced events released so far
	Bytes         int64 // bytes received so far
	DataConns     int
	Started       time.Time
	Heartbeats    int64
	LastHeartbeat time.Time
}

// Stats returns a snapshot of the run.
func (r *Run) Stats() RunStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, _ := r.healthLocked(r.cfg.Now())
	return RunStats{
		ID: r.id, Agent: r.agent, Mode: r.mode, Buffers: r.buffers, Health: h,
		Events: r.events.Load(), Bytes: r.bytes.Load(), DataConns: r.registered,
		Started: r.start, Heartbeats: r.heartbeats, LastHeartbeat: r.lastHB,
	}
}

// now returns the time since the run started, in ms, as records carry it.
func (r *Run) now() uint32 {
	return uint32(r.cfg.Now().Sub(r.start) / time.Millisecond)
}

// send queues a unit for the core unless the run is over.
func (r *Run) send(u unit) bool {
	select {
	case r.in <- u:
		return true
	case <-r.quit:
		return false
	}
}

// queueControl queues a unit of control traffic for the core unless the
// run is over: HQ's messages to the agent (configuration, commands) and
// the agent's on the control connection. The core takes these before the
// data units, so a command leaves, and a heartbeat is timed, when the core
// has finished its current unit, not after the data queued before them: a
// busy HQ still pauses and resumes agents on time, and does not take its
// own backlog for late heartbeats. Mode windows and data breaks stay
// right: they are placed by time and by sequence number, not by order.
func (r *Run) queueControl(u unit) bool {
	select {
	case r.ctlIn <- u:
		return true
	case <-r.quit:
		return false
	}
}

// command validates and queues a lifecycle command.
func (r *Run) command(t bytefrog.MsgType) error {
	r.cmdMu.Lock()
	defer r.cmdMu.Unlock()
	return r.commandLocked(t)
}

// commandLocked is command with r.cmdMu held.
func (r *Run) commandLocked(t bytefrog.MsgType) error {
	r.mu.Lock()
	err := r.transition(t)
	r.updateMismatch()
	r.mu.Unlock()
	if err != nil {
		return err
	}
	if !r.queueControl(unit{kind: RecordSent, t: r.now(), raw: bytefrog.AppendCommand(nil, t)}) {
		return fmt.Errorf("%w: run %d", ErrRunEnded, r.id)
	}
	return nil
}

// transition checks that the agent accepts command t in the state HQ's
// earlier commands put it in, and records the new state; r.mu must be held.
// HQ sends no command that would change nothing.
func (r *Run) transition(t bytefrog.MsgType) error {
	switch {
	case r.ending:
		return fmt.Errorf("%w: run %d", ErrRunEnded, r.id)
	case r.stopSent:
		return fmt.Errorf("%w: %v: run %d is stopping", ErrTransition, t, r.id)
	case t == bytefrog.MsgConfiguration:
		return fmt.Errorf("%w: %v is sent once, when the agent says Hello", ErrTransition, t)
	}
	if _, err := r.life.Apply(t); err != nil {
		return fmt.Errorf("%w: run %d: %w", ErrTransition, r.id, err)
	}
	if t == bytefrog.MsgStop {
		r.stopSent = true
	}
	return nil
}

// abortWith makes the core fail the run with reason.
func (r *Run) abortWith(reason string) {
	r.abortOnce.Do(func() {
		r.abortReason = reason
		close(r.abort)
	})
}

// hooks for the core.

func (r *Run) sendCtl(raw []byte) bool {
	select {
	case r.ctlOut <- raw:
		return true
	default:
		return false
	}
}

type runHooks struct{ r *Run }

func (h runHooks) send(raw []byte) {
	if !h.r.sendCtl(raw) {
		h.r.abortWith("control connection does not drain: the agent is not reading HQ's commands")
	}
}

func (h runHooks) autoStop() bool {
	r := h.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopSent {
		return false
	}
	r.stopSent = true
	r.life.Apply(bytefrog.MsgStop)
	r.updateMismatch()
	return true
}

func (h runHooks) heartbeat(mode bytefrog.Mode, buffers uint16) {
	r := h.r
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastHB = r.cfg.Now()
	r.heartbeats++
	r.buffers = buffers
	if mode != r.mode {
		r.mode = mode
		close(r.modeCh)
		r.modeCh = make(chan struct{})
	}
	r.updateMismatch()
}

func (h runHooks) fail(reason string, raw []byte) {
	h.r.log.Warn("run failed", "reason", reason)
	h.r.sendCtl(raw)
}

func (h runHooks) note(msg string) { h.r.log.Warn(msg) }

// loop is the run's core goroutine.
func (r *Run) loop(c *core) {
	defer r.srv.wg.Done()
	nsent := 0 // commands copied to r.commands
	for {
		var u unit
		select {
		case u = <-r.ctlIn:
		default:
			select {
			case u = <-r.ctlIn:
			case u = <-r.in:
			case <-r.abort:
				c.fail(r.abortReason)
			}
		}
		if u.kind != 0 {
			c.handle(&u)
			r.events.Store(c.st.sequenced)
			r.bytes.Store(c.rep.Bytes)
		}
		if n := len(c.rep.Commands); n != nsent {
			r.mu.Lock()
			r.commands = append(r.commands, c.rep.Commands[nsent:]...)
			r.mu.Unlock()
			nsent = n
		}
		if c.failed || (c.done() && r.canFinish(c.rep.DataConns)) {
			break
		}
	}
	r.mu.Lock()
	r.ending = true
	r.mu.Unlock()

	c.t = r.now()
	rep := c.finish()
	rep.End = rep.Start.Add(time.Duration(c.t) * time.Millisecond)
	if r.tw != nil {
		r.tw.record(&unit{kind: RecordEnd, t: c.t, raw: appendEnd(nil, rep.OK, rep.Reason)})
		if err := r.tw.close(); err != nil {
			rep.warn(err.Error())
			r.log.Error("trace file", "err", err)
		}
		rep.TraceFile = r.tw.path
	}

	close(r.quit)
	r.mu.Lock()
	for _, dc := range r.dataConns {
		dc.Close()
	}
	r.report = rep
	r.mu.Unlock()
	close(r.done)
	r.log.Info("run ended", "result", rep.Result(), "events", rep.Sequenced, "duration", rep.Duration())

	// The control connection may linger (see writeControl) a little.
	r.wg.Wait()
	for {
		select {
		case u := <-r.in:
			for i := int32(0); u.s != nil && i < r.holders; i++ {
				u.s.unref()
			}
			continue
		default:
		}
		break
	}
	r.srv.unregister(r)
}

// canFinish reports whether every accepted data connection has been seen
// by the core (seen of them); if so, no more are accepted.
func (r *Run) canFinish(seen int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.registered != seen {
		return false
	}
	r.ending = true
	return true
}

// readControl reads the control connection for the core. Once the run is
// over it drops what arrives until the writer's close times out the read.
func (r *Run) readControl() {
	defer r.wg.Done()
	defer close(r.ctlReadDone)
	buf := make([]byte, ctlReadSize)
	over := false
	for {
		n, err := r.ctl.Read(buf)
		if n > 0 && !over {
			over = !r.queueControl(unit{kind: RecordRecv, conn: controlConn, t: r.now(), raw: append([]byte(nil), buf[:n]...)})
		}
		if err != nil {
			if !over {
				r.send(unit{kind: RecordClose, conn: controlConn, t: r.now(), raw: closeCause(err)})
			}
			return
		}
	}
}

// closeCause is the body of a close record: empty for EOF.
func closeCause(err error) []byte {
	if err == nil || err == io.EOF {
		return nil
	}
	return []byte(err.Error())
}

// writeControl is the only writer of the control connection; it closes
// the connection when the run is over.
func (r *Run) writeControl() {
	defer r.wg.Done()
	defer r.ctl.Close()
	failed := false
	write := func(b []byte, limit time.Duration) {
		if failed {
			return
		}
		r.ctl.SetWriteDeadline(time.Now().Add(limit))
		if _, err := r.ctl.Write(b); err != nil {
			failed = true
			r.log.Warn("control connection write failed", "err", err)
		}
	}
	for {
		select {
		case b := <-r.ctlOut:
			write(b, writeTimeout)
		case <-r.quit:
			for {
				select {
				case b := <-r.ctlOut:
					write(b, finalWriteMax)
					continue
				default:
				}
				break
			}
			// Close gracefully, as lingerClose does, with the reader
			// dropping what still arrives.
			if cw, ok := r.ctl.(closeWriter); ok {
				cw.CloseWrite()
			}
			r.ctl.SetReadDeadline(time.Now().Add(finalWriteMax))
			<-r.ctlReadDone
			return
		}
	}
}

// addData accepts a data connection for the run, returning its index.
func (r *Run) addData(conn net.Conn) (uint16, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.ending:
		return 0, fmt.Errorf("%w: run %d", ErrRunEnded, r.id)
	case r.registered >= r.cfg.MaxDataConns:
		return 0, fmt.Errorf("hq: run %d already has %d data connections", r.id, r.registered)
	}
	r.registered++
	r.dataConns = append(r.dataConns, conn)
	r.wg.Add(1)
	return uint16(r.registered), nil
}

// readData reads data connection idx for the core; the DataHelloReply is
// written first.
func (r *Run) readData(conn net.Conn, idx uint16) {
	defer r.wg.Done()
	defer conn.Close()
	if !r.send(unit{kind: RecordOpen, conn: idx, t: r.now(), raw: []byte(conn.RemoteAddr().String())}) {
		return
	}
	conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := conn.Write(bytefrog.AppendCommand(nil, bytefrog.MsgDataHelloReply)); err != nil {
		r.send(unit{kind: RecordClose, conn: idx, t: r.now(), raw: closeCause(err)})
		return
	}
	p := newChunkParser(r.dialect, r.holders)
	p.size = r.readSize
	defer p.close()
	for {
		n, err := conn.Read(p.space())
		if n > 0 {
			u := p.commit(n)
			u.conn, u.t = idx, r.now()
			if !r.send(u) {
				for i := int32(0); i < r.holders; i++ {
					u.s.unref()
				}
				return
			}
			if u.perr != nil {
				return // the core fails the run
			}
		}
		if err != nil {
			r.send(unit{kind: RecordClose, conn: idx, t: r.now(), raw: closeCause(err), pending: p.pending()})
			return
		}
	}
}

// runScript runs the configured lifecycle script.
func (r *Run) runScript(steps []Step) {
	defer r.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-r.quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	for _, s := range steps {
		if err := s.apply(ctx, r); err != nil {
			if ctx.Err() != nil {
				return
			}
			msg := fmt.Sprintf("script: %v: %v", s, err)
			r.log.Warn(msg)
			if !r.send(unit{kind: RecordNote, t: r.now(), raw: []byte(msg)}) {
				return
			}
		}
	}
}
