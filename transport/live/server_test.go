package live

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func pkt(n int, fill byte) []byte { return bytes.Repeat([]byte{fill}, n) }

func newTestTrace() *Trace {
	tr := NewTrace(nil)
	tr.AppendMetadata([]byte("/* CTF 1.8 */\ntrace { major = 1; minor = 8; };\n"))
	tr.AddStream(0, "thread-1")
	return tr
}

func TestProtocolSequence(t *testing.T) {
	tr := newTestTrace()
	tr.Publish(0, Index{PacketSize: 800, ContentSize: 800, TimestampBegin: 10, TimestampEnd: 20}, pkt(100, 'a'))
	cat := &testCatalog{ss: []Session{&testSession{
		info: SessionInfo{ID: 7, Hostname: "h", Name: "prog-1-0", LiveTimer: 1000000, Streams: 1}, trace: tr}}}
	srv, addr := startServer(t, cat, nil)
	c := dialTest(t, addr)

	if r := c.connect(); r.Major != 2 || r.Minor != 4 || r.ViewerSessionID == 0 {
		t.Fatalf("CONNECT reply %+v", r)
	}
	if st, _ := c.attach(7, SeekBeginning); st != AttachNoSession {
		t.Fatalf("ATTACH before CREATE: got %v; want NO_SESSION", StatusName(CmdAttachSession, st))
	}
	if c.create() != CreateOK || c.create() != CreateOK {
		t.Fatal("CREATE_SESSION not OK twice")
	}
	ls := c.list()
	if len(ls) != 1 || ls[0] != (SessionRecord{ID: 7, LiveTimer: 1000000, Streams: 1, Hostname: "h", Name: "prog-1-0"}) {
		t.Fatalf("LIST_SESSIONS: %+v", ls)
	}
	if st, _ := c.attach(99, SeekBeginning); st != AttachUnknown {
		t.Fatalf("ATTACH unknown: %v", st)
	}
	if st, _ := c.attach(7, Seek(9)); st != AttachSeekErr {
		t.Fatalf("ATTACH bad seek: %v", st)
	}
	st, ss := c.attach(7, SeekBeginning)
	if st != AttachOK || len(ss) != 2 || !ss[0].Metadata || ss[1].Metadata || ss[0].CTFTraceID != ss[1].CTFTraceID {
		t.Fatalf("ATTACH: %v %+v", st, ss)
	}
	if srv.Clients(7) != 1 {
		t.Fatalf("clients %d; want 1", srv.Clients(7))
	}
	if st, _ := c.attach(7, SeekBeginning); st != AttachAlready {
		t.Fatalf("second ATTACH on one connection: %v", st)
	}
	meta, data := ss[0].ID, ss[1].ID
	if st, m := c.metadata(meta); st != MetadataOK || !strings.HasPrefix(string(m), "/* CTF 1.8") {
		t.Fatalf("GET_METADATA: %v %q", st, m)
	}
	if st, m := c.metadata(meta); st != MetadataNoNew || len(m) != 0 {
		t.Fatalf("second GET_METADATA: %v %d bytes", st, len(m))
	}
	if st, _ := c.metadata(data); st != MetadataErr {
		t.Fatalf("GET_METADATA on a data stream: %v", st)
	}
	x := c.index(data)
	if x.Status != IndexOK || x.Offset != 0 || x.PacketSize != 800 || x.TimestampEnd != 20 || x.Flags != 0 {
		t.Fatalf("GET_NEXT_INDEX: %+v", x)
	}
	// Sub-ranges, as babeltrace asks for big packets.
	if st, _, b := c.packet(data, 10, 50); st != PacketOK || len(b) != 50 || b[0] != 'a' {
		t.Fatalf("GET_PACKET: %v %d", st, len(b))
	}
	if st, _, b := c.packet(data, 90, 50); st != PacketOK || len(b) != 10 {
		t.Fatalf("GET_PACKET at the end: %v %d; want 10 bytes", st, len(b))
	}
	if st, _, b := c.packet(data, 100, 50); st != PacketErr || len(b) != 0 {
		t.Fatalf("GET_PACKET out of range: %v %d", st, len(b))
	}
	if x := c.index(data); x.Status != IndexRetry {
		t.Fatalf("no packet: %v; want RETRY", StatusName(CmdGetNextIndex, x.Status))
	}
	tr.Beacon(0, 30)
	if x := c.index(data); x.Status != IndexInactive || x.TimestampEnd != 30 || x.StreamClassID != 0 {
		t.Fatalf("beacon: %+v", x)
	}
	if x := c.index(meta); x.Status != IndexErr {
		t.Fatalf("GET_NEXT_INDEX on metadata: %+v", x)
	}

	// A new stream and new metadata are flagged.
	tr.AddStream(0, "thread-2")
	tr.AppendMetadata([]byte("/* CTF 1.8 */\nevent { name = \"x\"; id = 1; stream_id = 0; };\n"))
	tr.Publish(0, Index{PacketSize: 80, ContentSize: 80, TimestampBegin: 30, TimestampEnd: 40}, pkt(10, 'b'))
	x = c.index(data)
	if x.Status != IndexOK || x.Offset != 100 || x.Flags != FlagNewMetadata|FlagNewStream {
		t.Fatalf("flags: %+v", x)
	}
	if st, m := c.metadata(meta); st != MetadataOK || !strings.Contains(string(m), "event") {
		t.Fatalf("metadata update: %v %q", st, m)
	}
	st, ss = c.newStreams(7)
	if st != NewStreamsOK || len(ss) != 1 || ss[0].Channel != "thread-2" {
		t.Fatalf("GET_NEW_STREAMS: %v %+v", st, ss)
	}
	if st, _ := c.newStreams(7); st != NewStreamsNoNew {
		t.Fatalf("GET_NEW_STREAMS again: %v", st)
	}
	if st, _ := c.newStreams(8); st != NewStreamsErr {
		t.Fatalf("GET_NEW_STREAMS not attached: %v", st)
	}

	// The end: HUP on every stream, then on GET_NEW_STREAMS.
	tr.End()
	if x := c.index(data); x.Status != IndexHup {
		t.Fatalf("ended: %v", StatusName(CmdGetNextIndex, x.Status))
	}
	if x := c.index(ss[0].ID); x.Status != IndexHup {
		t.Fatalf("ended, empty stream: %v", StatusName(CmdGetNextIndex, x.Status))
	}
	if st, _ := c.newStreams(7); st != NewStreamsHup {
		t.Fatalf("GET_NEW_STREAMS after the end: %v", st)
	}
	// A session read to its end is no longer listed to this connection
	// (a viewer looking for it again must not read it twice), but still
	// to others.
	if ls := c.list(); len(ls) != 0 {
		t.Fatalf("LIST_SESSIONS after reading the session: %+v", ls)
	}
	other := dialTest(t, addr)
	other.connect()
	if ls := other.list(); len(ls) != 1 {
		t.Fatalf("LIST_SESSIONS on another connection: %+v", ls)
	}
	if c.detach(7) != DetachOK || c.detach(7) != DetachUnknown {
		t.Fatal("DETACH")
	}
	if srv.Clients(7) != 0 {
		t.Fatalf("clients %d after detach", srv.Clients(7))
	}
}

