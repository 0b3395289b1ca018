package hub

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/transport/hce"
)

func newHub(t testing.TB, cfg *Config) (*Hub, string, string) {
	t.Helper()
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tcp, err := h.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pipe, err := h.Listen("pipe:" + filepath.Join(t.TempDir(), "hub.fifo"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Errorf("hub close: %v", err)
		}
	})
	return h, tcp, pipe
}

// fakeAgent registers and answers TPStatus with its name; other tadpole
// commands are rejected as unknown.
func fakeAgent(t testing.TB, addr, name string) *hce.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := hce.Dial(ctx, addr, nil, func(c *hce.Conn, b *hce.Block) {
		if b.Iface == hce.IfaceTadpole && b.Cmd == hce.TPStatus {
			c.Reply(b, hce.TPStatusReply, hce.AppendStatus(nil, &hce.Status{Name: name, PID: 1, Mode: "TRACING"}))
			return
		}
		if b.Cmd&hce.ReplyBit == 0 {
			c.Reply(b, hce.CmdRejected, hce.AppendRejected(nil, hce.ReasonUnknownCommand, b.Iface, b.Cmd))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Register(ctx, name, 1, []hce.InterfaceID{hce.IfaceTadpole}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(hce.ReasonNone) })
	return c
}

func newClient(t testing.TB, addr string) *hce.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := hce.NewClient(ctx, addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(hce.ReasonNone) })
	return c
}

func reasonOf(err error) hce.Reason {
	var re *hce.ReasonError
	if errors.As(err, &re) {
		return re.Reason
	}
	return 0xFFFF
}

