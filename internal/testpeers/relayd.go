package testpeers

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Relayd is an lttng-relayd started beside an isolated Sessiond, as its
// user and in its home, on free loopback ports.
type Relayd struct {
	// CtrlURL and DataURL are what `lttng create --live` takes.
	CtrlURL, DataURL string
	// LiveAddr is the viewers' address (host:port).
	LiveAddr string
	// Dir is where the relay writes the traces.
	Dir string
	// PID is the relay's pid.
	PID int

	cmd  *exec.Cmd
	done chan struct{}
}

// StartRelayd starts `lttng-relayd` on three free loopback ports, waits
// until its live port accepts viewers and stops it (only it) at cleanup.
func (s *Sessiond) StartRelayd(t testing.TB) *Relayd {
	t.Helper()
	RequireTools(t, "lttng-relayd")
	var ports [3]int
	for i := range ports {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = ln.Addr().(*net.TCPAddr).Port
		ln.Close()
	}
	r := &Relayd{
		CtrlURL:  fmt.Sprintf("tcp://127.0.0.1:%d", ports[0]),
		DataURL:  fmt.Sprintf("tcp://127.0.0.1:%d", ports[1]),
		LiveAddr: fmt.Sprintf("127.0.0.1:%d", ports[2]),
		Dir:      s.MkdirAll(fmt.Sprintf("relayd-%d", time.Now().UnixNano())),
		done:     make(chan struct{}),
	}
	r.cmd = s.command(context.Background(), "lttng-relayd", "-C", r.CtrlURL, "-D", r.DataURL,
		"-L", "tcp://"+r.LiveAddr, "-o", r.Dir)
	var out bytes.Buffer
	var mu sync.Mutex
	r.cmd.Stdout = lockedWriter{&mu, &out}
	r.cmd.Stderr = r.cmd.Stdout
	logs := func() string {
		mu.Lock()
		defer mu.Unlock()
		return out.String()
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("lttng-relayd: %v", err)
	}
	r.PID = r.cmd.Process.Pid
	go func() {
		r.cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(r.Stop)
	deadline := time.Now().Add(startTimeout)
	for {
		if _, err := ListLive(r.LiveAddr); err == nil {
			return r
		}
		select {
		case <-r.done:
			t.Fatalf("lttng-relayd exited: %s", logs())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("lttng-relayd does not serve viewers on %s: %s", r.LiveAddr, logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// Command returns cmd run as the daemon's user, in its home and
// environment (LTTNG_HOME): a traced program that must register with
// this daemon.
func (s *Sessiond) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return s.command(ctx, name, args...)
}

// Stop ends the relay: SIGTERM, then SIGKILL after a timeout.
func (r *Relayd) Stop() {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(stopTimeout):
		_ = r.cmd.Process.Kill()
		<-r.done
	}
}

// LiveSession is one session a live relay lists.
type LiveSession struct {
	ID       uint64
	Clients  uint32
	Streams  uint32
	Hostname string
	Name     string
}

// ListLive lists the sessions of the live relay at addr (viewer protocol
// 2.4: CONNECT, LIST_SESSIONS), as babeltrace2 does.
func ListLive(addr string) ([]LiveSession, error) {
	c, err := net.DialTimeout("tcp4", addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	be := binary.BigEndian
	req := func(cmd uint32, payload []byte) error {
		b := be.AppendUint64(nil, uint64(len(payload)))
		b = be.AppendUint32(b, cmd)
		b = be.AppendUint32(b, 0)
		_, err := c.Write(append(b, payload...))
		return err
	}
	connect := be.AppendUint64(nil, ^uint64(0))
	connect = be.AppendUint32(be.AppendUint32(be.AppendUint32(connect, 2), 4), 1)
	if err := req(1, connect); err != nil {
		return nil, err
	}
	if _, err := io.ReadFull(c, make([]byte, 20)); err != nil {
		return nil, err
	}
	if err := req(2, nil); err != nil {
		return nil, err
	}
	var n [4]byte
	if _, err := io.ReadFull(c, n[:]); err != nil {
		return nil, err
	}
	count := be.Uint32(n[:])
	if count > 1<<16 {
		return nil, fmt.Errorf("testpeers: %d sessions listed", count)
	}
	var out []LiveSession
	rec := make([]byte, 339)
	for range count {
		if _, err := io.ReadFull(c, rec); err != nil {
			return nil, err
		}
		out = append(out, LiveSession{ID: be.Uint64(rec), Clients: be.Uint32(rec[12:]), Streams: be.Uint32(rec[16:]),
			Hostname: cstr(rec[20:84]), Name: cstr(rec[84:339])})
	}
	return out, nil
}

func cstr(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
