package agent

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// TestStartTimeoutRace: HQ's Start arrives as the start timeout ends, while
// the agent is still opening its data connections (HQ answers them
// slowly). The agent must either trace or fail cleanly, and under -race the
// timeout's failure path and the control reader opening the pipeline must
// not touch the same state unguarded.
func TestStartTimeoutRace(t *testing.T) {
	const timeout = 60 * time.Millisecond
	for i := range 12 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		// Start comes a little before or after the timeout; each data
		// connection is answered after a pause.
		startAt := timeout - 20*time.Millisecond + time.Duration(i)*4*time.Millisecond
		go slowHQ(ln, startAt, 15*time.Millisecond)
		cfg := testConfig(ln.Addr().String())
		cfg.StartTimeout = timeout
		cfg.HQRetry = 0
		a, err := Start(context.Background(), cfg)
		switch {
		case err == nil:
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			a.Shutdown(ctx)
			cancel()
		case errors.Is(err, ErrStartTimeout) || errors.Is(err, ErrNoHQ) || errors.Is(err, ErrRejected):
		default:
			t.Errorf("round %d: Start: %v", i, err)
		}
		ln.Close()
	}
}

// slowHQ greets one agent, sends Start at startAt after the configuration,
// and answers each data connection after pause; then it reads and discards.
func slowHQ(ln net.Listener, startAt, pause time.Duration) {
	d := bytefrog.Dialect{Version: bytefrog.Version1}
	ctl, err := ln.Accept()
	if err != nil {
		return
	}
	defer ctl.Close()
	var m bytefrog.Msg
	if bytefrog.NewDecoder(ctl, d).Next(&m) != nil {
		return
	}
	cfg := bytefrog.DefaultConfig()
	cfg.NumDataSenders = 3
	b, _ := bytefrog.AppendConfig(nil, bytefrog.Version1, &cfg)
	ctl.Write(b)
	time.AfterFunc(startAt, func() { ctl.Write(bytefrog.AppendCommand(nil, bytefrog.MsgStart)) })
	go discard(ctl)
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			var m bytefrog.Msg
			if bytefrog.NewDecoder(c, d).Next(&m) != nil {
				return
			}
			time.Sleep(pause)
			c.Write(bytefrog.AppendCommand(nil, bytefrog.MsgDataHelloReply))
			discard(c)
		}()
	}
}

func discard(c net.Conn) {
	var buf [4096]byte
	for {
		if _, err := c.Read(buf[:]); err != nil {
			return
		}
	}
}
