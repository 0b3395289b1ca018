package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tadpole-trace/tadpole/transport/hce"
)

// Config configures a Hub.
type Config struct {
	// Conn configures every connection (timeouts, payload cap, MD5 of what
	// the hub sends).
	Conn hce.Config
	// MaxConns bounds the connections; more are refused with
	// TOO_MANY_CONNECTIONS. Default 1024.
	MaxConns int
	// Logger receives connection events at debug level and refusals at
	// info. Default: discard.
	Logger *slog.Logger
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{Conn: hce.DefaultConfig(), MaxConns: 1024}
}

// Verify checks the settings.
func (c *Config) Verify() error {
	if c.MaxConns < 1 {
		return fmt.Errorf("%w: MaxConns %d", hce.ErrBadConfig, c.MaxConns)
	}
	return c.Conn.Verify()
}

// peer is one connection: a client, an agent, or both.
type peer struct {
	conn      *hce.Conn
	refs      map[uint32]int // agent ID → references held
	attached  map[uint32]bool
	listeners []uint32 // listener IDs on IfaceAgentEvents
}

// agent is a connection that registered at least once.
type agent struct {
	reg        hce.Registration
	registered bool
	attached   map[uint32]bool // client ID → exclusive
	exclusive  uint32          // client holding the lock, or 0
}

// Stats are the hub's counters.
type Stats struct {
	Connections int
	Agents      int // registered
	References  int // held by clients, all agents
	Attachments int
	Listeners   int
	Forwarded   uint64
	Rejected    uint64
	Events      uint64
	BadPayloads uint64 // of connections now closed, plus open ones
	Checksum    uint64 // envelopes dropped on an MD5 mismatch
	Resyncs     uint64
}

// Hub routes between clients and agents. Its methods are safe for
// concurrent use.
type Hub struct {
	cfg Config
	log *slog.Logger

	mu     sync.Mutex
	nextID uint32
	peers  map[uint32]*peer
	agents map[uint32]*agent
	closed bool
	lns    []io.Closer

	wg                             sync.WaitGroup
	forwarded, rejected, events    atomic.Uint64
	badPayloads, checksum, resyncs atomic.Uint64
}

// New returns a hub; cfg nil means DefaultConfig.
func New(cfg *Config) (*Hub, error) {
	c := DefaultConfig()
	if cfg != nil {
		c = *cfg
		if c.MaxConns == 0 {
			c.MaxConns = 1024
		}
	}
	if err := c.Verify(); err != nil {
		return nil, err
	}
	log := c.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Hub{cfg: c, log: log, nextID: hce.FirstConnID - 1,
		peers: make(map[uint32]*peer), agents: make(map[uint32]*agent)}, nil
}

// Listen serves addr: "host:port" for TCP or "pipe:/path" for a FIFO. It
// returns the address actually bound ("pipe:/path" for a FIFO).
func (h *Hub) Listen(addr string) (string, error) {
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return "", hce.ErrClosed
	}
	if path, ok := strings.CutPrefix(addr, "pipe:"); ok {
		l, err := hce.ListenPipe(path, &h.cfg.Conn)
		if err != nil {
			return "", err
		}
		h.addListener(l)
		h.wg.Add(1)
		go h.servePipe(l)
		return addr, nil
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	h.addListener(l)
	h.wg.Add(1)
	go h.serveTCP(l)
	return l.Addr().String(), nil
}

func (h *Hub) addListener(l io.Closer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lns = append(h.lns, l)
}

func (h *Hub) serveTCP(l net.Listener) {
	defer h.wg.Done()
	for {
		nc, err := l.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				h.log.Warn("hce: accept", "err", err)
			}
			return
		}
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			var id uint32
			c, err := hce.Accept(nc, &h.cfg.Conn, func() (uint32, hce.Reason) {
				var r hce.Reason
				id, r = h.reserve()
				return id, r
			}, h.handle)
			h.started(c, id, err, nc.RemoteAddr().String())
		}()
	}
}

func (h *Hub) servePipe(l *hce.PipeListener) {
	defer h.wg.Done()
	for {
		name, err := l.Accept()
		if err != nil {
			if !errors.Is(err, hce.ErrClosed) {
				h.log.Warn("hce: pipe accept", "err", err)
			}
			return
		}
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			var id uint32
			c, err := l.AcceptPipe(name, func() (uint32, hce.Reason) {
				var r hce.Reason
				id, r = h.reserve()
				return id, r
			}, h.handle)
			h.started(c, id, err, name)
		}()
	}
}

