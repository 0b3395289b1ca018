package lttngagent

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// exerciseCommands runs every command of protocol 2.0 over dc.
func exerciseCommands(t *testing.T, c *Client, h *recHandler, dc *daemonConn) {
	want := Registration{Domain: DomainJUL, PID: uint32(os.Getpid()), Major: 2, Minor: 0}
	if dc.reg != want {
		t.Errorf("registration %+v; want %+v", dc.reg, want)
	}

	// ENABLEs for existing events come before REG_DONE.
	dc.send(Request{Cmd: CmdEnable, Event: Event{Name: "a.b", LogLevel: math.MinInt32, Filter: `logger_name == "a.b"`}})
	if got := dc.reply(); got != ReplySuccess {
		t.Errorf("ENABLE reply %v; want SUCCESS", got)
	}
	h.expect(t, `enable a.b ALL -2147483648 "logger_name == \"a.b\"" registered=false`)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	if err := c.WaitRegistered(ctx); err != context.DeadlineExceeded {
		t.Errorf("WaitRegistered before REG_DONE: %v; want deadline exceeded", err)
	}
	cancel()
	if c.Registered() {
		t.Errorf("Registered() before REG_DONE = true")
	}

	dc.send(Request{Cmd: CmdRegDone})
	waitRegistered(t, c)
	// "Never reply to REG_DONE."
	dc.quiet(100 * time.Millisecond)
	if !c.Registered() {
		t.Errorf("Registered() after REG_DONE = false")
	}

	if got, want := dc.list(), []string{"a.b", "a.c", "z"}; !reflect.DeepEqual(got, want) {
		t.Errorf("LIST = %q; want %q", got, want)
	}
	h.expect(t, "list")

	dc.send(Request{Cmd: CmdEnable, Event: Event{Name: "a.*", LogLevel: 800, LogLevelType: LogLevelRange,
		Filter: `(logger_name == "a.*") && (int_loglevel >= 800)`}})
	if got := dc.reply(); got != ReplySuccess {
		t.Errorf("ENABLE reply %v; want SUCCESS", got)
	}
	h.expect(t, `enable a.* RANGE 800 "(logger_name == \"a.*\") && (int_loglevel >= 800)" registered=true`)

	for _, want := range []ReplyCode{ReplySuccess, ReplyUnknownName} {
		dc.send(Request{Cmd: CmdDisable, Name: "a.b"})
		if got := dc.reply(); got != want {
			t.Errorf("DISABLE reply %v; want %v", got, want)
		}
		h.expect(t, "disable a.b")
	}

	dc.send(Request{Cmd: CmdAppCtxEnable, Provider: "myprov", Context: "myctx"})
	if got := dc.reply(); got != ReplySuccess {
		t.Errorf("APP_CTX_ENABLE reply %v; want SUCCESS", got)
	}
	h.expect(t, "appctx true myprov:myctx")
	dc.send(Request{Cmd: CmdAppCtxDisable, Provider: "myprov", Context: "myctx"})
	if got := dc.reply(); got != ReplySuccess {
		t.Errorf("APP_CTX_DISABLE reply %v; want SUCCESS", got)
	}
	h.expect(t, "appctx false myprov:myctx")

	// Unknown command with a payload: discarded, INVALID, stream in sync.
	raw := Dialect20.AppendHeader(nil, Header{DataSize: 10, Cmd: 42})
	dc.sendRaw(append(raw, make([]byte, 10)...))
	if got := dc.reply(); got != ReplyInvalid {
		t.Errorf("unknown command reply %v; want INVALID", got)
	}
	if got := dc.list(); len(got) != 3 {
		t.Errorf("LIST after unknown command = %q; want 3 names", got)
	}
}

var testNames = []string{"z", "a.c", "a.b", "", "a.b", strings.Repeat("x", 256), "nul\x00name"}

func TestCommandsTCP(t *testing.T) {
	e := newTestEnv(t)
	d := newFakeDaemon(t, e.root, Dialect20)
	h := newRecHandler(testNames...)
	c := startClient(t, e.config(), h)
	dc := d.accept()
	exerciseCommands(t, c, h, dc)
	c.Close()
	h.nextClosed(t)
	checkNoLeak(t)
}

// pipeDialer connects the client to in-memory pipes.
type pipeDialer struct {
	ends  chan net.Conn
	addrs chan string
}

func newPipeDialer() *pipeDialer {
	return &pipeDialer{ends: make(chan net.Conn, 4), addrs: make(chan string, 4)}
}

func (p *pipeDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	a, b := net.Pipe()
	p.addrs <- network + " " + addr
	p.ends <- b
	return a, nil
}

