package ctf

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
	"github.com/tadpole-trace/tadpole/transport/live"
)

// CatalogConfig configures a Catalog.
type CatalogConfig struct {
	// Writer configures each run's CTF (Start, Flavor and Env are set
	// per run).
	Writer Config
	// MaxTraceBytes caps the packet bytes held per session (default
	// live.DefaultTraceMaxBytes).
	MaxTraceBytes int64
	// Backlog is the bytes of Bytefrog messages a run keeps before its
	// first viewer comes, for that viewer (default DefaultBacklog; a
	// viewer that starts at the beginning wants more). Nothing is encoded
	// before a viewer comes.
	Backlog int
	// FeedMax is the bytes of Bytefrog messages a run keeps ahead of its
	// encoding once a viewer came (default DefaultFeedMax; at least
	// Backlog): a viewer further behind skips the oldest events, counted
	// as discarded.
	FeedMax int
	// MaxEnded caps the ended runs kept in memory when they have no trace
	// file (default 8); the oldest go first. A run with a trace file is
	// served from its file once it has ended.
	MaxEnded int
	// TraceDir, if set, is scanned for trace files of earlier runs, which
	// are served as recorded sessions.
	TraceDir string
	// ServeShare is the share of one core that serving viewers (encoding
	// and sending, in CPU time) may take while a run is being ingested
	// (default DefaultServeShare; negative: no limit). Set Pacer() as
	// live.Config.Pacer.
	ServeShare float64
	// ServeRate is the packet bytes per second delivered to all viewers
	// together while a run is being ingested (default DefaultServeRate;
	// negative: no limit). A viewer that falls behind the run meanwhile
	// skips to the oldest events kept (Backlog), the others counted as
	// discarded.
	ServeRate float64
	// PaceAbove is the ingest rate, in events per second, above which
	// serving is paced (default DefaultPaceAbove; negative: whenever a run
	// is being ingested). Below it HQ has cores to spare and viewers are
	// served at full speed.
	PaceAbove float64
	// Hostname replaces the agent's host in session names ("" looks it up:
	// this host's name for a loopback agent, else its IP address).
	Hostname string
}

// Defaults for CatalogConfig.
const (
	DefaultMaxEnded = 8
	replayWindow    = 8 << 20 // packet bytes a recorded run's replay runs ahead of its viewer
	rescanEvery     = time.Second
	nameSuffix      = ".live" // sidecar file holding a trace file's session name
)

// Catalog serves HQ's runs as live sessions (live.Catalog): every run in
// progress, named <host>/<program>-<pid>-<run id>, and every recorded run
// (a trace file in TraceDir). Its methods are safe for concurrent use.
type Catalog struct {
	cfg   CatalogConfig
	pacer *Pacer

	mu       sync.Mutex
	nextID   uint64
	sessions []*session
	seen     map[string]bool // trace files looked at
	scanned  time.Time
}

// NewCatalog returns an empty catalog; a nil cfg means the defaults.
func NewCatalog(cfg *CatalogConfig) (*Catalog, error) {
	c := &Catalog{seen: map[string]bool{}}
	if cfg != nil {
		c.cfg = *cfg
	}
	if err := c.cfg.Writer.Verify(); err != nil {
		return nil, err
	}
	if c.cfg.MaxTraceBytes <= 0 {
		c.cfg.MaxTraceBytes = live.DefaultTraceMaxBytes
	}
	if c.cfg.MaxEnded <= 0 {
		c.cfg.MaxEnded = DefaultMaxEnded
	}
	if c.cfg.ServeShare == 0 {
		c.cfg.ServeShare = DefaultServeShare
	}
	if c.cfg.ServeRate == 0 {
		c.cfg.ServeRate = DefaultServeRate
	}
	if c.cfg.PaceAbove == 0 {
		c.cfg.PaceAbove = DefaultPaceAbove
	}
	c.pacer = NewPacer(c.cfg.ServeShare, c.cfg.ServeRate, c.cfg.PaceAbove)
	return c, nil
}

// Pacer returns the pacer of the catalog's runs: set it as the live
// server's live.Config.Pacer.
func (c *Catalog) Pacer() *Pacer { return c.pacer }

// session is one run: live (trace set) or recorded (file set).
type session struct {
	c *Catalog

	mu      sync.Mutex
	info    live.SessionInfo
	trace   *live.Trace // live run; nil once served from its file
	file    string
	start   time.Time
	runID   uint8
	agent   string
	writer  Config
	feed    *Feed         // a live run's events, encoded on its viewers' demand
	named   chan struct{} // a live run: closed once named (nil: named)
	ended   bool
	endedAt time.Time
}

