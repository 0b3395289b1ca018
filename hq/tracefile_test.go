package hq

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

var update = flag.Bool("update", false, "rewrite the trace files and summaries in testdata/")

// scripted is a trace written record by record, without a network.
type scripted struct {
	name string
	h    TraceHeader
	recs []TraceRecord
}

func (s *scripted) add(kind RecordKind, conn uint16, ms int, data []byte) {
	s.recs = append(s.recs, TraceRecord{Kind: kind, Conn: conn, Time: time.Duration(ms) * time.Millisecond, Data: data})
}

// write writes s as a trace file with the trace writer.
func (s *scripted) write(t *testing.T, path string) {
	t.Helper()
	os.Remove(path)
	w, err := createTrace(path, &s.h)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.recs {
		w.record(&unit{kind: r.Kind, conn: r.Conn, t: uint32(r.Time / time.Millisecond), raw: r.Data})
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
}

func header(v uint8, f bytefrog.Flavor) TraceHeader {
	return TraceHeader{
		Format: TraceFormat, RunID: 3, Version: v, Flavor: f, Start: time.Unix(1700000000, 0),
		HeartbeatInterval: 1000, MaxHeldEvents: 4 << 20, MaxHeldBytes: 1 << 30, MaxMappingBytes: 256 << 20,
		TopN: 10, Agent: "192.0.2.7:40000",
	}
}

func cmd(t bytefrog.MsgType) []byte { return bytefrog.AppendCommand(nil, t) }

func hb(m bytefrog.Mode) []byte { return bytefrog.AppendHeartbeat(nil, m, 2) }

func config(t *testing.T, v uint8) []byte {
	c := bytefrog.DefaultConfig()
	c.RunID = 3
	b, err := bytefrog.AppendConfig(nil, v, &c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// seedTraces are the scripted sessions kept in testdata/.
func seedTraces(t *testing.T) []*scripted {
	// basic: two data connections, chunks cut inside messages, a suspend
	// with its data break, class reports, the normal end.
	basic := &scripted{name: "basic", h: header(bytefrog.Version1, bytefrog.FlavorBytefrog)}
	var d []byte
	d = bytefrog.AppendMapThreadName(d, 0, 5, "main")
	d = bytefrog.AppendMapMethodSignature(d, 1, "com/ex/Main.main;9;([Ljava/lang/String;)V")
	d = bytefrog.AppendMapMethodSignature(d, 2, "com/ex/Main.work;10;(I)I")
	d = bytefrog.AppendMethodEntry(d, 5, 0, 1, 0)
	d = bytefrog.AppendMethodEntry(d, 6, 1, 2, 0)
	d = bytefrog.AppendMethodExit(d, 7, 2, 2, 12, 0)
	var e []byte
	e = bytefrog.AppendMapException(e, 1, "java.lang.IllegalStateException")
	e = bytefrog.AppendMapMethodSignature(e, 2, "com/ex/Main.work;10;(I)I")
	e = bytefrog.AppendMethodEntry(e, 8, 3, 2, 0)
	e = bytefrog.AppendException(e, 9, 4, 2, 1, 14, 0)
	e = bytefrog.AppendExceptionBubble(e, 9, 5, 2, 1, 0)
	e = bytefrog.AppendMarker(e, 10, 6, "phase", "warm")
	e = bytefrog.AppendMethodExit(e, 11, 7, 1, 20, 0)
	basic.add(RecordSent, 0, 0, config(t, bytefrog.Version1))
	basic.add(RecordSent, 0, 0, cmd(bytefrog.MsgStart))
	basic.add(RecordRecv, 0, 1, hb(bytefrog.ModeTracing))
	basic.add(RecordOpen, 1, 2, []byte("192.0.2.7:40001"))
	basic.add(RecordOpen, 2, 2, []byte("192.0.2.7:40002"))
	basic.add(RecordRecv, 2, 3, e[:20]) // later numbers first, cut mid-message
	basic.add(RecordRecv, 1, 3, d[:50])
	basic.add(RecordRecv, 0, 4, bytefrog.AppendClassMsg(nil, bytefrog.MsgClassTransformed, "com/ex/Main"))
	basic.add(RecordRecv, 1, 5, d[50:])
	basic.add(RecordRecv, 2, 5, e[20:])
	basic.add(RecordSent, 0, 6, cmd(bytefrog.MsgSuspend))
	basic.add(RecordRecv, 0, 7, append(bytefrog.AppendDataBreak(nil, 8), hb(bytefrog.ModeSuspended)[:2]...))
	basic.add(RecordRecv, 0, 8, hb(bytefrog.ModeSuspended)[2:])
	basic.add(RecordSent, 0, 9, cmd(bytefrog.MsgUnsuspend))
	basic.add(RecordRecv, 1, 10, bytefrog.AppendMarker(nil, 12, 8, "phase", "resumed"))
	basic.add(RecordRecv, 0, 11, hb(bytefrog.ModeShutdown))
	basic.add(RecordSent, 0, 11, cmd(bytefrog.MsgStop))
	basic.add(RecordClose, 1, 12, nil)
	basic.add(RecordClose, 2, 12, nil)
	basic.add(RecordClose, 0, 13, nil)
	basic.add(RecordEnd, 0, 13, appendEnd(nil, true, ""))

	// checks: a gap, a duplicate, numbers going backwards, unmapped ids
	// and a late data break.
	checks := &scripted{name: "checks", h: header(bytefrog.Version2, bytefrog.FlavorBytefrog)}
	var c1 []byte
	c1 = bytefrog.AppendMapThreadName(c1, 1, 0, "t1")
	c1 = bytefrog.AppendMapMethodSignature(c1, 1, "a/B.c;1;()V")
	for _, s := range []int32{0, 1, 2, 5, 3, 4, 6} {
		c1 = bytefrog.AppendMethodEntry(c1, 0, s, 1, 1)
	}
	c1 = bytefrog.AppendMethodEntry(c1, 0, 7, 9, 1) // method 9 unmapped
	checks.add(RecordSent, 0, 0, config(t, bytefrog.Version2))
	checks.add(RecordSent, 0, 0, cmd(bytefrog.MsgStart))
	checks.add(RecordOpen, 1, 1, nil)
	checks.add(RecordRecv, 1, 2, c1)
	checks.add(RecordRecv, 0, 3, bytefrog.AppendDataBreak(nil, 2))
	checks.add(RecordRecv, 1, 4, bytefrog.AppendMethodEntry(bytefrog.AppendMethodEntry(nil, 0, 3, 1, 1), 0, 12, 1, 2))
	checks.add(RecordRecv, 0, 5, hb(bytefrog.ModeShutdown))
	checks.add(RecordSent, 0, 5, cmd(bytefrog.MsgStop))
	checks.add(RecordClose, 1, 6, nil)
	checks.add(RecordClose, 0, 6, nil)
	checks.add(RecordEnd, 0, 6, appendEnd(nil, false, "incomplete data: 1 gap(s), 4 events missing"))

	// failed: a bad control message ends the run.
	failed := &scripted{name: "failed", h: header(bytefrog.Version1, bytefrog.FlavorBytefrog)}
	failed.add(RecordSent, 0, 0, config(t, bytefrog.Version1))
	failed.add(RecordSent, 0, 0, cmd(bytefrog.MsgStart))
	failed.add(RecordRecv, 0, 1, hb(bytefrog.ModeTracing))
	failed.add(RecordOpen, 1, 1, nil)
	failed.add(RecordRecv, 1, 2, bytefrog.AppendMethodEntry(nil, 0, 0, 1, 1)[:9])
	failed.add(RecordRecv, 0, 3, bytefrog.AppendMethodEntry(nil, 0, 0, 1, 1))
	failed.add(RecordSent, 0, 3, bytefrog.AppendError(nil, "Bad control message: MethodEntry (type id 20)"))
	failed.add(RecordEnd, 0, 3, appendEnd(nil, false, "Bad control message: MethodEntry (type id 20)"))

	// codepulse: protocol v3 with line-level coverage messages.
	cp := &scripted{name: "codepulse", h: header(bytefrog.Version3, bytefrog.FlavorCodePulse)}
	cp.h.HasProjectID, cp.h.ProjectID = true, 12
	var v []byte
	v = bytefrog.AppendMapMethodSignature(v, 0, "com/ex/A.<init>;1;()V")
	v = bytefrog.AppendSourceLocationCount(v, 0, 3)
	v = bytefrog.AppendMapSourceLocation(v, 0, 0, 10, 11, -1, -1)
	v = bytefrog.AppendMethodVisit(v, 1, 0, 0, 0, 1)
	v = bytefrog.AppendMethodEntry(v, 1, 1, 0, 1)
	v = bytefrog.AppendMethodExitCodePulse(v, 2, 2, 0, true, 1)
	cp.add(RecordSent, 0, 0, config(t, bytefrog.Version3))
	cp.add(RecordSent, 0, 0, cmd(bytefrog.MsgStart))
	cp.add(RecordOpen, 1, 1, nil)
	cp.add(RecordRecv, 1, 2, v)
	cp.add(RecordRecv, 0, 3, hb(bytefrog.ModeShutdown))
	cp.add(RecordSent, 0, 3, cmd(bytefrog.MsgStop))
	cp.add(RecordClose, 1, 4, nil)
	cp.add(RecordClose, 0, 4, []byte("connection reset by peer"))
	cp.add(RecordEnd, 0, 4, appendEnd(nil, true, ""))
	return []*scripted{basic, checks, failed, cp}
}

// TestTraceFiles replays the trace files in testdata/ and compares the
// summaries with the golden ones; -update rewrites both.
func TestTraceFiles(t *testing.T) {
	for _, s := range seedTraces(t) {
		t.Run(s.name, func(t *testing.T) {
			path := filepath.Join("testdata", s.name+TraceExt)
			golden := filepath.Join("testdata", s.name+".txt")
			if *update {
				s.write(t, path)
			}
			rep, err := ReplayFile(path, nil)
			if err != nil {
				t.Fatalf("ReplayFile: %v", err)
			}
			got := rep.String()
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("summary of %s:\n%s\nwant:\n%s", path, got, want)
			}
			// The file holds exactly the scripted records.
			tr := openRaw(t, path)
			if h := tr.Header(); !reflect.DeepEqual(h, s.h) {
				t.Errorf("header %+v; want %+v", h, s.h)
			}
			for i, want := range s.recs {
				var rec TraceRecord
				if err := tr.Next(&rec); err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
				if rec.Kind != want.Kind || rec.Conn != want.Conn || rec.Time != want.Time || !bytes.Equal(rec.Data, want.Data) {
					t.Errorf("record %d: got %v %d %v %x; want %v %d %v %x", i, rec.Kind, rec.Conn, rec.Time, rec.Data,
						want.Kind, want.Conn, want.Time, want.Data)
				}
			}
			var rec TraceRecord
			if err := tr.Next(&rec); err != io.EOF {
				t.Errorf("after the last record: %v; want EOF", err)
			}
		})
	}
}

// openRaw opens a trace file through its zstd layer.
func openRaw(t testing.TB, path string) *TraceReader {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	tr, err := NewTraceReader(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.Close)
	return tr
}

// rawTrace returns the uncompressed bytes of a trace file.
func rawTrace(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTraceReaderErrors(t *testing.T) {
	raw := rawTrace(t, filepath.Join("testdata", "basic"+TraceExt))
	hdrLen := traceHeaderSize + len("192.0.2.7:40000")
	huge := append(append([]byte{}, raw[:hdrLen]...), appendRecordHeader(nil, RecordRecv, 1, 0, MaxTraceRecord+1)...)
	badKind := append(append([]byte{}, raw[:hdrLen]...), appendRecordHeader(nil, 9, 1, 0, 0)...)
	for _, tc := range []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrTraceFormat},
		{"magic", append([]byte("XPHQ"), raw[4:]...), ErrTraceFormat},
		{"short header", raw[:traceHeaderSize-1], ErrTraceFormat},
		{"short agent", raw[:hdrLen-1], ErrTraceFormat},
		{"huge record", huge, ErrTraceTooLarge},
		{"bad kind", badKind, ErrTraceFormat},
		{"cut record", raw[:len(raw)-1], ErrTraceFormat},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := newRawTraceReader(bytes.NewReader(tc.b))
			if err == nil {
				var rec TraceRecord
				for err == nil {
					err = tr.Next(&rec)
				}
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("error %v; want %v", err, tc.want)
			}
		})
	}
	// A file cut inside a record replays what came before, with the error.
	tr, err := newRawTraceReader(bytes.NewReader(raw[:len(raw)-30]))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := replay(tr, nil)
	if !errors.Is(err, ErrTraceFormat) || rep == nil || rep.Sequenced == 0 || rep.OK {
		t.Errorf("replay of a cut file: %v, %v; want a failed report with its events and ErrTraceFormat", rep, err)
	}
}