func (p *pipeDialer) accept(t *testing.T, d Dialect) *daemonConn {
	t.Helper()
	select {
	case nc := <-p.ends:
		t.Cleanup(func() { nc.Close() })
		dc := &daemonConn{t: t, nc: nc, d: d}
		dc.handshake()
		return dc
	case <-time.After(testWait):
		t.Fatal("no dial")
		return nil
	}
}

func TestCommandsPipe(t *testing.T) {
	e := newTestEnv(t)
	writePortFile(t, e.root, 5399)
	pd := newPipeDialer()
	cfg := e.config()
	cfg.Dial = pd.dial
	h := newRecHandler(testNames...)
	c := startClient(t, cfg, h)
	dc := pd.accept(t, Dialect20)
	if got := <-pd.addrs; got != "tcp 127.0.0.1:5399" {
		t.Errorf("dialled %q; want tcp 127.0.0.1:5399", got)
	}
	exerciseCommands(t, c, h, dc)
	c.Close()
	checkNoLeak(t)
}

func TestRFC01Dialect(t *testing.T) {
	for _, transport := range []string{"tcp", "pipe"} {
		t.Run(transport, func(t *testing.T) {
			e := newTestEnv(t)
			cfg := e.config()
			cfg.Dialect = DialectRFC01
			var dc *daemonConn
			h := newRecHandler("b", "a")
			var c *Client
			if transport == "tcp" {
				d := newFakeDaemon(t, e.root, DialectRFC01)
				c = startClient(t, cfg, h)
				dc = d.accept()
			} else {
				writePortFile(t, e.root, 5345)
				pd := newPipeDialer()
				cfg.Dial = pd.dial
				c = startClient(t, cfg, h)
				dc = pd.accept(t, DialectRFC01)
			}
			// No registration message and no REG_DONE: registered once
			// connected.
			waitRegistered(t, c)
			if got := dc.list(); !reflect.DeepEqual(got, []string{"a", "b"}) {
				t.Errorf("LIST = %q; want [a b]", got)
			}
			h.expect(t, "list")
			dc.send(Request{Cmd: CmdEnable, Event: Event{Name: "a"}})
			if got := dc.reply(); got != ReplySuccess {
				t.Errorf("ENABLE reply %v", got)
			}
			h.expect(t, `enable a ALL -2147483648 "" registered=true`)
			dc.send(Request{Cmd: CmdDisable, Name: "a"})
			if got := dc.reply(); got != ReplySuccess {
				t.Errorf("DISABLE reply %v", got)
			}
			h.expect(t, "disable a")
			// REG_DONE and APP_CTX are unknown in RFC v0.1.
			dc.sendRaw(DialectRFC01.AppendHeader(nil, Header{Cmd: CmdRegDone}))
			if got := dc.reply(); got != ReplyInvalid {
				t.Errorf("RFC REG_DONE reply %v; want INVALID", got)
			}
			dc.sendRaw(DialectRFC01.AppendHeader(nil, Header{Cmd: 1<<32 + CmdList}))
			if got := dc.reply(); got != ReplyInvalid {
				t.Errorf("RFC cmd 2^32+1 reply %v; want INVALID", got)
			}
			if got := dc.list(); len(got) != 2 {
				t.Errorf("LIST after unknown = %q", got)
			}
			c.Close()
			checkNoLeak(t)
		})
	}
}

