package agent

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// TestTimeBaseIsStart plays an HQ that answers the data connection's hello
// only dataDelay after sending Start. Bytefrog stamps events with the
// milliseconds since Start, so an event recorded right after Start returns
// carries about dataDelay on HQ's clock, not the time since the data
// connection opened.
func TestTimeBaseIsStart(t *testing.T) {
	const dataDelay = 300 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type event struct {
		typ bytefrog.MsgType
		rel int32
	}
	startSent := make(chan time.Time, 1)
	events := make(chan []event, 1)
	go func() {
		var got []event
		defer func() { events <- got }()
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
		cfg := bytefrog.DefaultConfig()
		cfg.NumDataSenders = 1
		out, _ := bytefrog.AppendConfig(nil, 1, &cfg)
		ctrl.Write(out)
		startSent <- time.Now()
		ctrl.Write(bytefrog.AppendCommand(nil, bytefrog.MsgStart))
		data, err := ln.Accept()
		if err != nil {
			return
		}
		defer data.Close()
		var hello [2]byte
		if _, err := data.Read(hello[:]); err != nil {
			return
		}
		time.Sleep(dataDelay)
		data.Write(bytefrog.AppendCommand(nil, bytefrog.MsgDataHelloReply))
		go func() { // the control connection: read until the agent closes it
			var cm bytefrog.Msg
			for dec.Next(&cm) == nil {
			}
		}()
		ddec := bytefrog.NewDecoder(data, bytefrog.Dialect{Version: 1})
		for ddec.Next(&m) == nil {
			if m.Type == bytefrog.MsgMethodEntry || m.Type == bytefrog.MsgMethodExit {
				got = append(got, event{m.Type, m.RelTime})
			}
		}
	}()

	cfg := testConfig(ln.Addr().String())
	a, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := NewMethod("t/TimeBase.m;1;()V")
	m.Enter().Exit()
	want := time.Since(<-startSent) // HQ's clock when the event was recorded
	if err := a.Shutdown(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	got := <-events
	if len(got) != 2 {
		t.Fatalf("events %+v; want an entry and an exit", got)
	}
	for _, e := range got {
		d := time.Duration(e.rel) * time.Millisecond
		// The event can only be stamped later than Start's arrival, and HQ
		// sent Start before that: want is an upper bound, give or take the
		// millisecond of the clock's resolution.
		if d < dataDelay-5*time.Millisecond || d > want+2*time.Millisecond {
			t.Errorf("%v stamped %v after Start; HQ's clock says %v (data connection took %v)", e.typ, d, want, dataDelay)
		}
	}
}
