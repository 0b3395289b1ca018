package hq

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
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

// msgLog is a Processor that keeps what it is given, in order: every
// message's fields and every data break.
type msgLog struct {
	lines []string
	rep   *Report
}

func (l *msgLog) Message(m *bytefrog.Msg) {
	text, value := m.Text, m.Value
	switch m.Type {
	case bytefrog.MsgMethodEntry, bytefrog.MsgMethodExit, bytefrog.MsgException, bytefrog.MsgExceptionBubble,
		bytefrog.MsgMethodVisit, bytefrog.MsgHeartbeat, bytefrog.MsgDataBreak, bytefrog.MsgMapSourceLocation,
		bytefrog.MsgSourceLocationCount:
		text, value = nil, nil // not fields of these
	}
	l.lines = append(l.lines, fmt.Sprintf("%v seq=%d t=%d tid=%d m=%d x=%d sl=%d line=%d thrown=%v mode=%v text=%q value=%q",
		m.Type, m.Seq, m.RelTime, m.ThreadID, m.MethodID, m.ExceptionID, m.SourceLocationID, m.Line, m.ExceptionThrown,
		m.Mode, text, value))
}

func (l *msgLog) DataBreak(seq int32) { l.lines = append(l.lines, fmt.Sprintf("break %d", seq)) }
func (l *msgLog) Finish(r *Report)    { l.rep = r }

// sameReplay replays the two files and compares their reports (but the
// file name) and everything their processors saw.
func sameReplay(t *testing.T, want, got string) {
	t.Helper()
	var lw, lg msgLog
	rw, errw := ReplayFile(want, &ReplayOptions{Processors: []Processor{&lw}})
	rg, errg := ReplayFile(got, &ReplayOptions{Processors: []Processor{&lg}})
	if (errw == nil) != (errg == nil) {
		t.Fatalf("replay errors %v and %v", errw, errg)
	}
	sameReport(t, rw, rg)
	if len(lw.lines) != len(lg.lines) {
		t.Errorf("%d messages replayed; want %d", len(lg.lines), len(lw.lines))
	}
	for i := range min(len(lw.lines), len(lg.lines)) {
		if lw.lines[i] != lg.lines[i] {
			t.Fatalf("message %d: %s\nwant %s", i, lg.lines[i], lw.lines[i])
		}
	}
}

func sameReport(t *testing.T, want, got *Report) {
	t.Helper()
	gv, wv := reflect.ValueOf(got).Elem(), reflect.ValueOf(want).Elem()
	for i := range gv.NumField() {
		name := gv.Type().Field(i).Name
		if name == "TraceFile" {
			continue
		}
		if g, w := gv.Field(i).Interface(), wv.Field(i).Interface(); !reflect.DeepEqual(g, w) {
			t.Errorf("%s = %v; want %v", name, g, w)
		}
	}
}

// TestColumnsScripted writes every scripted trace (gaps, duplicates,
// numbers going backwards, breaks, failures, Code Pulse) as a columnar
// file and as records; both replay to the same report and messages.
func TestColumnsScripted(t *testing.T) {
	dir := t.TempDir()
	for _, s := range append(seedTraces(t), bigTrace(t, 50_000)) {
		t.Run(s.name, func(t *testing.T) {
			orig := filepath.Join(dir, s.name+CompressNone.Ext())
			col := filepath.Join(dir, s.name+CompressColumns.Ext())
			s.write(t, orig, CompressNone)
			s.write(t, col, CompressColumns)
			tr := openTrace(t, col)
			if h, want := tr.Header(), s.h; h.Format != TraceFormatColumns || (func() bool {
				h.Format = want.Format
				return !reflect.DeepEqual(h, want)
			})() {
				t.Errorf("header %+v; want %+v in format %d", tr.Header(), s.h, TraceFormatColumns)
			}
			sameReplay(t, orig, col)
		})
	}
}