// TestMalformedCommands: a malformed command of acceptable size gets the
// reply its kind requires and the stream stays in sync.
func TestMalformedCommands(t *testing.T) {
	hdr := func(size int, cmd Command) []byte {
		return Dialect20.AppendHeader(nil, Header{DataSize: uint64(size), Cmd: cmd})
	}
	with := func(h, p []byte) []byte { return append(h, p...) }
	long := bytes.Repeat([]byte{'a'}, NameFieldSize)
	e := newTestEnv(t)
	d := newFakeDaemon(t, e.root, Dialect20)
	h := newRecHandler("n")
	c := startClient(t, e.config(), h)
	dc := d.accept()
	dc.send(Request{Cmd: CmdRegDone})
	waitRegistered(t, c)
	for _, tc := range []struct {
		name string
		raw  []byte
		want ReplyKind
	}{
		{"disable 100 bytes", with(hdr(100, CmdDisable), make([]byte, 100)), ReplyGeneric},
		{"disable without NUL", with(hdr(256, CmdDisable), long), ReplyGeneric},
		{"enable 200 bytes", with(hdr(200, CmdEnable), make([]byte, 200)), ReplyGeneric},
		{"enable filter_len mismatch", func() []byte {
			p := enablePayload(0, 0, []byte("a"), 9, []byte("x\x00"))
			return with(hdr(len(p), CmdEnable), p)
		}(), ReplyGeneric},
		{"enable loglevel type 7", func() []byte {
			p := enablePayload(0, 7, []byte("a"), 0, nil)
			return with(hdr(len(p), CmdEnable), p)
		}(), ReplyGeneric},
		{"app ctx bad length", with(hdr(12, CmdAppCtxEnable), appCtxPayload(200, "abcd", 0, "")), ReplyGeneric},
		{"list with payload", with(hdr(3, CmdList), []byte{1, 2, 3}), ReplyList},
		{"reg_done with payload", with(hdr(2, CmdRegDone), []byte{1, 2}), ReplyNone},
		{"unknown command 0", hdr(0, 0), ReplyGeneric},
		{"unknown command 2^32-1 with payload", with(hdr(MaxDataSize, math.MaxUint32), make([]byte, MaxDataSize)), ReplyGeneric},
	} {
		dc.sendRaw(tc.raw)
		switch tc.want {
		case ReplyGeneric:
			if got := dc.reply(); got != ReplyInvalid {
				t.Errorf("%s: reply %v; want INVALID", tc.name, got)
			}
		case ReplyList:
			if got := dc.readList(); !reflect.DeepEqual(got, []string{"n"}) {
				t.Errorf("%s: list %q; want [n]", tc.name, got)
			}
		case ReplyNone:
			dc.quiet(50 * time.Millisecond)
		}
		if got := dc.list(); !reflect.DeepEqual(got, []string{"n"}) {
			t.Errorf("%s: LIST after it = %q; want [n]", tc.name, got)
		}
	}
	// Each kind of malformation is logged once.
	if n := e.log.count("malformed command"); n == 0 || n > 6 {
		t.Errorf("%d malformed-command log lines; want 1 per kind:\n%s", n, e.log)
	}
	c.Close()
	checkNoLeak(t)
}

// TestReconnect: a lost connection is closed on the handler side, and the
// client registers again on a new Conn.
func TestReconnect(t *testing.T) {
	e := newTestEnv(t)
	d := newFakeDaemon(t, e.root, Dialect20)
	h := newRecHandler("n")
	c := startClient(t, e.config(), h)
	dc := d.accept()
	dc.send(Request{Cmd: CmdEnable, Event: Event{Name: "e"}})
	dc.reply()
	h.next(t)
	dc.send(Request{Cmd: CmdRegDone})
	waitRegistered(t, c)
	dc.nc.Close()
	closed := h.nextClosed(t)
	if closed.Daemon() != DaemonRoot || closed.Domain() != DomainJUL || closed.Port() != d.port ||
		closed.Dialect() != Dialect20 || !closed.Registered() {
		t.Errorf("closed conn %v: daemon %v domain %v port %d registered %v", closed, closed.Daemon(),
			closed.Domain(), closed.Port(), closed.Registered())
	}
	dc2 := d.accept()
	// The new connection has no enable state: DISABLE of e is unknown.
	dc2.send(Request{Cmd: CmdDisable, Name: "e"})
	if got := dc2.reply(); got != ReplyUnknownName {
		t.Errorf("DISABLE on new conn %v; want UNKNOWN_NAME", got)
	}
	h.expect(t, "disable e")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := c.WaitRegistered(ctx); err != context.DeadlineExceeded {
		t.Errorf("WaitRegistered on a new, unregistered conn: %v; want deadline exceeded", err)
	}
	dc2.send(Request{Cmd: CmdRegDone})
	waitRegistered(t, c)
	c.Close()
	c2 := h.nextClosed(t)
	if c2 == closed || c2.ID() == closed.ID() {
		t.Errorf("reconnect reused Conn %v", closed)
	}
	checkNoLeak(t)
}

// fakeClock hands out timers the test fires by hand.
type fakeClock struct {
	reqs chan fakeTimer
}

type fakeTimer struct {
	d  time.Duration
	ch chan time.Time
}

func (f *fakeClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	f.reqs <- fakeTimer{d, ch}
	return ch
}

