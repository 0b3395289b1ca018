package lttngagent

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"slices"
	"time"
)

// readBufferSize is the socket read buffer of a session. Commands are small
// except ENABLEs with long filters, which are read through it.
const readBufferSize = 4096

// session serves one connection: its goroutine alone reads and writes the
// socket. The protocol is strict request/response with one command in
// flight (the sessiond waits for each reply under its session-list lock), so
// the reply is written by the reading goroutine, bounded by WriteTimeout; a
// daemon that stops reading its replies is dropped when the deadline
// passes.
type session struct {
	c    *Client
	conn *Conn
	nc   net.Conn
	br   *bufio.Reader
	plog *problemLog
	hdr  [headerSizeRFC01]byte
	buf  []byte // payload, grow-only up to MaxDataSize
	req  Request
	wbuf []byte // reply, reused
}

func newSession(c *Client, conn *Conn, nc net.Conn, plog *problemLog) *session {
	return &session{c: c, conn: conn, nc: nc, br: bufio.NewReaderSize(nc, readBufferSize), plog: plog}
}

// run registers and serves commands until the connection fails or ends.
func (s *session) run() error {
	if !s.conn.dialect.Registers() {
		s.setRegistered()
	} else {
		s.wbuf = AppendRegistration(s.wbuf[:0], Registration{
			Domain: s.conn.domain,
			PID:    uint32(s.c.cfg.PID),
			Major:  ProtocolMajor,
			Minor:  ProtocolMinor,
		})
		if err := s.write(s.wbuf); err != nil {
			return err
		}
	}
	for {
		if err := s.serveOne(); err != nil {
			return err
		}
	}
}

// serveOne reads one command and answers it.
func (s *session) serveOne() error {
	d := s.conn.dialect
	hs := d.HeaderSize()
	// Idle: wait for the next command as long as it takes. Close interrupts
	// the read by closing the socket.
	if err := s.nc.SetReadDeadline(time.Time{}); err != nil {
		return err
	}
	if _, err := s.br.Peek(1); err != nil {
		return err
	}
	// From its first byte on, a command must arrive within CommandTimeout:
	// a daemon trickling bytes cannot hold the connection.
	if err := s.nc.SetReadDeadline(time.Now().Add(s.c.cfg.CommandTimeout)); err != nil {
		return err
	}
	if _, err := io.ReadFull(s.br, s.hdr[:hs]); err != nil {
		return readError(err)
	}
	h, err := d.ParseHeader(s.hdr[:hs])
	if err != nil {
		return err
	}
	// "Check the declared length against a configured maximum before
	// reading or allocating the payload."
	if h.DataSize > MaxDataSize {
		return &CommandError{h.Cmd, h.DataSize, ErrTooLarge}
	}
	p := s.payload(int(h.DataSize))
	if _, err := io.ReadFull(s.br, p); err != nil {
		return &CommandError{h.Cmd, h.DataSize, readError(err)}
	}
	reply := s.dispatch(h, p)
	if reply == nil {
		return nil
	}
	return s.write(reply)
}

// payload returns the read buffer resized to n bytes.
func (s *session) payload(n int) []byte {
	if cap(s.buf) < n {
		s.buf = make([]byte, n)
	}
	return s.buf[:n]
}

func (s *session) write(b []byte) error {
	if err := s.nc.SetWriteDeadline(time.Now().Add(s.c.cfg.WriteTimeout)); err != nil {
		return err
	}
	if _, err := s.nc.Write(b); err != nil {
		return ioError(err)
	}
	return nil
}

// readError maps a failed read inside a command: the stream ended (EOF,
// also a clean one, is truncation here) or the deadline passed.
func readError(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return ErrTruncated
	}
	return ioError(err)
}

func ioError(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return errors.Join(ErrTimeout, err)
	}
	return err
}

