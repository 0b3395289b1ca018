package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
	"github.com/tadpole-trace/tadpole/transport/lttngagent"
)

// active is the session instrumented code records into; nil means no
// tracing and every recording call returns at once.
var active atomic.Pointer[session]

// Agent is a tracing agent connected to one HQ. Only one agent traces at a
// time in a process, because instrumented code records into whichever one
// is active. Its methods are safe for concurrent use.
type Agent struct {
	cfg Config
	log *logger

	mu    sync.Mutex
	sess  *session
	lttng *lttngagent.Client
}

// Start connects to HQ, sends Hello, takes the configuration and waits for
// HQ's Start (bounded by cfg.StartTimeout), then returns a tracing agent.
// Suspend and further configurations sent before Start are honoured. When
// HQ is absent or rejects the agent, Start returns an error within
// cfg.ConnectTimeout and the process goes on untraced.
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
	a := &Agent{cfg: cfg, log: log}
	if err := a.start(ctx); err != nil {
		log.oncef("start:"+err.Error(), LevelWarn, "running untraced: %v", err)
		log.close()
		return nil, err
	}
	return a, nil
}

func (a *Agent) start(ctx context.Context) error {
	if active.Load() != nil {
		return ErrAlreadyRunning
	}
	s := newSession(a.cfg, a.log)
	if err := s.handshake(ctx); err != nil {
		return err
	}
	s.run()
	var timeout <-chan struct{}
	if a.cfg.StartTimeout > 0 {
		tctx, cancel := context.WithTimeout(ctx, a.cfg.StartTimeout)
		defer cancel()
		timeout = tctx.Done()
	} else {
		timeout = ctx.Done()
	}
	select {
	case <-s.started:
	case err := <-s.startErr:
		<-s.done
		return err
	case <-s.failCh:
		<-s.done
		return s.failErr
	case <-timeout:
		err := fmt.Errorf("%w (%v)", ErrStartTimeout, a.cfg.StartTimeout)
		s.sendControl(bytefrog.AppendError(nil, err.Error()), true)
		s.fail(err)
		<-s.done
		return err
	}
	if !active.CompareAndSwap(nil, s) {
		s.fail(ErrAlreadyRunning)
		<-s.done
		return ErrAlreadyRunning
	}
	select {
	case <-s.done:
		// The run ended between start and here; its end could not free the slot.
		active.CompareAndSwap(s, nil)
	default:
	}
	a.mu.Lock()
	a.sess = s
	a.mu.Unlock()
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
		a.cfg.HQ, a.cfg.Version, s.hq.RunID, len(s.data))
	return nil
}

func (a *Agent) session() *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sess
}

// Mode is the agent's current mode as reported to HQ.
func (a *Agent) Mode() bytefrog.Mode {
	if s := a.session(); s != nil {
		return s.currentMode()
	}
	return bytefrog.ModeShutdown
}

// Done is closed when the run has ended: stopped by HQ, shut down, or failed.
func (a *Agent) Done() <-chan struct{} { return a.session().done }

// Err is why the run ended, once Done is closed; nil after a clean stop.
func (a *Agent) Err() error {
	s := a.session()
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
func (a *Agent) Events() int64 { return a.session().events.Load() }

// RunID is the run id HQ assigned.
func (a *Agent) RunID() uint8 { return a.session().hq.RunID }

// Shutdown ends tracing: it reports 'X' to HQ, sends every event already
// recorded, closes the data connections, then the control connection. It
// returns when done or when ctx ends (then it closes everything at once).
// It is idempotent.
func (a *Agent) Shutdown(ctx context.Context) error {
	s := a.session()
	err := s.stop(ctx)
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