func nextEvent(t *testing.T, c *hce.Client) hce.Event {
	t.Helper()
	select {
	case e := <-c.Events():
		return e
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
		return hce.Event{}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestAgentManager(t *testing.T) {
	h, tcp, pipe := newHub(t, nil)
	ctx := context.Background()
	watcher := newClient(t, tcp)
	if err := watcher.AddListener(ctx, 0x80000001); err != nil {
		t.Fatal(err)
	}
	a1 := fakeAgent(t, tcp, "svc")
	a2 := fakeAgent(t, pipe, "svc-pipe")
	for _, a := range []*hce.Conn{a1, a2} {
		if e := nextEvent(t, watcher); e.ID != hce.EventAgentRegistered || e.Agent != a.ID() || e.Listener != 0x80000001 {
			t.Fatalf("event %v; want registered %d", e, a.ID())
		}
	}
	c1, c2 := newClient(t, tcp), newClient(t, pipe)
	ids, err := c1.QueryRunning(ctx, hce.IfaceTadpole)
	if err != nil || len(ids) != 2 || ids[0] != a1.ID() || ids[1] != a2.ID() {
		t.Fatalf("running %v %v", ids, err)
	}
	if ids, _ := c1.QueryRunning(ctx, hce.IfaceTadpole, hce.IfaceEnvInfo); len(ids) != 0 {
		t.Errorf("filter on an interface nobody has: %v", ids)
	}
	names, err := c1.QueryAvailable(ctx)
	if err != nil || len(names) != 2 || names[0] != "svc" || names[1] != "svc-pipe" {
		t.Fatalf("available %v %v", names, err)
	}
	if md, _ := c1.Metadata(ctx, "svc"); md == "" {
		t.Error("no metadata for svc")
	}
	if md, err := c1.Metadata(ctx, "none"); md != "" || err != nil {
		t.Errorf("metadata of none: %q %v", md, err)
	}

	// Attach needs a reference; commands need an attachment.
	if err := c1.Attach(ctx, a1.ID(), true); reasonOf(err) != hce.ReasonNoReference {
		t.Errorf("attach without reference: %v", err)
	}
	if _, err := c1.Status(ctx, a1.ID()); reasonOf(err) != hce.ReasonNotAttached {
		t.Errorf("status before attach: %v", err)
	}
	if err := c1.GetSpecific(ctx, a1.ID()); err != nil {
		t.Fatal(err)
	}
	if err := c1.Attach(ctx, a1.ID(), true); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, watcher); e.ID != hce.EventAgentUnavailable || e.Agent != a1.ID() {
		t.Fatalf("event %v; want unavailable", e)
	}
	st, err := c1.Status(ctx, a1.ID())
	if err != nil || st.Name != "svc" {
		t.Fatalf("status %+v %v", st, err)
	}
	// An exclusive attach denies a second client.
	if _, err := c2.GetAgent(ctx, "nobody", 0); reasonOf(err) != hce.ReasonNoSuchAgent {
		t.Errorf("GetAgent of an unknown name: %v", err)
	}
	if id, err := c2.GetAgent(ctx, "svc", 0); reasonOf(err) != hce.ReasonExclusivelyLocked {
		t.Errorf("GetAgent of a locked agent: %d %v", id, err)
	}
	if err := c2.GetSpecific(ctx, a1.ID()); err != nil {
		t.Fatal(err)
	}
	if err := c2.Attach(ctx, a1.ID(), false); reasonOf(err) != hce.ReasonExclusivelyLocked {
		t.Errorf("second attach: %v", err)
	}
	if ids, _ := c2.QueryRunning(ctx); len(ids) != 1 || ids[0] != a2.ID() {
		t.Errorf("running seen by c2 %v; want only %d", ids, a2.ID())
	}
	if _, err := c2.Status(ctx, a1.ID()); reasonOf(err) != hce.ReasonNotAttached {
		t.Errorf("status from unattached c2: %v", err)
	}
	// Detach frees the lock.
	c1.Detach(a1.ID())
	if e := nextEvent(t, watcher); e.ID != hce.EventAgentAvailable {
		t.Fatalf("event %v; want available", e)
	}
	if err := c2.Attach(ctx, a1.ID(), false); err != nil {
		t.Fatal(err)
	}
	if err := c1.Attach(ctx, a1.ID(), true); reasonOf(err) != hce.ReasonInUse {
		t.Errorf("exclusive attach while c2 attached: %v", err)
	}
	// The agent's own rejection comes back through the hub.
	if _, err := c2.Tadpole(ctx, a1.ID(), hce.CommandID(0x777), nil); reasonOf(err) != hce.ReasonUnknownCommand {
		t.Errorf("unknown tadpole command: %v", err)
	}
	// GET_AGENT with the new-instance flag: the hub launches nothing.
	if _, err := c1.GetAgent(ctx, "svc", hce.GetAgentNewInstance); reasonOf(err) != hce.ReasonCannotLaunch {
		t.Errorf("new instance: %v", err)
	}
	if id, err := c1.GetAgent(ctx, "svc-pipe", 0); err != nil || id != a2.ID() {
		t.Errorf("GetAgent svc-pipe: %d %v", id, err)
	}
	if s := h.Stats(); s.References != 3 || s.Attachments != 1 || s.Agents != 2 {
		t.Errorf("stats %+v", s)
	}

	// The agent vanishes: listeners hear it, c2 (attached, no listener)
	// gets a notice, every reference and attachment is freed.
	a1.Close(hce.ReasonNone)
	if e := nextEvent(t, watcher); e.ID != hce.EventAgentDeregistered || e.Agent != a1.ID() {
		t.Fatalf("event %v; want deregistered", e)
	}
	if e := nextEvent(t, c2); e.ID != hce.EventAgentDeregistered || e.Listener != 0 {
		t.Fatalf("c2 event %v", e)
	}
	waitFor(t, "references freed", func() bool { s := h.Stats(); return s.References == 1 && s.Attachments == 0 })
	c1.Release(a2.ID())
	waitFor(t, "release", func() bool { return h.Stats().References == 0 })
	c2.Close(hce.ReasonNone)
	waitFor(t, "c2 gone", func() bool { return h.Stats().Connections == 3 })
}

func TestRejections(t *testing.T) {
	h, tcp, _ := newHub(t, nil)
	ctx := context.Background()
	c := newClient(t, tcp)
	a := fakeAgent(t, tcp, "svc")
	if _, err := c.Call(ctx, hce.EngineID, 0x80001001, 1, nil); reasonOf(err) != hce.ReasonUnknownInterface {
		t.Errorf("unknown interface: %v", err)
	}
	if _, err := c.Call(ctx, hce.EngineID, hce.IfaceAgentManager, 0x99, nil); reasonOf(err) != hce.ReasonUnknownCommand {
		t.Errorf("unknown command: %v", err)
	}
	if _, err := c.Call(ctx, hce.EngineID, hce.IfaceAgentManager, hce.CmdGetSpecificAgent, []byte{1}); reasonOf(err) != hce.ReasonBadData {
		t.Errorf("bad data: %v", err)
	}
	if _, err := c.Call(ctx, 9999, hce.IfaceTadpole, hce.TPStatus, nil); reasonOf(err) != hce.ReasonNoSuchDestination {
		t.Errorf("no such destination: %v", err)
	}
	if err := c.GetSpecific(ctx, a.ID()); err != nil {
		t.Fatal(err)
	}
	if err := c.Attach(ctx, a.ID(), false); err != nil {
		t.Fatal(err)
	}
	// An interface the agent did not register is refused by the hub.
	if _, err := c.Call(ctx, a.ID(), hce.IfaceEnvInfo, 1, nil); reasonOf(err) != hce.ReasonUnknownInterface {
		t.Errorf("unregistered interface: %v", err)
	}
	if err := c.AddListener(ctx, 1); err != nil {
		t.Fatal(err)
	}
	r, err := c.Call(ctx, hce.EngineID, hce.IfaceAgentManager, hce.CmdAddEventListener, hce.AppendU32(hce.AppendU32(nil, 0x1234), 2))
	if err != nil || r.Cmd != hce.CmdListenerRejected {
		t.Errorf("listener on an unknown interface: %v %v", &r, err)
	}
	// A source ID that is not the sender's.
	r, err = c.Call(ctx, hce.EngineID, hce.IfaceAgentManager, hce.CmdRegisterAgent,
		hce.AppendRegistration(nil, &hce.Registration{AgentID: a.ID(), Name: "thief"}))
	if err != nil || r.Cmd != hce.CmdAgentRegistrationRefused {
		t.Errorf("register under another ID: %v %v", &r, err)
	}
	if s := h.Stats(); s.Rejected != 5 {
		t.Errorf("rejected %d", s.Rejected)
	}
}

// raw is a hand-driven socket that did the handshake.
func raw(t *testing.T, addr string) (net.Conn, *hce.Codec, uint32) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	codec, _ := hce.NewCodec(nc, nc, nil)
	codec.Write(hce.FlagSocketConnect, nil)
	e, err := codec.Read()
	if err != nil || e.Flags.Type() != hce.FlagConnectionComplete {
		t.Fatalf("handshake %v %v", e.Flags, err)
	}
	id, _ := hce.ParseU32(e.Payload)
	return nc, codec, id
}

