package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
	"github.com/tadpole-trace/tadpole/transport/lttngagent"
)

// active is the pipeline instrumented code records into; nil means no
// tracing and every recording call returns at once. current is the run
// (control side) that pipeline belongs to, for control planes (HCE, the
// management beans); the two are set and cleared together.
var (
	active  atomic.Pointer[pipeline]
	current atomic.Pointer[session]
)

// Agent is a tracing agent connected to one HQ. Only one agent traces at a
// time in a process, because instrumented code records into whichever one
// is active. Its methods are safe for concurrent use.
type Agent struct {
	cfg Config
	log *logger

	done     chan struct{} // closed when the run ended, or at Shutdown
	doneOnce sync.Once
	quit     chan struct{} // closed by Shutdown: the background retry ends
	quitOnce sync.Once
	retry    sync.WaitGroup
	poke     chan struct{} // makes the background retry try now

	mu     sync.Mutex
	sess   *session
	closed bool // Shutdown was called: no run may begin
	lttng  *lttngagent.Client
}

// firstDial bounds the first attempt to reach HQ when the agent may retry
// in the background: the host is held no longer than this by an HQ that
// refuses, or by an address that does not answer.
const firstDial = 50 * time.Millisecond

// Start connects to HQ, sends Hello, takes the configuration and waits for
// HQ's Start (bounded by cfg.StartTimeout), then returns a tracing agent.
// Suspend and further configurations sent before Start are honoured.
//
// When HQ cannot be reached (refused, or no answer within 50 ms) and
// cfg.HQRetry is set, Start returns at once an agent that runs untraced
// and tries again every cfg.HQRetry in the background, tracing once HQ
// answers and starts it. Otherwise, when HQ is absent or rejects the agent,
// Start returns an error within cfg.ConnectTimeout and the process goes on
// untraced.
func Start(ctx context.Context, cfg Config) (*Agent, error) {
	if err := cfg.Verify(); err != nil {
		return nil, err
	}
	if cfg.HQ == "" {
		return nil, fmt.Errorf("%w: no hq address configured", ErrBadOption)
	}
	log, err := newLogger(cfg.Log, cfg.LogLevel)
	if err != nil {
		return nil, err
	}
	a := &Agent{cfg: cfg, log: log, done: make(chan struct{}), quit: make(chan struct{}), poke: make(chan struct{}, 1)}
	var once time.Duration
	if cfg.HQRetry > 0 {
		once = min(firstDial, cfg.ConnectTimeout)
	}
	err = a.start(ctx, once, false)
	if err != nil && cfg.HQRetry > 0 && errors.Is(err, ErrNoHQ) && retryable(err) {
		log.oncef("start:"+err.Error(), LevelWarn, "running untraced: %v; trying again every %v", err, cfg.HQRetry)
		if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
			// No answer within the first bound, as from a busy host's HQ:
			// the first try in the background waits the whole connect
			// timeout, at once rather than a retry interval later.
			a.poke <- struct{}{}
		}
		a.retry.Add(1)
		go a.retryLoop()
		return a, nil
	}
	if err != nil {
		log.oncef("start:"+err.Error(), LevelWarn, "running untraced: %v", err)
		log.close()
		return nil, err
	}
	return a, nil
}

// waiting is the agent trying to reach HQ in the background, if any.
var waiting atomic.Pointer[Agent]

// retryNow makes the agent waiting for HQ, if any, try at once (HCE's
// TP_START); it reports whether there was one.
func retryNow() bool {
	a := waiting.Load()
	if a == nil {
		return false
	}
	select {
	case a.poke <- struct{}{}:
	default:
	}
	return true
}

