package bytefrog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
)

// viewStream is a stream of every data message, in dialect d.
func viewStream(d Dialect) []byte {
	var b []byte
	b = AppendMapThreadName(b, 7, 1, "main")
	b = AppendMapMethodSignature(b, 3, "com/example/App.run;1;()V")
	b = AppendMapException(b, 9, "java/lang/IllegalStateException")
	b = AppendMethodEntry(b, 1, 100, 3, 7)
	if d.Flavor == FlavorCodePulse {
		b = AppendMethodExitCodePulse(b, 2, 101, 3, true, 7)
	} else {
		b = AppendMethodExit(b, 2, 101, 3, 42, 7)
	}
	b = AppendException(b, 3, 102, 3, 9, 43, 7)
	b = AppendExceptionBubble(b, 4, 103, 3, 9, 7)
	b = AppendMarker(b, 5, 104, "phase", "warm-up é")
	b = AppendDataBreak(b, 105)
	if d.Version >= Version3 {
		b = AppendMapSourceLocation(b, 11, 3, 10, 12, 1, 40)
		b = AppendMethodVisit(b, 6, 105, 3, 11, 7)
		b = AppendSourceLocationCount(b, 3, 4)
	}
	b = AppendError(b, "agent: out of buffers")
	return b
}

// checkViewAgainst checks v's current message and accessors against want,
// the same message decoded by Parse.
func checkViewAgainst(t *testing.T, v *EventView, want *Msg) {
	t.Helper()
	var got Msg
	v.Msg(&got)
	if !sameMsg(&got, want) || !bytes.Equal(got.Raw, want.Raw) || !bytes.Equal(v.Raw(), want.Raw) {
		t.Fatalf("view at %d: %+v\nParse: %+v", v.Offset(), got, *want)
	}
	if v.Type() != want.Type {
		t.Fatalf("Type %v; want %v", v.Type(), want.Type)
	}
	w := EventView{t: v.t}
	var l Msg
	if !w.Load(&l, v.buf[v.off:]) || !sameMsg(&l, want) || !bytes.Equal(l.Raw, want.Raw) {
		t.Fatalf("Load at %d: %+v\nParse: %+v", v.Offset(), l, *want)
	}
	var z Msg // the fields Parse sets for this type, the others zero
	if _, err := v.t.dialect().Parse(&z, want.Raw); err != nil {
		t.Fatal(err)
	}
	line := z.Line
	if !(z.Type == MsgException || z.Type == MsgMethodExit && v.t.flavor == FlavorBytefrog) {
		line = NoLine
	}
	var e Event
	switch ok := w.LoadEvent(&e, v.buf[v.off:]); z.Type {
	case MsgMethodEntry, MsgMethodExit, MsgException, MsgExceptionBubble, MsgMethodVisit:
		var flag uint8
		if z.Type == MsgMethodExit && v.t.flavor == FlavorCodePulse {
			flag = want.Raw[offField4]
		}
		wantE := Event{Type: z.Type, Flag: flag, ThreadID: z.ThreadID, Line: line, RelTime: z.RelTime, Seq: z.Seq,
			MethodID: z.MethodID, ExceptionID: z.ExceptionID, SourceLocationID: z.SourceLocationID, Size: len(want.Raw)}
		if !ok || e != wantE {
			t.Fatalf("LoadEvent at %d: %+v, %v; want %+v", v.Offset(), e, ok, wantE)
		}
	default:
		if ok || e != (Event{}) {
			t.Fatalf("LoadEvent took a %v: %+v", z.Type, e)
		}
	}
	type field struct {
		name      string
		got, want any
	}
	for _, f := range []field{
		{"Seq", v.Seq(), z.Seq}, {"RelTime", v.RelTime(), z.RelTime}, {"MethodID", v.MethodID(), z.MethodID},
		{"ThreadID", v.ThreadID(), z.ThreadID}, {"Line", v.Line(), line},
		{"ExceptionThrown", v.ExceptionThrown(), z.ExceptionThrown}, {"ExceptionID", v.ExceptionID(), z.ExceptionID},
		{"SourceLocationID", v.SourceLocationID(), z.SourceLocationID},
		{"Text", string(v.Text()), string(z.Text)}, {"Value", string(v.Value()), string(z.Value)},
		{"Sequenced", v.Sequenced(), z.Type.Sequenced()},
	} {
		if f.got != f.want {
			t.Fatalf("%v at %d: %s() = %v; want %v", want.Type, v.Offset(), f.name, f.got, f.want)
		}
	}
}

