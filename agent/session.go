package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// Errors of a trace run.
var (
	ErrNoHQ           = errors.New("tadpole: HQ not reachable")
	ErrRejected       = errors.New("tadpole: HQ rejected the agent")
	ErrProtocol       = errors.New("tadpole: protocol error")
	ErrStartTimeout   = errors.New("tadpole: no Start from HQ in time")
	ErrStopped        = errors.New("tadpole: tracing stopped")
	ErrAlreadyRunning = errors.New("tadpole: an agent is already tracing in this process")
	ErrHQStalled      = errors.New("tadpole: HQ stopped taking data")
	ErrInternal       = errors.New("tadpole: internal error")
)

// session is the control side of a trace run: the control connection to
// HQ, the handshake, the mode state machine, heartbeats and the control
// writer. When HQ sends Start its reader goroutine opens the data
// connections and makes the run's pipeline (pipeline.go), which it alone
// publishes (pipe) and the session drives: modes, data breaks, stop.
//
// Goroutines: the control reader owns dec and life and makes the
// pipeline; the control writer alone writes ctrl. Others enqueue control
// messages (sendControl). failCh and failErr are the session's one
// shutdown signal and its error; stop ends the run cleanly.
type session struct {
	cfg     Config
	clk     Clock
	log     *logger
	dialect bytefrog.Dialect
	hq      bytefrog.Config // written by the reader before the run is published

	ctrl net.Conn
	dec  *bytefrog.Decoder
	life bytefrog.Lifecycle // reader goroutine only

	mode   atomic.Uint32 // bytefrog.Mode, as reported to HQ
	modeMu sync.Mutex    // orders mode changes from HQ and control planes (HCE)
	pipe   atomic.Pointer[pipeline]

	ctrlHigh chan []byte
	ctrlLow  chan []byte
	hbReset  chan time.Duration
	// hbLate counts heartbeats written more than 1.5 intervals after the
	// previous one, hbMaxGap is the longest such gap (ns): the agent's own
	// view of its timeliness, whatever the network and HQ add.
	hbLate   atomic.Int64
	hbMaxGap atomic.Int64
	hbTicks  atomic.Int64 // heartbeats written on the ticker
	// flushed is signalled by the control writer when it reaches a nil
	// message in ctrlHigh: everything queued before it is written.
	flushed chan struct{}

	stopping atomic.Bool // the run is ending: stop or fail began
	failOnce sync.Once
	failCh   chan struct{} // closed when the run failed
	failErr  error
	startRes chan error    // reader → Start caller: nil once tracing began, else why not
	dataEnd  chan struct{} // closed once the pipeline ended cleanly (or never began)
	dataOnce sync.Once
	done     chan struct{} // closed when every goroutine of the run has ended
	ctrlWG   sync.WaitGroup
}

// control message queue depth; control traffic is a few messages a second.
const ctrlQueue = 1024

func newSession(cfg Config, log *logger) *session {
	s := &session{
		cfg:      cfg,
		clk:      cfg.clock(),
		log:      log,
		dialect:  bytefrog.Dialect{Version: cfg.Version, Flavor: cfg.Flavor},
		ctrlHigh: make(chan []byte, ctrlQueue),
		ctrlLow:  make(chan []byte, ctrlQueue),
		hbReset:  make(chan time.Duration, 1),
		flushed:  make(chan struct{}, 1),
		failCh:   make(chan struct{}),
		startRes: make(chan error, 1),
		done:     make(chan struct{}),
		dataEnd:  make(chan struct{}),
	}
	s.mode.Store(uint32(bytefrog.ModeInitializing))
	s.life = bytefrog.NewLifecycle()
	return s
}

// unixSendBuffer is the send buffer asked for on a Unix socket to HQ: the
// default (net.core.wmem_default, 208 KiB on most systems) holds three of
// the agent's 64 KiB send buffers, so that a data writer waits for HQ's
// reader, and the two wake each other, every few buffers; TCP's grows by
// itself to megabytes. The kernel caps it at net.core.wmem_max.
const unixSendBuffer = 1 << 20

