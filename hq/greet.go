package hq

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// Greeting errors sent to the agent before closing ("Invalid Protocol
// Version", "Unexpected Input Format" and the data connection errors are
// the original HQ's texts).
const (
	msgBadVersion     = "Invalid Protocol Version"
	msgUnexpected     = "Unexpected Input Format"
	msgNoTrace        = "Data connection timed out waiting for a valid trace"
	msgNoAssociation  = "Failed to associate the data connection with the trace"
	greetPrefixSize   = 2 // type byte and the byte after it decide the connection's role
	rejectWriteWindow = time.Second
)

var errTooManyFiles error = syscall.EMFILE

// greet reads a new connection's first bytes and gives it its role.
func (s *Server) greet(conn net.Conn) {
	defer s.wg.Done()
	kept := false
	defer func() {
		s.mu.Lock()
		delete(s.greeting, conn)
		s.mu.Unlock()
		if !kept {
			conn.Close()
		}
	}()
	remote := remoteName(conn)
	conn.SetReadDeadline(time.Now().Add(s.cfg.GreetTimeout))
	var b [bytefrog.ProjectHelloSize]byte
	if _, err := io.ReadFull(conn, b[:greetPrefixSize]); err != nil {
		s.log.Debug("connection closed before its greeting", "remote", remote, "err", err)
		return
	}
	switch bytefrog.MsgType(b[0]) {
	case bytefrog.MsgHello:
		kept = s.hello(conn, b[1], false, 0)
	case bytefrog.MsgProjectHello:
		if _, err := io.ReadFull(conn, b[greetPrefixSize:]); err != nil {
			s.log.Debug("connection closed inside ProjectHello", "remote", remote, "err", err)
			return
		}
		kept = s.hello(conn, b[1], true, int32(binary.BigEndian.Uint32(b[greetPrefixSize:])))
	case bytefrog.MsgDataHello:
		s.dataHello(conn, b[1])
		kept = true // readData closed it, or the run will
	default:
		s.reject(conn, msgUnexpected)
	}
}

// reject sends Error(msg) and closes the connection.
func (s *Server) reject(conn net.Conn, msg string) {
	s.log.Info("connection rejected", "remote", remoteName(conn), "why", msg)
	conn.SetWriteDeadline(time.Now().Add(rejectWriteWindow))
	conn.Write(bytefrog.AppendError(nil, msg))
	lingerClose(conn, rejectWriteWindow)
}

// lingerMax bounds the bytes read and dropped while closing.
const lingerMax = 1 << 20

type closeWriter interface{ CloseWrite() error }

// lingerClose closes conn gracefully: it stops writing, then reads and
// drops what the peer still sends, for up to d, so that unread input does
// not turn the close into a reset that could destroy the Error just sent.
func lingerClose(conn net.Conn, d time.Duration) {
	if cw, ok := conn.(closeWriter); ok && cw.CloseWrite() == nil {
		conn.SetReadDeadline(time.Now().Add(d))
		io.Copy(io.Discard, io.LimitReader(conn, lingerMax))
	}
	conn.Close()
}

