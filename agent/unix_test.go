//go:build linux

package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/internal/testhq"
	"github.com/tadpole-trace/tadpole/internal/testpeers"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
	"golang.org/x/sys/unix"
)

// TestHQUnix: the agent traces into HQ through a Unix socket file and an
// abstract one, its control and both data connections through it; every
// call arrives, gap-free, in each goroutine's order.
func TestHQUnix(t *testing.T) {
	for _, addr := range []string{"unix:" + filepath.Join(testpeers.SockDir(t, "agentsock"), "hq.sock"), fmt.Sprintf("@tadpole-agent-test-%d", os.Getpid())} {
		t.Run(addr, func(t *testing.T) {
			h := testhq.Start(t, func(c *hq.Config) {
				c.Listen = addr
				c.Agent.NumDataSenders = 2
			})
			cfg := testConfig(addr)
			a, run := startAgent(t, h, cfg)
			const workers, calls = 4, 5000
			ms := make([]*Method, workers)
			for w := range ms {
				ms[w] = NewMethod(fmt.Sprintf("t/Unix.w%d;1;()V", w))
			}
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					SetThreadName(fmt.Sprintf("unix-%d", w))
					for range calls {
						ms[w].Enter().Exit()
					}
				}()
			}
			wg.Wait()
			rep := finish(t, a, run)
			testhq.CheckClean(t, rep, h.Collector(0), workers*calls*2)
			if rep.DataConns != 2 || !strings.HasPrefix(rep.Agent, fmt.Sprintf("pid %d ", os.Getpid())) {
				t.Errorf("agent %q over %d data connections; want this process over 2", rep.Agent, rep.DataConns)
			}
			for name, evs := range h.Collector(0).ByThread() {
				for i, e := range evs {
					if want := []bytefrog.MsgType{bytefrog.MsgMethodEntry, bytefrog.MsgMethodExit}[i%2]; e.Type != want {
						t.Fatalf("thread %s: event %d is %v; want %v", name, i, e.Type, want)
					}
				}
			}
		})
	}
}

// TestHQLateUnix: with no socket file yet, or one an ended HQ left behind,
// the agent runs untraced, tries again, and traces once HQ listens there.
func TestHQLateUnix(t *testing.T) {
	for _, stale := range []bool{false, true} {
		t.Run(fmt.Sprintf("stale=%v", stale), func(t *testing.T) {
			path := filepath.Join(testpeers.SockDir(t, "agentsock"), "hq.sock")
			if stale {
				ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
				if err != nil {
					t.Fatal(err)
				}
				ln.SetUnlinkOnClose(false)
				ln.Close()
			}
			cfg := testConfig("unix:" + path)
			clk := newFakeClock()
			cfg.Clock = clk
			cfg.HQRetry = time.Hour
			a, err := Start(ctxT(t), cfg)
			if err != nil {
				t.Fatalf("Start with no HQ on the socket: %v; want an agent trying in the background", err)
			}
			defer a.Shutdown(context.Background())
			m := NewMethod("t/LateUnix.call;1;()V")
			m.Enter().Exit() // untraced
			clk.waitTimers(t, 1)
			traceOnceHQListens(t, a, clk, m, "unix:"+path)
		})
	}
}

// TestDialUnixErrors: what a failed dial of a Unix socket says, and
// whether trying again may mend it.
func TestDialUnixErrors(t *testing.T) {
	dir := testpeers.SockDir(t, "agentsock")
	log, _ := newLogger("none", LevelOff)
	dial := func(addr string) error {
		_, err := newSession(testConfig(addr), log).dial(context.Background(), firstDial)
		return err
	}
	stale := filepath.Join(dir, "stale.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	live := filepath.Join(dir, "live.sock")
	lln, err := net.Listen("unix", live)
	if err != nil {
		t.Fatal(err)
	}
	defer lln.Close()
	if err := os.Chmod(live, 0o700); err != nil {
		t.Fatal(err)
	}
	var denied error
	testpeers.AsNobody(t, func() { denied = dial("unix:" + live) })
	for _, tc := range []struct {
		name  string
		err   error
		fatal bool
		cause error
		says  string
	}{
		{"no socket file", dial("unix:" + filepath.Join(dir, "none.sock")), false, syscall.ENOENT, "is HQ listening there (tadpole-hq -listen unix:"},
		{"stale socket file", dial("unix:" + stale), false, syscall.ECONNREFUSED, "no HQ listens on the socket file " + stale},
		{"no abstract socket", dial(fmt.Sprintf("@tadpole-none-%d", os.Getpid())), false, syscall.ECONNREFUSED, "connection refused"},
		{"permission", denied, true, syscall.EACCES, "may not connect to the socket " + live},
		{"no path", dial("unix:"), true, bytefrog.ErrBadAddr, "no socket path"},
	} {
		t.Logf("%s: %v", tc.name, tc.err)
		var ce *ConnError
		if !errors.As(tc.err, &ce) || !errors.Is(tc.err, ErrNoHQ) || !errors.Is(tc.err, tc.cause) {
			t.Errorf("%s: %v; want a ConnError wrapping ErrNoHQ and %v", tc.name, tc.err, tc.cause)
			continue
		}
		if ce.Fatal != tc.fatal || retryable(tc.err) == tc.fatal {
			t.Errorf("%s: fatal %v, retryable %v; want fatal %v", tc.name, ce.Fatal, retryable(tc.err), tc.fatal)
		}
		if !strings.Contains(tc.err.Error(), tc.says) {
			t.Errorf("%s: %q does not say %q", tc.name, tc.err, tc.says)
		}
	}
}

// TestUnixSendBuffer: a Unix socket to HQ gets unixSendBuffer bytes of
// send buffer (the kernel doubles what it is asked, up to twice
// net.core.wmem_max).
func TestUnixSendBuffer(t *testing.T) {
	path := filepath.Join(testpeers.SockDir(t, "agentsock"), "hq.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	log, _ := newLogger("none", LevelOff)
	c, err := newSession(testConfig("unix:"+path), log).dial(context.Background(), firstDial)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := 2 * unixSendBuffer
	if b, err := os.ReadFile("/proc/sys/net/core/wmem_max"); err == nil {
		var max int
		fmt.Sscan(string(b), &max)
		want = 2 * min(unixSendBuffer, max)
	}
	rc, err := c.(*net.UnixConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var got int
	rc.Control(func(fd uintptr) { got, err = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF) })
	if err != nil || got != want {
		t.Errorf("SO_SNDBUF %d, %v; want %d", got, err, want)
	}
}