func TestRetryDelayUsesClock(t *testing.T) {
	e := newTestEnv(t)
	d := newFakeDaemon(t, e.root, Dialect20)
	cfg := e.config()
	cfg.UserPortFile = ""
	cfg.RetryDelay = 0 // the default, 3 s
	fc := &fakeClock{reqs: make(chan fakeTimer, 4)}
	cfg.Clock = fc
	c := startClient(t, cfg, newRecHandler("n"))
	dc := d.accept()
	dc.nc.Close()
	var tm fakeTimer
	select {
	case tm = <-fc.reqs:
	case <-time.After(testWait):
		t.Fatal("no retry timer")
	}
	if tm.d != 3*time.Second {
		t.Errorf("retry delay %v; want 3s", tm.d)
	}
	d.noConnection(100 * time.Millisecond)
	tm.ch <- time.Now()
	d.accept()
	c.Close()
	checkNoLeak(t)
}

func TestPortFileMissingAndBad(t *testing.T) {
	e := newTestEnv(t)
	var dials atomic.Int32
	cfg := e.config()
	cfg.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return nil, errors.New("refused")
	}
	c := startClient(t, cfg, newRecHandler())
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	start := time.Now()
	if err := c.WaitRegistered(ctx); err != ErrNoDaemon {
		t.Errorf("WaitRegistered without daemon: %v; want ErrNoDaemon", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("WaitRegistered without daemon took %v", el)
	}
	time.Sleep(100 * time.Millisecond)
	if n := dials.Load(); n != 0 {
		t.Errorf("%d dials without port files; want 0", n)
	}
	// Garbage in the file: warned once, never dialled.
	if err := os.MkdirAll(strings.TrimSuffix(e.root, "/agent.port"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.root, []byte("junk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond)
	if n := dials.Load(); n != 0 {
		t.Errorf("%d dials with a bad port file; want 0", n)
	}
	// A stale port: dialled on every attempt, logged once.
	writePortFile(t, e.root, 5350)
	deadline := time.Now().Add(testWait)
	for dials.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := c.WaitRegistered(ctx); err != ErrNoDaemon {
		t.Errorf("WaitRegistered with a stale port: %v; want ErrNoDaemon", err)
	}
	c.Close()
	for _, tc := range []struct {
		sub string
		n   int
	}{
		{"no port file", 2}, // once per daemon
		{"unusable port file", 1},
		{"cannot connect", 1},
	} {
		if n := e.log.count(tc.sub); n != tc.n {
			t.Errorf("%d log lines with %q; want %d:\n%s", n, tc.sub, tc.n, e.log)
		}
	}
	if err := c.WaitRegistered(ctx); err != ErrClosed {
		t.Errorf("WaitRegistered after Close: %v; want ErrClosed", err)
	}
	checkNoLeak(t)
}

func TestFallbackPort(t *testing.T) {
	e := newTestEnv(t)
	pd := newPipeDialer()
	cfg := e.config()
	cfg.UserPortFile = ""
	cfg.FallbackPort = 5345
	cfg.Dial = pd.dial
	c := startClient(t, cfg, newRecHandler())
	pd.accept(t, Dialect20)
	if got := <-pd.addrs; got != "tcp 127.0.0.1:5345" {
		t.Errorf("dialled %q; want the fallback port", got)
	}
	c.Close()
}

func TestRootAndUserDaemons(t *testing.T) {
	e := newTestEnv(t)
	root := newFakeDaemon(t, e.root, Dialect20)
	user := newFakeDaemon(t, e.user, Dialect20)
	h := newRecHandler("n")
	c := startClient(t, e.config(), h)
	rc, uc := root.accept(), user.accept()
	// Two independent connections: an ENABLE on the root one does not
	// count on the user one.
	rc.send(Request{Cmd: CmdEnable, Event: Event{Name: "e"}})
	rc.reply()
	h.next(t)
	uc.send(Request{Cmd: CmdDisable, Name: "e"})
	if got := uc.reply(); got != ReplyUnknownName {
		t.Errorf("user DISABLE %v; want UNKNOWN_NAME", got)
	}
	h.next(t)
	uc.send(Request{Cmd: CmdRegDone})
	waitRegistered(t, c)
	rc.nc.Close()
	if got := h.nextClosed(t); got.Daemon() != DaemonRoot {
		t.Errorf("closed %v; want the root conn", got)
	}
	if !c.Registered() {
		t.Errorf("Registered() false while the user conn is registered")
	}
	c.Close()
	if got := h.nextClosed(t); got.Daemon() != DaemonUser {
		t.Errorf("closed %v; want the user conn", got)
	}
	checkNoLeak(t)
}

func TestSharedPortOnlyRoot(t *testing.T) {
	e := newTestEnv(t)
	d := newFakeDaemon(t, e.root, Dialect20)
	writePortFile(t, e.user, d.port)
	c := startClient(t, e.config(), newRecHandler())
	d.accept()
	d.noConnection(200 * time.Millisecond)
	c.Close()
	if n := e.log.count("user daemon port is the root daemon's"); n != 1 {
		t.Errorf("%d shared-port log lines; want 1:\n%s", n, e.log)
	}
}

func TestPortFileRereadEachAttempt(t *testing.T) {
	e := newTestEnv(t)
	d1 := newFakeDaemon(t, e.root, Dialect20)
	cfg := e.config()
	cfg.UserPortFile = ""
	h := newRecHandler("n")
	c := startClient(t, cfg, h)
	dc := d1.accept()
	d2 := newFakeDaemon(t, e.root, Dialect20) // rewrites the port file
	dc.nc.Close()
	h.nextClosed(t)
	d2.accept()
	c.Close()
}

func TestCloseIdempotent(t *testing.T) {
	e := newTestEnv(t)
	d := newFakeDaemon(t, e.root, Dialect20)
	h := newRecHandler()
	c := startClient(t, e.config(), h)
	d.accept()
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		}()
	}
	wg.Wait()
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	h.nextClosed(t)
	select {
	case conn := <-h.closed:
		t.Errorf("second Closed call for %v", conn)
	default:
	}
	checkNoLeak(t)
}

func TestNewClientErrors(t *testing.T) {
	e := newTestEnv(t)
	if _, err := NewClient(e.config(), nil); !errors.Is(err, ErrBadConfig) {
		t.Errorf("nil handler: %v; want ErrBadConfig", err)
	}
	cfg := e.config()
	cfg.Domain = DomainKernel
	if _, err := NewClient(cfg, newRecHandler()); !errors.Is(err, ErrBadConfig) {
		t.Errorf("kernel domain: %v; want ErrBadConfig", err)
	}
	cfg = e.config()
	cfg.RootPortFile, cfg.UserPortFile = "", ""
	if _, err := NewClient(cfg, newRecHandler()); !errors.Is(err, ErrBadConfig) {
		t.Errorf("no port files: %v; want ErrBadConfig", err)
	}
}

// TestNothingOnStdout: with the default (nil) logger the client is silent,
// even through hostile input.
func TestNothingOnStdout(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	defer func() { os.Stdout = saved }()

	e := newTestEnv(t)
	d := newFakeDaemon(t, e.root, Dialect20)
	cfg := e.config()
	cfg.Logger = nil
	h := newRecHandler("n")
	h.panicOn = "boom"
	c := startClient(t, cfg, h)
	dc := d.accept()
	dc.send(Request{Cmd: CmdEnable, Event: Event{Name: "boom"}})
	dc.reply()
	dc.sendRaw(Dialect20.AppendHeader(nil, Header{DataSize: 1 << 63}))
	dc.closedByAgent()
	c.Close()

	os.Stdout = saved
	w.Close()
	out, _ := io.ReadAll(r)
	if len(out) != 0 {
		t.Errorf("stdout got %q; want nothing", out)
	}
}

func TestFuncLogger(t *testing.T) {
	var got []string
	logger := NewFuncLogger(slog.LevelInfo, func(lv slog.Level, line string) { got = append(got, lv.String()+" "+line) })
	logger.With("a", 1).WithGroup("g").Info("msg", "k", "v", slog.Group("sub", "x", 2))
	logger.Debug("dropped")
	logger.Warn("w", slog.Group("", "inline", true))
	want := []string{"INFO msg a=1 g.k=v g.sub.x=2", "WARN w inline=true"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lines %q; want %q", got, want)
	}
}

func TestRegistrationWireBytes(t *testing.T) {
	// The client's registration, as the sessiond reads it.
	e := newTestEnv(t)
	pd := newPipeDialer()
	cfg := e.config()
	writePortFile(t, e.root, 5345)
	cfg.Domain = DomainPython
	cfg.PID = 0x2e6b
	cfg.Dial = pd.dial
	c := startClient(t, cfg, newRecHandler())
	var nc net.Conn
	select {
	case nc = <-pd.ends:
	case <-time.After(testWait):
		t.Fatal("no dial")
	}
	defer nc.Close()
	b := make([]byte, RegistrationSize)
	if _, err := io.ReadFull(nc, b); err != nil {
		t.Fatal(err)
	}
	want := binary.BigEndian.AppendUint32(nil, 5)
	want = binary.BigEndian.AppendUint32(want, 0x2e6b)
	want = binary.BigEndian.AppendUint32(want, 2)
	want = binary.BigEndian.AppendUint32(want, 0)
	if !bytes.Equal(b, want) {
		t.Errorf("registration %x; want %x", b, want)
	}
	c.Close()
}
