package lttngagent

import (
	"bytes"
	"errors"
	"io"
	"net"
	"reflect"
	"testing"
	"time"
)

func addVectorSeeds(f *testing.F) {
	for _, v := range loadVectors(f) {
		f.Add(v)
	}
	f.Add(DialectRFC01.AppendHeader(nil, Header{DataSize: 4, Cmd: CmdEnable}))
	f.Add(append(DialectRFC01.AppendHeader(nil, Header{DataSize: 4, Cmd: CmdDisable}), "abc\x00"...))
	b, _ := DialectRFC01.AppendListReply(nil, []string{"a", "bc"})
	f.Add(b)
}

// FuzzParseRequest: no panic, and decode → encode → decode gives the same
// request in both dialects.
func FuzzParseRequest(f *testing.F) {
	addVectorSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, d := range []Dialect{Dialect20, DialectRFC01} {
			h, err := d.ParseHeader(b)
			if err != nil {
				continue
			}
			rest := b[d.HeaderSize():]
			if h.DataSize > MaxDataSize || h.DataSize > uint64(len(rest)) {
				continue
			}
			var r Request
			err = d.ParseRequest(&r, h, rest[:h.DataSize])
			if err != nil {
				var ce *CommandError
				if !errors.As(err, &ce) {
					t.Fatalf("%v: error %v is not a *CommandError", d, err)
				}
				continue
			}
			enc, err := d.AppendRequest(nil, &r)
			if err != nil {
				// Only context names longer than any filter can be decoded
				// but not encoded.
				if (r.Cmd == CmdAppCtxEnable || r.Cmd == CmdAppCtxDisable) && errors.Is(err, ErrBadName) {
					continue
				}
				t.Fatalf("%v: AppendRequest(%+v): %v", d, r, err)
			}
			h2, err := d.ParseHeader(enc)
			if err != nil {
				t.Fatal(err)
			}
			var r2 Request
			err = d.ParseRequest(&r2, h2, enc[d.HeaderSize():])
			if err != nil || !reflect.DeepEqual(r, r2) {
				t.Fatalf("%v: round trip %+v → %x → %+v, %v", d, r, enc, r2, err)
			}
		}
	})
}

// FuzzParseListReply: no panic, and a decoded reply encodes back to the
// same bytes (the encoding is canonical).
func FuzzParseListReply(f *testing.F) {
	addVectorSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, d := range []Dialect{Dialect20, DialectRFC01} {
			names, n, err := d.ParseListReply(b)
			if err != nil {
				continue
			}
			enc, count := d.AppendListReply(nil, names)
			if count != len(names) || !bytes.Equal(enc, b[:n]) {
				t.Fatalf("%v: %q re-encoded as %x; want %x", d, names, enc, b[:n])
			}
		}
	})
}

// memConn is a net.Conn that reads a fixed byte stream and discards writes.
type memConn struct {
	r *bytes.Reader
	w io.Writer
}

func (m *memConn) Read(b []byte) (int, error)       { return m.r.Read(b) }
func (m *memConn) Write(b []byte) (int, error)      { return m.w.Write(b) }
func (m *memConn) Close() error                     { return nil }
func (m *memConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (m *memConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (m *memConn) SetDeadline(time.Time) error      { return nil }
func (m *memConn) SetReadDeadline(time.Time) error  { return nil }
func (m *memConn) SetWriteDeadline(time.Time) error { return nil }

// FuzzServe feeds a whole daemon byte stream to a session: it must end with
// an error (EOF at the latest) and never panic, whatever the bytes.
func FuzzServe(f *testing.F) {
	addVectorSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, d := range []Dialect{Dialect20, DialectRFC01} {
			cfg := DefaultConfig()
			cfg.Dialect = d
			cfg = cfg.withDefaults()
			c := &Client{cfg: cfg, h: &countingHandler{}, changed: make(chan struct{})}
			var out bytes.Buffer
			nc := &memConn{r: bytes.NewReader(b), w: &out}
			conn := &Conn{id: 1, dialect: d, domain: DomainJUL}
			s := newSession(c, conn, nc, newProblemLog(cfg.Logger))
			if err := s.run(); err == nil {
				t.Fatalf("%v: run returned nil", d)
			}
			if cap(s.buf) > MaxDataSize {
				t.Fatalf("%v: payload buffer grew to %d", d, cap(s.buf))
			}
		}
	})
}