// dialect returns a dialect the tables were made for.
func (t *viewTables) dialect() Dialect {
	d := Dialect{Version: Version1, Flavor: t.flavor}
	if t.kind[MsgMethodVisit] != viewNone {
		d.Version = Version3
	}
	return d
}

func TestEventView(t *testing.T) {
	for _, d := range []Dialect{
		{Version: Version1}, {Version: Version3}, {Version: Version2, Flavor: FlavorCodePulse},
		{Version: Version4, Flavor: FlavorCodePulse},
	} {
		t.Run(d.Flavor.String()+"/v"+string('0'+d.Version), func(t *testing.T) {
			stream := viewStream(d)
			v := NewEventView(stream, d)
			dec := NewDecoder(bytes.NewReader(stream), d)
			n := 0
			for v.Next() {
				var want Msg
				if err := dec.Next(&want); err != nil {
					t.Fatal(err)
				}
				checkViewAgainst(t, v, &want)
				n++
			}
			if v.Err() != nil || len(v.Rest()) != 0 || v.Offset() != len(stream) {
				t.Fatalf("end: err %v, rest %d, offset %d of %d", v.Err(), len(v.Rest()), v.Offset(), len(stream))
			}
			if err := dec.Next(&Msg{}); err != io.EOF {
				t.Fatalf("decoder after the view's end: %v", err)
			}
			if want := 10 + 3*int(d.Version/Version3); n != want {
				t.Fatalf("%d messages; want %d", n, want)
			}
		})
	}
}

// TestEventViewIncomplete cuts the stream at every byte: the view reads
// the whole messages and leaves the rest.
func TestEventViewIncomplete(t *testing.T) {
	d := Dialect{Version: Version3}
	stream := viewStream(d)
	var ends []int
	for v := NewEventView(stream, d); v.Next(); {
		ends = append(ends, v.Offset()+len(v.Raw()))
	}
	for cut := range len(stream) {
		v := NewEventView(stream[:cut], d)
		last := 0
		for v.Next() {
			last = v.Offset() + len(v.Raw())
		}
		want := 0
		for _, e := range ends {
			if e <= cut {
				want = e
			}
		}
		if v.Err() != nil || last != want || !bytes.Equal(v.Rest(), stream[want:cut]) || v.Offset() != want {
			t.Fatalf("cut at %d: err %v, read to %d (want %d), rest %d bytes", cut, v.Err(), last, want, len(v.Rest()))
		}
	}
}

func TestEventViewErrors(t *testing.T) {
	entry := AppendMethodEntry(nil, 1, 2, 3, 4)
	tests := []struct {
		name string
		d    Dialect
		tail []byte
		want error
	}{
		{"unknown type", Dialect{Version: Version1}, []byte{0xFE, 0, 0}, ErrUnknownType},
		{"heartbeat", Dialect{Version: Version1}, AppendHeartbeat(nil, 'T', 0), ErrNotData},
		{"start", Dialect{Version: Version1}, AppendCommand(nil, MsgStart), ErrNotData},
		{"visit under v1", Dialect{Version: Version1}, AppendMethodVisit(nil, 1, 2, 3, 4, 5), ErrNotData},
		{"source count under v2", Dialect{Version: Version2}, AppendSourceLocationCount(nil, 1, 2), ErrNotData},
		{"bad key", Dialect{Version: Version1}, []byte{byte(MsgMarker), 0, 0, 0, 1, 0, 0, 0, 2, 0, 1, 0x80, 0, 0}, ErrInvalidUTF},
		{"bad value", Dialect{Version: Version1}, []byte{byte(MsgMarker), 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 1, 0}, ErrInvalidUTF},
		{"bad signature", Dialect{Version: Version1}, []byte{byte(MsgMapMethodSignature), 0, 0, 0, 1, 0, 1, 0xC0}, ErrInvalidUTF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := append(append(append([]byte{}, entry...), entry...), tc.tail...)
			b = append(b, entry...)
			v := NewEventView(b, tc.d)
			n := 0
			for v.Next() {
				n++
			}
			var ve *ViewError
			if !errors.Is(v.Err(), tc.want) || !errors.As(v.Err(), &ve) {
				t.Fatalf("err %v; want %v", v.Err(), tc.want)
			}
			if n != 2 || ve.Offset != 2*len(entry) || v.Offset() != ve.Offset || ve.Type != MsgType(tc.tail[0]) {
				t.Fatalf("%d messages, error at %d (view offset %d), type %v; want 2, at %d", n, ve.Offset, v.Offset(), ve.Type, 2*len(entry))
			}
			if v.Next() {
				t.Fatal("Next after an error")
			}
		})
	}
}