// Two viewers of one session keep their own cursors; one attaching late
// with SeekLast gets only what comes after.
func TestViewersOwnCursors(t *testing.T) {
	tr := newTestTrace()
	tr.Publish(0, Index{PacketSize: 80, ContentSize: 80}, pkt(10, '1'))
	cat := &testCatalog{ss: []Session{&testSession{info: SessionInfo{ID: 1, Hostname: "h", Name: "s", LiveTimer: 1}, trace: tr}}}
	srv, addr := startServer(t, cat, nil)
	a, b, late := dialTest(t, addr), dialTest(t, addr), dialTest(t, addr)
	var ids [3]uint64
	for i, c := range []*testClient{a, b} {
		c.connect()
		c.create()
		_, ss := c.attach(1, SeekBeginning)
		ids[i] = ss[1].ID
	}
	if x := a.index(ids[0]); x.Status != IndexOK || x.Offset != 0 {
		t.Fatalf("viewer a: %+v", x)
	}
	if x := a.index(ids[0]); x.Status != IndexRetry {
		t.Fatalf("viewer a again: %+v", x)
	}
	if x := b.index(ids[1]); x.Status != IndexOK || x.Offset != 0 {
		t.Fatalf("viewer b has its own cursor: %+v", x)
	}
	late.connect()
	late.create()
	_, ss := late.attach(1, SeekLast)
	ids[2] = ss[1].ID
	if x := late.index(ids[2]); x.Status != IndexRetry {
		t.Fatalf("late viewer, SeekLast: %+v; want RETRY", x)
	}
	tr.Publish(0, Index{PacketSize: 80, ContentSize: 80}, pkt(10, '2'))
	if x := late.index(ids[2]); x.Status != IndexOK || x.Offset != 10 {
		t.Fatalf("late viewer: %+v; want the packet at 10", x)
	}
	if srv.Clients(1) != 3 {
		t.Fatalf("clients %d; want 3", srv.Clients(1))
	}
	ls := a.list()
	if ls[0].Clients != 3 {
		t.Fatalf("listed clients %d", ls[0].Clients)
	}
}