// TestColumnsErrors: damaged, cut and oversized files give ErrTraceFormat
// or ErrTraceTooLarge naming the block's file offset, replay what came
// before, and allocate no more than they hold.
func TestColumnsErrors(t *testing.T) {
	dir := t.TempDir()
	big := bigTrace(t, 300_000)
	path := filepath.Join(dir, "big"+CompressColumns.Ext())
	big.write(t, path, CompressColumns)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	hdr := traceHeaderSize + len(big.h.Agent)
	// Offsets of the blocks.
	var offs []int
	for o := hdr; o < len(b); {
		offs = append(offs, o)
		o += blockHeaderSize + int(uint32(b[o+4])<<24|uint32(b[o+5])<<16|uint32(b[o+6])<<8|uint32(b[o+7]))
	}
	if len(offs) < 2 {
		t.Fatalf("%d blocks; want several", len(offs))
	}
	last := offs[len(offs)-1]
	flip := func(at int) []byte {
		c := bytes.Clone(b)
		c[at] ^= 0x55
		return c
	}
	// A damaged file may cost what the whole file costs to replay, plus a
	// little: never what its damaged sizes declare.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if rep, err := Replay(bytes.NewReader(b), nil); err != nil || !rep.OK || rep.Sequenced < 300_000 {
		t.Fatalf("whole file: %v, %v; want a complete run", rep, err)
	}
	runtime.ReadMemStats(&after)
	budget := after.TotalAlloc - before.TotalAlloc + 8<<20
	withHead := func(raw, comp uint32) []byte {
		c := bytes.Clone(b[:last])
		return append(c, byte(raw>>24), byte(raw>>16), byte(raw>>8), byte(raw), byte(comp>>24), byte(comp>>16),
			byte(comp>>8), byte(comp))
	}
	for _, tc := range []struct {
		name   string
		b      []byte
		want   error
		text   string
		replay bool
	}{
		{"cut in a block", b[:last+20], ErrTraceFormat, fmt.Sprintf("block at file offset %d", last), true},
		{"cut in a block header", b[:last+3], ErrTraceFormat, fmt.Sprintf("block at file offset %d", last), true},
		{"damaged", flip(last + 30), ErrTraceFormat, fmt.Sprintf("block at file offset %d", last), true},
		{"huge block", withHead(maxColBlock+1, 100), ErrTraceTooLarge, fmt.Sprintf("offset %d", last), true},
		{"huge frame", withHead(100, 1<<31), ErrTraceTooLarge, fmt.Sprintf("offset %d", last), true},
		{"length lies", withHead(1<<20, 1<<20), ErrTraceFormat, "cut short", true},
		{"first block damaged", flip(offs[0] + 12), ErrTraceFormat, fmt.Sprintf("block at file offset %d", offs[0]), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			rep, err := Replay(bytes.NewReader(tc.b), nil)
			runtime.ReadMemStats(&after)
			t.Log(err)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("error %v; want %v with %q", err, tc.want, tc.text)
			}
			if tc.replay && (rep == nil || rep.Sequenced == 0 || rep.OK) {
				t.Errorf("report %v; want a failed report with the events before the damage", rep)
			}
			if d := after.TotalAlloc - before.TotalAlloc; d > budget && !raceEnabled {
				t.Errorf("allocated %d bytes for a %d-byte file; want at most %d, what the whole file takes and 8 MiB",
					d, len(tc.b), budget)
			}
		})
	}
}

