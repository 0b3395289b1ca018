package ctf

import (
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
)

// TestLookupAgent: an agent that came through a Unix socket is named by the
// pid HQ noted, with its program from /proc while the run is live and
// "agent" for a recorded run; a TCP agent as LookupPeer names it.
func TestLookupAgent(t *testing.T) {
	host, _ := os.Hostname()
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", os.Getpid()))
	if err != nil {
		t.Skip("no /proc")
	}
	local := &net.UnixAddr{Name: "/run/hq.sock", Net: "unix"}
	agent := fmt.Sprintf("pid %d uid 0 on unix:/run/hq.sock", os.Getpid())
	for _, tc := range []struct {
		agent string
		local net.Addr
		want  Peer
	}{
		{agent, local, Peer{Host: clean(host, 63), Program: clean(strings.TrimSpace(string(comm)), 200), PID: os.Getpid()}},
		{agent, nil, Peer{Host: clean(host, 63), Program: "agent", PID: os.Getpid()}},
		{"192.0.2.7:4000", nil, Peer{Host: "192.0.2.7", Program: "agent"}},
	} {
		if got := lookupAgent(tc.agent, tc.local); got != tc.want {
			t.Errorf("lookupAgent(%q, %v) = %+v; want %+v", tc.agent, tc.local, got, tc.want)
		}
	}
}
