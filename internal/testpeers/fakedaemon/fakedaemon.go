// Package fakedaemon is a scriptable LTTng session daemon for tests of the
// agent protocol: it listens on a loopback port and speaks either dialect.
// It is apart from testpeers, which transport/lttngagent's tests import.
package fakedaemon

import (
	"errors"
	"io"
	"math"
	"net"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/transport/lttngagent"
)

// Daemon is a session daemon of one dialect on a loopback port, driven
// by the test one connection at a time: hosts find it through their
// lttng_port option.
type Daemon struct {
	t  testing.TB
	dl lttngagent.Dialect
	ln net.Listener
}

// New listens on a loopback port for hosts speaking dialect dl.
func New(t testing.TB, dl lttngagent.Dialect) *Daemon {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return &Daemon{t: t, dl: dl, ln: ln}
}

// Port is the daemon's agent port.
func (d *Daemon) Port() int { return d.ln.Addr().(*net.TCPAddr).Port }

// Accept takes the host's next connection; in protocol 2.0 it checks the
// registration names the JUL domain and, when pid > 0, that process.
func (d *Daemon) Accept(pid int) net.Conn {
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
		if reg.Domain != lttngagent.DomainJUL || (pid > 0 && int(reg.PID) != pid) {
			d.t.Errorf("registration %+v; want JUL, pid %d", reg, pid)
		}
	}
	return nc
}

// Send writes one command.
func (d *Daemon) Send(nc net.Conn, r lttngagent.Request) {
	d.t.Helper()
	b, err := d.dl.AppendRequest(nil, &r)
	if err != nil {
		d.t.Fatal(err)
	}
	if _, err := nc.Write(b); err != nil {
		d.t.Fatalf("daemon write: %v", err)
	}
}

// List sends LIST and returns the names of the reply.
func (d *Daemon) List(nc net.Conn) []string {
	d.t.Helper()
	d.Send(nc, lttngagent.Request{Cmd: lttngagent.CmdList})
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

// Reply reads a generic reply.
func (d *Daemon) Reply(nc net.Conn) lttngagent.ReplyCode {
	d.t.Helper()
	var b [lttngagent.ReplySize]byte
	if _, err := io.ReadFull(nc, b[:]); err != nil {
		d.t.Fatalf("reading a reply: %v", err)
	}
	code, _ := lttngagent.ParseReply(b[:])
	return code
}

// Enable sends ENABLE for name at every level and returns the reply.
func (d *Daemon) Enable(nc net.Conn, name string) lttngagent.ReplyCode {
	d.t.Helper()
	d.Send(nc, lttngagent.Request{Cmd: lttngagent.CmdEnable,
		Event: lttngagent.Event{Name: name, LogLevel: math.MinInt32, LogLevelType: lttngagent.LogLevelAll}})
	return d.Reply(nc)
}

// Disable sends DISABLE for name and returns the reply.
func (d *Daemon) Disable(nc net.Conn, name string) lttngagent.ReplyCode {
	d.t.Helper()
	d.Send(nc, lttngagent.Request{Cmd: lttngagent.CmdDisable, Name: name})
	return d.Reply(nc)
}

// Garbage writes bytes that are no command of either dialect (the data size
// they spell is far too large) and waits until the host closes nc.
func (d *Daemon) Garbage(nc net.Conn) {
	d.t.Helper()
	if _, err := nc.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		d.t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, nc); err != nil {
		d.t.Fatalf("the host did not close the connection after garbage: %v", err)
	}
}
