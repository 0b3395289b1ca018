package lttngagent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const testWait = 5 * time.Second

// fakeDaemon is a scripted session daemon on 127.0.0.1 with its own port
// file.
type fakeDaemon struct {
	t        testing.TB
	ln       net.Listener
	portFile string
	port     int
	dialect  Dialect
	conns    chan *daemonConn
}

func newFakeDaemon(t testing.TB, portFile string, d Dialect) *fakeDaemon {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeDaemon{t: t, ln: ln, portFile: portFile, dialect: d, conns: make(chan *daemonConn, 16)}
	f.port = ln.Addr().(*net.TCPAddr).Port
	writePortFile(t, portFile, f.port)
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			f.conns <- &daemonConn{t: t, nc: nc, d: d}
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return f
}

func writePortFile(t testing.TB, path string, port int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(port)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// accept returns the next connection; for protocol 2.0 it reads and checks
// the registration.
func (f *fakeDaemon) accept() *daemonConn {
	f.t.Helper()
	select {
	case dc := <-f.conns:
		f.t.Cleanup(func() { dc.nc.Close() })
		dc.handshake()
		return dc
	case <-time.After(testWait):
		f.t.Fatalf("no connection to the fake daemon on port %d", f.port)
		return nil
	}
}

// noConnection checks that nobody connects within d.
func (f *fakeDaemon) noConnection(d time.Duration) {
	f.t.Helper()
	select {
	case dc := <-f.conns:
		dc.nc.Close()
		f.t.Fatalf("unexpected connection to port %d", f.port)
	case <-time.After(d):
	}
}

// daemonConn is the daemon end of one connection.
type daemonConn struct {
	t   testing.TB
	nc  net.Conn
	d   Dialect
	reg Registration
}

func (dc *daemonConn) handshake() {
	dc.t.Helper()
	if !dc.d.Registers() {
		return
	}
	var b [RegistrationSize]byte
	dc.nc.SetReadDeadline(time.Now().Add(testWait))
	if _, err := io.ReadFull(dc.nc, b[:]); err != nil {
		dc.t.Fatalf("reading registration: %v", err)
	}
	dc.reg, _ = ParseRegistration(b[:])
}

func (dc *daemonConn) send(r Request) {
	dc.t.Helper()
	b, err := dc.d.AppendRequest(nil, &r)
	if err != nil {
		dc.t.Fatal(err)
	}
	dc.sendRaw(b)
}

func (dc *daemonConn) sendRaw(b []byte) {
	dc.t.Helper()
	dc.nc.SetWriteDeadline(time.Now().Add(testWait))
	if _, err := dc.nc.Write(b); err != nil {
		dc.t.Fatalf("daemon write: %v", err)
	}
}

func (dc *daemonConn) readN(n int) []byte {
	dc.t.Helper()
	b := make([]byte, n)
	dc.nc.SetReadDeadline(time.Now().Add(testWait))
	if _, err := io.ReadFull(dc.nc, b); err != nil {
		dc.t.Fatalf("daemon read of %d bytes: %v", n, err)
	}
	return b
}

func (dc *daemonConn) reply() ReplyCode {
	dc.t.Helper()
	code, _ := ParseReply(dc.readN(ReplySize))
	return code
}

// list sends LIST and returns the names of the reply.
func (dc *daemonConn) list() []string {
	dc.t.Helper()
	dc.send(Request{Cmd: CmdList})
	return dc.readList()
}

func (dc *daemonConn) readList() []string {
	dc.t.Helper()
	var b []byte
	var one [1]byte
	dc.nc.SetReadDeadline(time.Now().Add(testWait))
	for {
		names, _, err := dc.d.ParseListReply(b)
		if err == nil {
			return names
		}
		if err != ErrShort {
			dc.t.Fatalf("list reply %x: %v", b, err)
		}
		if _, err := io.ReadFull(dc.nc, one[:]); err != nil {
			dc.t.Fatalf("reading list reply after %x: %v", b, err)
		}
		b = append(b, one[0])
	}
}

// quiet checks that the agent sends nothing within d.
func (dc *daemonConn) quiet(d time.Duration) {
	dc.t.Helper()
	var one [1]byte
	dc.nc.SetReadDeadline(time.Now().Add(d))
	n, err := dc.nc.Read(one[:])
	var ne net.Error
	if n != 0 || !errors.As(err, &ne) || !ne.Timeout() {
		dc.t.Fatalf("agent sent %d bytes (%x), err %v; want nothing", n, one[:n], err)
	}
}

// closedByAgent checks that the agent closes the connection.
func (dc *daemonConn) closedByAgent() {
	dc.t.Helper()
	dc.nc.SetReadDeadline(time.Now().Add(testWait))
	buf := make([]byte, 64)
	for {
		_, err := dc.nc.Read(buf)
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			dc.t.Fatalf("agent did not close the connection")
		}
		return
	}
}

