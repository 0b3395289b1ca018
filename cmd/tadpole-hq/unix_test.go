//go:build linux

package main

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeUnix: tadpole-hq serves loopback TCP and a Unix socket at once
// (-listen A,B), replacing the stale socket file of an HQ that ended;
// agents on either complete; a second HQ on the live socket fails and
// leaves it alone; on exit the socket file is gone; -exec hands the
// socket's address to the command in TADPOLE_HQ.
func TestServeUnix(t *testing.T) {
	dir, err := os.MkdirTemp("", "hqcmd") // short: sun_path has 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "hq.sock")
	stale, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	stale.SetUnlinkOnClose(false)
	stale.Close()

	cmd, addrs, stdout, _ := serve(t, "-listen", "127.0.0.1:0,unix:"+path, "-runs", "2", "-status", "off")
	tcp, sock, ok := strings.Cut(addrs, ", ")
	if !ok || !strings.HasPrefix(tcp, "127.0.0.1:") || sock != "unix:"+path {
		t.Fatalf("listening on %q; want a loopback port and unix:%s", addrs, path)
	}
	_, stderr, code := hqRun(t, "-listen", "unix:"+path, "-exec", "true")
	if code != exitError || !strings.Contains(stderr, "another process listens on this socket") {
		t.Errorf("a second HQ on the socket: status %d, stderr %q; want %d saying another process listens", code, stderr, exitError)
	}
	agent(t, sock, "ok", "2000")
	agent(t, tcp, "ok", "2000")
	if code := waitExit(t, cmd); code != 0 {
		t.Fatalf("exit status %d; want 0", code)
	}
	if n := strings.Count(stdout.String(), "result: completed"); n != 2 {
		t.Errorf("%d completed summaries; want 2:\n%s", n, stdout)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket file after HQ exited: %v; want none", err)
	}

	out, stderr, code := hqRun(t, "-listen", "unix:"+path, "-exec", agentBin, "ok", "500")
	if code != 0 || !strings.Contains(out, "result: completed") {
		t.Errorf("-exec over unix:%s: status %d\nstdout:\n%s\nstderr:\n%s", path, code, out, stderr)
	}
}
