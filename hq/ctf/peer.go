package ctf

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tadpole-trace/tadpole/hq"
)

// Peer names the traced process for a session name.
type Peer struct {
	Host    string // the agent's host: this machine's name for a loopback agent
	Program string // "agent" when unknown
	PID     int    // 0 when unknown
}

// LookupPeer names the process at the remote end of a TCP connection from
// remote to local. The host is remote's IP, or this host's name for a
// loopback address; program and pid are found in /proc for a local agent
// (Linux), else left unknown.
func LookupPeer(remote, local net.Addr) Peer {
	p := Peer{Program: "agent"}
	ra, _ := remote.(*net.TCPAddr)
	la, _ := local.(*net.TCPAddr)
	if ra == nil {
		p.Host = "unknown"
		return p
	}
	p.Host = ra.IP.String()
	if ra.IP.IsLoopback() {
		if h, err := os.Hostname(); err == nil && h != "" {
			p.Host = h
		}
		if la != nil {
			if pid := procPeer(ra.Port, la.Port); pid > 0 {
				p.PID = pid
				if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil {
					p.Program = strings.TrimSpace(string(comm))
				}
			}
		}
	}
	p.Host = clean(p.Host, 63)
	p.Program = clean(p.Program, 200)
	return p
}

// lookupAgent names the process of a run's agent (hq.Run.Agent): one
// connected through a Unix socket by the pid HQ noted, on this host (its
// program read from /proc for a live run, local set); one connected over
// TCP as LookupPeer does.
func lookupAgent(agent string, local net.Addr) Peer {
	pid, ok := hq.AgentPID(agent)
	if !ok {
		return LookupPeer(addr(agent), local)
	}
	p := Peer{Host: "localhost", Program: "agent", PID: pid}
	if h, err := os.Hostname(); err == nil && h != "" {
		p.Host = h
	}
	if local != nil { // a live run: the process is still this pid's
		if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil {
			p.Program = strings.TrimSpace(string(comm))
		}
	}
	p.Host = clean(p.Host, 63)
	p.Program = clean(p.Program, 200)
	return p
}

// clean keeps a name usable in a net:// URL path: no '/', bounded.
func clean(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r == '/' || r < ' ' {
			return '_'
		}
		return r
	}, s)
	if len(s) > n {
		s = s[:n]
	}
	return s
}

// procPeer finds the pid owning the local socket whose local port is
// agentPort and remote port hqPort, from /proc/net/tcp{,6} and the fds in
// /proc/*/fd. It returns 0 when not found.
func procPeer(agentPort, hqPort int) int {
	inode := ""
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fs := strings.Fields(line)
			if len(fs) < 10 {
				continue
			}
			if hexPort(fs[1]) == agentPort && hexPort(fs[2]) == hqPort {
				inode = fs[9]
				break
			}
		}
		if inode != "" {
			break
		}
	}
	if inode == "" || inode == "0" {
		return 0
	}
	want := "socket:[" + inode + "]"
	procs, _ := os.ReadDir("/proc")
	for _, d := range procs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
		for _, fd := range fds {
			if l, err := os.Readlink(fd); err == nil && l == want {
				return pid
			}
		}
	}
	return 0
}

func hexPort(addr string) int {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return -1
	}
	v, err := strconv.ParseUint(addr[i+1:], 16, 16)
	if err != nil {
		return -1
	}
	return int(v)
}