func (s *session) Info() live.SessionInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.info
	if s.trace != nil {
		in.Streams = s.trace.Streams()
	}
	return in
}

// Open gives a viewer the run's live trace, or a replay of its file made
// for this viewer alone.
func (s *session) Open() (*live.Trace, func(), error) {
	s.mu.Lock()
	t, file, wc, f := s.trace, s.file, s.writer, s.feed
	s.mu.Unlock()
	if t != nil {
		f.Start() // the run keeps more from the first viewer on
		return t, nil, nil
	}
	// A replay waits for its viewer: a small window is enough, and keeps
	// many viewers of recordings cheap.
	window := min(s.c.cfg.MaxTraceBytes, replayWindow)
	t = live.NewTrace(&live.TraceConfig{MaxBytes: window, Block: true})
	wc.TickBytes = window / 8
	w, err := NewWriter(t, &wc)
	if err != nil {
		return nil, nil, err
	}
	go func() {
		hq.ReplayFile(file, &hq.ReplayOptions{Processors: []hq.Processor{w}, Lenient: true})
		w.Close()
	}()
	return t, t.Close, nil
}

// Processor returns the processor that makes run r a live session; set it
// as hq.Config.NewProcessor.
func (c *Catalog) Processor(r *hq.Run) hq.Processor {
	wc := c.cfg.Writer
	wc.Start = r.StartedAt()
	f := newFeed(bytefrog.Dialect{Version: r.Version(), Flavor: wc.Flavor}, c.cfg.Backlog, c.cfg.FeedMax)
	f.pacer = c.pacer
	s := &session{c: c, start: r.StartedAt().Round(0), runID: r.ID(), agent: r.Agent(), feed: f,
		named: make(chan struct{})}
	c.add(s)
	// Naming the program may scan /proc: not on the run's way; the session
	// is listed once named.
	go func() {
		defer close(s.named)
		peer := lookupAgent(r.Agent(), r.LocalAddr())
		if c.cfg.Hostname != "" {
			peer.Host = c.cfg.Hostname
		}
		wc.Env = map[string]string{"hostname": peer.Host, "procname": peer.Program, "vpid": strconv.Itoa(peer.PID),
			"run_id": strconv.Itoa(int(r.ID())), "agent": r.Agent()}
		t := live.NewTrace(&live.TraceConfig{MaxBytes: c.cfg.MaxTraceBytes})
		w, err := NewWriter(t, &wc) // wc was verified by NewCatalog
		if err != nil {
			f.Discard()
			return
		}
		f.setWriter(w)
		t.SetDemand(f.Fill)
		s.mu.Lock()
		s.trace, s.writer = t, wc
		s.info.Hostname = peer.Host
		s.info.Name = fmt.Sprintf("%s-%d-%d", peer.Program, peer.PID, r.ID())
		s.info.LiveTimer = uint32(wc.LiveTimer / time.Microsecond)
		s.mu.Unlock()
	}()
	go func() {
		<-r.Done()
		<-s.named
		rep := r.Report()
		s.mu.Lock()
		s.ended, s.endedAt = true, time.Now()
		if rep != nil && rep.TraceFile != "" {
			s.file = rep.TraceFile
			s.trace = nil // served from the file from now on
			s.info.Recorded = true
			if !s.feed.Started() {
				s.feed.Discard() // nobody will read it live
			}
			os.WriteFile(rep.TraceFile+nameSuffix, []byte(s.info.Hostname+"/"+s.info.Name+"\n"), 0o644)
		}
		s.mu.Unlock()
		c.mu.Lock()
		if s.file != "" {
			c.seen[s.file] = true
		}
		c.mu.Unlock()
		c.trimEnded()
	}()
	return f
}

func addr(s string) net.Addr {
	a, err := net.ResolveTCPAddr("tcp", s)
	if err != nil {
		return nil
	}
	return a
}

func (c *Catalog) add(s *session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID++
	s.info.ID = c.nextID
	c.sessions = append(c.sessions, s)
}

// trimEnded forgets the oldest ended in-memory runs beyond MaxEnded.
func (c *Catalog) trimEnded() {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for i := len(c.sessions) - 1; i >= 0; i-- {
		s := c.sessions[i]
		s.mu.Lock()
		mem := s.ended && s.trace != nil
		s.mu.Unlock()
		if !mem {
			continue
		}
		if n++; n > c.cfg.MaxEnded {
			c.sessions = append(c.sessions[:i], c.sessions[i+1:]...)
			s.feed.Discard()
		}
	}
}

