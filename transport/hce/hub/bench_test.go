package hub

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/transport/hce"
)

// benchSetup starts a hub, an agent answering TPStatus with a small status
// and counting TPMark, and a client attached to it, over tcp or pipe.
func benchSetup(b *testing.B, transport string, md5 bool) (*hce.Client, uint32, *atomic.Int64) {
	b.Helper()
	cfg := DefaultConfig()
	cfg.Conn.MD5 = md5
	h, err := New(&cfg)
	if err != nil {
		b.Fatal(err)
	}
	addr, err := h.Listen("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	if transport == "pipe" {
		addr = "pipe:" + filepath.Join(b.TempDir(), "hub.fifo")
		if _, err := h.Listen(addr); err != nil {
			b.Fatal(err)
		}
	}
	b.Cleanup(func() { h.Close(context.Background()) })
	ctx := context.Background()
	var marks atomic.Int64
	status := hce.AppendStatus(nil, &hce.Status{Name: "bench", PID: 1, Mode: "Tracing"})
	a, err := hce.Dial(ctx, addr, &hce.Config{MD5: md5}, func(c *hce.Conn, bl *hce.Block) {
		switch bl.Cmd {
		case hce.TPStatus:
			c.Reply(bl, hce.TPStatusReply, status)
		case hce.TPMark:
			marks.Add(1)
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close(hce.ReasonNone) })
	if err := a.Register(ctx, "bench", 1, []hce.InterfaceID{hce.IfaceTadpole}); err != nil {
		b.Fatal(err)
	}
	c, err := hce.NewClient(ctx, addr, &hce.Config{MD5: md5})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close(hce.ReasonNone) })
	if err := c.GetSpecific(ctx, a.ID()); err != nil {
		b.Fatal(err)
	}
	if err := c.Attach(ctx, a.ID(), false); err != nil {
		b.Fatal(err)
	}
	return c, a.ID(), &marks
}

// BenchmarkRoundTrip: one TP_STATUS command client → hub → agent → hub →
// client at a time; ns/op is the latency.
func BenchmarkRoundTrip(b *testing.B) {
	for _, tr := range []string{"tcp", "pipe"} {
		for _, md5 := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/md5=%v", tr, md5), func(b *testing.B) {
				c, id, _ := benchSetup(b, tr, md5)
				ctx := context.Background()
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := c.Status(ctx, id); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rt/s")
			})
		}
	}
}

// BenchmarkRoundTripParallel: many commands in flight on one client.
func BenchmarkRoundTripParallel(b *testing.B) {
	c, id, _ := benchSetup(b, "tcp", false)
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Status(ctx, id); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rt/s")
}

// BenchmarkEnvelopes: one-way envelopes (one TP_MARK block of 32 bytes of
// data each) client → hub → agent; the hub decodes, checks the route and
// re-encodes each one. MD5 on: every hop computes and checks the digest.
func BenchmarkEnvelopes(b *testing.B) {
	for _, md5 := range []bool{false, true} {
		b.Run(fmt.Sprintf("md5=%v", md5), func(b *testing.B) {
			c, id, marks := benchSetup(b, "tcp", md5)
			data := hce.AppendString(hce.AppendString(nil, "bench.key"), "a value of some bytes")
			env := hce.AppendBlocksEnvelope(nil, md5, &hce.Block{Dest: id, Src: c.ID(), Iface: hce.IfaceTadpole, Cmd: hce.TPMark, Data: data})
			b.SetBytes(int64(len(env)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := c.SendEnvelope(env); err != nil {
					b.Fatal(err)
				}
			}
			deadline := time.Now().Add(time.Minute)
			for marks.Load() < int64(b.N) {
				if time.Now().After(deadline) {
					b.Fatalf("%d of %d envelopes arrived", marks.Load(), b.N)
				}
				time.Sleep(50 * time.Microsecond)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "env/s")
		})
	}
}
