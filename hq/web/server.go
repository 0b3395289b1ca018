package web

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

//go:embed static
var static embed.FS

// Server is the live page of an HQ: it follows each run through the
// processor it gives hq.Config.NewProcessor and serves the page and its
// JSON. Its methods are safe for concurrent use.
type Server struct {
	cfg Config

	mu     sync.Mutex
	runs   []*tracker // oldest first: live runs, then the last EndedRuns ended ones
	serial int
	ln     net.Listener
	hs     *http.Server
	closed bool

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// New returns a server for cfg (nil: DefaultConfig()).
func New(cfg *Config) (*Server, error) {
	c := DefaultConfig()
	if cfg != nil {
		*c = *cfg
	}
	if err := c.Verify(); err != nil {
		return nil, err
	}
	s := &Server{cfg: *c, stop: make(chan struct{}), done: make(chan struct{})}
	go s.publisher()
	return s, nil
}

// Hook makes s follow every run of an HQ configured by c: it chains
// c.NewProcessor. Call it before hq.New(c).
func (s *Server) Hook(c *hq.Config) {
	prev := c.NewProcessor
	c.NewProcessor = func(r *hq.Run) hq.Processor {
		p := s.Processor(r)
		if prev != nil {
			if q := prev(r); q != nil {
				if p == nil {
					return q
				}
				return fanout{p, q}
			}
		}
		if p == nil {
			return nil // a nil *tracker would not be a nil Processor
		}
		return p
	}
}

// Processor returns the processor that follows run r for the page (nil
// after Close).
func (s *Server) Processor(r *hq.Run) hq.Processor {
	t := s.add(r)
	if t == nil {
		return nil
	}
	return t
}

func (s *Server) add(r *hq.Run) *tracker {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.serial++
	t, err := newTracker(s.serial, r, &s.cfg)
	if err != nil { // cannot happen: cfg.Tree was verified
		return nil
	}
	s.runs = append(s.runs, t)
	s.pruneLocked()
	return t
}

// pruneLocked drops the oldest ended runs beyond EndedRuns, or while the
// ended runs kept hold more than EndedPaths call paths (each keeps its
// tree).
func (s *Server) pruneLocked() {
	ended, paths := 0, 0
	for _, t := range s.runs {
		if e, n := t.endedPaths(); e {
			ended++
			paths += n
		}
	}
	for i := 0; i < len(s.runs) && (ended > s.cfg.EndedRuns || paths > s.cfg.EndedPaths); {
		if e, n := s.runs[i].endedPaths(); e {
			s.runs = slices.Delete(s.runs, i, i+1)
			ended--
			paths -= n
			continue
		}
		i++
	}
}

// endedPaths reports whether the run ended, and its call paths.
func (t *tracker) endedPaths() (bool, int) {
	t.pub.mu.RLock()
	defer t.pub.mu.RUnlock()
	return t.pub.ended, t.pub.paths
}

func (t *tracker) isEnded() bool {
	t.pub.mu.RLock()
	defer t.pub.mu.RUnlock()
	return t.pub.ended
}

func (s *Server) trackers() []*tracker {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.runs)
}

func (s *Server) tracker(key int) *tracker {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.runs {
		if t.key == key {
			return t
		}
	}
	return nil
}

// publisher samples the live runs every Tick.
func (s *Server) publisher() {
	defer close(s.done)
	tick := time.NewTicker(s.cfg.Tick)
	defer tick.Stop()
	for {
		select {
		case now := <-tick.C:
			for _, t := range s.trackers() {
				if !t.isEnded() {
					t.publish(now)
				}
			}
			s.mu.Lock()
			s.pruneLocked()
			s.mu.Unlock()
		case <-s.stop:
			return
		}
	}
}

