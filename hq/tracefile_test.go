package hq

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq/hqtest"
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
func (s *scripted) write(t testing.TB, path string, c Compression) {
	t.Helper()
	os.Remove(path)
	w, err := createTrace(path, &s.h, c)
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

// seedCompressions are the streams the scripted traces are kept in.
var seedCompressions = []Compression{CompressZstd, CompressS2, CompressColumns}

// TestTraceFiles replays the trace files in testdata/ (each scripted trace
// in each of seedCompressions) and compares the summaries with the golden
// ones; -update rewrites both.
func TestTraceFiles(t *testing.T) {
	for _, s := range seedTraces(t) {
		for _, c := range seedCompressions {
			t.Run(s.name+"/"+c.String(), func(t *testing.T) {
				path := filepath.Join("testdata", s.name+c.Ext())
				golden := filepath.Join("testdata", s.name+".txt")
				if *update {
					s.write(t, path, c)
				}
				rep, err := ReplayFile(path, nil)
				if err != nil {
					t.Fatalf("ReplayFile: %v", err)
				}
				// The golden summaries name the zstd file.
				rep.TraceFile = filepath.Join("testdata", s.name+seedCompressions[0].Ext())
				got := rep.String()
				if *update && c == seedCompressions[0] {
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
				tr := openTrace(t, path)
				if tr.Compression() != c {
					t.Errorf("compression %v; want %v", tr.Compression(), c)
				}
				if c != CompressColumns { // it keeps messages, not reads
					s.check(t, tr)
				}
			})
		}
	}
}

// TestTraceRoundTrip writes each scripted trace in every compression of
// records and reads back exactly the scripted header and records (the
// columnar layout keeps messages, not reads: TestColumnsScripted).
func TestTraceRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, s := range seedTraces(t) {
		for c := range CompressColumns {
			t.Run(s.name+"/"+c.String(), func(t *testing.T) {
				path := filepath.Join(dir, s.name+c.Ext())
				s.write(t, path, c)
				head := make([]byte, maxMagicSize)
				f, err := os.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				io.ReadFull(f, head)
				f.Close()
				if got, ok := detectCompression(head); !ok || got != c {
					t.Errorf("file starts % x: detected %v, %v; want %v", head, got, ok, c)
				}
				tr := openTrace(t, path)
				if tr.Compression() != c {
					t.Errorf("compression %v; want %v", tr.Compression(), c)
				}
				s.check(t, tr)
			})
		}
	}
}

// check reads tr to its end and compares it with the script.
func (s *scripted) check(t *testing.T, tr *TraceReader) {
	t.Helper()
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
}

// openTrace opens a trace file with NewTraceReader.
func openTrace(t testing.TB, path string) *TraceReader {
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
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := detectCompression(b)
	if !ok {
		t.Fatalf("%s: unknown stream % x", path, b[:min(len(b), maxMagicSize)])
	}
	if c == CompressColumns {
		return b // its blocks carry their own compression
	}
	r, release, err := traceCodecs[c].newReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if release != nil {
		defer release()
	}
	raw, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestTraceReaderErrors(t *testing.T) {
	raw := rawTrace(t, filepath.Join("testdata", "basic"+CompressZstd.Ext()))
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

// FuzzTraceReader feeds arbitrary trace files to the reader and to the
// replay: no panic, bounded memory, every error a clear ErrTraceFormat or
// ErrTraceTooLarge, and uncompressed records that encode back to the bytes
// they came from. The seeds are the files in testdata/ (S2 and zstd) and
// their uncompressed forms.
func FuzzTraceReader(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("testdata", "*"+TraceExt+"*"))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		raw := rawTrace(f, n)
		f.Add(raw)
		f.Add(raw[:len(raw)/2])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if tr, err := NewTraceReader(bytes.NewReader(b)); err != nil {
			if !errors.Is(err, ErrTraceFormat) {
				t.Fatalf("NewTraceReader: %v; want ErrTraceFormat", err)
			}
		} else {
			var rec TraceRecord
			for {
				err := tr.Next(&rec)
				if err == io.EOF {
					break
				}
				if err != nil {
					if !errors.Is(err, ErrTraceFormat) && !errors.Is(err, ErrTraceTooLarge) {
						t.Fatalf("Next: %v; want ErrTraceFormat or ErrTraceTooLarge", err)
					}
					break
				}
			}
			tr.Close()
		}
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

// bigTrace is a scripted run of n generated events on one data connection,
// large enough to fill several compressed blocks.
func bigTrace(t testing.TB, n int) *scripted {
	s := &scripted{name: "big", h: header(bytefrog.Version1, bytefrog.FlavorBytefrog)}
	chunks, _ := hqtest.Generate(hqtest.Workload{Events: n, Methods: 50, Threads: 4, Chunk: 8 << 10, Seed: 3})
	s.add(RecordSent, 0, 0, cmd(bytefrog.MsgStart))
	s.add(RecordOpen, 1, 0, nil)
	for i, c := range chunks {
		s.add(RecordRecv, 1, i/16, c)
	}
	s.add(RecordRecv, 0, len(chunks)/16, hb(bytefrog.ModeShutdown))
	s.add(RecordSent, 0, len(chunks)/16, cmd(bytefrog.MsgStop))
	s.add(RecordClose, 1, len(chunks)/16, nil)
	s.add(RecordClose, 0, len(chunks)/16, nil)
	s.add(RecordEnd, 0, len(chunks)/16, appendEnd(nil, true, ""))
	return s
}

// TestTraceStreamErrors checks that a damaged or truncated compressed file
// gives a clear error, and that declared sizes are checked before memory is
// allocated for them.
func TestTraceStreamErrors(t *testing.T) {
	dir := t.TempDir()
	big := bigTrace(t, 300_000)
	files := map[Compression][]byte{}
	for _, c := range []Compression{CompressS2, CompressZstd} {
		path := filepath.Join(dir, big.name+c.Ext())
		big.write(t, path, c)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 3*traceBlock/4 && c == CompressS2 {
			t.Fatalf("%v file of %d bytes: too small to hold several blocks", c, len(b))
		}
		files[c] = b
	}
	flip := func(b []byte, at int) []byte {
		b = bytes.Clone(b)
		b[at] ^= 0x55
		return b
	}
	s2b, zb := files[CompressS2], files[CompressZstd]
	hugeChunk := append([]byte(s2Magic), 0x00, 0xff, 0xff, 0xff) // a compressed chunk of 16 MiB
	// An uncompressed chunk just over the block limit, checksum first.
	overBlock := append([]byte(s2Magic), 0x01)
	over := maxTraceBlock + 5
	overBlock = append(overBlock, byte(over), byte(over>>8), byte(over>>16))
	overBlock = append(overBlock, 0, 0, 0, 0)
	for _, tc := range []struct {
		name   string
		b      []byte
		want   string // in the error text
		replay bool   // the first part of the run replays
	}{
		{"empty", nil, "empty file", false},
		{"unknown", []byte("GIF89a, not a trace"), "unknown stream: it starts 47 49 46", false},
		{"s2 magic only", []byte(s2Magic), "header: EOF", false},
		{"s2 cut", s2b[:len(s2b)/2], "s2 stream cut short", true},
		{"s2 cut in the first block", s2b[:100], "s2 stream cut short", false},
		{"s2 damaged", flip(s2b, len(s2b)/2), "s2 stream damaged", true},
		{"s2 huge chunk", hugeChunk, "s2 stream damaged", false},
		{"s2 block over the limit", overBlock, "s2 stream", false},
		{"zstd cut", zb[:len(zb)/2], "zstd stream cut short", true},
		{"zstd damaged", flip(zb, len(zb)/2), "zstd stream damaged", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			rep, err := Replay(bytes.NewReader(tc.b), nil)
			runtime.ReadMemStats(&after)
			t.Log(err)
			if !errors.Is(err, ErrTraceFormat) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want ErrTraceFormat with %q", err, tc.want)
			}
			if tc.replay && (rep == nil || rep.Sequenced == 0 || rep.OK) {
				t.Errorf("report %v; want a failed report with the events before the damage", rep)
			}
			if d := after.TotalAlloc - before.TotalAlloc; !tc.replay && d > 8<<20 {
				t.Errorf("allocated %d bytes for a %d-byte file; want at most 8 MiB", d, len(tc.b))
			}
		})
	}
	// The whole files replay completely.
	for c, b := range files {
		rep, err := Replay(bytes.NewReader(b), nil)
		if err != nil || !rep.OK || rep.Sequenced < 300_000 {
			t.Errorf("%v: %v, %v; want a complete run", c, rep, err)
		}
	}
}
