package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
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

// session is one trace run: the control connection, the data connections,
// the ring, the drain and the send-buffer pool.
type session struct {
	// Read by every recording call: kept apart from fields that other
	// goroutines write often.
	mode  atomic.Uint32 // bytefrog.Mode
	clock atomic.Int32  // ms since Start
	lanes *lanes
	_     [cacheLine]byte

	cfg     Config
	log     *logger
	dialect bytefrog.Dialect
	hq      bytefrog.Config

	ctrl net.Conn
	dec  *bytefrog.Decoder
	data []net.Conn

	life    bytefrog.Lifecycle // reader goroutine only
	pauseMu sync.Mutex
	pauseCh chan struct{} // non-nil while paused; closed on unpause

	// pipeMu guards data, lanes and pool while the pipeline is being set
	// up: the control reader sets them, while a start timeout, Shutdown or
	// the control writer may read them. Once started they do not change.
	pipeMu sync.Mutex
	pool   *bufPool
	brk    breaks
	// begin is when Start arrived, the time base of every event; the
	// control reader sets it before the pipeline's goroutines start.
	begin time.Time
	// beginMono is CLOCK_MONOTONIC at begin, for host batch timestamps.
	beginMono int64
	events    atomic.Int64
	// batchBytes counts the bytes of host batches waiting for the drain.
	// Hosts and the drain write it: it is kept off the line of brk, which
	// the drain reads for every slot.
	_          [cacheLine]byte
	batchBytes atomic.Int64
	batchRoom  batchRoom

	ctrlHigh chan []byte
	ctrlLow  chan []byte
	hbReset  chan time.Duration
	// hbLate counts heartbeats written more than 1.5 intervals after the
	// previous one, hbMaxGap is the longest such gap (ns): the agent's own
	// view of its timeliness, whatever the network and HQ add.
	hbLate   atomic.Int64
	hbMaxGap atomic.Int64
	// flushed is signalled by the control writer when it reaches a nil
	// message in ctrlHigh: everything queued before it is written.
	flushed chan struct{}

	stopping atomic.Bool
	stopOnce sync.Once
	stopCh   chan struct{} // closed when the run begins to end
	failOnce sync.Once
	failCh   chan struct{} // closed when the run failed
	failErr  error
	started  chan struct{} // closed once tracing began
	startErr chan error    // reader → Start caller, when Start could not begin
	done     chan struct{} // closed when every goroutine has ended
	dataDone chan struct{} // closed when the data side has ended (or never began)
	dataOnce sync.Once
	wg       sync.WaitGroup
	ctrlWG   sync.WaitGroup
}

// control message queue depth; control traffic is a few messages a second.
const ctrlQueue = 1024

func newSession(cfg Config, log *logger) *session {
	s := &session{
		cfg:      cfg,
		log:      log,
		dialect:  bytefrog.Dialect{Version: cfg.Version, Flavor: cfg.Flavor},
		ctrlHigh: make(chan []byte, ctrlQueue),
		ctrlLow:  make(chan []byte, ctrlQueue),
		hbReset:  make(chan time.Duration, 1),
		flushed:  make(chan struct{}, 1),
		stopCh:   make(chan struct{}),
		failCh:   make(chan struct{}),
		started:  make(chan struct{}),
		startErr: make(chan error, 1),
		done:     make(chan struct{}),
		dataDone: make(chan struct{}),
	}
	s.mode.Store(uint32(bytefrog.ModeInitializing))
	s.life = bytefrog.NewLifecycle()
	return s
}

