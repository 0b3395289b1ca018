//go:build unix

package hce

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Named pipes. The hub listens on one well-known FIFO that carries nothing
// but PIPE_CONNECT envelopes, each written in one write of at most
// PIPE_BUF bytes so that connectors cannot interleave. A connector first
// makes a FIFO pair next to it, R and R+PipeRequestSuffix, and names R in
// PIPE_CONNECT; the hub writes to R and reads R+PipeRequestSuffix, and the
// connection runs over the pair with the same framing as TCP: the
// CONNECTION_COMPLETE arrives on R. Both sides open R first, then the
// request pipe; the connector removes both names once they are open.

// pipeConn is one side of a FIFO pair.
type pipeConn struct {
	r, w *os.File
}

func (p *pipeConn) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *pipeConn) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p *pipeConn) Close() error {
	err := p.r.Close()
	if werr := p.w.Close(); err == nil {
		err = werr
	}
	return err
}
func (p *pipeConn) SetReadDeadline(t time.Time) error  { return p.r.SetReadDeadline(t) }
func (p *pipeConn) SetWriteDeadline(t time.Time) error { return p.w.SetWriteDeadline(t) }

var pipeSeq atomic.Uint32

// openFIFO opens a FIFO end that blocks until the other end is opened,
// giving up after timeout (then it opens both ends itself to release the
// blocked open, and closes them).
func openFIFO(ctx context.Context, path string, flag int, timeout time.Duration) (*os.File, error) {
	type result struct {
		f   *os.File
		err error
	}
	ch := make(chan result, 1)
	go func() {
		f, err := os.OpenFile(path, flag, 0)
		ch <- result{f, err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	var giveUp error
	select {
	case r := <-ch:
		return r.f, r.err
	case <-t.C:
		giveUp = fmt.Errorf("%w: opening %s: no peer within %v", ErrHandshake, path, timeout)
	case <-ctx.Done():
		giveUp = ctx.Err()
	}
	u, err := os.OpenFile(path, os.O_RDWR|syscall.O_NONBLOCK, 0)
	if err == nil {
		defer u.Close()
	}
	if r := <-ch; r.f != nil {
		r.f.Close()
	}
	return nil, giveUp
}

// dialPipe connects to the hub FIFO at hubPath.
func dialPipe(ctx context.Context, hubPath string, c Config, h Handler) (*Conn, error) {
	ret := fmt.Sprintf("%s.%d.%d", hubPath, os.Getpid(), pipeSeq.Add(1))
	req := ret + PipeRequestSuffix
	if len(ret) > MaxPipeName {
		return nil, fmt.Errorf("%w: pipe name longer than %d bytes", ErrString, MaxPipeName)
	}
	os.Remove(ret)
	os.Remove(req)
	if err := syscall.Mkfifo(ret, 0o600); err != nil {
		return nil, fmt.Errorf("hce: mkfifo %s: %w", ret, err)
	}
	defer os.Remove(ret)
	if err := syscall.Mkfifo(req, 0o600); err != nil {
		return nil, fmt.Errorf("hce: mkfifo %s: %w", req, err)
	}
	defer os.Remove(req)
	// Non-blocking: no hub reading the well-known FIFO is ENXIO at once.
	hub, err := os.OpenFile(hubPath, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("hce: hub pipe %s: %w", hubPath, err)
	}
	codec, _ := NewCodec(nil, hub, &c)
	err = codec.Write(FlagPipeConnect, AppendPipeConnect(nil, ret))
	hub.Close()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	timeout := c.HandshakeTimeout
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = time.Until(dl)
	}
	r, err := openFIFO(ctx, ret, os.O_RDONLY, timeout)
	if err != nil {
		return nil, err
	}
	w, err := openFIFO(ctx, req, os.O_WRONLY, timeout)
	if err != nil {
		r.Close()
		return nil, err
	}
	pc := &pipeConn{r: r, w: w}
	codec, _ = NewCodec(pc, pc, &c)
	abort := context.AfterFunc(ctx, func() { pc.Close() })
	id, err := clientHandshake(pc, codec, 0, nil, timeout)
	if !abort() {
		err = fmt.Errorf("%w: %w", ErrHandshake, ctx.Err())
	}
	if err != nil {
		pc.Close()
		return nil, err
	}
	return newConn(pc, codec, id, c, h), nil
}

// PipeListener is the hub's well-known FIFO.
type PipeListener struct {
	path  string
	f     *os.File
	codec *Codec
	cfg   Config
}

// ListenPipe makes (or reuses) the FIFO at path and reads PIPE_CONNECTs
// from it. It is held open for reading and writing, so it never reports
// end of file when connectors come and go.
func ListenPipe(path string, cfg *Config) (*PipeListener, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path); err == nil {
		if fi.Mode()&os.ModeNamedPipe == 0 {
			return nil, fmt.Errorf("hce: %s exists and is not a FIFO", path)
		}
	} else if err := syscall.Mkfifo(path, 0o600); err != nil {
		return nil, fmt.Errorf("hce: mkfifo %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	codec, _ := NewCodec(f, nil, &c)
	return &PipeListener{path: path, f: f, codec: codec, cfg: c}, nil
}

// Path is the FIFO's path.
func (l *PipeListener) Path() string { return l.path }

// Close stops Accept and removes the FIFO.
func (l *PipeListener) Close() error {
	err := l.f.Close()
	os.Remove(l.path)
	return err
}

// Codec is the listener's codec (for its Stats).
func (l *PipeListener) Codec() *Codec { return l.codec }

// Accept waits for the next PIPE_CONNECT and returns its return pipe name.
// Other envelopes on the well-known FIFO are dropped. A name outside the
// FIFO's directory, or not starting with the FIFO's name and a dot, is
// refused: the hub opens only the pipes its own connectors made.
func (l *PipeListener) Accept() (string, error) {
	for {
		e, err := l.codec.Read()
		if Recoverable(err) {
			continue
		}
		if err != nil {
			if errors.Is(err, os.ErrClosed) {
				return "", ErrClosed
			}
			if errors.Is(err, ErrTooLarge) {
				// Skip the header's magic: the next read scans for another.
				l.codec.r.Discard(1)
				continue
			}
			return "", err
		}
		if e.Flags.Type() != FlagPipeConnect {
			continue
		}
		name, err := ParsePipeConnect(e.Payload)
		if err != nil {
			continue
		}
		if filepath.Dir(name) != filepath.Dir(l.path) || !strings.HasPrefix(filepath.Base(name), filepath.Base(l.path)+".") {
			continue
		}
		return name, nil
	}
}

// AcceptPipe opens the pair named by a PIPE_CONNECT and completes the
// handshake on it.
func (l *PipeListener) AcceptPipe(name string, assign func() (uint32, Reason), h Handler) (*Conn, error) {
	// Only FIFOs, never a symbolic link or a file planted under the name.
	for _, p := range []string{name, name + PipeRequestSuffix} {
		if fi, err := os.Lstat(p); err != nil || fi.Mode().Type() != os.ModeNamedPipe {
			return nil, fmt.Errorf("%w: %s is not a FIFO", ErrHandshake, p)
		}
	}
	w, err := openFIFO(context.Background(), name, os.O_WRONLY, l.cfg.HandshakeTimeout)
	if err != nil {
		return nil, err
	}
	r, err := openFIFO(context.Background(), name+PipeRequestSuffix, os.O_RDONLY, l.cfg.HandshakeTimeout)
	if err != nil {
		w.Close()
		return nil, err
	}
	pc := &pipeConn{r: r, w: w}
	codec, _ := NewCodec(pc, pc, &l.cfg)
	return complete(pc, codec, l.cfg, assign, h)
}

var _ io.ReadWriteCloser = (*pipeConn)(nil)

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }
