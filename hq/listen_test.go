//go:build linux

package hq_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/internal/testpeers"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// sockPath is a Unix socket path in a directory of the test's, short
// enough for sun_path (t.TempDir's names can pass 107 bytes).
func sockPath(t testing.TB) string {
	t.Helper()
	dir := testpeers.SockDir(t, "hqsock")
	return filepath.Join(dir, "hq.sock")
}

// TestUnixSocketRun: the same traffic over TCP, a Unix socket file and an
// abstract Unix socket (two data connections each) gives runs with the
// same counts, calls and checks, gap-free, and a trace file that replays
// to the same report; HQ names a Unix agent by its process and removes
// its socket file when it closes.
func TestUnixSocketRun(t *testing.T) {
	chunks, n := hqtest.Generate(hqtest.Workload{Events: 60_000, Methods: 40, Threads: 4, Chunk: 2048, Seed: 3})
	per := hqtest.Spread(chunks, 2)
	path := sockPath(t)
	abstract := fmt.Sprintf("@tadpole-hq-test-%d", os.Getpid())
	var reps []*hq.Report
	for _, tc := range []struct{ listen, addr string }{
		{"127.0.0.1:0", ""},
		{"unix:" + path, "unix:" + path},
		{abstract, "unix:" + abstract},
	} {
		t.Run(tc.listen, func(t *testing.T) {
			t.Cleanup(func() {
				if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("socket file after Close: %v; want none", err)
				}
			})
			srv := start(t, func(c *hq.Config) {
				c.Listen = tc.listen
				c.Agent.NumDataSenders = 2
			})
			if tc.addr != "" && srv.Addr() != tc.addr {
				t.Fatalf("Addr() = %q; want %q", srv.Addr(), tc.addr)
			}
			rep := sendAll(t, srv, bytefrog.Version1, per)
			if !rep.OK || rep.Sequenced != int64(n) || rep.GapCount != 0 || rep.DataConns != 2 || rep.StackFaults != 0 {
				t.Fatalf("run: %s, %d events of %d, %d gaps, %d data connections, %d stack faults",
					rep.Result(), rep.Sequenced, n, rep.GapCount, rep.DataConns, rep.StackFaults)
			}
			if tc.addr != "" {
				if want := fmt.Sprintf("pid %d uid %d on %s", os.Getpid(), os.Geteuid(), tc.addr); rep.Agent != want {
					t.Errorf("agent %q; want %q", rep.Agent, want)
				}
			}
			checkReplay(t, rep)
			reps = append(reps, rep)
		})
	}
	if len(reps) != 3 {
		return
	}
	for i, rep := range reps[1:] {
		for _, f := range []struct {
			name      string
			got, want any
		}{
			{"events", rep.Events, reps[0].Events},
			{"top methods", rep.TopMethods, reps[0].TopMethods},
			{"threads", rep.ThreadNames, reps[0].ThreadNames},
			{"bytes", rep.Bytes, reps[0].Bytes},
			{"methods", rep.Methods, reps[0].Methods},
		} {
			if !reflect.DeepEqual(f.got, f.want) {
				t.Errorf("socket %d: %s %v; over TCP %v", i+1, f.name, f.got, f.want)
			}
		}
	}
}

// TestListenBoth: one HQ serves agents over TCP and a Unix socket at once,
// the socket opened after Serve began.
func TestListenBoth(t *testing.T) {
	path := sockPath(t)
	srv := start(t, nil)
	must(t, srv.Listen("unix:"+path))
	addrs := srv.Addrs()
	if len(addrs) != 2 || !strings.HasPrefix(addrs[0], "127.0.0.1:") || addrs[1] != "unix:"+path {
		t.Fatalf("Addrs() = %q; want a loopback port and unix:%s", addrs, path)
	}
	chunks, n := hqtest.Generate(hqtest.Workload{Events: 20_000, Methods: 10, Threads: 2, Chunk: 1024, Seed: 5})
	for _, a := range addrs {
		if rep := sendAllAt(t, srv, a, bytefrog.Version1, hqtest.Spread(chunks, 1)); !rep.OK || rep.Sequenced != int64(n) {
			t.Errorf("run over %s: %s, %d events; want %d", a, rep.Result(), rep.Sequenced, n)
		}
	}
}

// staleSocket leaves a socket file at path that nothing listens on, as an
// HQ killed without closing does.
func staleSocket(t *testing.T, path string) {
	t.Helper()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	must(t, err)
	ln.SetUnlinkOnClose(false)
	ln.Close()
	if fi, err := os.Lstat(path); err != nil || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("stale socket file: %v, %v", fi, err)
	}
}

// TestListenStale: a socket file nobody listens on is replaced and served.
func TestListenStale(t *testing.T) {
	path := sockPath(t)
	staleSocket(t, path)
	srv := start(t, func(c *hq.Config) { c.Listen = "unix:" + path })
	chunks, n := hqtest.Generate(hqtest.Workload{Events: 5_000, Methods: 10, Threads: 2, Chunk: 1024, Seed: 9})
	if rep := sendAll(t, srv, bytefrog.Version1, hqtest.Spread(chunks, 1)); !rep.OK || rep.Sequenced != int64(n) {
		t.Fatalf("run: %s, %d events; want %d", rep.Result(), rep.Sequenced, n)
	}
}