// dial connects to HQ. With once > 0 it makes a single attempt bounded by
// once; otherwise it retries until the connect timeout.
func (s *session) dial(ctx context.Context, once time.Duration) (net.Conn, error) {
	bound := s.cfg.ConnectTimeout
	if once > 0 {
		bound = once
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var d net.Dialer
	var last error
	for {
		c, err := d.DialContext(ctx, "tcp", s.cfg.HQ)
		if err == nil {
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetNoDelay(true)
			}
			return c, nil
		}
		last = err
		if once > 0 {
			return nil, fmt.Errorf("%w at %s: %w", ErrNoHQ, s.cfg.HQ, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w at %s within %v: %w", ErrNoHQ, s.cfg.HQ, s.cfg.ConnectTimeout, last)
		case <-time.After(250 * time.Millisecond):
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
		return fmt.Errorf("%w: hello: %v", ErrNoHQ, err)
	}
	s.dec = bytefrog.NewDecoder(c, s.dialect)
	var m bytefrog.Msg
	if err := s.dec.Next(&m); err != nil {
		c.Close()
		return fmt.Errorf("%w: reading configuration: %v", ErrRejected, err)
	}
	switch m.Type {
	case bytefrog.MsgConfiguration:
		s.applyConfig(&m.Config)
	case bytefrog.MsgError:
		c.Close()
		return fmt.Errorf("%w: %s", ErrRejected, bytefrog.String(m.Text))
	default:
		c.Close()
		return fmt.Errorf("%w: %v before the configuration", ErrProtocol, m.Type)
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
		// The process is free for another agent before anyone sees done.
		active.CompareAndSwap(s, nil)
		close(s.done)
	}()
}

func (s *session) currentMode() bytefrog.Mode { return bytefrog.Mode(s.mode.Load()) }

// setMode changes the mode and tells HQ at once. Tracing begins with the
// clock brought up to date: its updater may be starved on a busy host, and
// an event recorded from now on must not carry a time from before.
func (s *session) setMode(m bytefrog.Mode) {
	if m == bytefrog.ModeTracing && !s.begin.IsZero() {
		s.refreshClock()
	}
	s.mode.Store(uint32(m))
	s.heartbeatNow()
	if active.Load() == s || m != bytefrog.ModeShutdown {
		notifyMode(m)
	}
}

func (s *session) heartbeatNow() {
	s.sendControl(s.heartbeat(), true)
}

func (s *session) heartbeat() []byte {
	n := int32(0)
	s.pipeMu.Lock()
	pool := s.pool
	s.pipeMu.Unlock()
	if pool != nil {
		n = pool.waiting.Load()
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
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case q <- msg:
	case <-s.failCh:
	case <-t.C:
		s.fail(fmt.Errorf("%w: control queue full", ErrProtocol))
	}
}

// flushControl waits, at most d, until the control writer has written
// every high-priority message queued so far.
func (s *session) flushControl(d time.Duration) {
	s.sendControl(nil, true)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.flushed:
	case <-s.failCh:
	case <-t.C:
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
	tick := time.NewTicker(interval)
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
		now := time.Now()
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
		return write(s.heartbeat())
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
		case <-tick.C:
			if !beat() {
				return
			}
		case <-s.failCh:
			return
		case <-s.dataDone:
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
		s.fail(fmt.Errorf("HQ reported an error: %s", bytefrog.String(m.Text)))
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
		s.begin, s.beginMono = time.Now(), monoNow()
		if err := s.beginTracing(); err != nil {
			s.startErr <- err
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
// under pauseMu, so that the two never interleave. It reports whether the
// mode changed.
func (s *session) change(cmd bytefrog.MsgType) bool {
	s.pauseMu.Lock()
	mode := s.currentMode()
	switch {
	case cmd == bytefrog.MsgPause && mode == bytefrog.ModeTracing:
		s.pauseCh = make(chan struct{})
		s.setMode(bytefrog.ModePaused)
	case cmd == bytefrog.MsgUnpause && mode == bytefrog.ModePaused:
		s.pauseMu.Unlock()
		s.unpause(bytefrog.ModeTracing)
		return true
	case cmd == bytefrog.MsgSuspend && mode == bytefrog.ModeTracing:
		s.setMode(bytefrog.ModeSuspended)
		s.brk.push(s.lanes.positions())
		s.lanes.nudge()
	case cmd == bytefrog.MsgUnsuspend && mode == bytefrog.ModeSuspended:
		s.setMode(bytefrog.ModeTracing)
	default:
		s.pauseMu.Unlock()
		return false
	}
	s.pauseMu.Unlock()
	return true
}

// unpause releases producers blocked by a pause and moves to mode next.
func (s *session) unpause(next bytefrog.Mode) {
	s.pauseMu.Lock()
	defer s.pauseMu.Unlock()
	s.setMode(next)
	if s.pauseCh != nil {
		close(s.pauseCh)
		s.pauseCh = nil
	}
}

// gate is the slow path of an instrumented call that found the mode other
// than Tracing: it waits out a pause and reports whether to record.
func (s *session) gate() bool {
	for {
		switch bytefrog.Mode(s.mode.Load()) {
		case bytefrog.ModeTracing:
			return true
		case bytefrog.ModePaused:
			s.pauseMu.Lock()
			ch := s.pauseCh
			s.pauseMu.Unlock()
			if ch != nil {
				<-ch
			}
		default:
			return false
		}
	}
}

// beginTracing opens the data connections and starts the drain.
func (s *session) beginTracing() error {
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
	closeAll := func() {
		for _, c := range conns {
			c.Close()
		}
	}
	for i := 0; i < n; i++ {
		c, err := s.openData()
		if err != nil {
			closeAll()
			return err
		}
		conns = append(conns, c)
	}
	// The run may have failed or begun to stop meanwhile (a start timeout,
	// Shutdown): then these connections are this goroutine's to close.
	s.pipeMu.Lock()
	if s.failed() || s.stopping.Load() {
		s.pipeMu.Unlock()
		closeAll()
		return fmt.Errorf("%w while opening the data connections", ErrStopped)
	}
	s.data = conns
	s.startPipeline(budget)
	s.pipeMu.Unlock()
	if s.life.StartSuspended {
		s.setMode(bytefrog.ModeSuspended)
	} else {
		s.setMode(bytefrog.ModeTracing)
	}
	close(s.started)
	return nil
}

// startPipeline starts the ring, the drain, one writer per data connection
// and the clock.
func (s *session) startPipeline(budget int) {
	s.lanes = newLanes(s.cfg.RingSize)
	s.pool = newBufPool(budget)
	if s.begin.IsZero() {
		s.begin, s.beginMono = time.Now(), monoNow()
	}
	s.clock.Store(int32(time.Since(s.begin) / time.Millisecond))
	s.wg.Add(1 + len(s.data) + 1)
	s.spawn("drain", newDrain(s).run)
	for _, c := range s.data {
		s.spawn("data writer", func() { s.writeData(c) })
	}
	s.spawn("clock", s.tick)
	go func() {
		s.wg.Wait()
		s.endData()
	}()
}

func (s *session) openData() (net.Conn, error) {
	c, err := s.dial(context.Background(), 0)
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(s.cfg.ConnectTimeout))
	if _, err := c.Write(bytefrog.AppendDataHello(nil, s.hq.RunID)); err != nil {
		c.Close()
		return nil, fmt.Errorf("%w: data hello: %v", ErrNoHQ, err)
	}
	var m bytefrog.Msg
	if err := bytefrog.NewDecoder(c, s.dialect).Next(&m); err != nil {
		c.Close()
		return nil, fmt.Errorf("%w: data hello reply: %v", ErrRejected, err)
	}
	switch m.Type {
	case bytefrog.MsgDataHelloReply:
	case bytefrog.MsgError:
		c.Close()
		return nil, fmt.Errorf("%w: data connection: %s", ErrRejected, bytefrog.String(m.Text))
	default:
		c.Close()
		return nil, fmt.Errorf("%w: %v in reply to DataHello", ErrProtocol, m.Type)
	}
	c.SetDeadline(time.Time{})
	return c, nil
}

// tick keeps the millisecond clock events are stamped with.
func (s *session) tick() {
	defer s.wg.Done()
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			// The time of reading, not the tick's: a tick delivered late
			// carries a time from before ones already stored.
			s.refreshClock()
		case <-s.stopCh:
			return
		}
	}
}

// refreshClock brings the clock up to the time since Start, never back,
// and returns it.
func (s *session) refreshClock() int32 {
	ms := int32(time.Since(s.begin) / time.Millisecond)
	for {
		old := s.clock.Load()
		if ms <= old {
			return old
		}
		if s.clock.CompareAndSwap(old, ms) {
			return ms
		}
	}
}

func (s *session) writeData(c net.Conn) {
	defer s.wg.Done()
	for b := range s.pool.queue {
		if !s.failed() {
			if s.cfg.StallTimeout > 0 {
				c.SetWriteDeadline(time.Now().Add(s.cfg.StallTimeout))
			}
			if _, err := c.Write(b.b); errors.Is(err, os.ErrDeadlineExceeded) {
				s.fail(fmt.Errorf("%w for %v: tracing stopped so that the program does not wait", ErrHQStalled, s.cfg.StallTimeout))
			} else if err != nil {
				s.fail(fmt.Errorf("data connection: %w", err))
			}
		}
		s.pool.waiting.Add(-1)
		s.pool.recycle(b)
	}
	closeWrite(c)
	c.Close()
}

func (s *session) failed() bool {
	select {
	case <-s.failCh:
		return true
	default:
		return false
	}
}

// fail ends the run after an error: tracing stops at once, producers are
// released, connections are closed. The host keeps running.
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

func (s *session) fail(err error) {
	s.failOnce.Do(func() {
		s.failErr = err
		s.log.oncef("fail:"+err.Error(), LevelWarn, "tracing stopped: %v", err)
		if active.Load() == s && !errors.Is(err, ErrStopped) {
			// On a goroutine of its own: a hook may call Shutdown, which
			// waits for the goroutine that failed.
			go notifyError(err)
		}
		s.stopping.Store(true)
		s.unpause(bytefrog.ModeShutdown)
		close(s.failCh)
		s.closeStop()
		if s.ctrl != nil {
			s.ctrl.Close()
		}
		s.pipeMu.Lock()
		data, lanes := s.data, s.lanes
		s.pipeMu.Unlock()
		for _, c := range data {
			c.Close()
		}
		if lanes == nil {
			s.endData()
		}
	})
}

// endData marks the data side ended.
func (s *session) endData() { s.dataOnce.Do(func() { close(s.dataDone) }) }

func (s *session) closeStop() {
	s.stopOnce.Do(func() { close(s.stopCh) })
}

// stop ends the run cleanly: 'X' heartbeat, drain every event already
// numbered, close the data connections, then the control connection.
func (s *session) stop(ctx context.Context) error {
	if !s.stopping.Swap(true) {
		s.unpause(bytefrog.ModeShutdown)
		s.closeStop()
		s.pipeMu.Lock()
		lanes := s.lanes
		s.pipeMu.Unlock()
		if lanes == nil {
			s.endData()
		} else {
			lanes.nudge()
		}
	}
	select {
	case <-s.done:
	case <-ctx.Done():
		s.fail(fmt.Errorf("%w: shutdown: %v", ErrStopped, ctx.Err()))
		<-s.done
		return ctx.Err()
	}
	if s.failed() && !errors.Is(s.failErr, ErrStopped) {
		return s.failErr
	}
	return nil
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
}
