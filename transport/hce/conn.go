package hce

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Handler receives the command blocks that are not replies to a Call. It
// runs on the connection's reader goroutine: b.Data is valid only until it
// returns, and it must not block for long.
type Handler func(c *Conn, b *Block)

// deadliner is what net.Conn and a pipe pair offer.
type deadliner interface {
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
}

// sendQueue is the number of envelopes waiting for the writer.
const sendQueue = 256

// maxBatch bounds the bytes the writer gathers into one Write.
const maxBatch = 64 << 10

// outMsg is one queued envelope; pooled, when set, goes back to envPool
// once the writer has copied it.
type outMsg struct {
	b      []byte
	pooled *[]byte
}

// envPool holds envelope buffers of Send; larger ones are not kept.
var envPool = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

const maxPooledEnv = 4 << 10

func (m outMsg) appendTo(buf []byte) []byte {
	buf = append(buf, m.b...)
	if m.pooled != nil && cap(*m.pooled) <= maxPooledEnv {
		envPool.Put(m.pooled)
	}
	return buf
}

// closeFlush bounds writing what was queued, and the DISCONNECT, at close.
const closeFlush = 100 * time.Millisecond

// Conn is an HCE connection after its handshake: one reader goroutine that
// decodes envelopes and hands command blocks to the Handler (or to a
// waiting Call), and one writer goroutine that alone writes, sends
// keep-alives and, on close, the DISCONNECT. Its methods are safe for
// concurrent use.
type Conn struct {
	cfg     Config
	rwc     io.ReadWriteCloser
	codec   *Codec
	id      uint32
	handler Handler
	sendq   chan outMsg

	mu      sync.Mutex
	pending map[uint32]chan Block
	nextCtx atomic.Uint32

	closeOnce  sync.Once
	done       chan struct{} // closed when the connection begins to close
	finished   chan struct{} // closed when both goroutines ended
	writerDone chan struct{}
	err        error
	reason     Reason // DISCONNECT reason the writer sends, if any

	// BadPayloads counts payloads dropped because their blocks did not
	// decode (the connection goes on).
	BadPayloads atomic.Uint64
}

// newConn starts the goroutines of an established connection.
func newConn(rwc io.ReadWriteCloser, codec *Codec, id uint32, cfg Config, h Handler) *Conn {
	c := &Conn{
		cfg: cfg, rwc: rwc, codec: codec, id: id, handler: h,
		sendq:      make(chan outMsg, sendQueue),
		pending:    make(map[uint32]chan Block),
		done:       make(chan struct{}),
		finished:   make(chan struct{}),
		writerDone: make(chan struct{}),
	}
	readerDone := make(chan struct{})
	go func() { defer close(readerDone); c.readLoop() }()
	go func() { defer close(c.writerDone); c.writeLoop() }()
	go func() {
		<-readerDone
		<-c.writerDone
		close(c.finished)
	}()
	return c
}

// ID is the connection ID the hub assigned.
func (c *Conn) ID() uint32 { return c.id }

// Codec is the connection's codec (for its Stats).
func (c *Conn) Codec() *Codec { return c.codec }

// Done is closed once the connection has fully closed.
func (c *Conn) Done() <-chan struct{} { return c.finished }

// Err is why the connection closed (after Done); io.EOF for a peer that
// went away, a *ReasonError for a DISCONNECT received.
func (c *Conn) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

func (c *Conn) readLoop() {
	var blocks []Block
	d, _ := c.rwc.(deadliner)
	for {
		if d != nil && c.cfg.IdleTimeout > 0 {
			d.SetReadDeadline(time.Now().Add(c.cfg.IdleTimeout))
		}
		e, err := c.codec.Read()
		if err != nil {
			if Recoverable(err) {
				continue
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				c.shutdown(fmt.Errorf("hce: peer silent for %v: %w", c.cfg.IdleTimeout, err), ReasonIdle)
				return
			}
			if errors.Is(err, ErrTooLarge) {
				c.shutdown(err, ReasonTooLarge)
				return
			}
			c.shutdown(err, ReasonNone)
			return
		}
		switch e.Flags.Type() {
		case 0:
			if len(e.Payload) == 0 {
				continue // keep-alive
			}
			if blocks, err = ParsePayload(blocks, e.Payload); err != nil {
				c.BadPayloads.Add(1)
				continue
			}
			for i := range blocks {
				c.dispatch(&blocks[i])
			}
		case FlagDisconnect:
			// "The HCE will ignore these fields when it is the recipient."
			// A client or agent keeps the reason.
			r, _ := ParseU32(e.Payload)
			c.shutdown(&ReasonError{Op: "disconnect", Reason: Reason(r)}, ReasonNone)
			return
		default:
			// A handshake message on an established connection.
			c.BadPayloads.Add(1)
		}
	}
}

func (c *Conn) dispatch(b *Block) {
	if b.Cmd&ReplyBit != 0 && b.Iface != IfaceAgentEvents {
		c.mu.Lock()
		ch := c.pending[b.Context]
		delete(c.pending, b.Context)
		c.mu.Unlock()
		if ch != nil {
			r := *b
			r.Data = append([]byte(nil), b.Data...)
			ch <- r
			return
		}
	}
	if c.handler != nil {
		c.handler(c, b)
	}
}