// retryLoop tries to reach HQ every cfg.HQRetry until a run begins or the
// agent is shut down.
func (a *Agent) retryLoop() {
	defer a.retry.Done()
	waiting.Store(a)
	defer waiting.CompareAndSwap(a, nil)
	defer func() {
		if r := recover(); r != nil {
			a.log.logf(LevelError, "internal error while trying to reach HQ: %v", r)
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-a.quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	t := a.cfg.clock().NewTimer(a.cfg.HQRetry)
	defer t.Stop()
	for {
		select {
		case <-a.quit:
			return
		case <-t.C():
		case <-a.poke:
			t.Stop()
		}
		err := a.start(ctx, a.cfg.ConnectTimeout, true)
		switch {
		case err == nil:
			a.log.logf(LevelInfo, "HQ at %s reached: tracing", a.cfg.HQ)
			return
		case ctx.Err() != nil || errors.Is(err, ErrAlreadyRunning):
			return
		case !retryable(err):
			a.log.oncef("retry:"+err.Error(), LevelWarn, "still untraced, not trying again: %v", err)
			return
		case errors.Is(err, ErrNoHQ):
		default:
			a.log.oncef("retry:"+err.Error(), LevelWarn, "still untraced: %v; trying again every %v", err, a.cfg.HQRetry)
		}
		t.Reset(a.cfg.HQRetry)
	}
}

// start makes one attempt at a run: connect, handshake, wait for Start.
// once is as for session.dial; late is true for an attempt in the
// background, after Start returned.
func (a *Agent) start(ctx context.Context, once time.Duration, late bool) error {
	if current.Load() != nil {
		return ErrAlreadyRunning
	}
	s := newSession(a.cfg, a.log)
	if err := s.handshake(ctx, once); err != nil {
		return err
	}
	s.run()
	var timeout <-chan time.Time
	if a.cfg.StartTimeout > 0 {
		t := a.cfg.clock().NewTimer(a.cfg.StartTimeout)
		defer t.Stop()
		timeout = t.C()
	}
	select {
	case err := <-s.startRes:
		if err != nil {
			<-s.done
			return err
		}
	case <-s.failCh:
		<-s.done
		return s.failErr
	case <-timeout:
		err := fmt.Errorf("%w (%v)", ErrStartTimeout, a.cfg.StartTimeout)
		s.sendControl(bytefrog.AppendError(nil, err.Error()), true)
		s.fail(err)
		<-s.done
		return err
	case <-ctx.Done():
		err := fmt.Errorf("%w: %w", ErrStartTimeout, ctx.Err())
		s.sendControl(bytefrog.AppendError(nil, err.Error()), true)
		s.fail(err)
		<-s.done
		return err
	}
	// Tracing began: the reader published the pipeline before it said so.
	p := s.pipe.Load()
	if !current.CompareAndSwap(nil, s) {
		s.fail(ErrAlreadyRunning)
		<-s.done
		return ErrAlreadyRunning
	}
	active.Store(p)
	select {
	case <-s.done:
		// The run ended between start and here; its end could not free the slot.
		active.CompareAndSwap(p, nil)
		current.CompareAndSwap(s, nil)
	default:
		if late {
			// Hosts set up while the agent was away read no mode when told
			// of the first one, before the session was active: tell again.
			notifyMode(s.currentMode())
		}
	}
	a.mu.Lock()
	if a.closed {
		// Shut down while this run began in the background.
		a.mu.Unlock()
		s.stop(context.Background())
		return ErrStopped
	}
	a.sess = s
	a.mu.Unlock()
	go func() {
		<-s.done
		a.endDone()
	}()
	domain.Store(a.cfg.LTTngDomain)
	SetLogPolicy(a.cfg.Logs)
	if a.cfg.LTTng {
		c, err := startLTTng(a.cfg, a.log)
		if err != nil {
			a.log.oncef("lttng-start", LevelWarn, "not registering with LTTng: %v", err)
		}
		a.mu.Lock()
		a.lttng = c
		a.mu.Unlock()
	}
	a.log.logf(LevelInfo, "tracing to %s (protocol %d, run %d, %d data connection(s))",
		a.cfg.HQ, a.cfg.Version, s.hq.RunID, len(p.data))
	return nil
}

func (a *Agent) endDone() { a.doneOnce.Do(func() { close(a.done) }) }

func (a *Agent) session() *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sess
}

// Mode is the agent's current mode as reported to HQ; Initializing while
// it is trying to reach HQ in the background.
func (a *Agent) Mode() bytefrog.Mode {
	if s := a.session(); s != nil {
		return s.currentMode()
	}
	select {
	case <-a.done:
		return bytefrog.ModeShutdown
	default:
		return bytefrog.ModeInitializing
	}
}

// Done is closed when the run has ended: stopped by HQ, shut down, or
// failed. An agent still trying to reach HQ has not ended.
func (a *Agent) Done() <-chan struct{} { return a.done }

// Err is why the run ended, once Done is closed; nil after a clean stop.
func (a *Agent) Err() error {
	s := a.session()
	if s == nil {
		return nil
	}
	select {
	case <-s.done:
	default:
		return nil
	}
	if s.failed() {
		return s.failErr
	}
	return nil
}

// Events is the number of sequenced events handed to the data connections.
func (a *Agent) Events() int64 {
	if s := a.session(); s != nil {
		return s.events()
	}
	return 0
}

// RunID is the run id HQ assigned; 0 before a run began.
func (a *Agent) RunID() uint8 {
	if s := a.session(); s != nil {
		return s.hq.RunID
	}
	return 0
}

// Shutdown ends tracing: it reports 'X' to HQ, sends every event already
// recorded, closes the data connections, then the control connection. It
// returns when done or when ctx ends (then it closes everything at once).
// An agent still trying to reach HQ stops trying. It is idempotent.
func (a *Agent) Shutdown(ctx context.Context) error {
	a.quitOnce.Do(func() { close(a.quit) })
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	retried := make(chan struct{})
	go func() {
		a.retry.Wait()
		close(retried)
	}()
	select {
	case <-retried:
	case <-ctx.Done():
		// An attempt under way ends by itself: it finds the agent closed.
	}
	var err error
	if s := a.session(); s != nil {
		err = s.stop(ctx)
	}
	a.endDone()
	a.mu.Lock()
	c := a.lttng
	a.lttng = nil
	a.mu.Unlock()
	if c != nil {
		c.Close()
	}
	a.log.close()
	if errors.Is(err, ErrStopped) {
		return nil
	}
	return err
}
