package ctf_test

import (
	"context"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/ctf"
	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/live"
)

// A viewer that stops reading costs only its connection: the run goes on
// at full speed, another viewer reads to the end, and the session holds no
// more than its cap however far behind the viewers are.
func TestStalledViewerBoundedMemory(t *testing.T) {
	const maxBytes = 1 << 20
	cat, err := ctf.NewCatalog(&ctf.CatalogConfig{MaxTraceBytes: maxBytes, Writer: ctf.Config{LiveTimer: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := hq.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.NewProcessor = cat.Processor
	srv, err := hq.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen(cfg.Listen); err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Close()
	lcfg := live.DefaultConfig()
	lcfg.WriteTimeout = 300 * time.Millisecond
	ls, _ := live.NewServer(cat, lcfg)
	ln, _ := net.Listen("tcp4", "127.0.0.1:0")
	go ls.Serve(ln)
	defer ls.Close()

	a, data := dialAgent(t, srv.Addr())
	run, err := srv.NextRun(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var sess live.Session
	for deadline := time.Now().Add(5 * time.Second); sess == nil; time.Sleep(5 * time.Millisecond) {
		if ss := cat.Sessions(); len(ss) > 0 {
			sess = ss[0]
		} else if time.Now().After(deadline) {
			t.Fatal("no session")
		}
	}
	id := sess.Info().ID
	tr, _, _ := sess.Open()

	// The stalled viewer: attaches, then asks for the run stream's packets
	// again and again without reading a reply.
	stalled, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	be := binary.BigEndian
	stalled.Write(live.AppendRequest(nil, live.CmdConnect, live.Connect{ViewerSessionID: ^uint64(0), Major: 2, Minor: 4,
		Type: live.ConnCommand}.Append(nil)))
	stalled.Write(live.AppendRequest(nil, live.CmdCreateSession, nil))
	stalled.Write(live.AppendRequest(nil, live.CmdAttachSession, live.AttachRequest{SessionID: id, Seek: live.SeekBeginning}.Append(nil)))
	go func() {
		req := live.AppendRequest(nil, live.CmdGetNextIndex, be.AppendUint64(nil, 3))
		for {
			stalled.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := stalled.Write(req); err != nil {
				return
			}
		}
	}()

	ready := make(chan struct{}, 1)
	got := make(chan int64, 1)
	go func() {
		n, err := readSession(ln.Addr().String(), id, ready)
		if err != nil {
			t.Error(err)
		}
		got <- n
	}()
	<-ready

	chunks, n := hqtest.Generate(hqtest.Workload{Events: 400_000, Methods: 100, Threads: 4, Chunk: 4096, Seed: 3})
	var peak int64
	sent := make(chan error, 1)
	go func() {
		for _, c := range chunks {
			if err := a.Write(data, c); err != nil {
				sent <- err
				return
			}
		}
		sent <- a.Shutdown(false)
	}()
	for done := false; !done; {
		select {
		case err := <-sent:
			if err != nil {
				t.Fatal(err)
			}
			done = true
		case <-time.After(time.Millisecond):
			peak = max(peak, tr.Held())
		}
	}
	rep, _ := run.Wait(context.Background())
	if !rep.OK || rep.Sequenced != int64(n) {
		t.Fatalf("run: %s, %d events of %d", rep.Result(), rep.Sequenced, n)
	}
	if peak > maxBytes+ctf.DefaultPacketSize {
		t.Fatalf("session held %d bytes; cap %d", peak, maxBytes)
	}
	select {
	case read := <-got:
		if read == 0 {
			t.Fatal("the reading viewer got nothing")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the reading viewer did not reach the end")
	}
	for deadline := time.Now().Add(10 * time.Second); ls.Viewers() > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d viewer connections still open: the stalled one was not cut off", ls.Viewers())
		}
	}
	t.Logf("%d events; session peak %d bytes (cap %d)", n, peak, maxBytes)
}
