package lttngagent

import (
	"bytes"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// dialects are the wire formats the hostile-daemon tests run in: a client
// must hold up in either.
var dialects = [...]Dialect{Dialect20, DialectRFC01}

// forDialects runs f once per dialect, as a subtest named after it.
func forDialects(t *testing.T, f func(t *testing.T, dl Dialect)) {
	for _, dl := range dialects {
		t.Run(dl.String(), func(t *testing.T) { f(t, dl) })
	}
}

// dialectConfig is e.config() speaking dl.
func dialectConfig(e *testEnv, dl Dialect) *Config {
	c := e.config()
	c.Dialect = dl
	return c
}

// TestHostileDropsConnection: commands after which the stream cannot be
// trusted end the connection; the client logs once and reconnects.
func TestHostileDropsConnection(t *testing.T) {
	forDialects(t, func(t *testing.T, dl Dialect) {
		for _, tc := range []struct {
			name string
			raw  []byte
			log  string
		}{
			{"data_size 2^63", dl.AppendHeader(nil, Header{DataSize: 1 << 63, Cmd: CmdEnable}), "data size too large"},
			{"data_size 1 GiB", dl.AppendHeader(nil, Header{DataSize: 1 << 30, Cmd: CmdList}), "data size too large"},
			{"data_size MaxDataSize+1", dl.AppendHeader(nil, Header{DataSize: MaxDataSize + 1, Cmd: 77}), "data size too large"},
			{"garbage", []byte("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"), "data size too large"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e := newTestEnv(t)
				d := newFakeDaemon(t, e.root, dl)
				h := newRecHandler("n")
				c := startClient(t, dialectConfig(e, dl), h)
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				for i := 0; i < 3; i++ {
					dc := d.accept()
					dc.sendRaw(tc.raw)
					dc.closedByAgent()
					h.nextClosed(t)
				}
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				if grown := after.TotalAlloc - before.TotalAlloc; grown > 8<<20 {
					t.Errorf("allocated %d bytes serving 3 hostile headers; want bounded", grown)
				}
				// Still alive: the next connection works.
				dc := d.accept()
				if got := dc.list(); !reflect.DeepEqual(got, []string{"n"}) {
					t.Errorf("LIST after reconnect = %q", got)
				}
				c.Close()
				if n := e.log.count(tc.log); n != 1 {
					t.Errorf("%d log lines with %q; want 1:\n%s", n, tc.log, e.log)
				}
				checkNoLeak(t)
			})
		}
	})
}

func TestTruncatedCommand(t *testing.T) {
	forDialects(t, func(t *testing.T, dl Dialect) {
		e := newTestEnv(t)
		d := newFakeDaemon(t, e.root, dl)
		h := newRecHandler("n")
		c := startClient(t, dialectConfig(e, dl), h)
		for i := 0; i < 3; i++ {
			dc := d.accept()
			raw := dl.AppendHeader(nil, Header{DataSize: NameFieldSize, Cmd: CmdDisable})
			dc.sendRaw(append(raw, "abc"...))
			dc.nc.Close()
			h.nextClosed(t)
		}
		dc := d.accept()
		if got := dc.list(); !reflect.DeepEqual(got, []string{"n"}) {
			t.Errorf("LIST after reconnect = %q", got)
		}
		c.Close()
		if n := e.log.count("truncated command"); n != 1 {
			t.Errorf("%d truncated-command log lines; want 1:\n%s", n, e.log)
		}
		// A daemon closing between commands is an expected close: debug only.
		if n := e.log.count("WARN"); n != 1 {
			t.Errorf("%d warnings; want 1:\n%s", n, e.log)
		}
		checkNoLeak(t)
	})
}

// TestSlowWriter: a daemon sending one byte at a time cannot hold the
// connection longer than CommandTimeout.
func TestSlowWriter(t *testing.T) {
	forDialects(t, func(t *testing.T, dl Dialect) {
		e := newTestEnv(t)
		d := newFakeDaemon(t, e.root, dl)
		cfg := dialectConfig(e, dl)
		cfg.CommandTimeout = 150 * time.Millisecond
		h := newRecHandler("n")
		c := startClient(t, cfg, h)
		for i := 0; i < 2; i++ {
			dc := d.accept()
			start := time.Now()
			raw := dl.AppendHeader(nil, Header{Cmd: CmdList})
			var werr error
			for _, b := range raw {
				if _, werr = dc.nc.Write([]byte{b}); werr != nil {
					break
				}
				time.Sleep(40 * time.Millisecond)
			}
			dc.closedByAgent()
			if el := time.Since(start); el > 2*time.Second {
				t.Errorf("slow command held the connection %v", el)
			}
			h.nextClosed(t)
		}
		c.Close()
		if n := e.log.count("command timed out"); n != 1 {
			t.Errorf("%d timeout log lines; want 1:\n%s", n, e.log)
		}
		checkNoLeak(t)
	})
}