// FuzzColumns feeds arbitrary columnar files to the reader and the replay:
// no panic, bounded memory, every error ErrTraceFormat or ErrTraceTooLarge.
// The seeds are the columnar files in testdata/.
func FuzzColumns(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("testdata", "*"+CompressColumns.Ext()))
	if len(names) == 0 {
		f.Fatal("no columnar trace files in testdata/")
	}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := NewTraceReader(bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, ErrTraceFormat) {
				t.Fatalf("NewTraceReader: %v; want ErrTraceFormat", err)
			}
			return
		}
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
		// What decodes whole encodes back to units that decode the same.
		if us, ok := colUnits(t, b); ok {
			var buf bytes.Buffer
			e, err := newColEncoder(&buf, tr.col.d)
			if err != nil {
				t.Fatal(err)
			}
			for i := range us {
				u := us[i].u
				if us[i].data != nil {
					s := getSlab()
					copy(s.raw, us[i].data)
					s.ev = append(s.ev, us[i].ev...)
					s.un = append(s.un, us[i].un...)
					u.s, u.raw, u.ev, u.un = s, s.raw[:len(us[i].data)], s.ev, s.un
				}
				if err := e.add(&u); err != nil {
					t.Fatal(err)
				}
				if u.s != nil {
					u.s.unref()
				}
			}
			if err := e.close(); err != nil {
				t.Fatal(err)
			}
			file := append(b[:traceHeaderSize+len(tr.h.Agent):traceHeaderSize+len(tr.h.Agent)], buf.Bytes()...)
			again, ok := colUnits(t, file)
			if !ok {
				t.Fatalf("re-encoded file does not decode")
			}
			if len(again) != len(us) {
				t.Fatalf("re-encoded: %d units; want %d", len(again), len(us))
			}
			for i := range us {
				if !reflect.DeepEqual(again[i], us[i]) {
					t.Fatalf("re-encoded unit %d:\n%+v\nwant\n%+v", i, again[i], us[i])
				}
			}
		}
		rep, err := Replay(bytes.NewReader(b), nil)
		if rep == nil {
			t.Fatalf("replay returned no report: %v", err)
		}
		if err != nil && !errors.Is(err, ErrTraceFormat) && !errors.Is(err, ErrTraceTooLarge) {
			t.Fatalf("Replay: %v; want ErrTraceFormat or ErrTraceTooLarge", err)
		}
		// Feeding the core records or Bytefrog slabs makes no difference.
		replayRecords = false
		rb, errb := Replay(bytes.NewReader(b), nil)
		replayRecords = true
		if fmt.Sprint(err) != fmt.Sprint(errb) {
			t.Fatalf("Replay with records: %v; with Bytefrog slabs: %v", err, errb)
		}
		sameReport(t, rb, rep)
	})
}

// decodedUnit is a unit read from a columnar file, with its bytes copied.
type decodedUnit struct {
	u    unit // without its slab and slices
	data []byte
	ev   []event
	un   []uint32
	perr string
}

// colUnits decodes every unit of a columnar file; ok is false if the file
// does not decode to its end or holds data for a connection kept as bytes
// (which a writer would parse, not keep).
func colUnits(t *testing.T, b []byte) ([]decodedUnit, bool) {
	tr, err := NewTraceReader(bytes.NewReader(b))
	if err != nil || tr.col == nil {
		return nil, false
	}
	defer tr.Close()
	var out []decodedUnit
	for {
		var u unit
		err := tr.col.next(&u)
		if err == io.EOF {
			return out, true
		}
		if err != nil {
			return nil, false
		}
		d := decodedUnit{u: u}
		if u.kind == RecordRecv && u.conn != controlConn && u.s == nil {
			return nil, false
		}
		if u.s != nil {
			d.data = bytes.Clone(u.raw)
			d.ev = append([]event{}, u.ev...)
			d.un = append([]uint32{}, u.un...)
			u.s.unref()
		} else {
			d.u.raw = bytes.Clone(u.raw)
		}
		if u.perr != nil {
			d.perr = u.perr.Error()
		}
		d.u.s, d.u.ev, d.u.un, d.u.perr = nil, nil, nil, nil
		if u.s != nil {
			d.u.raw = nil // in data
		}
		out = append(out, d)
	}
}