// hello starts a run for a control connection; it reports whether the run
// took the connection.
func (s *Server) hello(conn net.Conn, version uint8, hasProj bool, projectID int32) bool {
	if !s.cfg.accepts(version) {
		s.reject(conn, msgBadVersion)
		return false
	}
	conn.SetReadDeadline(time.Time{})
	r := &Run{
		srv: s, cfg: s.cfg, agent: remoteName(conn), version: version,
		hasProj: hasProj, projectID: projectID, start: s.cfg.Now(), ctl: conn,
		dialect: bytefrog.Dialect{Version: version, Flavor: s.cfg.Flavor, MaxConfigSize: s.cfg.MaxConfigSize},
		holders: 1, life: bytefrog.NewLifecycle(),
		in: make(chan unit, runQueue), ctlIn: make(chan unit, ctlQueue), ctlOut: make(chan []byte, ctlQueue), ctlReadDone: make(chan struct{}),
		quit: make(chan struct{}), abort: make(chan struct{}), done: make(chan struct{}),
		modeCh: make(chan struct{}),
	}
	r.lastHB = r.start
	if err := s.register(r); err != nil {
		s.reject(conn, err.Error())
		return false
	}
	r.log = s.log.With("run", r.id)
	s.mu.Lock()
	delete(s.greeting, conn) // the run owns it now
	s.mu.Unlock()

	cc := coreConfig{
		dialect: r.dialect, maxHeldEvents: s.cfg.MaxHeldEvents, maxHeldBytes: s.cfg.MaxHeldBytes,
		maxMappingBytes: s.cfg.MaxMappingBytes, topN: s.cfg.TopN, hbInterval: s.cfg.Agent.HeartbeatInterval,
		lenient: s.cfg.Lenient,
	}
	var procs []Processor
	if s.cfg.NewProcessor != nil {
		if p := s.cfg.NewProcessor(r); p != nil {
			procs = append(procs, p)
		}
	}
	c := newCore(cc, procs, runHooks{r})
	// A BlockProcessor may keep blocks, and with each its whole slab
	// (BlockBufferSize); other runs read into big slabs.
	r.readSize = bigSlabSize
	if len(c.blks) > 0 {
		r.readSize = slabSize
	}
	c.rep.RunID, c.rep.Agent, c.rep.Start = r.id, r.agent, r.start.Round(0)
	c.rep.ProjectID, c.rep.HasProjectID = projectID, hasProj
	if s.cfg.TraceDir != "" {
		tw, err := s.createTraceFile(r, &cc)
		if err != nil {
			r.log.Error("no trace file for this run", "err", err)
			c.rep.warn("no trace file: " + err.Error())
		} else {
			r.tw, r.holders = tw, 2
			c.rec = tw.record
		}
	}
	r.log.Info("run started", "agent", r.agent, "version", version, "flavor", s.cfg.Flavor)

	r.wg.Add(2)
	go r.readControl()
	go r.writeControl()
	go r.loop(c)
	s.announce(r)

	// NextRun hands out runs in the order their agents were greeted; the
	// initial commands go first whatever the caller does with the run.
	r.cmdMu.Lock()
	s.publish(r)
	// "HQ must send configuration immediately after receiving the hello
	// message", then Suspend "if tracing should not begin immediately",
	// then Start.
	agentCfg := s.cfg.Agent
	agentCfg.RunID = r.id
	raw, err := bytefrog.AppendConfig(nil, version, &agentCfg)
	if err != nil { // New checked every accepted version
		r.abortWith("cannot encode the agent configuration: " + err.Error())
	} else {
		r.queueControl(unit{kind: RecordSent, t: r.now(), raw: raw})
		if s.cfg.StartSuspended {
			r.commandLocked(bytefrog.MsgSuspend)
		}
		if s.cfg.AutoStart {
			r.commandLocked(bytefrog.MsgStart)
		}
	}
	r.cmdMu.Unlock()
	if len(s.script) > 0 {
		r.mu.Lock()
		if !r.ending {
			r.wg.Add(1)
			go r.runScript(s.script)
		}
		r.mu.Unlock()
	}
	return true
}

// dataHello attaches a data connection to its run and reads it.
func (s *Server) dataHello(conn net.Conn, runID uint8) {
	r := s.lookup(runID, s.cfg.DataHelloWait)
	if r == nil {
		s.reject(conn, msgNoTrace)
		return
	}
	// Agents open every connection from one host; a data connection from
	// elsewhere could only disturb another agent's trace.
	if !sameAgent(conn, r.ctl) {
		r.log.Warn("data connection from another host or process refused", "remote", remoteName(conn))
		s.reject(conn, msgNoAssociation)
		return
	}
	conn.SetReadDeadline(time.Time{})
	idx, err := r.addData(conn)
	if err != nil {
		r.log.Info("data connection refused", "remote", remoteName(conn), "err", err)
		s.reject(conn, msgNoAssociation)
		return
	}
	s.mu.Lock()
	delete(s.greeting, conn)
	s.mu.Unlock()
	r.log.Debug("data connection", "index", idx, "remote", remoteName(conn))
	r.readData(conn, idx)
}

// sameAgent reports whether a data connection can belong to the agent of
// a control connection: over TCP, both come from the same IP; over Unix
// sockets, from the same process where the kernel tells (SO_PEERCRED).
func sameAgent(data, ctl net.Conn) bool {
	if ta, ok := data.RemoteAddr().(*net.TCPAddr); ok {
		tb, ok := ctl.RemoteAddr().(*net.TCPAddr)
		return ok && ta.IP.Equal(tb.IP)
	}
	if _, ok := data.RemoteAddr().(*net.UnixAddr); !ok {
		return false
	}
	if _, ok := ctl.RemoteAddr().(*net.UnixAddr); !ok {
		return false
	}
	dp, _, ok1 := peerCred(data)
	cp, _, ok2 := peerCred(ctl)
	return ok1 == ok2 && dp == cp
}

// remoteName names the agent's end of conn: its TCP address, or for a
// Unix-domain connection (whose client end has no name) the peer process
// and the socket it came through: "pid 4242 uid 1000 on unix:/run/hq.sock".
func remoteName(conn net.Conn) string {
	if _, ok := conn.RemoteAddr().(*net.UnixAddr); !ok {
		return conn.RemoteAddr().String()
	}
	where := bytefrog.AddrOf(conn.LocalAddr())
	if pid, uid, ok := peerCred(conn); ok {
		return fmt.Sprintf(unixAgentFormat, pid, uid, where)
	}
	return where
}

// unixAgentFormat names an agent connected through a Unix socket.
const unixAgentFormat = "pid %d uid %d on %s"

// AgentPID returns the process id in a run's agent name (Run.Agent,
// Report.Agent, TraceHeader.Agent) when the agent came through a Unix
// socket and the kernel told its process; ok is false otherwise (TCP).
func AgentPID(agent string) (pid int, ok bool) {
	var uid int
	var where string
	if n, _ := fmt.Sscanf(agent, unixAgentFormat, &pid, &uid, &where); n != 3 || pid <= 0 {
		return 0, false
	}
	return pid, true
}
