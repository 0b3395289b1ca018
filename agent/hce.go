package agent

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
	"github.com/tadpole-trace/tadpole/transport/hce"
	"github.com/tadpole-trace/tadpole/transport/lttngagent"
)

// checkHCEAddr accepts "", "pipe:/path" and "host:port".
func checkHCEAddr(v string) error {
	if v == "" {
		return nil
	}
	if path, ok := strings.CutPrefix(v, "pipe:"); ok {
		if path == "" || len(path) > hce.MaxPipeName-32 {
			return errors.New("want pipe:/path/of/the/hub/fifo")
		}
		return nil
	}
	_, port, err := net.SplitHostPort(v)
	if err != nil {
		return errors.New("want host:port or pipe:/path")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return errors.New("want a port from 1 to 65535")
	}
	return nil
}

// HCEName is the agent name a process registers under:
// "tadpole:" and the program's file name.
func HCEName() string { return "tadpole:" + filepath.Base(os.Args[0]) }

// hceLogs is the key under which the HCE control plane's logger rules sit
// among the LTTng daemons' (logControl.conns): a logger enabled through HCE
// is recorded as if a session daemon had enabled it, and the rules outlive
// the HCE connection; disabling the last one gives the log policy back.
var hceLogs = new(lttngagent.Conn)

// StartHCE registers the process with the HCE hub cfg.HCE in the
// background and serves the tadpole agent interface (hce.IfaceTadpole) to
// attached clients: list, enable and disable loggers (the registry LTTng
// drives), pause, resume, suspend and stop tracing, mark, and status. It
// never blocks and never fails the host: an absent hub is retried every
// cfg.HCERetry, a lost one reconnected. stop ends it (idempotent). With
// cfg.HCE empty it does nothing.
func StartHCE(cfg Config) (stop func()) {
	if cfg.HCE == "" {
		return func() {}
	}
	log, err := newLogger(cfg.Log, cfg.LogLevel)
	if err != nil {
		log, _ = newLogger("stderr", cfg.LogLevel)
	}
	h := &hceAgent{cfg: cfg, log: log, stop: make(chan struct{}), done: make(chan struct{})}
	if h.cfg.HCERetry <= 0 {
		h.cfg.HCERetry = DefaultConfig().HCERetry
	}
	go h.run()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(h.stop)
			<-h.done
			log.close()
		})
	}
}

// hceAgent is the registration goroutine and its connection's handler.
type hceAgent struct {
	cfg  Config
	log  *logger
	stop chan struct{}
	done chan struct{}
}

func (h *hceAgent) run() {
	defer close(h.done)
	for {
		if !h.session() {
			return
		}
		select {
		case <-h.stop:
			return
		case <-time.After(h.cfg.HCERetry):
		}
	}
}