// A recorded session starts at the beginning even for SeekLast, and each
// viewer gets its own trace.
func TestRecordedStartsAtBeginning(t *testing.T) {
	opened := 0
	cat := &testCatalog{ss: []Session{&testSession{info: SessionInfo{ID: 1, Hostname: "h", Name: "s", LiveTimer: 1, Recorded: true},
		fresh: func() *Trace {
			opened++
			tr := newTestTrace()
			tr.Publish(0, Index{PacketSize: 80, ContentSize: 80}, pkt(10, 'r'))
			tr.End()
			return tr
		}}}}
	_, addr := startServer(t, cat, nil)
	for i := 0; i < 2; i++ {
		c := dialTest(t, addr)
		c.connect()
		c.create()
		_, ss := c.attach(1, SeekLast)
		if x := c.index(ss[1].ID); x.Status != IndexOK {
			t.Fatalf("viewer %d: %+v", i, x)
		}
		if x := c.index(ss[1].ID); x.Status != IndexHup {
			t.Fatalf("viewer %d: %+v; want HUP", i, x)
		}
	}
	if opened != 2 {
		t.Fatalf("opened %d traces; want 2", opened)
	}
}

func TestNotLive(t *testing.T) {
	cat := &testCatalog{ss: []Session{&testSession{info: SessionInfo{ID: 1, Hostname: "h", Name: "s"}, trace: newTestTrace()}}}
	_, addr := startServer(t, cat, nil)
	c := dialTest(t, addr)
	c.connect()
	c.create()
	if st, _ := c.attach(1, SeekLast); st != AttachNotLive {
		t.Fatalf("live_timer 0: %v", st)
	}
}

// Hostile viewers lose their own connection; the server keeps serving.
func TestHostileViewers(t *testing.T) {
	tr := newTestTrace()
	big := pkt(DefaultMaxPacketRead, 'x')
	tr.Publish(0, Index{PacketSize: uint64(len(big)) * 8, ContentSize: uint64(len(big)) * 8}, big)
	cat := &testCatalog{ss: []Session{&testSession{info: SessionInfo{ID: 1, Hostname: "h", Name: "s", LiveTimer: 1}, trace: tr}}}
	cfg := DefaultConfig()
	cfg.WriteTimeout = 300 * time.Millisecond
	srv, addr := startServer(t, cat, cfg)

	cases := []struct {
		name  string
		bytes []byte
		reply []byte // expected before the close
	}{
		{"garbage", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), be.AppendUint32(nil, ErrUnknownCommandCode)},
		{"unknown command", AppendRequest(nil, Command(77), nil), be.AppendUint32(nil, ErrUnknownCommandCode)},
		{"command 0", AppendRequest(nil, Command(0), nil), be.AppendUint32(nil, ErrUnknownCommandCode)},
		{"huge data_size", AppendHeader(nil, Header{DataSize: 1 << 62, Cmd: CmdConnect}), be.AppendUint32(nil, ErrUnknownCommandCode)},
		{"short data_size", AppendHeader(nil, Header{DataSize: 4, Cmd: CmdGetPacket}), be.AppendUint32(nil, ErrUnknownCommandCode)},
		{"before CONNECT", AppendRequest(nil, CmdListSessions, nil), nil},
		{"major 3", AppendRequest(nil, CmdConnect, Connect{Major: 3, Minor: 0, Type: ConnCommand}.Append(nil)), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dialTest(t, addr)
			c.c.Write(tc.bytes)
			if len(tc.reply) > 0 {
				if got := c.read(len(tc.reply)); !bytes.Equal(got, tc.reply) {
					t.Fatalf("reply % x; want % x", got, tc.reply)
				}
			}
			if !c.closed() {
				t.Fatal("connection not closed")
			}
		})
	}

	// A viewer that asks for packets and never reads its replies is cut
	// off by the write deadline; another viewer is served meanwhile.
	slow := dialTest(t, addr)
	slow.connect()
	slow.create()
	_, ss := slow.attach(1, SeekBeginning)
	req := AppendRequest(nil, CmdGetPacket, PacketRequest{StreamID: ss[1].ID, Len: 1 << 30}.Append(nil))
	stop := make(chan struct{})
	wrote := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				wrote <- nil
				return
			default:
			}
			slow.c.SetWriteDeadline(time.Now().Add(2 * time.Second))
			if _, err := slow.c.Write(req); err != nil {
				wrote <- err
				return
			}
		}
	}()
	ok := dialTest(t, addr)
	ok.connect()
	ok.create()
	if ls := ok.list(); len(ls) != 1 {
		t.Fatalf("other viewer: %+v", ls)
	}
	deadline := time.Now().Add(10 * time.Second)
	for srv.Viewers() > 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	<-wrote
	if n := srv.Viewers(); n != 1 {
		t.Fatalf("%d viewers open; want 1: the stalled viewer's connection stays", n)
	}
	if srv.Clients(1) != 0 {
		t.Fatalf("stalled viewer still counted attached: %d", srv.Clients(1))
	}
}