// IsLoopback reports whether the host of addr (host:port) is a loopback
// address or "localhost".
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// Listen opens the page's socket on addr. An address beyond loopback
// (including "" and "0.0.0.0") is refused with ErrNotLoopback unless
// Config.AllowRemote is set.
func (s *Server) Listen(addr string) error {
	if !s.cfg.AllowRemote && !IsLoopback(addr) {
		return fmt.Errorf("%w: %q (the page has no authentication and controls runs; allow it explicitly)", ErrNotLoopback, addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		ln.Close()
		return ErrClosed
	}
	if s.ln != nil {
		ln.Close()
		return fmt.Errorf("web: already listening on %v", s.ln.Addr())
	}
	s.ln = ln
	s.hs = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: time.Minute, MaxHeaderBytes: 16 << 10}
	go s.hs.Serve(ln)
	return nil
}

// Addr returns the listening address ("" before Listen).
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// URL returns the page's address, http://ADDR/ ("" before Listen).
func (s *Server) URL() string {
	if a := s.Addr(); a != "" {
		return "http://" + a + "/"
	}
	return ""
}

// Close stops serving and sampling. Runs keep going; their processors
// keep counting for nobody.
func (s *Server) Close() error {
	s.once.Do(func() {
		s.mu.Lock()
		s.closed = true
		hs := s.hs
		s.mu.Unlock()
		close(s.stop)
		<-s.done
		if hs != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if hs.Shutdown(ctx) != nil {
				hs.Close()
			}
		}
	})
	return nil
}

// Handler returns the page and its API as an http.Handler.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	sub, _ := fs.Sub(static, "static")
	files := http.FileServerFS(sub)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { serveFile(w, r, sub, "index.html") })
	mux.HandleFunc("GET /app.js", func(w http.ResponseWriter, r *http.Request) { files.ServeHTTP(w, r) })
	mux.HandleFunc("GET /app.css", func(w http.ResponseWriter, r *http.Request) { files.ServeHTTP(w, r) })
	mux.HandleFunc("GET /api/runs", s.handleRuns)
	mux.HandleFunc("GET /api/runs/{key}/flame", s.withRun(s.handleFlame))
	mux.HandleFunc("GET /api/runs/{key}/timeline", s.withRun(s.handleTimeline))
	mux.HandleFunc("GET /api/runs/{key}/exceptions", s.withRun(s.handleExceptions))
	mux.HandleFunc("GET /api/runs/{key}/markers", s.withRun(s.handleMarkers))
	mux.HandleFunc("POST /api/runs/{key}/control", s.withRun(s.handleControl))
	return s.guard(mux)
}

func serveFile(w http.ResponseWriter, r *http.Request, sub fs.FS, name string) {
	b, err := fs.ReadFile(sub, name)
	if err != nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b)
}

// guard refuses requests for another host name than the page's (DNS
// rebinding) unless remote access is allowed, and sets the headers that
// keep the page to itself.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
		if !s.cfg.AllowRemote && !IsLoopback(hostPort(r.Host)) {
			http.Error(w, "web: this page answers to loopback host names only", http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hostPort gives a Host header a port, so that IsLoopback can split it.
func hostPort(host string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		return host + ":80"
	}
	return net.JoinHostPort(host, "80")
}

func (s *Server) withRun(h func(http.ResponseWriter, *http.Request, *tracker)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		key, err := strconv.Atoi(r.PathValue("key"))
		if err != nil || key <= 0 {
			http.Error(w, "web: bad run key", http.StatusBadRequest)
			return
		}
		t := s.tracker(key)
		if t == nil {
			http.Error(w, "web: no such run", http.StatusNotFound)
			return
		}
		h(w, r, t)
	}
}

// query reads an unsigned integer parameter (def when absent).
func query(r *http.Request, name string, def uint64) (uint64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	if len(v) > 20 {
		return 0, fmt.Errorf("web: %s: too long", name)
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("web: %s: %q is not a number", name, v)
	}
	return n, nil
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Write(b)
}

// fanout hands a run's messages to several processors.
type fanout []hq.Processor

func (f fanout) Message(m *bytefrog.Msg) {
	for _, p := range f {
		p.Message(m)
	}
}

func (f fanout) DataBreak(seq int32) {
	for _, p := range f {
		p.DataBreak(seq)
	}
}

func (f fanout) Finish(r *hq.Report) {
	for _, p := range f {
		p.Finish(r)
	}
}
