package agent

import (
	"errors"
	"io"
	"math"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/transport/lttngagent"
)

// dialectDaemon is a session daemon of one dialect on a loopback port,
// driven by the test one connection at a time.
type dialectDaemon struct {
	t  *testing.T
	dl lttngagent.Dialect
	ln net.Listener
}

func newDialectDaemon(t *testing.T, dl lttngagent.Dialect) *dialectDaemon {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return &dialectDaemon{t: t, dl: dl, ln: ln}
}

func (d *dialectDaemon) port() int { return d.ln.Addr().(*net.TCPAddr).Port }

// accept takes the agent's next connection and, in protocol 2.0, checks its
// registration.
func (d *dialectDaemon) accept() net.Conn {
	d.t.Helper()
	d.ln.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
	nc, err := d.ln.Accept()
	if err != nil {
		d.t.Fatalf("%v daemon: no connection from the agent: %v", d.dl, err)
	}
	d.t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	if d.dl.Registers() {
		var b [lttngagent.RegistrationSize]byte
		if _, err := io.ReadFull(nc, b[:]); err != nil {
			d.t.Fatalf("reading the registration: %v", err)
		}
		reg, _ := lttngagent.ParseRegistration(b[:])
		if reg.Domain != lttngagent.DomainJUL || int(reg.PID) != os.Getpid() {
			d.t.Errorf("registration %+v; want JUL, pid %d", reg, os.Getpid())
		}
	}
	return nc
}

func (d *dialectDaemon) send(nc net.Conn, r lttngagent.Request) {
	d.t.Helper()
	b, err := d.dl.AppendRequest(nil, &r)
	if err != nil {
		d.t.Fatal(err)
	}
	if _, err := nc.Write(b); err != nil {
		d.t.Fatalf("daemon write: %v", err)
	}
}

func (d *dialectDaemon) list(nc net.Conn) []string {
	d.t.Helper()
	d.send(nc, lttngagent.Request{Cmd: lttngagent.CmdList})
	var b []byte
	var one [1]byte
	for {
		names, _, err := d.dl.ParseListReply(b)
		if err == nil {
			return names
		}
		if !errors.Is(err, lttngagent.ErrShort) {
			d.t.Fatalf("list reply %x: %v", b, err)
		}
		if _, err := io.ReadFull(nc, one[:]); err != nil {
			d.t.Fatalf("reading the list reply: %v", err)
		}
		b = append(b, one[0])
	}
}

func (d *dialectDaemon) reply(nc net.Conn) lttngagent.ReplyCode {
	d.t.Helper()
	var b [lttngagent.ReplySize]byte
	if _, err := io.ReadFull(nc, b[:]); err != nil {
		d.t.Fatalf("reading a reply: %v", err)
	}
	code, _ := lttngagent.ParseReply(b[:])
	return code
}

// TestLTTngDialectOption: with lttng_dialect set, a Go host speaks that
// dialect to its daemon: LIST, ENABLE and DISABLE work, and a daemon that
// sends garbage costs only its connection, after which the agent comes back.
func TestLTTngDialectOption(t *testing.T) {
	for _, opt := range []string{"2.13", "rfc01"} {
		t.Run(opt, func(t *testing.T) {
			resetLogControl(t)
			dl, err := lttngagent.ParseDialect(opt)
			if err != nil {
				t.Fatal(err)
			}
			d := newDialectDaemon(t, dl)
			h := startHQ(t, nil)
			cfg := testConfig(h.Addr())
			if err := cfg.ParseOptions("lttng=on,logs=lttng,lttng_retry=50ms,lttng_dialect=" + opt); err != nil {
				t.Fatal(err)
			}
			cfg.LTTngPort = d.port()
			l := RegisterLogger("dialect." + opt)
			startAgent(t, h, cfg)

			nc := d.accept()
			if names := d.list(nc); !slices.Contains(names, l.name) {
				t.Fatalf("LIST = %q; want %q among them", names, l.name)
			}
			d.send(nc, lttngagent.Request{Cmd: lttngagent.CmdEnable,
				Event: lttngagent.Event{Name: l.name, LogLevel: math.MinInt32, LogLevelType: lttngagent.LogLevelAll}})
			if rc := d.reply(nc); rc != lttngagent.ReplySuccess || !l.enabled.Load() {
				t.Fatalf("ENABLE: reply %v, enabled %v; want success, true", rc, l.enabled.Load())
			}

			// Garbage where a header belongs: the agent drops this daemon's
			// connection (and what it enabled), then registers again.
			if _, err := nc.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(io.Discard, nc); err != nil {
				t.Fatalf("agent did not close the garbage connection: %v", err)
			}
			nc = d.accept()
			if l.enabled.Load() {
				t.Error("logger still enabled by a dropped connection")
			}
			d.send(nc, lttngagent.Request{Cmd: lttngagent.CmdEnable,
				Event: lttngagent.Event{Name: l.name, LogLevel: math.MinInt32, LogLevelType: lttngagent.LogLevelAll}})
			if rc := d.reply(nc); rc != lttngagent.ReplySuccess || !l.enabled.Load() {
				t.Fatalf("ENABLE after reconnect: reply %v, enabled %v", rc, l.enabled.Load())
			}
			d.send(nc, lttngagent.Request{Cmd: lttngagent.CmdDisable, Name: l.name})
			if rc := d.reply(nc); rc != lttngagent.ReplySuccess || l.enabled.Load() {
				t.Fatalf("DISABLE: reply %v, enabled %v; want success, false", rc, l.enabled.Load())
			}
		})
	}
}