// recHandler records every call and answers like the agent core: refcounts
// per (connection, name), UNKNOWN_NAME for a name never enabled.
type recHandler struct {
	mu      sync.Mutex
	names   []string
	enabled map[*Conn]map[string]int
	calls   chan string
	closed  chan *Conn
	panicOn string // a name whose Enable panics; "list" makes List panic
	block   chan struct{}
}

func newRecHandler(names ...string) *recHandler {
	return &recHandler{
		names:   names,
		enabled: make(map[*Conn]map[string]int),
		calls:   make(chan string, 10000),
		closed:  make(chan *Conn, 100),
	}
}

func (h *recHandler) List(c *Conn) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.panicOn == "list" {
		panic("list panics")
	}
	h.calls <- "list"
	return h.names
}

func (h *recHandler) Enable(c *Conn, ev Event) ReplyCode {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ev.Name == h.panicOn {
		panic("enable panics")
	}
	if h.enabled[c] == nil {
		h.enabled[c] = make(map[string]int)
	}
	h.enabled[c][ev.Name]++
	h.calls <- fmt.Sprintf("enable %s %v %d %q registered=%v", ev.Name, ev.LogLevelType, ev.LogLevel, ev.Filter, c.Registered())
	return ReplySuccess
}

func (h *recHandler) Disable(c *Conn, name string) ReplyCode {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls <- "disable " + name
	if h.enabled[c][name] == 0 {
		return ReplyUnknownName
	}
	h.enabled[c][name]--
	return ReplySuccess
}

func (h *recHandler) AppContext(c *Conn, enable bool, provider, ctx string) ReplyCode {
	h.calls <- fmt.Sprintf("appctx %v %s:%s", enable, provider, ctx)
	return ReplySuccess
}

func (h *recHandler) Closed(c *Conn) {
	h.mu.Lock()
	delete(h.enabled, c)
	panics := h.panicOn == "closed"
	h.mu.Unlock()
	h.closed <- c
	if panics {
		panic("closed panics")
	}
}

func (h *recHandler) next(t testing.TB) string {
	t.Helper()
	select {
	case s := <-h.calls:
		return s
	case <-time.After(testWait):
		t.Fatal("no handler call")
		return ""
	}
}

func (h *recHandler) expect(t testing.TB, want string) {
	t.Helper()
	if got := h.next(t); got != want {
		t.Errorf("handler call %q; want %q", got, want)
	}
}

func (h *recHandler) nextClosed(t testing.TB) *Conn {
	t.Helper()
	select {
	case c := <-h.closed:
		return c
	case <-time.After(testWait):
		t.Fatal("no Closed call")
		return nil
	}
}

// logSink collects log records.
type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (s *logSink) logger() *slog.Logger {
	return NewFuncLogger(slog.LevelDebug, func(l slog.Level, line string) {
		s.mu.Lock()
		s.lines = append(s.lines, l.String()+" "+line)
		s.mu.Unlock()
	})
}

// count returns how many lines contain sub.
func (s *logSink) count(sub string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, l := range s.lines {
		if strings.Contains(l, sub) {
			n++
		}
	}
	return n
}

// waitFor waits until a line contains sub.
func (s *logSink) waitFor(t testing.TB, sub string) {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for s.count(sub) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no log line with %q:\n%s", sub, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (s *logSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n")
}

// testEnv is a temporary directory with root and user port file paths.
type testEnv struct {
	root, user string
	log        *logSink
}

func newTestEnv(t testing.TB) *testEnv {
	dir := t.TempDir()
	return &testEnv{
		root: filepath.Join(dir, "root", "agent.port"),
		user: filepath.Join(dir, "home", ".lttng", "agent.port"),
		log:  &logSink{},
	}
}

// config returns a Config with fast retries that uses only the paths of e.
func (e *testEnv) config() *Config {
	c := DefaultConfig()
	c.RootPortFile = e.root
	c.UserPortFile = e.user
	c.RetryDelay = 20 * time.Millisecond
	c.CommandTimeout = time.Second
	c.WriteTimeout = time.Second
	c.Logger = e.log.logger()
	return &c
}

func startClient(t testing.TB, cfg *Config, h Handler) *Client {
	t.Helper()
	c, err := NewClient(cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// checkNoLeak waits until no goroutine of a Client or session is left.
func checkNoLeak(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var leaked []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "lttngagent.(*Client)") || strings.Contains(g, "lttngagent.(*session)") {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines leaked:\n%s", len(leaked), strings.Join(leaked, "\n\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitRegistered(t testing.TB, c *Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	if err := c.WaitRegistered(ctx); err != nil {
		t.Fatalf("WaitRegistered: %v", err)
	}
}

func sortedCopy(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