// dial connects to HQ. With once > 0 it makes a single attempt bounded by
// once; otherwise it retries until the connect timeout.
func (s *session) dial(ctx context.Context, once time.Duration) (net.Conn, error) {
	addr, err := bytefrog.ParseAddr(s.cfg.HQ)
	if err != nil {
		return nil, connError("dial", s.cfg.HQ, fmt.Errorf("%w at %s: %w", ErrNoHQ, s.cfg.HQ, err))
	}
	bound := s.cfg.ConnectTimeout
	if once > 0 {
		bound = once
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var d net.Dialer
	var last error
	for {
		c, err := d.DialContext(ctx, addr.Net, addr.Addr)
		if err == nil {
			switch c := c.(type) {
			case *net.TCPConn:
				c.SetNoDelay(true)
			case *net.UnixConn:
				c.SetWriteBuffer(unixSendBuffer)
			}
			return c, nil
		}
		last = dialErr(addr, err)
		if once > 0 || fatalCause(last) {
			return nil, connError("dial", s.cfg.HQ, fmt.Errorf("%w at %s: %w", ErrNoHQ, s.cfg.HQ, last))
		}
		t := s.clk.NewTimer(250 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, connError("dial", s.cfg.HQ, fmt.Errorf("%w at %s within %v: %w", ErrNoHQ, s.cfg.HQ, s.cfg.ConnectTimeout, last))
		case <-t.C():
		}
	}
}

// handshake sends Hello and reads the first Configuration; once is as for
// dial.
func (s *session) handshake(ctx context.Context, once time.Duration) error {
	c, err := s.dial(ctx, once)
	if err != nil {
		return err
	}
	s.ctrl = c
	var hello []byte
	if s.cfg.ProjectID != 0 {
		hello = bytefrog.AppendProjectHello(nil, s.cfg.Version, s.cfg.ProjectID)
	} else {
		hello = bytefrog.AppendHello(nil, s.cfg.Version)
	}
	c.SetDeadline(time.Now().Add(s.cfg.ConnectTimeout))
	if _, err := c.Write(hello); err != nil {
		c.Close()
		return connError("hello", s.cfg.HQ, fmt.Errorf("%w: hello: %w", ErrNoHQ, err))
	}
	s.dec = bytefrog.NewDecoder(c, s.dialect)
	var m bytefrog.Msg
	if err := s.dec.Next(&m); err != nil {
		c.Close()
		return connError("configuration", s.cfg.HQ, fmt.Errorf("%w: reading configuration: %w", ErrRejected, readErr(err)))
	}
	switch m.Type {
	case bytefrog.MsgConfiguration:
		s.applyConfig(&m.Config)
	case bytefrog.MsgError:
		c.Close()
		return connError("configuration", s.cfg.HQ, fmt.Errorf("%w: %s", ErrRejected, bytefrog.String(m.Text)))
	default:
		c.Close()
		return connError("configuration", s.cfg.HQ, fmt.Errorf("%w: %v before the configuration", ErrProtocol, m.Type))
	}
	c.SetDeadline(time.Time{})
	return nil
}

func (s *session) applyConfig(c *bytefrog.Config) {
	s.hq = *c
	if s.hq.HeartbeatInterval <= 0 {
		s.hq.HeartbeatInterval = 1000
	}
	// Only the latest interval matters: replace one not yet taken.
	select {
	case <-s.hbReset:
	default:
	}
	s.hbReset <- time.Duration(s.hq.HeartbeatInterval) * time.Millisecond
	s.log.logf(LevelDebug, "configuration: run %d, heartbeat %dms, %d data connection(s), budget %d bytes",
		c.RunID, c.HeartbeatInterval, c.NumDataSenders, c.BufferMemoryBudget)
}

// run starts the control goroutines after the handshake.
func (s *session) run() {
	s.ctrlWG.Add(2)
	s.spawn("control reader", s.readControl)
	s.spawn("control writer", s.writeControl)
	go func() {
		s.ctrlWG.Wait()
		s.ctrl.Close()
		p := s.pipe.Load()
		if p != nil {
			<-p.Done()
		}
		// The process is free for another agent before anyone sees done.
		if p != nil {
			active.CompareAndSwap(p, nil)
		}
		current.CompareAndSwap(s, nil)
		close(s.done)
	}()
}

func (s *session) currentMode() bytefrog.Mode { return bytefrog.Mode(s.mode.Load()) }

// events is the number of sequenced events the run's pipeline handed to
// the data connections.
func (s *session) events() int64 {
	if p := s.pipe.Load(); p != nil {
		return p.events.Load()
	}
	return 0
}

// setMode changes the mode, for HQ and for the pipeline's recording
// calls, and tells HQ at once. Once the run is ending only Shutdown is
// set.
func (s *session) setMode(m bytefrog.Mode) {
	if m != bytefrog.ModeShutdown && s.stopping.Load() {
		return
	}
	if p := s.pipe.Load(); p != nil {
		p.setMode(m)
	}
	s.mode.Store(uint32(m))
	s.heartbeatNow()
	if current.Load() == s || m != bytefrog.ModeShutdown {
		notifyMode(m)
	}
}

func (s *session) heartbeatNow() {
	s.sendControl(s.heartbeat(), true)
}

func (s *session) heartbeat() []byte {
	n := int32(0)
	if p := s.pipe.Load(); p != nil {
		n = p.queued()
	}
	if n > 0xFFFF {
		n = 0xFFFF
	}
	return bytefrog.AppendHeartbeat(nil, s.currentMode(), uint16(n))
}

// sendControl queues a control message; high-priority messages
// (heartbeats, data breaks, errors) go before class reports. It never
// blocks the caller for long: a queue that stays full means the control
// connection is stuck, and the run fails.
func (s *session) sendControl(msg []byte, high bool) {
	q := s.ctrlLow
	if high {
		q = s.ctrlHigh
	}
	select {
	case q <- msg:
		return
	default:
	}
	t := s.clk.NewTimer(time.Second)
	defer t.Stop()
	select {
	case q <- msg:
	case <-s.failCh:
	case <-t.C():
		s.fail(fmt.Errorf("%w: control queue full", ErrProtocol))
	}
}

// flushControl waits, at most d, until the control writer has written
// every high-priority message queued so far.
func (s *session) flushControl(d time.Duration) {
	s.sendControl(nil, true)
	t := s.clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.flushed:
	case <-s.failCh:
	case <-t.C():
	}
}