func query(id, ctx uint32) []byte {
	return hce.AppendBlocksEnvelope(nil, true, &hce.Block{Dest: hce.EngineID, Src: id, Iface: hce.IfaceAgentManager,
		Cmd: hce.CmdQueryRunningAgents, Context: ctx, Data: hce.AppendU32(nil, 0)})
}

// readReply skips keep-alives and returns the next block.
func readReply(t *testing.T, codec *hce.Codec) hce.Block {
	t.Helper()
	for {
		e, err := codec.Read()
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if len(e.Payload) == 0 {
			continue
		}
		bs, err := hce.ParsePayload(nil, e.Payload)
		if err != nil || len(bs) != 1 {
			t.Fatalf("payload %v", err)
		}
		return bs[0]
	}
}

func TestBadInput(t *testing.T) {
	h, tcp, _ := newHub(t, nil)
	nc, codec, id := raw(t, tcp)
	var s []byte
	bad := query(id, 1)
	bad[len(bad)-2] ^= 0x10 // flipped bit in the data: MD5 catches it
	s = append(s, bad...)
	s = append(s, "garbage between messages\xfe\xc0"...)
	s = append(s, query(id, 2)...)
	s = append(s, hce.AppendEnvelope(nil, 0, false, []byte{0, 0, 0, 1, 1, 2, 3})...) // undecodable blocks
	s = append(s, 0, 1, 2)
	s = append(s, query(id, 3)...)
	nc.Write(s)
	for _, want := range []uint32{2, 3} {
		if b := readReply(t, codec); b.Context != want || b.Cmd != hce.CmdRunningAgents {
			t.Fatalf("reply %v; want context %d", &b, want)
		}
	}
	waitFor(t, "counters", func() bool {
		st := h.Stats()
		return st.Checksum == 1 && st.Resyncs == 2 && st.BadPayloads == 1
	})

	// A huge size ends that connection alone, with DISCONNECT(TOO_LARGE).
	env := hce.AppendEnvelope(nil, 0, false, nil)
	env[24] = 0x7F
	nc.Write(env)
	for {
		e, err := codec.Read()
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if e.Flags.Type() == hce.FlagDisconnect {
			if r, _ := hce.ParseU32(e.Payload); hce.Reason(r) != hce.ReasonTooLarge {
				t.Errorf("reason %v", hce.Reason(r))
			}
			break
		}
	}
	// The hub keeps serving.
	_, codec2, id2 := raw(t, tcp)
	codec2.WriteBlocks(&hce.Block{Dest: hce.EngineID, Src: id2, Iface: hce.IfaceAgentManager, Cmd: hce.CmdQueryRunningAgents, Context: 4, Data: hce.AppendU32(nil, 0)})
	if b := readReply(t, codec2); b.Context != 4 {
		t.Fatalf("reply %v", &b)
	}
	// A second CONNECT on an established connection is dropped, counted.
	codec2.Write(hce.FlagSocketConnect, nil)
	waitFor(t, "second CONNECT counted", func() bool { return h.Stats().BadPayloads == 2 })
	// A message before the handshake is refused.
	nc3, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer nc3.Close()
	nc3.SetDeadline(time.Now().Add(5 * time.Second))
	nc3.Write(query(7, 5))
	c3, _ := hce.NewCodec(nc3, nil, nil)
	e, err := c3.Read()
	if err != nil || e.Flags.Type() != hce.FlagConnectionRefused {
		t.Fatalf("before handshake: %v %v", e.Flags, err)
	}
	if r, _ := hce.ParseU32(e.Payload); hce.Reason(r) != hce.ReasonHandshakeRequired {
		t.Errorf("reason %v", hce.Reason(r))
	}
}

