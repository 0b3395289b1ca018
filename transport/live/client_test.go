package live

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// testClient is a minimal viewer, as lttng-tools' live_test.c.
type testClient struct {
	t *testing.T
	c net.Conn
}

func dialTest(t *testing.T, addr string) *testClient {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	t.Cleanup(func() { c.Close() })
	return &testClient{t: t, c: c}
}

func (tc *testClient) send(cmd Command, payload []byte) {
	tc.t.Helper()
	if _, err := tc.c.Write(AppendRequest(nil, cmd, payload)); err != nil {
		tc.t.Fatal(err)
	}
}

func (tc *testClient) read(n int) []byte {
	tc.t.Helper()
	b := make([]byte, n)
	if _, err := io.ReadFull(tc.c, b); err != nil {
		tc.t.Fatalf("reading %d bytes: %v", n, err)
	}
	return b
}

func (tc *testClient) connect() Connect {
	tc.send(CmdConnect, Connect{ViewerSessionID: ^uint64(0), Major: 2, Minor: 4, Type: ConnCommand}.Append(nil))
	r, _ := ParseConnect(tc.read(ConnectSize))
	return r
}

func (tc *testClient) create() Status {
	tc.send(CmdCreateSession, nil)
	return Status(be.Uint32(tc.read(StatusSize)))
}

func (tc *testClient) list() []SessionRecord {
	tc.send(CmdListSessions, nil)
	n := be.Uint32(tc.read(u32Size))
	var out []SessionRecord
	for i := uint32(0); i < n; i++ {
		r, _ := ParseSessionRecord(tc.read(SessionRecordSize))
		out = append(out, r)
	}
	return out
}

func (tc *testClient) streams(cmd Command, payload []byte) (Status, []StreamRecord) {
	tc.send(cmd, payload)
	h := tc.read(StatusCountSize)
	st, n := Status(be.Uint32(h)), be.Uint32(h[4:])
	var out []StreamRecord
	for i := uint32(0); i < n; i++ {
		r, _ := ParseStreamRecord(tc.read(StreamRecordSize))
		out = append(out, r)
	}
	return st, out
}

func (tc *testClient) attach(id uint64, seek Seek) (Status, []StreamRecord) {
	return tc.streams(CmdAttachSession, AttachRequest{SessionID: id, Seek: seek}.Append(nil))
}

func (tc *testClient) newStreams(id uint64) (Status, []StreamRecord) {
	return tc.streams(CmdGetNewStreams, be.AppendUint64(nil, id))
}

func (tc *testClient) metadata(id uint64) (Status, []byte) {
	tc.send(CmdGetMetadata, be.AppendUint64(nil, id))
	h := tc.read(MetadataReplySize)
	return Status(be.Uint32(h[8:])), tc.read(int(be.Uint64(h)))
}

func (tc *testClient) index(id uint64) Index {
	tc.send(CmdGetNextIndex, be.AppendUint64(nil, id))
	x, _ := ParseIndex(tc.read(IndexReplySize))
	return x
}

func (tc *testClient) packet(id, off uint64, n uint32) (Status, Flags, []byte) {
	tc.send(CmdGetPacket, PacketRequest{StreamID: id, Offset: off, Len: n}.Append(nil))
	h := tc.read(PacketReplySize)
	return Status(be.Uint32(h)), Flags(be.Uint32(h[8:])), tc.read(int(be.Uint32(h[4:])))
}

func (tc *testClient) detach(id uint64) Status {
	tc.send(CmdDetachSession, be.AppendUint64(nil, id))
	return Status(be.Uint32(tc.read(StatusSize)))
}

// closed reports whether the server closed the connection (EOF or reset,
// not a timeout).
func (tc *testClient) closed() bool {
	tc.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var b [1]byte
	for {
		if _, err := tc.c.Read(b[:]); err != nil {
			var ne net.Error
			return !(errors.As(err, &ne) && ne.Timeout())
		}
	}
}

// testSession is a Session over one shared Trace.
type testSession struct {
	info  SessionInfo
	trace *Trace
	fresh func() *Trace // recorded: a new trace per viewer
}

func (s *testSession) Info() SessionInfo { return s.info }
func (s *testSession) Open() (*Trace, func(), error) {
	if s.fresh != nil {
		return s.fresh(), nil, nil
	}
	return s.trace, nil, nil
}

type testCatalog struct {
	mu sync.Mutex
	ss []Session
}

func (c *testCatalog) Sessions() []Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Session(nil), c.ss...)
}

func (c *testCatalog) Session(id uint64) Session {
	for _, s := range c.Sessions() {
		if s.Info().ID == id {
			return s
		}
	}
	return nil
}

func startServer(t *testing.T, cat Catalog, cfg *Config) (*Server, string) {
	t.Helper()
	srv, err := NewServer(cat, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return srv, ln.Addr().String()
}