func (s *session) writeControl() {
	defer s.ctrlWG.Done()
	// The handshake queued the first interval; a later configuration may
	// have replaced it. s.hq belongs to the reader goroutine.
	interval := time.Second
	select {
	case interval = <-s.hbReset:
	default:
	}
	tick := s.clk.NewTicker(interval)
	defer tick.Stop()
	write := func(b []byte) bool {
		if b == nil {
			select {
			case s.flushed <- struct{}{}:
			default:
			}
			return true
		}
		s.ctrl.SetWriteDeadline(time.Now().Add(s.cfg.ConnectTimeout))
		if _, err := s.ctrl.Write(b); err != nil {
			s.fail(fmt.Errorf("control connection: %w", err))
			return false
		}
		return true
	}
	var lastHB time.Time
	beat := func() bool {
		now := s.clk.Now()
		if !lastHB.IsZero() {
			gap := now.Sub(lastHB)
			if gap*2 > 3*interval {
				s.hbLate.Add(1)
				s.log.oncef("hb-late", LevelInfo, "heartbeat sent %v after the previous one (interval %v): "+
					"the agent's threads wait for a CPU; HQ may count the run unhealthy",
					gap.Round(time.Millisecond), interval)
			}
			if int64(gap) > s.hbMaxGap.Load() {
				s.hbMaxGap.Store(int64(gap))
			}
		}
		lastHB = now
		ok := write(s.heartbeat())
		s.hbTicks.Add(1)
		return ok
	}
	for {
		select {
		case b := <-s.ctrlHigh:
			if !write(b) {
				return
			}
			continue
		default:
		}
		select {
		case b := <-s.ctrlHigh:
			if !write(b) {
				return
			}
		case b := <-s.ctrlLow:
			if !write(b) {
				return
			}
		case d := <-s.hbReset:
			tick.Reset(d)
			interval = d
		case <-tick.C():
			if !beat() {
				return
			}
		case <-s.failCh:
			return
		case <-s.dataEnd:
			// Data is drained and closed: flush what is queued and end.
			for {
				select {
				case b := <-s.ctrlHigh:
					if !write(b) {
						return
					}
				default:
					// HQ answers our end of stream by closing; don't wait for
					// it forever.
					closeWrite(s.ctrl)
					s.ctrl.SetReadDeadline(time.Now().Add(2 * time.Second))
					return
				}
			}
		}
	}
}

func (s *session) readControl() {
	defer s.ctrlWG.Done()
	var m bytefrog.Msg
	for {
		err := s.dec.Next(&m)
		if err != nil {
			if s.stopping.Load() && (errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed)) {
				return
			}
			select {
			case <-s.failCh:
				return
			default:
			}
			if s.stopping.Load() {
				return
			}
			s.fail(fmt.Errorf("control connection lost: %w", err))
			return
		}
		if err := s.command(&m); err != nil {
			// Tell HQ why before the connection goes.
			s.sendControl(bytefrog.AppendError(nil, err.Error()), true)
			s.flushControl(time.Second)
			s.fail(err)
			return
		}
	}
}

