package live

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// seedFiles adds the request streams in testdata/*.bin.
func seedFiles(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.bin")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzParse decodes every fixed struct from the input, and checks that
// encoding what was decoded gives the same value back.
func FuzzParse(f *testing.F) {
	seedFiles(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if h, err := ParseHeader(b); err == nil {
			h.Check()
			if h2, _ := ParseHeader(AppendHeader(nil, h)); h2 != h {
				t.Fatalf("header %+v -> %+v", h, h2)
			}
		}
		if c, err := ParseConnect(b); err == nil {
			if c2, _ := ParseConnect(c.Append(nil)); c2 != c {
				t.Fatalf("connect %+v -> %+v", c, c2)
			}
		}
		if r, err := ParseAttach(b); err == nil {
			if r2, _ := ParseAttach(r.Append(nil)); r2 != r {
				t.Fatalf("attach %+v -> %+v", r, r2)
			}
		}
		if r, err := ParsePacketRequest(b); err == nil {
			if r2, _ := ParsePacketRequest(r.Append(nil)); r2 != r {
				t.Fatalf("packet %+v -> %+v", r, r2)
			}
		}
		if x, err := ParseIndex(b); err == nil {
			if x2, _ := ParseIndex(x.Append(nil)); x2 != x {
				t.Fatalf("index %+v -> %+v", x, x2)
			}
		}
		if r, err := ParseSessionRecord(b); err == nil {
			if r2, _ := ParseSessionRecord(r.Append(nil)); r2 != r {
				t.Fatalf("session %+v -> %+v", r, r2)
			}
		}
		if r, err := ParseStreamRecord(b); err == nil {
			if r2, _ := ParseStreamRecord(r.Append(nil)); r2 != r {
				t.Fatalf("stream %+v -> %+v", r, r2)
			}
		}
	})
}

// pipeConn feeds a viewer the fuzz input and discards its replies.
type pipeConn struct {
	r   io.Reader
	out int
}

func (p *pipeConn) Read(b []byte) (int, error)       { return p.r.Read(b) }
func (p *pipeConn) Write(b []byte) (int, error)      { p.out += len(b); return len(b), nil }
func (p *pipeConn) SetReadDeadline(time.Time) error  { return nil }
func (p *pipeConn) SetWriteDeadline(time.Time) error { return nil }

// FuzzViewer runs the relay's request loop over arbitrary input against a
// session with data: no panic, replies bounded.
func FuzzViewer(f *testing.F) {
	seedFiles(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		tr := newTestTrace()
		tr.Publish(0, Index{PacketSize: 800, ContentSize: 800}, pkt(100, 'a'))
		tr.Beacon(0, 5)
		cat := &testCatalog{ss: []Session{&testSession{info: SessionInfo{ID: 1, Hostname: "h", Name: "s", LiveTimer: 1}, trace: tr}}}
		srv, err := NewServer(cat, nil)
		if err != nil {
			t.Fatal(err)
		}
		pc := &pipeConn{r: bytes.NewReader(b)}
		v := &viewer{srv: srv, c: pc, attached: map[uint64]*attachment{}, streams: map[uint64]*vstream{}}
		v.run()
		v.detachAll()
		if srv.Clients(1) != 0 {
			t.Fatal("attachment leaked")
		}
		// Each request of at most 36 bytes gets a bounded reply.
		if limit := (len(b)/HeaderSize + 1) * (StatusCountSize + 3*StreamRecordSize + 1000); pc.out > limit {
			t.Fatalf("%d reply bytes for %d input bytes", pc.out, len(b))
		}
	})
}