func TestMaxViewers(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxViewers = 1
	_, addr := startServer(t, &testCatalog{}, cfg)
	a := dialTest(t, addr)
	a.connect()
	b := dialTest(t, addr)
	if !b.closed() {
		t.Fatal("viewer over the cap not closed")
	}
	if ls := a.list(); len(ls) != 0 {
		t.Fatal(ls)
	}
}

func TestTraceDropsOldest(t *testing.T) {
	tr := NewTrace(&TraceConfig{MaxBytes: 25})
	tr.AddStream(0, "a")
	r := tr.NewReader(SeekBeginning)
	for i := 0; i < 5; i++ {
		if err := tr.Publish(0, Index{}, pkt(10, byte('0'+i))); err != nil {
			t.Fatal(err)
		}
	}
	if h := tr.Held(); h > 25 {
		t.Fatalf("held %d bytes; cap 25", h)
	}
	x := r.NextIndex(0)
	if x.Status != IndexOK || x.Offset != 30 {
		t.Fatalf("lagging reader: %+v; want the oldest packet held, at 30", x)
	}
	// A reader that never asked is done once the end is handed out too.
	idle := tr.NewReader(SeekBeginning)
	tr.AddStream(0, "b")
	tr.End()
	for s := 0; s < 2; s++ {
		for r.NextIndex(s).Status != IndexHup {
		}
	}
	if r.Done() {
		t.Fatal("reader done with streams not announced")
	}
	r.NewStreams()
	idle.NewStreams()
	if !r.Done() || idle.Done() {
		t.Fatalf("Done: reader %v, idle reader %v; want true, false (it has packets to read)", r.Done(), idle.Done())
	}
}

func TestTraceBlocksForReader(t *testing.T) {
	tr := NewTrace(&TraceConfig{MaxBytes: 25, Block: true})
	tr.AddStream(0, "a")
	r := tr.NewReader(SeekBeginning)
	done := make(chan error)
	go func() {
		for i := 0; i < 6; i++ {
			if err := tr.Publish(0, Index{}, pkt(10, byte('0'+i))); err != nil {
				done <- err
				return
			}
		}
		tr.End()
		done <- nil
	}()
	var offs []uint64
	for {
		x := r.NextIndex(0)
		if x.Status == IndexHup {
			break
		}
		if x.Status == IndexOK {
			offs = append(offs, x.Offset)
			if h := tr.Held(); h > 25 {
				t.Fatalf("held %d", h)
			}
		}
		time.Sleep(time.Millisecond)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(offs) != 6 {
		t.Fatalf("reader got %v; want all 6 packets", offs)
	}
	// Close releases a waiting producer.
	tr2 := NewTrace(&TraceConfig{MaxBytes: 10, Block: true})
	tr2.AddStream(0, "a")
	tr2.NewReader(SeekBeginning)
	tr2.Publish(0, Index{}, pkt(10, 'x'))
	go func() { time.Sleep(50 * time.Millisecond); tr2.Close() }()
	if err := tr2.Publish(0, Index{}, pkt(10, 'y')); !errors.Is(err, ErrClosed) {
		t.Fatalf("Publish after Close: %v", err)
	}
}

func TestConfigVerify(t *testing.T) {
	for _, c := range []Config{{MaxViewers: -1}, {MaxPacketRead: MaxPacketReadLimit + 1}, {WriteTimeout: -1}} {
		if err := c.Verify(); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	c := Config{}
	if err := c.Verify(); err != nil || c.MaxViewers != DefaultMaxViewers {
		t.Fatal(err, c)
	}
	if _, err := NewServer(&testCatalog{}, &Config{MaxViewers: -1}); err == nil {
		t.Fatal("NewServer with a bad config")
	}
}

func TestStrings(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{CmdGetNextIndex.String(), "GET_NEXT_INDEX"},
		{Command(42).String(), "UNKNOWN_CMD_42"},
		{StatusName(CmdGetNextIndex, IndexInactive), "INACTIVE"},
		{StatusName(CmdDetachSession, 9), "UNKNOWN_STATUS_9"},
		{(FlagNewMetadata | FlagNewStream).String(), "NEW_METADATA|NEW_STREAM"},
		{SeekLast.String(), "LAST"},
		{ConnType(5).String(), "UNKNOWN_CONNTYPE_5"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q; want %q", tc.got, tc.want)
		}
	}
}
