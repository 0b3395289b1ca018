package testpeers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Timeouts of the sessiond helper.
const (
	// SocketTimeoutMS is LTTNG_NETWORK_SOCKET_TIMEOUT given to the daemon:
	// a stalled agent blocks lttng commands for at most this long.
	SocketTimeoutMS = 5000
	startTimeout    = 20 * time.Second
	stopTimeout     = 10 * time.Second
	commandTimeout  = 30 * time.Second
	unprivileged    = "nobody"
)

// RequireTools skips the test when one of the programs is not in PATH, or
// fails it when the environment has CI=true.
func RequireTools(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is required under CI=true: %v", n, err)
			}
			t.Skipf("%s not found (%v): install it (./build.sh peers) to run this test", n, err)
		}
	}
}

// Sessiond is an isolated lttng-sessiond: a non-root daemon with its own
// LTTNG_HOME, so it neither sees nor disturbs a system daemon. When the test
// runs as root the daemon and every lttng command run as the user "nobody"
// (a root daemon would use the shared /var/run/lttng).
type Sessiond struct {
	// Home is the LTTNG_HOME (and HOME) of the daemon and its commands.
	Home string
	// PortFile is $Home/.lttng/agent.port, the user port file an agent
	// reads.
	PortFile string
	// Port is the agent TCP port of the running daemon.
	Port int
	// PID is the daemon's pid.
	PID int

	// agentPort is the agent TCP port the daemon listens on, chosen free
	// once and kept across restarts: daemons of tests running at once
	// would otherwise race for the default 5345, and an agent reading a
	// port file left by a killed daemon could reach another test's.
	agentPort int

	t    testing.TB
	cred *syscall.Credential
	env  []string
}

// StartSessiond starts `lttng-sessiond --daemonize --no-kernel` in a fresh
// LTTNG_HOME with LTTNG_NETWORK_SOCKET_TIMEOUT set, waits until its agent
// port is published and stops it at cleanup.
func StartSessiond(t testing.TB) *Sessiond {
	t.Helper()
	RequireTools(t, "lttng-sessiond", "lttng")
	s := &Sessiond{t: t}
	home, err := os.MkdirTemp("", "tadpole-lttng-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	s.Home = home
	s.PortFile = filepath.Join(home, ".lttng", "agent.port")
	if os.Geteuid() == 0 {
		u, err := user.Lookup(unprivileged)
		if err != nil {
			t.Fatalf("running as root needs the user %q for an isolated sessiond: %v", unprivileged, err)
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: false}
		if err := os.Chown(home, int(uid), int(gid)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	s.env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"LTTNG_HOME=" + home,
		"LTTNG_NETWORK_SOCKET_TIMEOUT=" + strconv.Itoa(SocketTimeoutMS),
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.agentPort = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	t.Cleanup(s.Stop)
	s.Start()
	return s
}

// Start starts the daemon again after Stop or Kill, in the same home.
func (s *Sessiond) Start() {
	s.t.Helper()
	if s.PID != 0 {
		s.t.Fatalf("sessiond %d still running", s.PID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	cmd := s.command(ctx, "lttng-sessiond", "--daemonize", "--no-kernel", "--agent-tcp-port="+strconv.Itoa(s.agentPort))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// --daemonize returns once the daemon is ready for clients.
	if err := cmd.Run(); err != nil {
		s.t.Fatalf("lttng-sessiond: %v\n%s", err, out.String())
	}
	pidFile := filepath.Join(s.Home, ".lttng", "lttng-sessiond.pid")
	deadline := time.Now().Add(startTimeout)
	for {
		pid, perr := readInt(pidFile)
		port, err := readInt(s.PortFile)
		if perr == nil && err == nil && pid > 0 && port > 0 && alive(pid) {
			s.PID, s.Port = pid, port
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("sessiond did not publish pid and agent port: %v, %v\n%s", perr, err, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop sends SIGTERM and waits for the daemon to exit (SIGKILL after a
// timeout). On SIGTERM the daemon sends DISABLEs for what is enabled, then
// closes agent connections and deletes its port file.
func (s *Sessiond) Stop() { s.signal(syscall.SIGTERM) }

// Kill sends SIGKILL: connections drop without DISABLEs and the port file
// stays behind, stale.
func (s *Sessiond) Kill() { s.signal(syscall.SIGKILL) }

func (s *Sessiond) signal(sig syscall.Signal) {
	if s.PID == 0 {
		return
	}
	pid := s.PID
	s.PID = 0
	children := descendantsOf(pid)
	_ = syscall.Kill(pid, sig)
	if !waitExit(pid, stopTimeout) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		waitExit(pid, stopTimeout)
	}
	// The consumer daemons normally exit with the session daemon; do not
	// leave one behind.
	for _, c := range children {
		if waitExit(c, time.Second) {
			continue
		}
		_ = syscall.Kill(c, syscall.SIGKILL)
		waitExit(c, stopTimeout)
	}
}

// Lttng runs the lttng CLI as the daemon's user, in its home, and returns
// its standard output; a non-zero exit is an error carrying stderr.
func (s *Sessiond) Lttng(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := s.command(ctx, "lttng", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("lttng %s: %w\nstdout: %s\nstderr: %s",
			strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

// MustLttng is Lttng that fails the test on error.
func (s *Sessiond) MustLttng(args ...string) string {
	s.t.Helper()
	out, err := s.Lttng(args...)
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

// MkdirAll creates a directory under Home that the daemon's user owns, for
// trace output.
func (s *Sessiond) MkdirAll(rel string) string {
	s.t.Helper()
	p := filepath.Join(s.Home, rel)
	if err := os.MkdirAll(p, 0o700); err != nil {
		s.t.Fatal(err)
	}
	if s.cred != nil {
		if err := os.Chown(p, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			s.t.Fatal(err)
		}
	}
	return p
}

func (s *Sessiond) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = s.env
	cmd.Dir = s.Home
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	return cmd
}

func readInt(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strconv.Atoi(strings.TrimSpace(line))
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	st, err := procState(pid)
	return err == nil && st != 'Z' && st != 'X'
}

func waitExit(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for alive(pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// procStat returns the state letter and parent pid of pid from
// /proc/<pid>/stat ("pid (comm) S ppid …"; comm may hold spaces and
// parentheses, so parse after the last ')').
func procStat(pid int) (state byte, ppid int, err error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, errors.New("testpeers: bad /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 || len(f[0]) != 1 {
		return 0, 0, errors.New("testpeers: bad /proc stat")
	}
	ppid, err = strconv.Atoi(f[1])
	return f[0][0], ppid, err
}

func procState(pid int) (byte, error) {
	st, _, err := procStat(pid)
	return st, err
}

// descendantsOf lists the live descendants of pid (the sessiond's run-as
// helper, the consumer daemons and their children).
func descendantsOf(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	parent := make(map[int]int)
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, pp, err := procStat(p); err == nil && st != 'Z' {
			parent[p] = pp
		}
	}
	var out []int
	for p := range parent {
		for a, n := parent[p], 0; a > 1 && n < len(parent); a, n = parent[a], n+1 {
			if a == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}
