package testpeers

import (
	"net"
	"testing"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// FrozenHQ greets an agent as HQ does (configuration, one data connection,
// Start) and then reads nothing more, as an HQ stopped with SIGSTOP or
// whose host went away without a reset.
type FrozenHQ struct {
	ln    net.Listener
	conns chan net.Conn
}

// NewFrozenHQ listens on a loopback port for one agent.
func NewFrozenHQ(t testing.TB) *FrozenHQ {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &FrozenHQ{ln: ln, conns: make(chan net.Conn, 4)}
	t.Cleanup(func() {
		ln.Close()
		for {
			select {
			case c := <-f.conns:
				c.Close()
			default:
				return
			}
		}
	})
	go f.serve(t)
	return f
}

func (f *FrozenHQ) serve(t testing.TB) {
	d := bytefrog.Dialect{Version: bytefrog.Version1}
	ctl, err := f.ln.Accept()
	if err != nil {
		return
	}
	f.conns <- ctl
	var m bytefrog.Msg
	if err := bytefrog.NewDecoder(ctl, d).Next(&m); err != nil || m.Type != bytefrog.MsgHello {
		t.Errorf("frozen HQ: hello: %v %v", m.Type, err)
		return
	}
	cfg := bytefrog.DefaultConfig()
	cfg.NumDataSenders = 1
	cfg.BufferMemoryBudget = 256 << 10
	b, err := bytefrog.AppendConfig(nil, bytefrog.Version1, &cfg)
	if err != nil {
		t.Error(err)
		return
	}
	ctl.Write(b)
	ctl.Write(bytefrog.AppendCommand(nil, bytefrog.MsgStart))
	data, err := f.ln.Accept()
	if err != nil {
		return
	}
	f.conns <- data
	if err := bytefrog.NewDecoder(data, d).Next(&m); err != nil || m.Type != bytefrog.MsgDataHello {
		t.Errorf("frozen HQ: data hello: %v %v", m.Type, err)
		return
	}
	data.Write(bytefrog.AppendCommand(nil, bytefrog.MsgDataHelloReply))
	// From here on nothing is read: the agent's writes fill the socket
	// buffers and then wait.
}

// Addr is the address agents use as hq=.
func (f *FrozenHQ) Addr() string { return f.ln.Addr().String() }