// session connects, registers and serves until the connection ends; false
// when asked to stop.
func (h *hceAgent) session() (more bool) {
	defer func() {
		if r := recover(); r != nil {
			h.log.oncef("hce-panic", LevelError, "HCE: internal error: %v\n%s", r, debug.Stack())
			more = true
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), h.cfg.ConnectTimeout)
	defer cancel()
	go func() {
		select {
		case <-h.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	c, err := hce.Dial(ctx, h.cfg.HCE, &hce.Config{HandshakeTimeout: h.cfg.ConnectTimeout}, h.handle)
	if err == nil {
		if err = c.Register(ctx, HCEName(), uint64(os.Getpid()), []hce.InterfaceID{hce.IfaceTadpole}); err != nil {
			c.Close(hce.ReasonNone)
		}
	}
	if err != nil {
		select {
		case <-h.stop:
			return false
		default:
		}
		h.log.oncef("hce-dial", LevelInfo, "HCE hub %s not reachable (retrying every %v): %v", h.cfg.HCE, h.cfg.HCERetry, err)
		return true
	}
	h.log.logf(LevelInfo, "registered with HCE hub %s as agent %d", h.cfg.HCE, c.ID())
	select {
	case <-c.Done():
		h.log.logf(LevelInfo, "HCE hub %s lost: %v", h.cfg.HCE, c.Err())
		return true
	case <-h.stop:
		c.Close(hce.ReasonNone)
		<-c.Done()
		return false
	}
}

// handle serves one command on the connection's reader goroutine.
func (h *hceAgent) handle(c *hce.Conn, b *hce.Block) {
	if b.Cmd&hce.ReplyBit != 0 || b.Iface == hce.IfaceAgentEvents {
		return // a stray reply or an event: nothing to answer
	}
	defer func() {
		if r := recover(); r != nil {
			h.log.oncef("hce-cmd-panic", LevelError, "HCE: %v failed: %v\n%s", b, r, debug.Stack())
			c.Reply(b, hce.TPFailed, hce.AppendString(hce.AppendU32(nil, uint32(hce.ReasonFailed)), "internal error"))
		}
	}()
	if b.Iface != hce.IfaceTadpole {
		c.Reply(b, hce.CmdRejected, hce.AppendRejected(nil, hce.ReasonUnknownInterface, b.Iface, b.Cmd))
		return
	}
	data, err := h.command(b)
	switch {
	case errors.Is(err, errUnknownCmd):
		c.Reply(b, hce.CmdRejected, hce.AppendRejected(nil, hce.ReasonUnknownCommand, b.Iface, b.Cmd))
	case errors.Is(err, errBadData):
		c.Reply(b, hce.CmdRejected, hce.AppendRejected(nil, hce.ReasonBadData, b.Iface, b.Cmd))
	case err != nil:
		c.Reply(b, hce.TPFailed, hce.AppendString(hce.AppendU32(nil, uint32(hce.ReasonFailed)), err.Error()))
	case b.Cmd == hce.TPListLoggers:
		c.Reply(b, hce.TPLoggers, data)
	case b.Cmd == hce.TPStatus:
		c.Reply(b, hce.TPStatusReply, data)
	default:
		c.Reply(b, hce.TPDone, hce.AppendU32(nil, uint32(b.Cmd)))
	}
}

var (
	errUnknownCmd = errors.New("unknown command")
	errBadData    = errors.New("bad data")
	errNotTracing = errors.New("not tracing")
)

// command carries out one tadpole-interface command.
func (h *hceAgent) command(b *hce.Block) ([]byte, error) {
	r := hce.NewDataReader(b.Data)
	switch b.Cmd {
	case hce.TPListLoggers:
		if r.End() != nil {
			return nil, errBadData
		}
		var ls []hce.LoggerState
		for _, l := range Loggers() {
			ls = append(ls, hce.LoggerState{Name: l.name, Enabled: l.enabled.Load()})
		}
		return hce.AppendLoggers(nil, ls), nil
	case hce.TPEnableLogger, hce.TPDisableLogger:
		name := r.String()
		if r.End() != nil || name == "" {
			return nil, errBadData
		}
		lh := lttngHandler{log: h.log}
		if b.Cmd == hce.TPEnableLogger {
			lh.Enable(hceLogs, lttngagent.Event{Name: name, LogLevel: math.MinInt32, LogLevelType: lttngagent.LogLevelAll})
			return nil, nil
		}
		if lh.Disable(hceLogs, name) != lttngagent.ReplySuccess {
			return nil, fmt.Errorf("logger %q was not enabled through HCE", name)
		}
		logControl.mu.Lock()
		empty := len(logControl.conns[hceLogs]) == 0
		logControl.mu.Unlock()
		if empty {
			lh.Closed(hceLogs)
		}
		return nil, nil
	case hce.TPMark:
		k, v := r.String(), r.String()
		if r.End() != nil {
			return nil, errBadData
		}
		if active.Load() == nil {
			return nil, errNotTracing
		}
		Mark(k, v)
		return nil, nil
	case hce.TPStatus:
		if r.End() != nil {
			return nil, errBadData
		}
		st := hce.Status{Name: HCEName(), PID: uint64(os.Getpid()), Mode: currentMode().String()}
		if s := current.Load(); s != nil {
			st.Events = uint64(s.events())
			st.HQ = s.cfg.HQ
		}
		for _, l := range Loggers() {
			st.Loggers++
			if l.enabled.Load() {
				st.EnabledLoggers++
			}
		}
		return hce.AppendStatus(nil, &st), nil
	case hce.TPStart:
		if r.End() != nil {
			return nil, errBadData
		}
		if active.Load() != nil {
			return nil, errors.New("already tracing")
		}
		if !retryNow() {
			return nil, errors.New("no agent waiting for HQ: the process was not started with hq=")
		}
		return nil, nil
	case hce.TPPause, hce.TPResume, hce.TPSuspend, hce.TPStop:
		if r.End() != nil {
			return nil, errBadData
		}
		s := current.Load()
		if s == nil {
			return nil, errNotTracing
		}
		return nil, hceControl(s, b.Cmd)
	}
	return nil, errUnknownCmd
}

// hceControl changes the mode of the active session as HQ's Pause,
// Unpause/Unsuspend, Suspend and Stop do, through the same path.
func hceControl(s *session, cmd hce.CommandID) error {
	if cmd == hce.TPStop {
		go s.stop(context.Background())
		return nil
	}
	mode := s.currentMode()
	var try []bytefrog.MsgType
	switch cmd {
	case hce.TPPause:
		try = []bytefrog.MsgType{bytefrog.MsgPause}
	case hce.TPSuspend:
		try = []bytefrog.MsgType{bytefrog.MsgSuspend}
	case hce.TPResume:
		try = []bytefrog.MsgType{bytefrog.MsgUnpause, bytefrog.MsgUnsuspend}
	}
	for _, t := range try {
		if s.change(t) {
			return nil
		}
	}
	return fmt.Errorf("%s while %v", cmd.Name(hce.IfaceTadpole), mode)
}