// dispatch serves one decoded header and payload and returns the reply to
// send, or nil for none.
func (s *session) dispatch(h Header, p []byte) []byte {
	d := s.conn.dialect
	kind := d.ReplyKind(h.Cmd)
	req := &s.req
	err := d.ParseRequest(req, h, p)
	if err != nil {
		msg := "lttngagent: malformed command from session daemon"
		if errors.Is(err, ErrUnknownCommand) {
			msg = "lttngagent: unknown command from session daemon"
		}
		s.plog.once("bad command: "+problemKey(err), slog.LevelWarn, msg, "conn", s.conn.String(), "err", err)
		switch kind {
		case ReplyNone:
			// REG_DONE with a payload still ends the registration; it
			// never gets a reply.
			if h.Cmd == CmdRegDone {
				s.setRegistered()
			}
			return nil
		case ReplyList:
			// The sessiond reads a list reply whatever happened: "always
			// ret_code 1".
			return s.listReply()
		default:
			return s.reply(ReplyInvalid)
		}
	}
	h2 := s.c.h
	var code ReplyCode
	switch req.Cmd {
	case CmdRegDone:
		// "Never reply to REG_DONE."
		s.setRegistered()
		return nil
	case CmdList:
		return s.listReply()
	case CmdEnable:
		ev := req.Event
		code = s.call(func() ReplyCode { return h2.Enable(s.conn, ev) })
	case CmdDisable:
		name := req.Name
		code = s.call(func() ReplyCode { return h2.Disable(s.conn, name) })
	case CmdAppCtxEnable, CmdAppCtxDisable:
		enable, prov, ctx := req.Cmd == CmdAppCtxEnable, req.Provider, req.Context
		code = s.call(func() ReplyCode { return h2.AppContext(s.conn, enable, prov, ctx) })
	}
	return s.reply(code)
}

// reply encodes a generic reply into the reused write buffer.
func (s *session) reply(code ReplyCode) []byte {
	s.wbuf = AppendReply(s.wbuf[:0], code)
	return s.wbuf
}

// call runs one handler call, turning a panic into ReplyInvalid.
func (s *session) call(f func() ReplyCode) (code ReplyCode) {
	defer func() {
		if r := recover(); r != nil {
			s.plog.once("handler panic", slog.LevelError, "lttngagent: handler panicked; replied INVALID",
				"conn", s.conn.String(), "panic", r)
			code = ReplyInvalid
		}
	}()
	return f()
}

// listReply asks the handler for its names and encodes them: valid names
// only, sorted, unique, at most MaxListBytes.
func (s *session) listReply() []byte {
	var names []string
	func() {
		defer func() {
			if r := recover(); r != nil {
				s.plog.once("handler panic", slog.LevelError, "lttngagent: handler panicked; replied an empty list",
					"conn", s.conn.String(), "panic", r)
				names = nil
			}
		}()
		names = slices.Clone(s.c.h.List(s.conn))
	}()
	n0 := len(names)
	names = slices.DeleteFunc(names, func(n string) bool { return !ValidName(n) })
	if len(names) < n0 {
		s.plog.once("invalid names", slog.LevelWarn, "lttngagent: names not listed: empty, over 255 bytes or holding a NUL",
			"conn", s.conn.String())
	}
	slices.Sort(names)
	names = slices.Compact(names)
	total := 0
	for i, n := range names {
		total += len(n) + 1
		if total > s.c.cfg.MaxListBytes {
			s.plog.once("list truncated", slog.LevelWarn, "lttngagent: list reply truncated",
				"conn", s.conn.String(), "names", len(names), "listed", i)
			names = names[:i]
			break
		}
	}
	s.wbuf, _ = s.conn.dialect.AppendListReply(s.wbuf[:0], names)
	return s.wbuf
}

func (s *session) setRegistered() {
	if s.conn.registered.Swap(true) {
		return
	}
	s.c.setState(s.conn.daemon, stateRegistered)
	s.plog.once("registered", slog.LevelDebug, "lttngagent: registered with session daemon", "conn", s.conn.String())
}