// command applies one message from HQ, following the agent state machine
// (bytefrog.Lifecycle); a command that changes nothing is ignored.
func (s *session) command(m *bytefrog.Msg) error {
	if m.Type == bytefrog.MsgError {
		s.fail(fmt.Errorf("%w: HQ reported an error: %s", ErrRejected, bytefrog.String(m.Text)))
		return nil
	}
	// Stop and failures end the run from other goroutines.
	prev := s.currentMode()
	s.life.Mode = prev
	if _, err := s.life.Apply(m.Type); errors.Is(err, bytefrog.ErrNoChange) {
		return nil
	} else if err != nil {
		return fmt.Errorf("%w: %w", ErrProtocol, err)
	}
	switch m.Type {
	case bytefrog.MsgConfiguration:
		s.applyConfig(&m.Config)
	case bytefrog.MsgStart:
		// Bytefrog timestamps count from Start: its arrival, not the end
		// of opening the data connections, which can take a while.
		begin, beginMono := time.Now(), monoNow()
		err := s.beginTracing(begin, beginMono)
		s.startRes <- err
		if err != nil {
			return err
		}
	case bytefrog.MsgStop:
		go s.stop(context.Background())
	case bytefrog.MsgPause, bytefrog.MsgUnpause, bytefrog.MsgSuspend, bytefrog.MsgUnsuspend:
		if prev != bytefrog.ModeInitializing { // before Start, Lifecycle notes it
			s.change(m.Type)
		}
	}
	return nil
}

// change applies Pause, Unpause, Suspend or Unsuspend to a started run,
// whether HQ or a control plane (HCE) asks; the mode is tested and changed
// under modeMu, so that the two never interleave. It reports whether the
// mode changed.
func (s *session) change(cmd bytefrog.MsgType) bool {
	s.modeMu.Lock()
	defer s.modeMu.Unlock()
	mode := s.currentMode()
	switch {
	case cmd == bytefrog.MsgPause && mode == bytefrog.ModeTracing:
		s.setMode(bytefrog.ModePaused)
	case cmd == bytefrog.MsgUnpause && mode == bytefrog.ModePaused:
		s.setMode(bytefrog.ModeTracing)
	case cmd == bytefrog.MsgSuspend && mode == bytefrog.ModeTracing:
		s.setMode(bytefrog.ModeSuspended)
		if p := s.pipe.Load(); p != nil {
			p.Break()
		}
	case cmd == bytefrog.MsgUnsuspend && mode == bytefrog.ModeSuspended:
		s.setMode(bytefrog.ModeTracing)
	default:
		return false
	}
	return true
}

// beginTracing opens the data connections and starts the pipeline, with
// begin (beginMono on CLOCK_MONOTONIC), the arrival of Start, as the time
// base. It runs on the control reader, which alone makes the pipeline.
func (s *session) beginTracing(begin time.Time, beginMono int64) error {
	n := s.cfg.DataConnections
	if n <= 0 {
		n = int(s.hq.NumDataSenders)
	}
	if n <= 0 {
		n = 1
	}
	budget := s.cfg.BufferBudget
	if budget <= 0 {
		budget = int(s.hq.BufferMemoryBudget)
	}
	conns := make([]net.Conn, 0, n)
	for i := 0; i < n; i++ {
		c, err := s.openData()
		if err != nil {
			for _, c := range conns {
				c.Close()
			}
			return err
		}
		conns = append(conns, c)
	}
	p := newPipeline(s.pipeConfig(budget), s.log, conns, begin, beginMono,
		func(seq int32) { s.sendControl(bytefrog.AppendDataBreak(nil, seq), true) },
		s.fail)
	// Published before the run's state is read: a stop or failure that
	// began meanwhile either sees the pipeline and ends it, or is seen
	// here.
	s.pipe.Store(p)
	if s.failed() || s.stopping.Load() {
		err := fmt.Errorf("%w while opening the data connections", ErrStopped)
		p.abort(err)
		p.neverStarted()
		return err
	}
	p.Start()
	s.modeMu.Lock()
	if s.life.StartSuspended {
		s.setMode(bytefrog.ModeSuspended)
	} else {
		s.setMode(bytefrog.ModeTracing)
	}
	s.modeMu.Unlock()
	return nil
}

