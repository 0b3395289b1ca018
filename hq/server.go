package hq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// Run ids: "HQ assigns it round-robin over 0..254, unique among live
// traces; the first trace gets 0."
const maxRunIDs = 255

// maxQueuedRuns bounds the runs kept for NextRun; older ones are dropped.
const maxQueuedRuns = 1024

// Server is an HQ: it accepts agents on one port and runs their traces.
// Its methods are safe for concurrent use.
type Server struct {
	cfg    *Config
	log    *slog.Logger
	script []Step

	mu       sync.Mutex
	lns      []net.Listener
	live     [maxRunIDs]*Run
	lastID   uint8
	regCh    chan struct{} // closed and replaced when a run registers
	queue    []*Run        // runs not yet taken by NextRun
	queueCh  chan struct{} // closed and replaced when a run is queued
	greeting map[net.Conn]struct{}
	closing  bool
	serving  bool // Serve began: Listen's new sockets are served at once
	fileSeq  int

	closed     chan struct{} // closed when Shutdown or Close begins
	closeOnce  sync.Once
	tickerOnce sync.Once
	wg         sync.WaitGroup // accept loop, greeters, run cores, ticker
}

// New returns a server for cfg (nil: DefaultConfig()). It verifies cfg and
// creates cfg.TraceDir.
func New(cfg *Config) (*Server, error) {
	if cfg == nil {
		cfg = DefaultConfig()
	}
	cfg = cfg.clone()
	if err := cfg.Verify(); err != nil {
		return nil, err
	}
	steps, err := ParseScript(cfg.Script)
	if err != nil {
		return nil, err
	}
	for _, v := range cfg.Versions {
		if _, err := bytefrog.AppendConfig(nil, v, &cfg.Agent); err != nil {
			return nil, fmt.Errorf("%w: agent configuration for protocol v%d: %w", ErrConfig, v, err)
		}
	}
	if cfg.TraceDir != "" {
		if err := os.MkdirAll(cfg.TraceDir, 0o755); err != nil {
			return nil, fmt.Errorf("%w: trace directory: %w", ErrConfig, err)
		}
	}
	return &Server{
		cfg:      cfg,
		log:      cfg.Logger,
		script:   steps,
		lastID:   maxRunIDs - 1,
		regCh:    make(chan struct{}),
		queueCh:  make(chan struct{}),
		greeting: make(map[net.Conn]struct{}),
		closed:   make(chan struct{}),
	}, nil
}

// Listen opens a listening socket on addr, an HQ address as agents name it
// (bytefrog.ParseAddr): host:port for TCP ("127.0.0.1:0" picks a port),
// unix:/path for a Unix-domain socket file, @name or unix:@name for one in
// Linux's abstract namespace. Each call adds a socket, which Serve serves
// whether it was opened before or after Serve began. A socket file left by an HQ that ended (nothing
// listens on it) is replaced; any other file in the way is an error. HQ
// removes its socket file when it closes.
func (s *Server) Listen(addr string) error {
	a, err := bytefrog.ParseAddr(addr)
	if err != nil {
		return fmt.Errorf("%w: listen: %w", ErrConfig, err)
	}
	ln, err := listen(a, s.log)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		ln.Close()
		return ErrClosed
	}
	s.lns = append(s.lns, ln)
	if s.serving {
		s.wg.Add(1)
		go s.acceptMore(ln)
	}
	return nil
}

// Addr returns the address of the first listening socket in the form
// agents take (host:port, unix:/path, unix:@name), or "" before Listen.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.lns) == 0 {
		return ""
	}
	return bytefrog.AddrOf(s.lns[0].Addr())
}

// Addrs returns the addresses of every listening socket, as Addr does.
func (s *Server) Addrs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	as := make([]string, len(s.lns))
	for i, ln := range s.lns {
		as[i] = bytefrog.AddrOf(ln.Addr())
	}
	return as
}

// Start listens on cfg.Listen and serves in the background.
func (s *Server) Start() error {
	if err := s.Listen(s.cfg.Listen); err != nil {
		return err
	}
	s.mu.Lock()
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		if err := s.Serve(); err != nil && !errors.Is(err, ErrClosed) {
			s.log.Error("serve", "err", err)
		}
	}()
	return nil
}

// Serve accepts connections on every socket opened by Listen, before or
// after it began, until Shutdown or Close, which make it return ErrClosed.
// It returns an accept error of the first socket; those of the others are
// logged and end only their own accepting.
func (s *Server) Serve() error {
	s.mu.Lock()
	lns := s.lns
	if len(lns) > 0 && !s.closing && !s.serving {
		s.wg.Add(len(lns))
		s.serving = true
	} else if s.serving {
		s.mu.Unlock()
		return fmt.Errorf("hq: Serve called twice")
	}
	closing := s.closing
	s.mu.Unlock()
	if closing {
		return ErrClosed
	}
	if len(lns) == 0 {
		return ErrNotListening
	}
	s.tickerOnce.Do(func() {
		s.wg.Add(1)
		go s.healthLoop()
	})
	for _, ln := range lns[1:] {
		go s.acceptMore(ln)
	}
	return s.accept(lns[0])
}

// acceptMore is accept for a socket other than the first: its error is
// logged.
func (s *Server) acceptMore(ln net.Listener) {
	if err := s.accept(ln); !errors.Is(err, ErrClosed) {
		s.log.Error("accept", "addr", bytefrog.AddrOf(ln.Addr()), "err", err)
	}
}