func (c *Conn) writeLoop() {
	d, _ := c.rwc.(deadliner)
	var ka *time.Timer
	var kaC <-chan time.Time
	if c.cfg.KeepAlive > 0 {
		ka = time.NewTimer(c.cfg.KeepAlive)
		defer ka.Stop()
		kaC = ka.C
	}
	var buf []byte
	write := func(b []byte) bool {
		if d != nil && c.cfg.WriteTimeout > 0 {
			d.SetWriteDeadline(time.Now().Add(c.cfg.WriteTimeout))
		}
		if _, err := c.rwc.Write(b); err != nil {
			c.shutdown(err, ReasonNone)
			return false
		}
		return true
	}
	for {
		select {
		case m := <-c.sendq:
			buf = m.appendTo(buf[:0])
		gather:
			for len(buf) < maxBatch {
				select {
				case m := <-c.sendq:
					buf = m.appendTo(buf)
				default:
					break gather
				}
			}
			if !write(buf) {
				return
			}
		case <-kaC:
			if !write(AppendEnvelope(buf[:0], 0, false, nil)) {
				return
			}
		case <-c.done:
			// What was queued before Close goes out first, briefly bounded.
			buf = buf[:0]
		flush:
			for len(buf) < maxBatch {
				select {
				case m := <-c.sendq:
					buf = m.appendTo(buf)
				default:
					break flush
				}
			}
			if c.reason != ReasonNone {
				buf = AppendEnvelope(buf, FlagDisconnect, false, AppendU32(nil, uint32(c.reason)))
			}
			if (len(buf) > 0 && c.err == ErrClosed) || c.reason != ReasonNone {
				if d != nil {
					d.SetWriteDeadline(time.Now().Add(closeFlush))
				}
				c.rwc.Write(buf)
			}
			c.rwc.Close()
			return
		}
		if ka != nil {
			ka.Reset(c.cfg.KeepAlive)
		}
	}
}

// shutdown begins closing: the first error wins.
func (c *Conn) shutdown(err error, reason Reason) {
	c.closeOnce.Do(func() {
		c.err, c.reason = err, reason
		close(c.done)
		c.mu.Lock()
		c.pending = map[uint32]chan Block{}
		c.mu.Unlock()
	})
}

// Close sends DISCONNECT with reason (none for ReasonNone) and closes the
// connection. It is idempotent and does not wait; see Done.
func (c *Conn) Close(reason Reason) {
	c.shutdown(ErrClosed, reason)
}

// Send queues b as one envelope, encoded now (b.Data may be reused after
// Send returns). It waits at most Config.WriteTimeout for room; a full
// queue that long closes the connection.
func (c *Conn) Send(b *Block) error {
	p := envPool.Get().(*[]byte)
	*p = AppendBlocksEnvelope((*p)[:0], c.cfg.MD5, b)
	return c.enqueue(outMsg{b: *p, pooled: p})
}

// SendEnvelope queues an already encoded envelope; env must not change
// afterwards.
func (c *Conn) SendEnvelope(env []byte) error { return c.enqueue(outMsg{b: env}) }

func (c *Conn) enqueue(m outMsg) error {
	select {
	case <-c.done:
		return ErrClosed
	default:
	}
	select {
	case c.sendq <- m:
		return nil
	default:
	}
	t := time.NewTimer(c.cfg.WriteTimeout)
	defer t.Stop()
	select {
	case c.sendq <- m:
		return nil
	case <-c.done:
		return ErrClosed
	case <-t.C:
		err := fmt.Errorf("hce: connection %d: send queue full for %v", c.id, c.cfg.WriteTimeout)
		c.shutdown(err, ReasonNone)
		return err
	}
}

// Reply answers req: the source becomes the destination, the interface and
// context are echoed.
func (c *Conn) Reply(req *Block, cmd CommandID, data []byte) error {
	return c.Send(&Block{Dest: req.Src, Src: c.id, Session: req.Session, Iface: req.Iface, Cmd: cmd, Context: req.Context, Data: data})
}

// Call sends a command to dest and waits for the reply with the same
// context (a command with ReplyBit). A CmdRejected reply is returned as a
// *ReasonError.
func (c *Conn) Call(ctx context.Context, dest uint32, iface InterfaceID, cmd CommandID, data []byte) (Block, error) {
	id := c.nextCtx.Add(1)
	ch := make(chan Block, 1)
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	if err := c.Send(&Block{Dest: dest, Src: c.id, Iface: iface, Cmd: cmd, Context: id, Data: data}); err != nil {
		return Block{}, err
	}
	select {
	case r := <-ch:
		if r.Cmd == CmdRejected {
			reason, _, _, _ := ParseRejected(r.Data)
			return r, &ReasonError{Op: cmd.Name(iface), Reason: reason}
		}
		return r, nil
	case <-ctx.Done():
		return Block{}, ctx.Err()
	case <-c.done:
		return Block{}, fmt.Errorf("%w: %v", ErrClosed, c.err)
	}
}

