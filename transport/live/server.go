package live

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// SessionInfo describes a session in LIST_SESSIONS.
type SessionInfo struct {
	ID        uint64 // unique and stable for the server's life; not 0
	Hostname  string // the traced target's host: the HOST of net://…/host/HOST/NAME
	Name      string // no '/'
	LiveTimer uint32 // µs between packet cuts or beacons; 0 lists it as not live
	// Recorded: the session is a finished recording; a viewer attaching
	// with SeekLast gets it from the beginning, as there is no end to
	// wait at.
	Recorded bool
	// Streams is the count of data streams shown in the listing.
	Streams int
}

// Session is one trace a Server serves.
type Session interface {
	Info() SessionInfo
	// Open returns the trace a viewer attaching now reads: one shared
	// Trace for a live session, or a fresh one for a recording replayed
	// to this viewer. release is called when the viewer detaches or goes.
	Open() (t *Trace, release func(), err error)
}

// Catalog lists the sessions a Server serves. It must be safe for
// concurrent use.
type Catalog interface {
	Sessions() []Session
	Session(id uint64) Session // nil if unknown
}

// Config configures a Server.
type Config struct {
	// MaxViewers caps the viewer connections open at once (default 64);
	// more are closed on accept.
	MaxViewers int
	// WriteTimeout bounds each reply's write (default 5 s): a viewer that
	// stops reading loses its connection, nothing else.
	WriteTimeout time.Duration
	// IdleTimeout closes a connection that sends no request for this long
	// (default 2 min; babeltrace polls every 100 ms while attached).
	IdleTimeout time.Duration
	// MaxPacketRead caps the bytes of one GET_PACKET reply (default
	// 1 MiB; babeltrace asks for at most 256 KiB).
	MaxPacketRead int
	// ForceBeginning makes every attach start at the beginning, whatever
	// seek the viewer asks (babeltrace 2.0 always asks SeekLast).
	ForceBeginning bool
	// Logger receives the server's log; nil discards it.
	Logger *slog.Logger
	// Pacer, if set, holds serving back (e.g. to leave the CPU to the
	// producer).
	Pacer Pacer
}

// Pacer holds serving back. As requests are strictly sequential, a
// viewer held back waits for its next reply: its own CPU follows the
// pace. Its methods are called by the viewers' goroutines, concurrently.
type Pacer interface {
	// Paced reports whether serving is held back now. While it is, the
	// CPU time of each request is measured (its goroutine keeps its
	// thread meanwhile); otherwise its wall time is given.
	Paced() bool
	// Pace is called after each reply with the time the request took to
	// handle and send (its thread's CPU time if it was measured, never
	// more than the wall time) and the packet bytes the reply carried
	// (GET_PACKET's data, else 0). It may sleep.
	Pace(busy time.Duration, sent int)
}

// Defaults for Config.
const (
	DefaultMaxViewers    = 64
	DefaultWriteTimeout  = 5 * time.Second
	DefaultIdleTimeout   = 2 * time.Minute
	DefaultMaxPacketRead = 1 << 20
	// MaxPacketReadLimit bounds Config.MaxPacketRead.
	MaxPacketReadLimit = 64 << 20
)

// DefaultConfig returns the defaults.
func DefaultConfig() *Config {
	return &Config{MaxViewers: DefaultMaxViewers, WriteTimeout: DefaultWriteTimeout,
		IdleTimeout: DefaultIdleTimeout, MaxPacketRead: DefaultMaxPacketRead}
}

// Verify checks c and fills zero fields with defaults.
func (c *Config) Verify() error {
	switch {
	case c.MaxViewers < 0, c.WriteTimeout < 0, c.IdleTimeout < 0, c.MaxPacketRead < 0:
		return fmt.Errorf("%w: negative value", ErrConfig)
	case c.MaxPacketRead > MaxPacketReadLimit:
		return fmt.Errorf("%w: MaxPacketRead %d (max %d)", ErrConfig, c.MaxPacketRead, MaxPacketReadLimit)
	}
	d := DefaultConfig()
	if c.MaxViewers == 0 {
		c.MaxViewers = d.MaxViewers
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = d.WriteTimeout
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = d.IdleTimeout
	}
	if c.MaxPacketRead == 0 {
		c.MaxPacketRead = d.MaxPacketRead
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return nil
}

// Server is the relay side of the live protocol. It serves a Catalog to
// any number of viewers, several per session, each with its own cursors.
// Its methods are safe for concurrent use.
type Server struct {
	cfg Config
	cat Catalog
	log *slog.Logger

	nextViewer atomic.Uint64
	lastReq    atomic.Int64 // unix ns of the last request served
	sent       atomic.Int64 // packet bytes sent
	clients    sync.Map     // session id → *atomic.Int32 attached viewers

	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// NewServer returns a server for cat; a nil cfg means the defaults.
func NewServer(cat Catalog, cfg *Config) (*Server, error) {
	c := DefaultConfig()
	if cfg != nil {
		c = cfg
	}
	cc := *c
	if err := cc.Verify(); err != nil {
		return nil, err
	}
	return &Server{cfg: cc, cat: cat, log: cc.Logger, conns: map[net.Conn]struct{}{}}, nil
}

// Serve accepts viewers on ln until Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.ln = ln
	s.mu.Unlock()
	for {
		c, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		s.mu.Lock()
		if s.closed || len(s.conns) >= s.cfg.MaxViewers {
			s.mu.Unlock()
			s.log.Warn("live: viewer refused: too many viewers", "addr", c.RemoteAddr())
			c.Close()
			continue
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serveConn(c)
	}
}

// Viewers returns the number of viewer connections open.
func (s *Server) Viewers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// LastRequest returns when the last request was served (zero if none).
func (s *Server) LastRequest() time.Time {
	if ns := s.lastReq.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// Sent returns the packet bytes (GET_PACKET data) sent to viewers so far.
func (s *Server) Sent() int64 { return s.sent.Load() }

// Clients returns the viewers attached to session id.
func (s *Server) Clients(id uint64) int {
	if v, ok := s.clients.Load(id); ok {
		return int(v.(*atomic.Int32).Load())
	}
	return 0
}

func (s *Server) clientCount(id uint64) *atomic.Int32 {
	v, _ := s.clients.LoadOrStore(id, new(atomic.Int32))
	return v.(*atomic.Int32)
}

// Close stops accepting, closes every viewer connection and waits for
// their goroutines. It is idempotent.
func (s *Server) Close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		if s.ln != nil {
			s.ln.Close()
		}
		for c := range s.conns {
			c.Close()
		}
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

func (s *Server) serveConn(c net.Conn) {
	defer s.wg.Done()
	v := &viewer{srv: s, c: c, attached: map[uint64]*attachment{}, streams: map[uint64]*vstream{}}
	err := v.run()
	v.detachAll()
	c.Close()
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
		s.log.Warn("live: viewer connection closed", "addr", c.RemoteAddr(), "err", err)
	}
}