// reserve gives out the next connection ID with a placeholder peer.
func (h *Hub) reserve() (uint32, hce.Reason) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.closed:
		return 0, hce.ReasonShutdown
	case len(h.peers) >= h.cfg.MaxConns:
		return 0, hce.ReasonTooManyConnections
	}
	h.nextID++
	if h.nextID < hce.FirstConnID {
		h.nextID = hce.FirstConnID
	}
	id := h.nextID
	h.peers[id] = &peer{refs: map[uint32]int{}, attached: map[uint32]bool{}}
	return id, hce.ReasonNone
}

func (h *Hub) started(c *hce.Conn, id uint32, err error, from string) {
	if err != nil {
		h.log.Info("hce: connection refused", "from", from, "err", err)
		if id != 0 {
			h.drop(id)
		}
		return
	}
	h.mu.Lock()
	p := h.peers[id]
	if p != nil && p.conn == nil {
		p.conn = c
	}
	closed := h.closed
	h.mu.Unlock()
	if closed {
		c.Close(hce.ReasonShutdown)
	}
	h.log.Debug("hce: connected", "id", id, "from", from)
	<-c.Done()
	h.log.Debug("hce: disconnected", "id", id, "err", c.Err())
	h.drop(id)
}

// out is a block to send once the lock is released.
type out struct {
	to *hce.Conn
	b  hce.Block
}

func send(msgs []out) {
	for i := range msgs {
		if msgs[i].to != nil {
			msgs[i].to.Send(&msgs[i].b)
		}
	}
}

// drop forgets a connection and everything tied to it.
func (h *Hub) drop(id uint32) {
	h.mu.Lock()
	var msgs []out
	p := h.peers[id]
	delete(h.peers, id)
	if p != nil && p.conn != nil {
		// The counters of a closed connection move to the hub's.
		h.badPayloads.Add(p.conn.BadPayloads.Load())
		h.checksum.Add(p.conn.Codec().Stats.ChecksumDrops.Load())
		h.resyncs.Add(p.conn.Codec().Stats.Resyncs.Load())
	}
	if a := h.agents[id]; a != nil {
		if a.registered {
			msgs = h.emit(msgs, hce.EventAgentDeregistered, id)
		}
		for cid, pp := range h.peers {
			held := pp.refs[id] > 0 || pp.attached[id]
			delete(pp.refs, id)
			delete(pp.attached, id)
			if held && len(pp.listeners) == 0 {
				msgs = append(msgs, out{pp.conn, eventBlock(cid, 0, hce.EventAgentDeregistered, id)})
			}
		}
		delete(h.agents, id)
	}
	if p != nil {
		for aid := range p.attached {
			msgs = h.detach(msgs, id, aid)
		}
	}
	h.mu.Unlock()
	send(msgs)
}

func eventBlock(to, listener uint32, eid hce.CommandID, agentID uint32) hce.Block {
	return hce.Block{Dest: to, Src: hce.EngineID, Iface: hce.IfaceAgentEvents, Cmd: eid, Context: listener,
		Data: hce.AppendU32(nil, agentID)}
}

// emit queues an event for every listener; h.mu is held.
func (h *Hub) emit(msgs []out, eid hce.CommandID, agentID uint32) []out {
	h.events.Add(1)
	for id, p := range h.peers {
		for _, l := range p.listeners {
			msgs = append(msgs, out{p.conn, eventBlock(id, l, eid, agentID)})
		}
	}
	return msgs
}

// detach ends client cid's attachment to agent aid; h.mu is held.
func (h *Hub) detach(msgs []out, cid, aid uint32) []out {
	if p := h.peers[cid]; p != nil {
		delete(p.attached, aid)
	}
	a := h.agents[aid]
	if a == nil {
		return msgs
	}
	if _, ok := a.attached[cid]; !ok {
		return msgs
	}
	delete(a.attached, cid)
	if a.exclusive == cid {
		a.exclusive = 0
		msgs = h.emit(msgs, hce.EventAgentAvailable, aid)
	}
	return msgs
}

// handle runs on each connection's reader goroutine.
func (h *Hub) handle(c *hce.Conn, b *hce.Block) {
	h.mu.Lock()
	p := h.peers[c.ID()]
	if p == nil { // closing
		h.mu.Unlock()
		return
	}
	if p.conn == nil {
		p.conn = c
	}
	var msgs []out
	switch {
	case b.Src != c.ID():
		msgs = h.reject(msgs, c, b, hce.ReasonIDMismatch)
	case b.Dest == hce.EngineID:
		msgs = h.manage(msgs, c, p, b)
	default:
		msgs = h.route(msgs, c, b)
	}
	h.mu.Unlock()
	send(msgs)
}