// FuzzTraceReader feeds arbitrary uncompressed trace files to the reader
// and to the replay: no panic, bounded memory, and records that encode
// back to the bytes they came from.
func FuzzTraceReader(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("testdata", "*"+TraceExt))
	for _, n := range names {
		raw := rawTrace(f, n)
		f.Add(raw)
		f.Add(raw[:len(raw)/2])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := newRawTraceReader(bytes.NewReader(b))
		if err != nil {
			return
		}
		h := tr.Header()
		enc := h.append(nil)
		var rec TraceRecord
		var recs []TraceRecord
		for {
			if err := tr.Next(&rec); err != nil {
				break
			}
			enc = appendRecordHeader(enc, rec.Kind, rec.Conn, uint32(rec.Time/time.Millisecond), len(rec.Data))
			enc = append(enc, rec.Data...)
			rec.Data = bytes.Clone(rec.Data)
			recs = append(recs, rec)
		}
		if !bytes.HasPrefix(b, enc) && len(h.Agent) < 1<<16-1 {
			t.Fatalf("records do not encode back to the input")
		}
		tr2, err := newRawTraceReader(bytes.NewReader(enc))
		if err != nil {
			t.Fatalf("re-encoded header: %v", err)
		}
		if h2 := tr2.Header(); !reflect.DeepEqual(h2, h) {
			t.Fatalf("re-encoded header %+v; want %+v", h2, h)
		}
		for i, want := range recs {
			if err := tr2.Next(&rec); err != nil || rec.Kind != want.Kind || rec.Conn != want.Conn ||
				rec.Time != want.Time || !bytes.Equal(rec.Data, want.Data) {
				t.Fatalf("re-encoded record %d: %v", i, err)
			}
		}
		tr, _ = newRawTraceReader(bytes.NewReader(b))
		rep, _ := replay(tr, nil)
		if rep == nil {
			t.Fatal("replay returned no report")
		}
		if !strings.Contains(rep.String(), "result: ") {
			t.Fatal("summary without a result")
		}
	})
}