// FeedStats returns the memory a live session keeps of its run and the
// events it dropped before they were encoded (zeros for an unknown or
// recorded session).
func (c *Catalog) FeedStats(id uint64) (kept, dropped int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.sessions {
		if s.info.ID == id && s.feed != nil {
			return s.feed.Kept()
		}
	}
	return 0, 0
}

// ServeStats returns the events a live session has encoded for its
// viewers and the packet bytes it has published (zeros for an unknown or
// recorded session, or before the first encoding).
func (c *Catalog) ServeStats(id uint64) (events, bytes int64) {
	c.mu.Lock()
	var f *Feed
	for _, s := range c.sessions {
		if s.info.ID == id {
			f = s.feed
		}
	}
	c.mu.Unlock()
	if f == nil {
		return 0, 0
	}
	f.enc.Lock()
	w := f.w
	f.enc.Unlock()
	if w == nil {
		return 0, 0
	}
	return w.Stats()
}

// Sessions implements live.Catalog.
func (c *Catalog) Sessions() []live.Session {
	c.scan()
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]live.Session, 0, len(c.sessions))
	for _, s := range c.sessions {
		if s.isNamed() {
			out = append(out, s)
		}
	}
	return out
}

// Session implements live.Catalog.
func (c *Catalog) Session(id uint64) live.Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.sessions {
		if s.info.ID == id && s.isNamed() {
			return s
		}
	}
	return nil
}

// isNamed reports whether s may be listed.
func (s *session) isNamed() bool {
	if s.named == nil {
		return true
	}
	select {
	case <-s.named:
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.trace != nil || s.file != ""
	default:
		return false
	}
}

// AddFile serves the trace file at path as a recorded session.
func (c *Catalog) AddFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	tr, err := hq.NewTraceReader(f)
	if err != nil {
		f.Close()
		return err
	}
	h := tr.Header()
	tr.Close()
	f.Close()
	c.mu.Lock()
	c.seen[path] = true
	for _, s := range c.sessions {
		s.mu.Lock()
		same := s.runID == h.RunID && s.start.Equal(h.Start) && s.agent == h.Agent
		s.mu.Unlock()
		if same {
			c.mu.Unlock()
			return nil // a run of this process: its session serves it
		}
	}
	c.mu.Unlock()

	host, name := c.recordedName(path, &h)
	wc := c.cfg.Writer
	wc.Start, wc.Flavor = h.Start, h.Flavor
	wc.Env = map[string]string{"hostname": host, "run_id": strconv.Itoa(int(h.RunID)), "agent": h.Agent}
	s := &session{c: c, file: path, start: h.Start, runID: h.RunID, agent: h.Agent, writer: wc, ended: true,
		info: live.SessionInfo{Hostname: host, Name: name, LiveTimer: uint32(wc.LiveTimer / time.Microsecond),
			Recorded: true}}
	c.add(s)
	return nil
}

// recordedName names a trace file's session: from its sidecar file when
// HQ wrote one at the run's end, else from the header (program and pid
// unknown: agent-0-<run>).
func (c *Catalog) recordedName(path string, h *hq.TraceHeader) (host, name string) {
	if b, err := os.ReadFile(path + nameSuffix); err == nil {
		if hn, n, ok := strings.Cut(strings.TrimSpace(string(b)), "/"); ok && hn != "" && n != "" {
			return clean(hn, 63), clean(n, 254)
		}
	}
	p := lookupAgent(h.Agent, nil)
	if c.cfg.Hostname != "" {
		p.Host = c.cfg.Hostname
	}
	return p.Host, fmt.Sprintf("%s-%d-%d", p.Program, p.PID, h.RunID)
}

// scan adds the trace files of TraceDir not seen yet, at most once a
// second.
func (c *Catalog) scan() {
	if c.cfg.TraceDir == "" {
		return
	}
	c.mu.Lock()
	if time.Since(c.scanned) < rescanEvery {
		c.mu.Unlock()
		return
	}
	c.scanned = time.Now()
	c.mu.Unlock()
	ents, err := os.ReadDir(c.cfg.TraceDir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.IsDir() || !strings.HasPrefix(e.Name(), "tadpole-") || strings.HasSuffix(e.Name(), nameSuffix) {
			continue
		}
		p := filepath.Join(c.cfg.TraceDir, e.Name())
		c.mu.Lock()
		seen := c.seen[p]
		c.mu.Unlock()
		if !seen {
			c.AddFile(p)
		}
	}
}

var _ live.Catalog = (*Catalog)(nil)