// TestListenInUse: a socket another process listens on, a file that is not
// a socket and a missing directory are reported, and nothing is removed.
func TestListenInUse(t *testing.T) {
	newSrv := func() *hq.Server {
		srv, err := hq.New(nil)
		must(t, err)
		t.Cleanup(func() { srv.Close() })
		return srv
	}
	live := sockPath(t)
	ln, err := net.Listen("unix", live)
	must(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	file := sockPath(t)
	must(t, os.WriteFile(file, []byte("not a socket"), 0o644))
	for _, tc := range []struct {
		addr string
		is   error
		says string
	}{
		{"unix:" + live, hq.ErrAddrInUse, "another process listens on this socket"},
		{"unix:" + file, hq.ErrAddrInUse, "exists and is not a socket"},
		{"unix:" + filepath.Join(filepath.Dir(file), "none", "hq.sock"), nil, "no directory"},
		{"/tmp/hq.sock", hq.ErrConfig, "want host:port, unix:/path or @name"},
	} {
		err := newSrv().Listen(tc.addr)
		if err == nil || tc.is != nil && !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("Listen(%s) = %v; want %v saying %q", tc.addr, err, tc.is, tc.says)
		}
	}
	if c, err := net.Dial("unix", live); err != nil {
		t.Errorf("the live socket after the failed Listen: %v", err)
	} else {
		c.Close()
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "not a socket" {
		t.Errorf("the file in the way after the failed Listen: %q, %v", b, err)
	}
}

// TestListenNoAccess: HQ's user may not create the socket: a clear error.
func TestListenNoAccess(t *testing.T) {
	dir := filepath.Dir(sockPath(t))
	must(t, os.Chmod(dir, 0o555))
	srv, err := hq.New(nil)
	must(t, err)
	defer srv.Close()
	path := filepath.Join(dir, "hq.sock")
	testpeers.AsNobody(t, func() { err = srv.Listen("unix:" + path) })
	if !errors.Is(err, hq.ErrNoAccess) || !strings.Contains(err.Error(), "may not create a socket in "+dir) {
		t.Fatalf("Listen: %v; want ErrNoAccess naming %s", err, dir)
	}
	if !errors.Is(err, syscall.EACCES) {
		t.Errorf("Listen: %v does not wrap EACCES", err)
	}
}

// TestUnixAgentProcess: a Go agent process (testdata/e2eagent) traces into
// HQ over a Unix socket: its control and data connections all come through
// it, the run is complete and gap-free with every event, and HQ names the
// agent by its pid.
func TestUnixAgentProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs an agent process")
	}
	bin := filepath.Join(t.TempDir(), "e2eagent")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/e2eagent").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	path := sockPath(t)
	for _, producer := range []string{"calls", "probes"} {
		t.Run(producer, func(t *testing.T) {
			srv := start(t, func(c *hq.Config) {
				c.Listen = "unix:" + path
				c.Agent.NumDataSenders = 2
			})
			const events = 400_000 // 8 × rounds × 2 goroutines, with rounds a multiple of a probe buffer's
			cmd := exec.Command(bin, "-events", fmt.Sprint(events), "-g", "2", "-producer", producer)
			cmd.Env = append(os.Environ(), "TADPOLE_HQ="+srv.Addr(), "TADPOLE_LOG=stderr")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			must(t, cmd.Start())
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			run, err := srv.NextRun(ctx)
			if err != nil {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("no run: %v\n%s", err, stderr.String())
			}
			rep := wait(t, run)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("agent: %v\n%s", err, stderr.String())
			}
			if !rep.OK || rep.Sequenced != events || rep.GapCount != 0 || rep.StackFaults != 0 || rep.DataConns != 2 {
				t.Fatalf("run: %s, %d events of %d, %d gaps, %d stack faults, %d data connections",
					rep.Result(), rep.Sequenced, events, rep.GapCount, rep.StackFaults, rep.DataConns)
			}
			if want := fmt.Sprintf("pid %d uid %d on unix:%s", cmd.Process.Pid, os.Geteuid(), path); rep.Agent != want {
				t.Errorf("agent %q; want %q", rep.Agent, want)
			}
			if pid, ok := hq.AgentPID(rep.Agent); !ok || pid != cmd.Process.Pid {
				t.Errorf("AgentPID(%q) = %d, %v; want %d", rep.Agent, pid, ok, cmd.Process.Pid)
			}
		})
	}
}

func TestAgentPID(t *testing.T) {
	for _, tc := range []struct {
		agent string
		pid   int
		ok    bool
	}{
		{"pid 4242 uid 1000 on unix:/run/tadpole/hq.sock", 4242, true},
		{"pid 7 uid 0 on unix:@hq", 7, true},
		{"127.0.0.1:40462", 0, false},
		{"unix:/run/hq.sock", 0, false},
		{"pid x uid 0 on unix:@hq", 0, false},
		{"", 0, false},
	} {
		if pid, ok := hq.AgentPID(tc.agent); pid != tc.pid || ok != tc.ok {
			t.Errorf("AgentPID(%q) = %d, %v; want %d, %v", tc.agent, pid, ok, tc.pid, tc.ok)
		}
	}
}