// TestColumnsStreams: a columnar file grows while the run goes on — a block
// is written once the run's clock has moved on a second — and what is
// written before the run ends replays.
func TestColumnsStreams(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live"+CompressColumns.Ext())
	h := header(bytefrog.Version1, bytefrog.FlavorBytefrog)
	w, err := createTrace(path, &h, CompressColumns)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	big := bigTrace(t, 20_000)
	for _, r := range big.recs {
		if r.Kind == RecordEnd || r.Kind == RecordClose {
			break
		}
		w.record(&unit{kind: r.Kind, conn: r.Conn, t: uint32(r.Time / time.Millisecond), raw: r.Data})
	}
	w.record(&unit{kind: RecordNote, t: 5000, raw: []byte("still running")})
	deadline := time.Now().Add(10 * time.Second)
	var size int64
	for time.Now().Before(deadline) {
		if fi, err := os.Stat(path); err == nil && fi.Size() > int64(traceHeaderSize+len(h.Agent)) {
			size = fi.Size()
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if size == 0 {
		t.Fatal("no block written while the run goes on")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Replay(bytes.NewReader(b), nil)
	if err != nil || rep.Sequenced == 0 {
		t.Fatalf("replay of the file so far: %v, %d events", err, rep.Sequenced)
	}
}

// TestColumnsNoAllocs: once warm, the trace writer's encoding of a unit of
// events, and the replay's decoding of one, allocate nothing.
func TestColumnsNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop read buffers, which then are allocated again")
	}
	d := bytefrog.Dialect{Version: bytefrog.Version1}
	big := bigTrace(t, 200_000)
	var data [][]byte
	for _, r := range big.recs {
		if r.Kind == RecordRecv && r.Conn == 1 {
			data = append(data, r.Data)
		}
	}
	us := units(d, data, 64<<10)
	for i := range us {
		us[i].conn = 1
	}
	var buf bytes.Buffer
	e, err := newColEncoder(&buf, d)
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	e.add(&unit{kind: RecordOpen, conn: 1})
	half := len(us) / 2
	for i := range us[:half] {
		e.parsed(&us[i], us[i].s, us[i].ev, us[i].un, nil)
	}
	e.flush()
	i := half
	allocs := testing.AllocsPerRun(half-2, func() {
		e.parsed(&us[i], us[i].s, us[i].ev, us[i].un, nil)
		i++
	})
	if allocs != 0 {
		t.Errorf("encoding a unit: %v allocations; want 0", allocs)
	}
	for ; i < len(us); i++ {
		e.parsed(&us[i], us[i].s, us[i].ev, us[i].un, nil)
	}
	if err := e.flush(); err != nil {
		t.Fatal(err)
	}
	if err := e.sync(); err != nil {
		t.Fatal(err)
	}
	c, err := newColDecoder(bufio.NewReader(bytes.NewReader(buf.Bytes())), 0, d)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	var u unit
	next := func() {
		if err := c.next(&u); err != nil {
			t.Fatal(err)
		}
		if u.s != nil {
			u.s.unref()
		}
	}
	for range half + 2 { // the first block, and into the second
		next()
	}
	if allocs := testing.AllocsPerRun(len(us)-half-8, next); allocs != 0 {
		t.Errorf("decoding a unit: %v allocations; want 0", allocs)
	}
}

// TestColumnsParallel: the replay's pipe, which decodes blocks in
// parallel, each from a clock of its own, with workers beside the core's
// goroutine or none, hands the core the very units the sequential reader
// reads, in the same order and at the same times.
func TestColumnsParallel(t *testing.T) {
	for _, big := range []*scripted{bigTrace(t, 700_000), slowTrace(t, 200_000)} {
		testColumnsParallel(t, big)
	}
}

// slowTrace is a run of n events whose clock moves on so slowly that
// its columnar file has a block for every few reads (colFlushMs).
func slowTrace(t testing.TB, n int) *scripted {
	s := &scripted{name: "slow", h: header(bytefrog.Version1, bytefrog.FlavorBytefrog)}
	chunks, _ := hqtest.Generate(hqtest.Workload{Events: n, Methods: 50, Threads: 4, Chunk: 8 << 10, Seed: 5})
	s.add(RecordSent, 0, 0, cmd(bytefrog.MsgStart))
	s.add(RecordOpen, 1, 0, nil)
	for i, c := range chunks {
		s.add(RecordRecv, 1, i*colFlushMs/3, c)
	}
	end := len(chunks) * colFlushMs / 3
	s.add(RecordRecv, 0, end, hb(bytefrog.ModeShutdown))
	s.add(RecordSent, 0, end, cmd(bytefrog.MsgStop))
	s.add(RecordClose, 1, end, nil)
	s.add(RecordClose, 0, end, nil)
	s.add(RecordEnd, 0, end, appendEnd(nil, true, ""))
	return s
}

func testColumnsParallel(t *testing.T, big *scripted) {
	path := filepath.Join(t.TempDir(), big.name+CompressColumns.Ext())
	big.write(t, path, CompressColumns)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, ok := colUnits(t, b)
	if !ok {
		t.Fatal("the file does not decode")
	}
	for workers := range 4 {
		t.Run(fmt.Sprintf("%s/workers=%d", big.name, workers), func(t *testing.T) {
			got, batches := pipeUnits(t, b, workers)
			if batches < 4 {
				t.Fatalf("%d batches; want a file of several blocks", batches)
			}
			if len(got) != len(want) {
				t.Fatalf("%d units; want %d", len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("unit %d:\n%+v\nwant\n%+v", i, got[i].u, want[i].u)
				}
			}
			last, end := got[len(got)-1].u.t, big.recs[len(big.recs)-1].Time/time.Millisecond
			if int64(last) != int64(end) {
				t.Fatalf("last unit at %d ms; want %d", last, end)
			}
		})
	}
}

// TestColumnsPipeClose: a replay that stops early (an end record before
// the file's end, a processor's error) closes the pipe while its workers
// are busy: close waits for them and drops what they decoded.
func TestColumnsPipeClose(t *testing.T) {
	big := bigTrace(t, 700_000)
	path := filepath.Join(t.TempDir(), "big"+CompressColumns.Ext())
	big.write(t, path, CompressColumns)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for workers := range 4 {
		for taken := range 4 {
			tr, err := NewTraceReader(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			p := newBlockPipe(tr.col, true, workers)
			for range taken {
				batch := p.next()
				if batch.err != nil {
					t.Fatalf("workers=%d: %v", workers, batch.err)
				}
				batch.release(0)
			}
			p.close()
			if len(p.jobs) != 0 || len(p.free) != 0 {
				t.Errorf("workers=%d, %d batches taken: after close, %d blocks and %d decoders held", workers, taken,
					len(p.jobs), len(p.free))
			}
			tr.Close()
		}
	}
}

// pipeUnits returns the units a blockPipe with workers goroutines hands
// the core from the columnar file b, and in how many batches.
func pipeUnits(t *testing.T, b []byte, workers int) ([]decodedUnit, int) {
	tr, err := NewTraceReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	p := newBlockPipe(tr.col, false, workers)
	defer p.close()
	var got []decodedUnit
	batches := 0
	for {
		batch := p.next()
		batches++
		p.mu.Lock()
		if len(p.jobs) > p.window {
			t.Errorf("%d blocks in the pipe; want at most %d", len(p.jobs), p.window)
		}
		p.mu.Unlock()
		for _, u := range batch.us {
			d := decodedUnit{u: u}
			if u.s != nil {
				// Units share slabs: offsets count from the unit's start.
				base := uint32(len(u.s.raw) - cap(u.raw))
				d.data = bytes.Clone(u.raw)
				for _, e := range u.ev {
					d.ev = append(d.ev, event{Seq: e.Seq, Off: e.Off - base})
				}
				for _, o := range u.un {
					d.un = append(d.un, o-base)
				}
				if d.ev == nil {
					d.ev = []event{}
				}
				if d.un == nil {
					d.un = []uint32{}
				}
				u.s.unref()
				d.u.raw = nil
			} else {
				d.u.raw = bytes.Clone(u.raw)
			}
			if u.perr != nil {
				d.perr = u.perr.Error()
			}
			d.u.s, d.u.ev, d.u.un, d.u.perr = nil, nil, nil, nil
			got = append(got, d)
		}
		if batch.err != nil {
			if batch.err != io.EOF {
				t.Fatal(batch.err)
			}
			return got, batches
		}
	}
}