// TestFlood: many pipelined commands are all answered, in order.
func TestFlood(t *testing.T) {
	forDialects(t, func(t *testing.T, dl Dialect) {
		e := newTestEnv(t)
		d := newFakeDaemon(t, e.root, dl)
		h := &countingHandler{}
		c := startClient(t, dialectConfig(e, dl), h)
		dc := d.accept()
		const n = 3000
		var buf []byte
		for i := 0; i < n; i++ {
			var r Request
			switch i % 3 {
			case 0:
				r = Request{Cmd: CmdEnable, Event: Event{Name: "x", Filter: `logger_name == "x"`}}
			case 1:
				r = Request{Cmd: CmdDisable, Name: "x"}
			default:
				r = Request{Cmd: CmdList}
			}
			buf, _ = dl.AppendRequest(buf, &r)
		}
		errc := make(chan error, 1)
		go func() {
			_, err := dc.nc.Write(buf)
			errc <- err
		}()
		for i := 0; i < n; i++ {
			switch i % 3 {
			case 0, 1:
				if got := dc.reply(); got != ReplySuccess {
					t.Fatalf("reply %d = %v; want SUCCESS", i, got)
				}
			default:
				if got := dc.readList(); !reflect.DeepEqual(got, []string{"x"}) {
					t.Fatalf("list %d = %q", i, got)
				}
			}
		}
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		if got := h.calls.Load(); got != n {
			t.Errorf("handler calls %d; want %d", got, n)
		}
		c.Close()
		checkNoLeak(t)
	})
}

// TestFloodNotReading: a daemon that floods commands and never reads the
// replies is dropped once a reply cannot be written in time.
func TestFloodNotReading(t *testing.T) {
	forDialects(t, func(t *testing.T, dl Dialect) {
		e := newTestEnv(t)
		d := newFakeDaemon(t, e.root, dl)
		cfg := dialectConfig(e, dl)
		cfg.WriteTimeout = 100 * time.Millisecond
		names := make([]string, 2000)
		for i := range names {
			names[i] = strings.Repeat("n", 40) + string(rune('a'+i%26)) + strings.Repeat("m", i%50)
		}
		h := newRecHandler(names...)
		h.calls = make(chan string, 1<<16)
		c := startClient(t, cfg, h)
		dc := d.accept()
		list := dl.AppendHeader(nil, Header{Cmd: CmdList})
		cmds := bytes.Repeat(list, 1000)
		dc.nc.SetWriteDeadline(time.Now().Add(testWait))
		for {
			if _, err := dc.nc.Write(cmds); err != nil {
				break // the agent closed the connection
			}
		}
		h.nextClosed(t)
		e.log.waitFor(t, "command timed out")
		c.Close()
		if n := e.log.count("command timed out"); n != 1 {
			t.Errorf("%d timeout log lines; want 1:\n%s", n, e.log)
		}
		checkNoLeak(t)
	})
}

type countingHandler struct{ calls atomic.Int64 }

func (h *countingHandler) List(*Conn) []string { h.calls.Add(1); return []string{"x"} }
func (h *countingHandler) Enable(*Conn, Event) ReplyCode {
	h.calls.Add(1)
	return ReplySuccess
}
func (h *countingHandler) Disable(*Conn, string) ReplyCode {
	h.calls.Add(1)
	return ReplySuccess
}
func (h *countingHandler) AppContext(*Conn, bool, string, string) ReplyCode { return ReplySuccess }
func (h *countingHandler) Closed(*Conn)                                     {}

func TestHandlerPanics(t *testing.T) {
	forDialects(t, func(t *testing.T, dl Dialect) {
		e := newTestEnv(t)
		d := newFakeDaemon(t, e.root, dl)
		h := newRecHandler("n")
		h.panicOn = "boom"
		c := startClient(t, dialectConfig(e, dl), h)
		dc := d.accept()
		dc.send(Request{Cmd: CmdEnable, Event: Event{Name: "boom"}})
		if got := dc.reply(); got != ReplyInvalid {
			t.Errorf("panicking Enable reply %v; want INVALID", got)
		}
		h.mu.Lock()
		h.panicOn = "list"
		h.mu.Unlock()
		if got := dc.list(); len(got) != 0 {
			t.Errorf("panicking List = %q; want empty", got)
		}
		h.mu.Lock()
		h.panicOn = "closed"
		h.mu.Unlock()
		dc.nc.Close()
		h.nextClosed(t)
		// The client survives and reconnects.
		dc = d.accept()
		h.mu.Lock()
		h.panicOn = ""
		h.mu.Unlock()
		if got := dc.list(); !reflect.DeepEqual(got, []string{"n"}) {
			t.Errorf("LIST after panics = %q", got)
		}
		c.Close()
		if n := e.log.count("handler panicked"); n != 1 {
			t.Errorf("%d panic log lines; want 1 (once per problem):\n%s", n, e.log)
		}
		checkNoLeak(t)
	})
}
