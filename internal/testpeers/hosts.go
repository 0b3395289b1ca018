package testpeers

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/transport/hce"
	"github.com/tadpole-trace/tadpole/transport/hce/hub"
)

// Spin keeps n cores busy with processes of their own until t ends.
func Spin(t testing.TB, n int) {
	for range n {
		c := exec.Command("sh", "-c", "while :; do :; done")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			c.Process.Kill()
			c.Wait()
		})
	}
}

// FreeAddr returns a loopback address nothing listens on (yet).
func FreeAddr(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// AwaitJ4PRead polls the management endpoint at addr until reading path
// (mbean/attribute) answers status 200 with the string want.
func AwaitJ4PRead(t testing.TB, addr, path, want string) {
	t.Helper()
	var resp struct {
		Status int
		Value  any
	}
	url := "http://" + addr + "/jolokia/read/" + path
	var err error
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var r *http.Response
		if r, err = http.Get(url); err == nil {
			err = json.NewDecoder(r.Body).Decode(&resp)
			r.Body.Close()
			if err == nil && resp.Status == 200 && resp.Value == want {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %+v, %v; want value %q", url, resp, err, want)
		}
	}
}

// StartHub starts an HCE hub on TCP, and on a named pipe too when over is
// "pipe"; it returns the hub, its TCP address (for clients) and the
// address agents use (hce=).
func StartHub(t testing.TB, over string) (*hub.Hub, string, string) {
	t.Helper()
	hb, err := hub.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hb.Close(context.Background()) })
	addr, err := hb.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if over != "pipe" {
		return hb, addr, addr
	}
	pipe := "pipe:" + filepath.Join(t.TempDir(), "hub.fifo")
	if _, err := hb.Listen(pipe); err != nil {
		t.Fatal(err)
	}
	return hb, addr, pipe
}

// AgentID waits until process pid has registered with hb and returns its
// agent id.
func AgentID(t testing.TB, hb *hub.Hub, pid int) uint32 {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		for _, a := range hb.Agents() {
			if a.PID == uint64(pid) {
				return a.AgentID
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not register; agents %+v", pid, hb.Agents())
		}
	}
}

// AwaitDeregistered waits for the hub to tell c's listener that an agent
// is gone.
func AwaitDeregistered(t testing.TB, c *hce.Client) {
	t.Helper()
	for {
		select {
		case e := <-c.Events():
			if e.ID == hce.EventAgentDeregistered {
				return
			}
		case <-time.After(20 * time.Second):
			t.Fatal("no EID_AGENT_DEREGISTERED")
		}
	}
}
