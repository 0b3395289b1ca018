package hub

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/transport/hce"
)

// TestNoLeak: after a hub served clients and agents over TCP and a pipe
// and was closed, every goroutine it, its connections and its peers
// started has ended.
func TestNoLeak(t *testing.T) {
	base := runtime.NumGoroutine()
	func() {
		h, err := New(nil)
		if err != nil {
			t.Fatal(err)
		}
		tcp, _ := h.Listen("127.0.0.1:0")
		pipe, _ := h.Listen("pipe:" + filepath.Join(t.TempDir(), "hub.fifo"))
		ctx := context.Background()
		var conns []*hce.Conn
		for _, addr := range []string{tcp, pipe} {
			a, err := hce.Dial(ctx, addr, nil, func(c *hce.Conn, b *hce.Block) { c.Reply(b, b.Cmd|hce.ReplyBit, nil) })
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Register(ctx, "leak", 1, nil); err != nil {
				t.Fatal(err)
			}
			c, err := hce.NewClient(ctx, addr, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.GetSpecific(ctx, a.ID()); err != nil {
				t.Fatal(err)
			}
			if err := c.Attach(ctx, a.ID(), true); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Call(ctx, a.ID(), hce.IfaceTadpole, hce.TPStatus, nil); err != nil {
				t.Fatal(err)
			}
			conns = append(conns, a, c.Conn)
		}
		// The client side of the first pair leaves first, the hub goes next.
		conns[1].Close(hce.ReasonNone)
		<-conns[1].Done()
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := h.Close(cctx); err != nil {
			t.Fatal(err)
		}
		for _, c := range conns {
			select {
			case <-c.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("a peer did not see the hub close")
			}
		}
		var re *hce.ReasonError
		if err := conns[0].Err(); !errors.As(err, &re) || re.Reason != hce.ReasonShutdown {
			t.Errorf("agent saw %v; want DISCONNECT(SHUTDOWN)", err)
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines; %d before\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
