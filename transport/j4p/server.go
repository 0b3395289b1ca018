package j4p

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
)

// Server is a Handler on its own listener, with the Config's timeouts and
// connection limit. Start returns once it listens; Close and Shutdown are
// idempotent.
type Server struct {
	h    *Handler
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
	err  error
	once sync.Once
}

// NewServer returns a server for mbs; cfg nil means DefaultConfig.
func NewServer(cfg *Config, mbs MBeanServer) (*Server, error) {
	h, err := NewHandler(cfg, mbs)
	if err != nil {
		return nil, err
	}
	c := h.cfg
	s := &Server{h: h, done: make(chan struct{})}
	s.srv = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: c.ReadHeaderTimeout,
		ReadTimeout:       c.ReadTimeout,
		WriteTimeout:      c.WriteTimeout,
		IdleTimeout:       c.IdleTimeout,
		MaxHeaderBytes:    c.MaxHeaderBytes,
		ErrorLog:          nil,
	}
	s.srv.SetKeepAlivesEnabled(true)
	return s, nil
}

// Handler returns the server's handler.
func (s *Server) Handler() *Handler { return s.h }

// Start listens on the configured address and serves in the background.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", s.h.cfg.Addr)
	if err != nil {
		return err
	}
	s.Serve(ln)
	return nil
}

// Serve serves ln in the background (for tests and hosts that listen
// themselves).
func (s *Server) Serve(ln net.Listener) {
	s.ln = &limitListener{Listener: ln, sem: make(chan struct{}, s.h.cfg.MaxConns)}
	go func() {
		defer close(s.done)
		err := s.srv.Serve(s.ln)
		if !errors.Is(err, http.ErrServerClosed) {
			s.err = err
		}
	}()
}

// Addr is the listening address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Done is closed when serving has ended.
func (s *Server) Done() <-chan struct{} { return s.done }

// Err is why serving ended, after Done; nil after Close or Shutdown.
func (s *Server) Err() error {
	<-s.done
	return s.err
}

// Shutdown stops accepting, waits for requests in flight until ctx ends,
// then closes every connection.
func (s *Server) Shutdown(ctx context.Context) error {
	var err error
	s.once.Do(func() {
		err = s.srv.Shutdown(ctx)
		if err != nil {
			s.srv.Close()
		}
	})
	if s.ln != nil {
		<-s.done
	}
	return err
}

// Close closes the listener and every connection at once.
func (s *Server) Close() error {
	var err error
	s.once.Do(func() { err = s.srv.Close() })
	if s.ln != nil {
		<-s.done
	}
	return err
}

// limitListener closes connections past its capacity at once: an excess
// client costs one accept and one close.
type limitListener struct {
	net.Listener
	sem chan struct{}
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.sem <- struct{}{}:
			return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
		default:
			c.Close()
		}
	}
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