// accept is one socket's accept loop; it returns ErrClosed once the server
// closes, or an error accepting that waiting cannot mend.
func (s *Server) accept(ln net.Listener) error {
	defer s.wg.Done()
	s.log.Info("listening", "addr", bytefrog.AddrOf(ln.Addr()))
	var backoff time.Duration
	for {
		conn, err := ln.Accept()
		if err != nil {
			select {
			case <-s.closed:
				return ErrClosed
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, errTooManyFiles) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("accept", "err", err, "retry in", backoff)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			conn.Close()
			return ErrClosed
		}
		s.greeting[conn] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.greet(conn)
	}
}

// NextRun returns the next run, in the order agents said Hello, waiting for
// one if needed.
func (s *Server) NextRun(ctx context.Context) (*Run, error) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			r := s.queue[0]
			s.queue[0] = nil
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return r, nil
		}
		ch, closing := s.queueCh, s.closing
		s.mu.Unlock()
		if closing {
			return nil, ErrClosed
		}
		select {
		case <-ch:
		case <-s.closed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Runs returns the live runs, oldest first.
func (s *Server) Runs() []*Run { return s.runs(true) }

// runs returns the live runs; with visible, only those fully set up.
func (s *Server) runs(visible bool) []*Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	var rs []*Run
	for _, r := range s.live {
		if r != nil && (r.visible || !visible) {
			rs = append(rs, r)
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].start.Before(rs[j].start) })
	return rs
}

// beginClose stops accepting: the listener and greeting connections close.
func (s *Server) beginClose() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closing = true
		close(s.closed)
		for _, ln := range s.lns {
			ln.Close()
		}
		for c := range s.greeting {
			c.Close()
		}
		s.mu.Unlock()
	})
}

// abortAll fails every live run.
func (s *Server) abortAll(reason string) {
	for _, r := range s.runs(false) {
		r.abortWith(reason)
	}
}

// Shutdown stops accepting connections and waits for the live runs to end
// and every goroutine to exit; when ctx is done first it aborts the runs
// (they fail with "aborted: HQ shut down"), waits a little for them and
// returns ctx.Err(). It is idempotent.
func (s *Server) Shutdown(ctx context.Context) error {
	s.beginClose()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	s.abortAll("aborted: HQ shut down")
	t := time.NewTimer(shutdownGrace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
	return ctx.Err()
}

// shutdownGrace bounds the wait for goroutines after an abort in Shutdown.
const shutdownGrace = 5 * time.Second

// Close aborts every live run at once and waits for all goroutines. It is
// idempotent.
func (s *Server) Close() error {
	s.beginClose()
	s.abortAll("aborted: HQ closed")
	s.wg.Wait()
	return nil
}

// healthLoop logs health changes of live runs.
func (s *Server) healthLoop() {
	defer s.wg.Done()
	t := time.NewTicker(healthTick)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			for _, r := range s.Runs() {
				r.checkHealth()
			}
		case <-s.closed:
			return
		}
	}
}

// register allocates a run id and makes r live.
func (s *Server) register(r *Run) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return ErrClosed
	}
	for i := 1; i <= maxRunIDs; i++ {
		id := uint8((int(s.lastID) + i) % maxRunIDs)
		if s.live[id] == nil {
			s.lastID, r.id = id, id
			s.live[id] = r
			s.wg.Add(1) // the run's core
			return nil
		}
	}
	return errors.New("HQ is not expecting a new connection at this time: every run id is in use")
}

// announce makes r visible to DataHello once it is set up.
func (s *Server) announce(r *Run) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.visible = true
	close(s.regCh)
	s.regCh = make(chan struct{})
}

// publish hands r to NextRun.
func (s *Server) publish(r *Run) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) >= maxQueuedRuns {
		s.queue[0] = nil
		s.queue = s.queue[1:]
	}
	s.queue = append(s.queue, r)
	close(s.queueCh)
	s.queueCh = make(chan struct{})
}

func (s *Server) unregister(r *Run) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live[r.id] == r {
		s.live[r.id] = nil
	}
}

// lookup returns the live run with id, waiting up to wait for it.
func (s *Server) lookup(id uint8, wait time.Duration) *Run {
	if int(id) >= maxRunIDs {
		return nil
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		s.mu.Lock()
		r, ch := s.live[id], s.regCh
		s.mu.Unlock()
		if r != nil && r.visible {
			return r
		}
		select {
		case <-ch:
		case <-timer.C:
			return nil
		case <-s.closed:
			return nil
		}
	}
}

// createTraceFile opens a new trace file for r in cfg.TraceDir.
func (s *Server) createTraceFile(r *Run, cc *coreConfig) (*traceWriter, error) {
	h := &TraceHeader{
		Format: TraceFormat, RunID: r.id, Version: r.version, Flavor: s.cfg.Flavor,
		HasProjectID: r.hasProj, ProjectID: r.projectID, Start: r.start.Round(0),
		HeartbeatInterval: cc.hbInterval, MaxHeldEvents: int64(cc.maxHeldEvents), MaxHeldBytes: cc.maxHeldBytes,
		MaxMappingBytes: cc.maxMappingBytes, MaxConfigSize: int32(s.cfg.MaxConfigSize), TopN: uint16(cc.topN),
		Agent: r.agent,
	}
	var lastErr error
	for range 100 {
		s.mu.Lock()
		s.fileSeq++
		seq := s.fileSeq
		s.mu.Unlock()
		name := fmt.Sprintf("tadpole-%s-run%d-%d%s", r.start.Format("20060102-150405.000"), r.id, seq,
			s.cfg.Compression.Ext())
		w, err := createTrace(filepath.Join(s.cfg.TraceDir, name), h, s.cfg.Compression)
		if err == nil {
			return w, nil
		}
		lastErr = err
		if !errors.Is(err, os.ErrExist) {
			break
		}
	}
	return nil, lastErr
}
