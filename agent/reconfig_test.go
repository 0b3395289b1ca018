package agent

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// TestConfigurationsBeforeStart plays an HQ that, like Code Pulse, sends a
// second Configuration and a Suspend before Start: the agent applies the
// later heartbeat interval and starts suspended; a Configuration after
// Start is a protocol error that ends the run with an Error to HQ.
func TestConfigurationsBeforeStart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type result struct {
		beats []time.Time
		modes []bytefrog.Mode
		err   string
	}
	res := make(chan result, 1)
	go func() {
		var r result
		defer func() { res <- r }()
		ctrl, err := ln.Accept()
		if err != nil {
			return
		}
		defer ctrl.Close()
		dec := bytefrog.NewDecoder(ctrl, bytefrog.Dialect{Version: 1})
		var m bytefrog.Msg
		if dec.Next(&m) != nil || m.Type != bytefrog.MsgHello {
			return
		}
		slow, fast := bytefrog.DefaultConfig(), bytefrog.DefaultConfig()
		slow.HeartbeatInterval = 5000
		fast.HeartbeatInterval = 20
		fast.RunID = 7
		var out []byte
		out, _ = bytefrog.AppendConfig(out, 1, &slow)
		out, _ = bytefrog.AppendConfig(out, 1, &fast)
		out = bytefrog.AppendCommand(out, bytefrog.MsgSuspend)
		out = bytefrog.AppendCommand(out, bytefrog.MsgStart)
		ctrl.Write(out)
		data, err := ln.Accept()
		if err != nil {
			return
		}
		defer data.Close()
		var hello [2]byte
		if _, err := data.Read(hello[:]); err != nil || hello != [2]byte{byte(bytefrog.MsgDataHello), 7} {
			r.err = "bad data hello"
			return
		}
		data.Write(bytefrog.AppendCommand(nil, bytefrog.MsgDataHelloReply))
		deadline := time.Now().Add(300 * time.Millisecond)
		ctrl.SetReadDeadline(deadline.Add(2 * time.Second))
		for time.Now().Before(deadline) {
			if dec.Next(&m) != nil {
				return
			}
			if m.Type == bytefrog.MsgHeartbeat {
				r.beats = append(r.beats, time.Now())
				r.modes = append(r.modes, m.Mode)
			}
		}
		b, _ := bytefrog.AppendConfig(nil, 1, &fast)
		ctrl.Write(b)
		for dec.Next(&m) == nil {
			if m.Type == bytefrog.MsgError {
				r.err = bytefrog.String(m.Text)
				return
			}
		}
	}()
	cfg := testConfig(ln.Addr().String())
	a, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if a.Mode() != bytefrog.ModeSuspended {
		t.Errorf("mode %v after Suspend then Start; want Suspended", a.Mode())
	}
	if a.RunID() != 7 {
		t.Errorf("run id %d; want 7 from the last configuration", a.RunID())
	}
	r := <-res
	if len(r.beats) < 8 {
		t.Errorf("%d heartbeats in 300ms; want the 20ms interval of the second configuration", len(r.beats))
	}
	for _, m := range r.modes {
		if m != bytefrog.ModeSuspended {
			t.Errorf("heartbeat mode %v; want Suspended", m)
			break
		}
	}
	if r.err == "" {
		t.Error("no Error after a Configuration while tracing")
	}
	select {
	case <-a.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("run still on after a protocol error")
	}
	if a.Err() == nil {
		t.Error("Err() = nil after a protocol error")
	}
}
