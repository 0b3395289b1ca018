package live

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var updateSeeds = flag.Bool("update-seeds", false, "rewrite testdata/*.bin")

// babeltraceSession is the request stream babeltrace2 2.0.4 sends to read
// a session (see the package doc), with ids as this relay assigns them.
func babeltraceSession() []byte {
	var b []byte
	b = AppendRequest(b, CmdConnect, Connect{ViewerSessionID: ^uint64(0), Major: 2, Minor: 4, Type: ConnCommand}.Append(nil))
	b = AppendRequest(b, CmdCreateSession, nil)
	b = AppendRequest(b, CmdListSessions, nil)
	b = AppendRequest(b, CmdAttachSession, AttachRequest{SessionID: 1, Seek: SeekLast}.Append(nil))
	b = AppendRequest(b, CmdGetMetadata, be.AppendUint64(nil, 2))
	b = AppendRequest(b, CmdGetMetadata, be.AppendUint64(nil, 2))
	b = AppendRequest(b, CmdGetNextIndex, be.AppendUint64(nil, 3))
	b = AppendRequest(b, CmdGetPacket, PacketRequest{StreamID: 3, Offset: 0, Len: 100}.Append(nil))
	b = AppendRequest(b, CmdGetNextIndex, be.AppendUint64(nil, 3))
	b = AppendRequest(b, CmdGetNewStreams, be.AppendUint64(nil, 1))
	b = AppendRequest(b, CmdDetachSession, be.AppendUint64(nil, 1))
	return b
}

func TestSeedFiles(t *testing.T) {
	seeds := map[string][]byte{
		"babeltrace-session.bin": babeltraceSession(),
		"list.bin": append(AppendRequest(nil, CmdConnect, Connect{ViewerSessionID: ^uint64(0), Major: 2, Minor: 4,
			Type: ConnCommand}.Append(nil)), AppendRequest(nil, CmdListSessions, nil)...),
		"unknown-command.bin": AppendRequest(nil, Command(1000), nil),
	}
	for name, want := range seeds {
		p := filepath.Join("testdata", name)
		if *updateSeeds {
			if err := os.WriteFile(p, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%v (run with -update-seeds)", err)
		}
		if string(got) != string(want) {
			t.Errorf("%s differs from the encoder's bytes", p)
		}
	}
}

// The relay answers the babeltrace sequence as babeltrace expects.
func TestBabeltraceSequenceReplies(t *testing.T) {
	tr := newTestTrace()
	tr.Publish(0, Index{PacketSize: 800, ContentSize: 800}, pkt(100, 'a'))
	tr.End()
	cat := &testCatalog{ss: []Session{&testSession{info: SessionInfo{ID: 1, Hostname: "h", Name: "s", LiveTimer: 1, Recorded: true}, trace: tr}}}
	srv, _ := NewServer(cat, nil)
	pc := &pipeConn{r: &sliceReader{b: babeltraceSession()}}
	v := &viewer{srv: srv, c: pc, attached: map[uint64]*attachment{}, streams: map[uint64]*vstream{}}
	v.run()
	want := ConnectSize + StatusSize + u32Size + SessionRecordSize + StatusCountSize + 2*StreamRecordSize +
		MetadataReplySize + len(tr.meta) + MetadataReplySize + IndexReplySize + PacketReplySize + 100 +
		IndexReplySize + StatusCountSize + StatusSize
	if pc.out != want {
		t.Fatalf("%d reply bytes; want %d", pc.out, want)
	}
}

type sliceReader struct{ b []byte }

func (r *sliceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, os.ErrClosed
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}