func TestEventViewAllocs(t *testing.T) {
	d := Dialect{Version: Version3}
	stream := viewStream(d)
	v := NewEventView(stream, d)
	var m Msg
	var sum int64
	allocs := testing.AllocsPerRun(100, func() {
		v.Reset(stream)
		for v.Next() {
			v.Msg(&m)
			sum += int64(v.Seq()) + int64(v.ThreadID()) + int64(len(v.Text()))
		}
	})
	if allocs != 0 || sum == 0 {
		t.Fatalf("%v allocations per pass; want 0", allocs)
	}
}

// FuzzEventView cross-checks the view against the Decoder: the same
// messages with the same fields, and where the view stops, the reason
// Parse gives at that offset.
func FuzzEventView(f *testing.F) {
	f.Add([]byte{}, Version1, false)
	f.Fuzz(func(t *testing.T, data []byte, version uint8, codePulse bool) {
		d := fuzzDialect(version, codePulse)
		v := NewEventView(data, d)
		dec := NewDecoder(bytes.NewReader(data), d)
		for v.Next() {
			var want Msg
			if err := dec.Next(&want); err != nil {
				t.Fatalf("view read %v at %d; decoder: %v", v.Type(), v.Offset(), err)
			}
			if !d.DataMsg(want.Type) {
				t.Fatalf("view read %v, not a data message", want.Type)
			}
			checkViewAgainst(t, v, &want)
		}
		// AppendSequenced frames the same messages.
		var want, got []SeqOff
		var others []int
		for x := NewEventView(data, d); x.Next(); {
			if x.Sequenced() { // markers too
				want = append(want, SeqOff{x.Seq(), uint32(x.Offset())})
			} else {
				others = append(others, x.Offset())
			}
		}
		y := NewEventView(data, d)
		for k := 0; ; k++ {
			var ok bool
			if got, ok = y.AppendSequenced(got, 0); !ok {
				break
			}
			if k >= len(others) || y.Offset() != others[k] {
				t.Fatalf("AppendSequenced stopped at %d; Next at %v", y.Offset(), others)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || y.Offset() != v.Offset() || fmt.Sprint(y.Err()) != fmt.Sprint(v.Err()) {
			t.Fatalf("AppendSequenced: %v, stopped at %d (%v); Next: %v, at %d (%v)", got, y.Offset(), y.Err(), want, v.Offset(), v.Err())
		}
		off := v.Offset()
		if off != len(data)-len(v.Rest()) && v.Err() == nil {
			t.Fatalf("offset %d, rest %d of %d bytes", off, len(v.Rest()), len(data))
		}
		var m Msg
		n, perr := d.Parse(&m, data[off:])
		err := v.Err()
		var ve *ViewError
		if err != nil && (!errors.As(err, &ve) || ve.Offset != off || ve.Type != MsgType(data[off])) {
			t.Fatalf("error %v at view offset %d", err, off)
		}
		switch {
		case err == nil && off == len(data):
			if derr := dec.Next(&m); derr != io.EOF {
				t.Fatalf("view at the end; decoder: %v", derr)
			}
		case err == nil:
			if perr != ErrShort {
				t.Fatalf("view stopped before %d bytes at %d; Parse: %d, %v", len(v.Rest()), off, n, perr)
			}
			if derr := dec.Next(&m); !errors.Is(derr, ErrTruncated) {
				t.Fatalf("view stopped before an incomplete message; decoder: %v", derr)
			}
		case errors.Is(err, ErrNotData):
			if d.DataMsg(MsgType(data[off])) || errors.Is(perr, ErrUnknownType) {
				t.Fatalf("view refused %v: %v (Parse: %v)", MsgType(data[off]), err, perr)
			}
		case errors.Is(err, ErrUnknownType):
			if !errors.Is(perr, ErrUnknownType) {
				t.Fatalf("view: %v; Parse: %v", err, perr)
			}
		case errors.Is(err, ErrInvalidUTF):
			if !errors.Is(perr, ErrInvalidUTF) || n == 0 {
				t.Fatalf("view: %v; Parse: %d, %v", err, n, perr)
			}
		default:
			t.Fatalf("view: %v", err)
		}
	})
}

// BenchmarkEventView reads the 1 MiB stream of BenchmarkDecoder in place:
// framing and every field of each event.
func BenchmarkEventView(b *testing.B) {
	for _, d := range []Dialect{dialectV1, dialectCP} {
		b.Run(d.Flavor.String(), func(b *testing.B) {
			stream, events := benchStream(d)
			b.ReportAllocs()
			b.SetBytes(int64(len(stream)))
			v := NewEventView(stream, d)
			var sum int64
			b.ResetTimer()
			for range b.N {
				v.Reset(stream)
				n := 0
				for v.Next() {
					sum += int64(v.Seq()) + int64(v.RelTime()) + int64(v.MethodID()) + int64(v.ThreadID())
					n++
				}
				if n != events || v.Err() != nil {
					b.Fatalf("%d events, %v; want %d", n, v.Err(), events)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events)/float64(b.N), "ns/event")
			b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			if sum == 0 {
				b.Fatal("no fields read")
			}
		})
	}
}

// TestEventViewRevisit comes back to each message the view read, in a
// buffer that goes on after it.
func TestEventViewRevisit(t *testing.T) {
	for _, d := range []Dialect{{Version: Version3}, {Version: Version4, Flavor: FlavorCodePulse}} {
		stream := viewStream(d)
		v := NewEventView(stream, d)
		var offs []int
		for v.Next() {
			offs = append(offs, v.Offset())
		}
		w := NewEventView(nil, d)
		for _, off := range offs {
			v.Reset(stream[off:])
			v.Next()
			if !w.Revisit(stream[off:]) {
				t.Fatalf("Revisit at %d: false", off)
			}
			var want Msg
			v.Msg(&want)
			checkViewAgainst(t, w, &want)
			if v.Next() != w.Next() || v.Offset() != w.Offset() || !bytes.Equal(v.Raw(), w.Raw()) {
				t.Fatalf("Revisit at %d: Next read %v at %d; want %v at %d", off, w.Type(), w.Offset(), v.Type(), v.Offset())
			}
			if w.Revisit(stream[off : off+len(want.Raw)-1]) {
				t.Fatalf("Revisit of a cut %v: true", want.Type)
			}
		}
		if w.Revisit(AppendHeartbeat(nil, 'T', 1)) || w.Revisit(nil) {
			t.Fatal("Revisit of a control message or nothing: true")
		}
	}
}

// TestEventViewLoad decodes each message the view read with Load, from
// a buffer that goes on after it, as Msg does, leaving the view in place.
func TestEventViewLoad(t *testing.T) {
	for _, d := range []Dialect{{Version: Version1}, {Version: Version3}, {Version: Version4, Flavor: FlavorCodePulse}} {
		stream := viewStream(d)
		v := NewEventView(stream, d)
		w := NewEventView(nil, d)
		for v.Next() {
			var want, got Msg
			v.Msg(&want)
			if !w.Load(&got, stream[v.Offset():]) || !sameMsg(&got, &want) || !bytes.Equal(got.Raw, want.Raw) {
				t.Fatalf("Load at %d: %+v\nwant %+v", v.Offset(), got, want)
			}
			if !w.Load(&got, want.Raw) || w.Load(&got, want.Raw[:len(want.Raw)-1]) {
				t.Fatalf("Load of exactly the %v, or of all but its last byte: wrong", want.Type)
			}
		}
		if w.Load(&Msg{}, nil) || w.Load(&Msg{}, AppendHeartbeat(nil, 'T', 1)) || w.Type() != 0 || w.Next() {
			t.Fatal("Load of nothing or a control message: true, or the view moved")
		}
	}
}

// TestAppendSequenced indexes a stream with AppendSequenced and with Next:
// markers with the method events (one with a string not plain ASCII),
// the same numbers at the same offsets, and the same other messages.
func TestAppendSequenced(t *testing.T) {
	for _, d := range []Dialect{{Version: Version1}, {Version: Version3}, {Version: Version4, Flavor: FlavorCodePulse}} {
		stream := viewStream(d)
		stream = append(stream, AppendMethodEntry(nil, 9, 200, 3, 7)...)
		stream = append(stream, AppendMethodEntry(nil, 9, 201, 3, 7)...)
		cut := len(stream) - 3 // the last entry is incomplete
		var want, got []SeqOff
		var wantOther, gotOther []int
		v := NewEventView(stream[:cut], d)
		for v.Next() {
			if v.Sequenced() { // markers too
				want = append(want, SeqOff{v.Seq(), uint32(v.Offset()) + 100})
			} else {
				wantOther = append(wantOther, v.Offset())
			}
		}
		w := NewEventView(stream[:cut], d)
		for {
			var ok bool
			if got, ok = w.AppendSequenced(got, 100); !ok {
				break
			}
			gotOther = append(gotOther, w.Offset())
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(gotOther) != fmt.Sprint(wantOther) ||
			!bytes.Equal(w.Rest(), v.Rest()) || w.Err() != v.Err() {
			t.Fatalf("%v: got %v, others %v, rest %d\nwant %v, others %v, rest %d", d, got, gotOther, len(w.Rest()), want, wantOther, len(v.Rest()))
		}
	}
}

// julStream is what the JVM agent sends for java.util.logging records: a
// run of markers "log:<logger>" = "<message>" from a few loggers, about
// 1 MiB, and the number of markers in it.
func julStream() ([]byte, int) {
	loggers := []string{"log:bench.jul", "log:com.example.orders", "log:app"}
	var b []byte
	n := 0
	for ; len(b) < 1<<20; n++ {
		b = AppendMarker(b, int32(n/1000), int32(n), loggers[n%len(loggers)], fmt.Sprintf("benchmark record %d", n))
	}
	return b, n
}

// BenchmarkAppendSequencedMarkers indexes a run of log markers as HQ's
// connection reader does: AppendSequenced, and what it stops at.
func BenchmarkAppendSequencedMarkers(b *testing.B) {
	stream, n := julStream()
	d := Dialect{Version: Version1}
	v := NewEventView(stream, d)
	idx := make([]SeqOff, 0, n+1)
	b.ReportAllocs()
	b.SetBytes(int64(len(stream)))
	b.ResetTimer()
	for range b.N {
		v.Reset(stream)
		idx = idx[:0]
		for {
			var ok bool
			if idx, ok = v.AppendSequenced(idx, 0); !ok {
				break
			}
			if v.Type() == MsgMarker {
				idx = append(idx, SeqOff{v.Seq(), uint32(v.Offset())})
			}
		}
		if len(idx) != n || v.Err() != nil {
			b.Fatalf("%d markers, %v; want %d", len(idx), v.Err(), n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n)/float64(b.N), "ns/marker")
}

// TestAppendSequencedMarkers indexes runs of markers cut at every byte,
// with a marker whose value is not valid modified UTF-8 (a raw NUL, a
// lone continuation byte) or not plain ASCII among them: the same index,
// the same stop and the same error as reading with Next.
func TestAppendSequencedMarkers(t *testing.T) {
	d := Dialect{Version: Version1}
	var stream []byte
	stream = AppendMarker(stream, 1, 10, "log:a", "first record")
	stream = AppendMethodEntry(stream, 1, 11, 3, 7)
	stream = AppendMarker(stream, 1, 12, "log:bench.jul", "é, not ASCII")
	stream = AppendMarker(stream, 1, 13, "", "")
	stream = AppendMarker(stream, 2, 14, "log:a", "x")
	for _, bad := range [][]byte{{'o', 'k', 0}, {0x80}, {'a', 0xC0}} {
		// The value's bytes as they are, not encoded.
		s := AppendMarker(slices.Clone(stream), 2, 15, "log:a", strings.Repeat("v", len(bad)))
		copy(s[len(s)-len(bad):], bad)
		s = AppendMarker(s, 2, 16, "log:a", "after")
		for cut := 0; cut <= len(s); cut++ {
			var want, got []SeqOff
			v := NewEventView(s[:cut], d)
			for v.Next() {
				if v.Sequenced() {
					want = append(want, SeqOff{v.Seq(), uint32(v.Offset()) + 7})
				}
			}
			w := NewEventView(s[:cut], d)
			for {
				var ok bool
				if got, ok = w.AppendSequenced(got, 7); !ok {
					break
				}
				if w.Type() == MsgMarker {
					t.Fatalf("cut %d: Next returned the marker at %d", cut, w.Offset())
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) || w.Offset() != v.Offset() || len(w.Rest()) != len(v.Rest()) ||
				fmt.Sprint(w.Err()) != fmt.Sprint(v.Err()) {
				t.Fatalf("%q cut at %d: got %v, at %d (%v); want %v, at %d (%v)", bad, cut, got, w.Offset(), w.Err(),
					want, v.Offset(), v.Err())
			}
			if cut == len(s) && (len(got) != 5 || !errors.Is(w.Err(), ErrInvalidUTF)) {
				t.Fatalf("%q: %d indexed, %v; want 5 and an invalid string", bad, len(got), w.Err())
			}
		}
	}
}
