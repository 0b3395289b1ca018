package hce

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// echo answers every command with the same command | ReplyBit and data.
func echo(c *Conn, b *Block) { c.Reply(b, b.Cmd|ReplyBit, b.Data) }

type server struct {
	accepted chan *Conn
	errs     chan error
	next     atomic.Uint32
}

func newServer() *server {
	s := &server{accepted: make(chan *Conn, 16), errs: make(chan error, 16)}
	s.next.Store(FirstConnID - 1)
	return s
}

func (s *server) assign() (uint32, Reason) { return s.next.Add(1), ReasonNone }

func (s *server) result(c *Conn, err error) {
	if err != nil {
		s.errs <- err
		return
	}
	s.accepted <- c
}

// listenTCP serves the socket handshake on a loopback port.
func listenTCP(t *testing.T, cfg *Config) (string, *server) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	s := newServer()
	go func() {
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			go func() { s.result(Accept(nc, cfg, s.assign, echo)) }()
		}
	}()
	return l.Addr().String(), s
}

// listenPipe serves PIPE_CONNECT on a FIFO in a temporary directory.
func listenPipe(t *testing.T, cfg *Config) (string, *server) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hce.fifo")
	l, err := ListenPipe(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	s := newServer()
	go func() {
		for {
			name, err := l.Accept()
			if err != nil {
				return
			}
			go func() { s.result(l.AcceptPipe(name, s.assign, echo)) }()
		}
	}()
	return "pipe:" + path, s
}

type transport struct {
	name   string
	listen func(*testing.T, *Config) (string, *server)
}

var transports = []transport{{"tcp", listenTCP}, {"pipe", listenPipe}}

func TestTransportsCall(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			addr, s := tr.listen(t, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			for i := 0; i < 2; i++ {
				c, err := Dial(ctx, addr, &Config{MD5: i == 1}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if c.ID() != FirstConnID+uint32(i) {
					t.Errorf("connection ID %d; want %d", c.ID(), FirstConnID+uint32(i))
				}
				for j := 0; j < 50; j++ {
					data := AppendString(nil, "hello")
					r, err := c.Call(ctx, EngineID, IfaceTadpole, TPMark, data)
					if err != nil {
						t.Fatal(err)
					}
					if r.Cmd != TPMark|ReplyBit || string(r.Data) != string(data) || r.Dest != c.ID() {
						t.Fatalf("reply %v", &r)
					}
				}
				sc := <-s.accepted
				c.Close(ReasonNone)
				<-c.Done()
				select {
				case <-sc.Done():
				case <-time.After(5 * time.Second):
					t.Fatal("server side did not see the close")
				}
			}
		})
	}
}

func TestHandshakeTimeout(t *testing.T) {
	addr, s := listenTCP(t, &Config{HandshakeTimeout: 100 * time.Millisecond})
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	codec, _ := NewCodec(nc, nc, nil)
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	e, err := codec.Read()
	if err != nil || e.Flags.Type() != FlagConnectionRefused {
		t.Fatalf("got %v %v; want CONNECTION_REFUSED", e.Flags, err)
	}
	if r, _ := ParseU32(e.Payload); Reason(r) != ReasonHandshakeTimeout {
		t.Errorf("reason %v", Reason(r))
	}
	if err := <-s.errs; !errors.Is(err, ErrHandshake) {
		t.Errorf("server: %v", err)
	}
}

func TestMessageBeforeHandshake(t *testing.T) {
	addr, s := listenTCP(t, nil)
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	codec, _ := NewCodec(nc, nc, nil)
	codec.WriteBlocks(&Block{Dest: EngineID, Src: 7, Iface: IfaceAgentManager, Cmd: CmdQueryRunningAgents, Data: AppendU32(nil, 0)})
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	e, err := codec.Read()
	if err != nil || e.Flags.Type() != FlagConnectionRefused {
		t.Fatalf("got %v %v; want CONNECTION_REFUSED", e.Flags, err)
	}
	if r, _ := ParseU32(e.Payload); Reason(r) != ReasonHandshakeRequired {
		t.Errorf("reason %v", Reason(r))
	}
	<-s.errs
}

func TestIdleTimeout(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			// The live client keeps alive 20 times per idle timeout: a loaded
			// host may hold its keepalives back for a while.
			addr, s := tr.listen(t, &Config{IdleTimeout: time.Second, KeepAlive: 50 * time.Millisecond})
			ctx := context.Background()
			// A client that keeps alive stays; one that does not is dropped.
			live, err := Dial(ctx, addr, &Config{KeepAlive: 50 * time.Millisecond, IdleTimeout: -1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer live.Close(ReasonNone)
			<-s.accepted
			silent, err := Dial(ctx, addr, &Config{KeepAlive: -1, IdleTimeout: -1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			sc := <-s.accepted
			select {
			case <-sc.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("silent peer not dropped")
			}
			<-silent.Done()
			var re *ReasonError
			if !errors.As(silent.Err(), &re) || re.Reason != ReasonIdle {
				t.Errorf("silent client saw %v; want DISCONNECT(IDLE)", silent.Err())
			}
			if _, err := live.Call(ctx, EngineID, IfaceTadpole, TPStatus, nil); err != nil {
				t.Errorf("live client: %v", err)
			}
		})
	}
}

func TestPipeNoHub(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.fifo")
	if _, err := Dial(context.Background(), "pipe:"+path, nil, nil); err == nil {
		t.Fatal("dialled a missing pipe")
	}
	// A FIFO nobody reads: ENXIO at once, not a hang.
	os.WriteFile(path, nil, 0o600)
	os.Remove(path)
	if err := mkfifo(path); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := Dial(context.Background(), "pipe:"+path, nil, nil); err == nil {
		t.Fatal("dialled an unread pipe")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v", d)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("left %d files behind", len(entries))
	}
}

// TestCloseFlushes: what was sent before Close reaches the peer, then the
// DISCONNECT with its reason.
func TestCloseFlushes(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan uint32, 200)
	srv := make(chan *Conn, 1)
	go func() {
		nc, err := l.Accept()
		if err != nil {
			return
		}
		c, _ := Accept(nc, nil, func() (uint32, Reason) { return FirstConnID, ReasonNone }, func(_ *Conn, b *Block) { got <- b.Context })
		srv <- c
	}()
	c, err := Dial(context.Background(), l.Addr().String(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := uint32(1); i <= 100; i++ {
		c.Send(&Block{Dest: EngineID, Src: c.ID(), Iface: IfaceTadpole, Cmd: TPMark, Context: i})
	}
	c.Close(ReasonShutdown)
	sc := <-srv
	<-sc.Done()
	if len(got) != 100 {
		t.Errorf("%d of 100 blocks arrived before the close", len(got))
	}
	var re *ReasonError
	if !errors.As(sc.Err(), &re) || re.Reason != ReasonShutdown {
		t.Errorf("server saw %v; want DISCONNECT(SHUTDOWN)", sc.Err())
	}
}

// TestDialCancel: a hub that accepts and then says nothing does not hold a
// dialler past its context, over TCP or a pipe.
func TestDialCancel(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			defer nc.Close()
		}
	}()
	// A hub FIFO that somebody holds open and never serves.
	path := filepath.Join(t.TempDir(), "mute.fifo")
	if err := mkfifo(path); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, addr := range []string{l.Addr().String(), "pipe:" + path} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		_, err := Dial(ctx, addr, &Config{HandshakeTimeout: 10 * time.Second}, nil)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v; want context.Canceled", addr, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: returned after %v", addr, d)
		}
	}
}