func (s *session) pipeConfig(budget int) pipeConfig {
	return pipeConfig{
		RingSize:      s.cfg.RingSize,
		Budget:        budget,
		Flavor:        s.cfg.Flavor,
		FlushInterval: s.cfg.FlushInterval,
		StallTimeout:  s.cfg.StallTimeout,
	}
}

func (s *session) openData() (net.Conn, error) {
	c, err := s.dial(context.Background(), 0)
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(s.cfg.ConnectTimeout))
	if _, err := c.Write(bytefrog.AppendDataHello(nil, s.hq.RunID)); err != nil {
		c.Close()
		return nil, connError("data hello", s.cfg.HQ, fmt.Errorf("%w: data hello: %w", ErrNoHQ, err))
	}
	var m bytefrog.Msg
	if err := bytefrog.NewDecoder(c, s.dialect).Next(&m); err != nil {
		c.Close()
		return nil, connError("data hello", s.cfg.HQ, fmt.Errorf("%w: data hello reply: %w", ErrRejected, readErr(err)))
	}
	switch m.Type {
	case bytefrog.MsgDataHelloReply:
	case bytefrog.MsgError:
		c.Close()
		return nil, connError("data hello", s.cfg.HQ, fmt.Errorf("%w: data connection: %s", ErrRejected, bytefrog.String(m.Text)))
	default:
		c.Close()
		return nil, connError("data hello", s.cfg.HQ, fmt.Errorf("%w: %v in reply to DataHello", ErrProtocol, m.Type))
	}
	c.SetDeadline(time.Time{})
	return c, nil
}

func (s *session) failed() bool {
	select {
	case <-s.failCh:
		return true
	default:
		return false
	}
}

// spawn runs f in a goroutine of the session. A panic there is a bug of
// the agent's: it is logged with its stack and ends the run (tracing stops,
// the host keeps running) instead of ending the process. f's own deferred
// calls run first, so a goroutine that counts itself done still does.
func (s *session) spawn(name string, f func()) {
	go func() {
		defer func() {
			if r := recover(); r != nil {
				s.log.logf(LevelError, "internal error in the %s: %v\n%s", name, r, debug.Stack())
				s.fail(fmt.Errorf("%w: internal error in the %s: %v", ErrInternal, name, r))
			}
		}()
		f()
	}()
}

// fail ends the run after an error: tracing stops at once, producers are
// released, connections are closed. The host keeps running.
func (s *session) fail(err error) {
	s.failOnce.Do(func() {
		s.failErr = err
		s.log.oncef("fail:"+err.Error(), LevelWarn, "tracing stopped: %v", err)
		if current.Load() == s && !errors.Is(err, ErrStopped) {
			// On a goroutine of its own: a hook may call Shutdown, which
			// waits for the goroutine that failed.
			go notifyError(err)
		}
		s.stopping.Store(true)
		close(s.failCh)
		if p := s.pipe.Load(); p != nil {
			p.abort(err)
		}
		s.mode.Store(uint32(bytefrog.ModeShutdown))
		if current.Load() == s {
			notifyMode(bytefrog.ModeShutdown)
		}
		if s.ctrl != nil {
			s.ctrl.Close()
		}
	})
}

// endData tells the control writer that the data side has ended.
func (s *session) endData() { s.dataOnce.Do(func() { close(s.dataEnd) }) }

// stop ends the run cleanly: 'X' heartbeat, drain every event already
// numbered, close the data connections, then the control connection.
func (s *session) stop(ctx context.Context) error {
	if !s.stopping.Load() {
		s.modeMu.Lock()
		first := !s.stopping.Swap(true)
		if first {
			s.setMode(bytefrog.ModeShutdown)
		}
		s.modeMu.Unlock()
		if first {
			if p := s.pipe.Load(); p != nil {
				p.Stop(ctx)
			}
			s.endData()
		}
	}
	select {
	case <-s.done:
	case <-ctx.Done():
		s.fail(fmt.Errorf("%w: shutdown: %w", ErrStopped, ctx.Err()))
		<-s.done
		return ctx.Err()
	}
	if s.failed() && !errors.Is(s.failErr, ErrStopped) {
		return s.failErr
	}
	return nil
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite() // TCP's FIN, or a Unix socket's shutdown(SHUT_WR)
	}
}