// Dial connects to a hub at addr ("host:port", or "pipe:/path/of/hub.fifo"),
// performs the handshake (bounded by Config.HandshakeTimeout and ctx's
// deadline) and returns the connection. h receives commands
// that are not replies (nil drops them).
func Dial(ctx context.Context, addr string, cfg *Config, h Handler) (*Conn, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if path, ok := strings.CutPrefix(addr, "pipe:"); ok {
		return dialPipe(ctx, path, c, h)
	}
	timeout := c.HandshakeTimeout
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = time.Until(dl)
	}
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	nc, err := d.DialContext(dctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	codec, _ := NewCodec(nc, nc, &c)
	abort := context.AfterFunc(ctx, func() { nc.Close() })
	id, err := clientHandshake(nc, codec, FlagSocketConnect, nil, timeout)
	if !abort() {
		err = fmt.Errorf("%w: %w", ErrHandshake, ctx.Err())
	}
	if err != nil {
		nc.Close()
		return nil, err
	}
	return newConn(nc, codec, id, c, h), nil
}

// clientHandshake sends CONNECT and waits for COMPLETE or REFUSED.
func clientHandshake(rwc io.ReadWriteCloser, codec *Codec, flags Flags, payload []byte, timeout time.Duration) (uint32, error) {
	d, _ := rwc.(deadliner)
	if d != nil {
		d.SetWriteDeadline(time.Now().Add(timeout))
		d.SetReadDeadline(time.Now().Add(timeout))
		defer d.SetWriteDeadline(time.Time{})
		defer d.SetReadDeadline(time.Time{})
	}
	if flags != 0 {
		if err := codec.Write(flags, payload); err != nil {
			return 0, fmt.Errorf("%w: %w", ErrHandshake, err)
		}
	}
	for {
		e, err := codec.Read()
		if Recoverable(err) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("%w: %w", ErrHandshake, err)
		}
		switch e.Flags.Type() {
		case FlagConnectionComplete:
			id, err := ParseU32(e.Payload)
			if err != nil || id == EngineID || id == 0 {
				return 0, fmt.Errorf("%w: bad CONNECTION_COMPLETE", ErrHandshake)
			}
			return id, nil
		case FlagConnectionRefused, FlagDisconnect:
			r, _ := ParseU32(e.Payload)
			return 0, fmt.Errorf("%w: %w", ErrHandshake, &ReasonError{Op: "connect", Reason: Reason(r)})
		default:
			return 0, fmt.Errorf("%w: %v before CONNECTION_COMPLETE", ErrHandshake, e.Flags)
		}
	}
}

// Accept performs the hub's side of a socket handshake on a new
// connection: the first envelope must be SOCKET_CONNECT within the
// handshake timeout ("Until this handshake has taken place, no other
// commands will be accepted"). assign returns the connection ID or a
// refusal reason. On success the connection runs with h.
func Accept(rwc io.ReadWriteCloser, cfg *Config, assign func() (uint32, Reason), h Handler) (*Conn, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	codec, _ := NewCodec(rwc, rwc, &c)
	d, _ := rwc.(deadliner)
	if d != nil {
		d.SetReadDeadline(time.Now().Add(c.HandshakeTimeout))
		d.SetWriteDeadline(time.Now().Add(c.HandshakeTimeout))
	}
	refuse := func(r Reason, err error) (*Conn, error) {
		if d != nil {
			d.SetWriteDeadline(time.Now().Add(c.WriteTimeout))
		}
		codec.Write(FlagConnectionRefused, AppendU32(nil, uint32(r)))
		rwc.Close()
		return nil, fmt.Errorf("%w: %v: %w", ErrHandshake, r, err)
	}
	e, err := codec.Read()
	if err != nil {
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			return refuse(ReasonHandshakeTimeout, err)
		case errors.Is(err, ErrTooLarge):
			return refuse(ReasonTooLarge, err)
		case Recoverable(err):
			return refuse(ReasonBadEnvelope, err)
		}
		rwc.Close()
		return nil, fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	if e.Flags.Type() != FlagSocketConnect {
		return refuse(ReasonHandshakeRequired, fmt.Errorf("%v first", e.Flags))
	}
	return complete(rwc, codec, c, assign, h)
}

// complete answers an accepted CONNECT.
func complete(rwc io.ReadWriteCloser, codec *Codec, c Config, assign func() (uint32, Reason), h Handler) (*Conn, error) {
	id, r := assign()
	if r != ReasonNone {
		codec.Write(FlagConnectionRefused, AppendU32(nil, uint32(r)))
		rwc.Close()
		return nil, fmt.Errorf("%w: refused: %v", ErrHandshake, r)
	}
	if err := codec.Write(FlagConnectionComplete, AppendU32(nil, id)); err != nil {
		rwc.Close()
		return nil, fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	if d, ok := rwc.(deadliner); ok {
		d.SetReadDeadline(time.Time{})
		d.SetWriteDeadline(time.Time{})
	}
	return newConn(rwc, codec, id, c, h), nil
}