func (h *Hub) reject(msgs []out, c *hce.Conn, b *hce.Block, r hce.Reason) []out {
	h.rejected.Add(1)
	h.log.Debug("hce: rejected", "block", b.String(), "reason", r)
	return append(msgs, out{c, hce.Block{Dest: c.ID(), Src: hce.EngineID, Session: b.Session, Iface: b.Iface,
		Cmd: hce.CmdRejected, Context: b.Context, Data: hce.AppendRejected(nil, r, b.Iface, b.Cmd)}})
}

func reply(msgs []out, c *hce.Conn, req *hce.Block, cmd hce.CommandID, data []byte) []out {
	return append(msgs, out{c, hce.Block{Dest: c.ID(), Src: hce.EngineID, Session: req.Session, Iface: req.Iface,
		Cmd: cmd, Context: req.Context, Data: data}})
}

// route forwards a block to another connection; h.mu is held. The block's
// data aliases the sender's read buffer, valid until handle returns, and
// Send encodes it at once.
func (h *Hub) route(msgs []out, c *hce.Conn, b *hce.Block) []out {
	d := h.peers[b.Dest]
	if d == nil || d.conn == nil {
		return h.reject(msgs, c, b, hce.ReasonNoSuchDestination)
	}
	src := c.ID()
	if a := h.agents[b.Dest]; a != nil && a.registered {
		if _, ok := a.attached[src]; !ok {
			return h.reject(msgs, c, b, hce.ReasonNotAttached)
		}
		if len(a.reg.Ifaces) > 0 && !slices.Contains(a.reg.Ifaces, b.Iface) {
			return h.reject(msgs, c, b, hce.ReasonUnknownInterface)
		}
	} else if a := h.agents[src]; a == nil {
		return h.reject(msgs, c, b, hce.ReasonNotAttached)
	} else if _, ok := a.attached[b.Dest]; !ok {
		return h.reject(msgs, c, b, hce.ReasonNotAttached)
	}
	h.forwarded.Add(1)
	return append(msgs, out{d.conn, *b})
}

// Stats returns the counters.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	s := Stats{Connections: len(h.peers)}
	for _, a := range h.agents {
		if a.registered {
			s.Agents++
		}
		s.Attachments += len(a.attached)
	}
	for _, p := range h.peers {
		for _, n := range p.refs {
			s.References += n
		}
		s.Listeners += len(p.listeners)
		if p.conn != nil {
			s.BadPayloads += p.conn.BadPayloads.Load()
			s.Checksum += p.conn.Codec().Stats.ChecksumDrops.Load()
			s.Resyncs += p.conn.Codec().Stats.Resyncs.Load()
		}
	}
	s.BadPayloads += h.badPayloads.Load()
	s.Checksum += h.checksum.Load()
	s.Resyncs += h.resyncs.Load()
	h.mu.Unlock()
	s.Forwarded, s.Rejected, s.Events = h.forwarded.Load(), h.rejected.Load(), h.events.Load()
	return s
}

// AgentInfo describes a registered agent.
type AgentInfo struct {
	hce.Registration
	Attached  int
	Exclusive bool
}

// Agents lists the registered agents by ID.
func (h *Hub) Agents() []AgentInfo {
	h.mu.Lock()
	defer h.mu.Unlock()
	var as []AgentInfo
	for _, a := range h.agents {
		if a.registered {
			as = append(as, AgentInfo{Registration: a.reg, Attached: len(a.attached), Exclusive: a.exclusive != 0})
		}
	}
	sort.Slice(as, func(i, j int) bool { return as[i].AgentID < as[j].AgentID })
	return as
}

// Close sends DISCONNECT(SHUTDOWN) to every connection, closes the
// listeners and waits for the connections to end or ctx to expire.
func (h *Hub) Close(ctx context.Context) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	lns := h.lns
	var conns []*hce.Conn
	for _, p := range h.peers {
		if p.conn != nil {
			conns = append(conns, p.conn)
		}
	}
	h.mu.Unlock()
	for _, l := range lns {
		l.Close()
	}
	for _, c := range conns {
		c.Close(hce.ReasonShutdown)
	}
	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
