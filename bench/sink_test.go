package bench

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/agent"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// sinkHQ is the cheapest HQ there can be: it greets the agent, starts it and
// discards every byte. It is to tadpole what a no-op exporter is to
// OpenTelemetry: the agent does all of its own work, nobody downstream
// does any.
func sinkHQ(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go sinkConn(c)
		}
	}()
	return ln.Addr().String()
}

func sinkConn(c net.Conn) {
	defer c.Close()
	var hello [2]byte
	if _, err := io.ReadFull(c, hello[:]); err != nil {
		return
	}
	switch bytefrog.MsgType(hello[0]) {
	case bytefrog.MsgHello:
		cfg := bytefrog.DefaultConfig()
		cfg.BufferMemoryBudget = 4 << 20
		cfg.NumDataSenders = 2
		b, err := bytefrog.AppendConfig(nil, hello[1], &cfg)
		if err != nil {
			return
		}
		c.Write(bytefrog.AppendCommand(b, bytefrog.MsgStart))
	case bytefrog.MsgDataHello:
		c.Write(bytefrog.AppendCommand(nil, bytefrog.MsgDataHelloReply))
	default:
		return
	}
	io.Copy(io.Discard, c)
}

func BenchmarkTadpoleTracedCallSink(b *testing.B) {
	ac := agent.DefaultConfig()
	ac.HQ = sinkHQ(b)
	ac.Log = "none"
	ac.LTTng = false
	a, err := agent.Start(context.Background(), ac)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		a.Shutdown(ctx)
	})
	b.ReportAllocs()
	b.ResetTimer()
	x := 0
	for i := 0; i < b.N; i++ {
		f := mTraced.Enter()
		x = work(x)
		f.Exit()
	}
}