func TestMaxConns(t *testing.T) {
	_, tcp, _ := newHub(t, &Config{MaxConns: 1})
	newClient(t, tcp)
	_, err := hce.NewClient(context.Background(), tcp, nil)
	if reasonOf(err) != hce.ReasonTooManyConnections {
		t.Fatalf("second connection: %v", err)
	}
}

// TestDeregister: an agent may make itself unavailable and come back on
// the same connection ("The HCE will not remove the agent from its
// connection list ... because of this command").
func TestDeregister(t *testing.T) {
	h, tcp, _ := newHub(t, nil)
	ctx := context.Background()
	w := newClient(t, tcp)
	if err := w.AddListener(ctx, 5); err != nil {
		t.Fatal(err)
	}
	a := fakeAgent(t, tcp, "svc")
	nextEvent(t, w)
	r, err := a.Call(ctx, hce.EngineID, hce.IfaceAgentManager, hce.CmdDeregisterAgent, hce.AppendU32(nil, a.ID()))
	if err != nil || r.Cmd != hce.CmdAgentDeregistered {
		t.Fatalf("deregister %v %v", &r, err)
	}
	if e := nextEvent(t, w); e.ID != hce.EventAgentDeregistered || e.Agent != a.ID() {
		t.Fatalf("event %v", e)
	}
	if ids, _ := w.QueryRunning(ctx); len(ids) != 0 {
		t.Errorf("running after deregister %v", ids)
	}
	if err := w.GetSpecific(ctx, a.ID()); reasonOf(err) != hce.ReasonNoSuchAgent {
		t.Errorf("reference to a deregistered agent: %v", err)
	}
	if s := h.Stats(); s.Connections != 2 || s.Agents != 0 {
		t.Errorf("stats %+v", s)
	}
	// Another connection's ID is refused.
	if _, err := a.Call(ctx, hce.EngineID, hce.IfaceAgentManager, hce.CmdDeregisterAgent, hce.AppendU32(nil, w.ID())); reasonOf(err) != hce.ReasonIDMismatch {
		t.Errorf("deregister another: %v", err)
	}
	if err := a.Register(ctx, "svc", 1, []hce.InterfaceID{hce.IfaceTadpole}); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, w); e.ID != hce.EventAgentRegistered || e.Agent != a.ID() {
		t.Fatalf("event %v", e)
	}
	if ids, _ := w.QueryRunning(ctx, hce.IfaceTadpole); len(ids) != 1 || ids[0] != a.ID() {
		t.Errorf("running after re-register %v", ids)
	}
}

// TestPipeBadInput: garbage, a huge size and a PIPE_CONNECT naming a path
// outside the hub's directory on the well-known FIFO are skipped; the next
// connector is served.
func TestPipeBadInput(t *testing.T) {
	_, _, pipe := newHub(t, nil)
	path := strings.TrimPrefix(pipe, "pipe:")
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	huge := hce.AppendEnvelope(nil, hce.FlagPipeConnect, false, nil)
	huge[24] = 0x7F
	f.Write([]byte("garbage\xfe\xc0\x48"))
	f.Write(huge)
	// Files the hub must not open: one elsewhere, one beside its FIFO
	// without its name as prefix, one with the name that is no FIFO.
	outside := filepath.Join(t.TempDir(), "hub.fifo.victim")
	beside := filepath.Join(filepath.Dir(path), "other.fifo")
	planted := path + ".planted" // the right name, but not a FIFO
	for _, v := range []string{outside, beside, planted} {
		os.WriteFile(v, []byte("keep"), 0o600)
		os.WriteFile(v+hce.PipeRequestSuffix, []byte("keep"), 0o600)
		f.Write(hce.AppendEnvelope(nil, hce.FlagPipeConnect, false, hce.AppendPipeConnect(nil, v)))
	}
	f.Write(hce.AppendEnvelope(nil, hce.FlagSocketConnect, false, nil))
	f.Close()
	c := newClient(t, pipe)
	if ids, err := c.QueryRunning(context.Background()); err != nil || len(ids) != 0 {
		t.Fatalf("query over the pipe: %v %v", ids, err)
	}
	time.Sleep(50 * time.Millisecond) // a hub that opened them would have written by now
	for _, v := range []string{outside, beside, planted} {
		if b, _ := os.ReadFile(v); string(b) != "keep" {
			t.Errorf("%s: %q written by the hub", v, b)
		}
	}
}
