package bytefrog

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// mixedStream returns a stream of every message type that needs no
// configuration codec, including strings long enough to make a Decoder grow
// its buffer, and the messages one by one.
func mixedStream(d Dialect) (stream []byte, msgs [][]byte) {
	add := func(b []byte) {
		msgs = append(msgs, b)
		stream = append(stream, b...)
	}
	add(AppendHello(nil, d.Version))
	add(AppendDataHello(nil, 3))
	add(AppendMapThreadName(nil, 1, 2, "main"))
	add(AppendMapMethodSignature(nil, 1, "com/ex/Main.main;9;([Ljava/lang/String;)V"))
	add(AppendMapException(nil, 1, "java.lang.IllegalStateException"))
	for b := fixedEvents(nil, d); len(b) > 0; {
		n, _ := d.Parse(&Msg{}, b)
		add(b[:n:n])
		b = b[n:]
	}
	add(AppendClassMsg(nil, MsgClassTransformed, "com/ex/Main"))
	add(AppendMarker(nil, 1, 9, "key", "välue 😀"))
	add(AppendMarker(nil, 1, 10, strings.Repeat("k", MaxStringLen), strings.Repeat("v", MaxStringLen)))
	add(AppendMapMethodSignature(nil, 2, strings.Repeat("s", 70000)))
	add(AppendError(nil, "bye"))
	return stream, msgs
}

// parseAll decodes stream with Parse alone.
func parseAll(t *testing.T, d Dialect, stream []byte) []Msg {
	t.Helper()
	var out []Msg
	for len(stream) > 0 {
		var m Msg
		n, err := d.Parse(&m, stream)
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		m.Raw = append([]byte(nil), m.Raw...)
		out = append(out, m)
		stream = stream[n:]
	}
	return out
}

// decodeAll reads messages until an error; it copies the aliased slices.
func decodeAll(dec *Decoder) ([]Msg, error) {
	var out []Msg
	for {
		var m Msg
		if err := dec.Next(&m); err != nil {
			return out, err
		}
		m.Text = bytes.Clone(m.Text)
		m.Value = bytes.Clone(m.Value)
		m.Raw = bytes.Clone(m.Raw)
		out = append(out, m)
	}
}

func TestDecoderReaders(t *testing.T) {
	for _, d := range []Dialect{dialectV1, dialectCP} {
		stream, _ := mixedStream(d)
		want := parseAll(t, d, stream)
		readers := map[string]func() io.Reader{
			"whole":      func() io.Reader { return bytes.NewReader(stream) },
			"one byte":   func() io.Reader { return iotest.OneByteReader(bytes.NewReader(stream)) },
			"half":       func() io.Reader { return iotest.HalfReader(bytes.NewReader(stream)) },
			"data+EOF":   func() io.Reader { return iotest.DataErrReader(bytes.NewReader(stream)) },
			"zero reads": func() io.Reader { return &stutterReader{r: bytes.NewReader(stream)} },
		}
		for name, r := range readers {
			dec := NewDecoder(r(), d)
			got, err := decodeAll(dec)
			if err != io.EOF {
				t.Errorf("%v/%s: got %v; want io.EOF", d.Flavor, name, err)
			}
			if len(got) != len(want) {
				t.Fatalf("%v/%s: %d messages; want %d", d.Flavor, name, len(got), len(want))
			}
			for i := range want {
				if !sameMsg(&got[i], &want[i]) || !bytes.Equal(got[i].Raw, want[i].Raw) {
					t.Errorf("%v/%s: message %d: got %v; want %v", d.Flavor, name, i, got[i].Type, want[i].Type)
				}
			}
			if dec.Buffered() != 0 {
				t.Errorf("%v/%s: Buffered() = %d after EOF; want 0", d.Flavor, name, dec.Buffered())
			}
			if err := dec.Next(&Msg{}); err != io.EOF {
				t.Errorf("%v/%s: Next after EOF: got %v; want io.EOF", d.Flavor, name, err)
			}
			if max := d.maxMsgSize(); len(dec.buf) > max {
				t.Errorf("%v/%s: buffer grew to %d; largest message is %d", d.Flavor, name, len(dec.buf), max)
			}
		}
	}
}

// stutterReader returns (0, nil) before every byte it hands out.
type stutterReader struct {
	r    io.Reader
	zero bool
}

func (s *stutterReader) Read(p []byte) (int, error) {
	s.zero = !s.zero
	if s.zero || len(p) == 0 {
		return 0, nil
	}
	return s.r.Read(p[:1])
}

func TestDecoderTruncated(t *testing.T) {
	stream, msgs := mixedStream(dialectV1)
	// Cut inside each of the first messages, and at each boundary.
	off := 0
	for i, msg := range msgs[:len(msgs)-3] {
		for _, cut := range []int{off, off + 1, off + len(msg) - 1} {
			if cut >= off+len(msg) {
				continue
			}
			dec := NewDecoder(iotest.OneByteReader(bytes.NewReader(stream[:cut])), dialectV1)
			got, err := decodeAll(dec)
			if cut == off {
				if err != io.EOF || len(got) != i {
					t.Errorf("cut at boundary %d: got %d messages, %v; want %d, io.EOF", cut, len(got), err, i)
				}
				continue
			}
			if !errors.Is(err, ErrTruncated) || len(got) != i {
				t.Errorf("cut at %d inside message %d: got %d messages, %v; want %d, ErrTruncated", cut, i, len(got), err, i)
			}
			if dec.Buffered() != cut-off {
				t.Errorf("cut at %d: Buffered() = %d; want %d", cut, dec.Buffered(), cut-off)
			}
			// The error stays.
			if err2 := dec.Next(&Msg{}); !errors.Is(err2, ErrTruncated) {
				t.Errorf("cut at %d: second Next: got %v; want ErrTruncated", cut, err2)
			}
		}
		off += len(msg)
	}
}

// errReadPast is what a Decoder gets if it reads beyond a header it must
// reject.
var errReadPast = errors.New("read past the header")

func TestDecoderOversizeConfig(t *testing.T) {
	tests := []struct {
		name string
		d    Dialect
		hdr  string
	}{
		{"v1 over default", dialectV1, "01 00 10 00 01"},
		{"v1 negative", dialectV1, "01 ff ff ff f0"},
		{"v1 over small cap", Dialect{Version: 1, MaxConfigSize: 1000}, "01 00 00 03 e9"},
		{"v2 over small cap", Dialect{Version: 2, MaxConfigSize: 1000}, "01 03 e9"},
	}
	for _, tt := range tests {
		r := io.MultiReader(bytes.NewReader(hx(tt.hdr)), iotest.ErrReader(errReadPast))
		dec := NewDecoder(iotest.OneByteReader(r), tt.d)
		err := dec.Next(&Msg{})
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: got %v; want ErrTooLarge", tt.name, err)
		}
		if len(dec.buf) != decoderBufSize {
			t.Errorf("%s: buffer is %d bytes; want %d (no growth)", tt.name, len(dec.buf), decoderBufSize)
		}
		if err := dec.Next(&Msg{}); !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: second Next: got %v; want ErrTooLarge again", tt.name, err)
		}
	}
}

func TestDecoderUnknownType(t *testing.T) {
	stream := AppendMethodEntry(nil, 1, 2, 3, 4)
	stream = append(stream, 0x63+1, 0, 0)
	dec := NewDecoder(bytes.NewReader(stream), dialectV1)
	var m Msg
	if err := dec.Next(&m); err != nil || m.Type != MsgMethodEntry {
		t.Fatalf("first: got %v, %v", m.Type, err)
	}
	for range 2 {
		var ute *UnknownTypeError
		if err := dec.Next(&m); !errors.As(err, &ute) || ute.Type != 0x64 {
			t.Errorf("got %v; want *UnknownTypeError{100}", err)
		}
	}
}

func TestDecoderSkipsInvalidUTF(t *testing.T) {
	stream := AppendError(nil, "ok")
	stream = append(stream, 0x63, 0x00, 0x01, 0xFF) // Error with a bad byte
	stream = AppendCommand(stream, MsgStop)
	dec := NewDecoder(iotest.OneByteReader(bytes.NewReader(stream)), dialectV1)
	var m Msg
	errs := []error{nil, ErrInvalidUTF, nil, io.EOF}
	types := []MsgType{MsgError, MsgError, MsgStop}
	for i, want := range errs {
		err := dec.Next(&m)
		if !errors.Is(err, want) || (want == nil && err != nil) {
			t.Fatalf("Next %d: got %v; want %v", i, err, want)
		}
		if i < len(types) && m.Type != types[i] {
			t.Errorf("Next %d: type %v; want %v", i, m.Type, types[i])
		}
	}
}

func TestDecoderReadError(t *testing.T) {
	boom := errors.New("boom")
	one := AppendMethodEntry(nil, 1, 2, 3, 4)
	// At a boundary and inside a message the reader's error is returned
	// as it is.
	for _, cut := range []int{len(one), len(one) + 3} {
		r := io.MultiReader(bytes.NewReader(append(one, one...)[:cut]), iotest.ErrReader(boom))
		dec := NewDecoder(r, dialectV1)
		got, err := decodeAll(dec)
		if err != boom || len(got) != 1 {
			t.Errorf("cut %d: got %d messages, %v; want 1, boom", cut, len(got), err)
		}
	}
	// A reader that never makes progress.
	dec := NewDecoder(readerFunc(func([]byte) (int, error) { return 0, nil }), dialectV1)
	if err := dec.Next(&Msg{}); err != io.ErrNoProgress {
		t.Errorf("zero reads: got %v; want io.ErrNoProgress", err)
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

func TestDecoderSetDialect(t *testing.T) {
	stream := AppendHello(nil, 4)
	stream = AppendMethodExitCodePulse(stream, 1, 2, 3, true, 4)
	stream = AppendMethodExit(stream, 1, 3, 3, 99, 4)
	dec := NewDecoder(bytes.NewReader(stream), Dialect{})
	var m Msg
	if err := dec.Next(&m); err != nil || m.Version != 4 {
		t.Fatalf("Hello: %v, %+v", err, m)
	}
	dec.SetDialect(Dialect{Version: m.Version, Flavor: FlavorCodePulse})
	if err := dec.Next(&m); err != nil || !m.ExceptionThrown || m.Seq != 2 {
		t.Fatalf("code pulse exit: %v, %+v", err, m)
	}
	if dec.Buffered() != MethodExitSize {
		t.Errorf("Buffered() = %d; want %d", dec.Buffered(), MethodExitSize)
	}
	dec.SetDialect(Dialect{Version: 4, Flavor: FlavorBytefrog})
	if err := dec.Next(&m); err != nil || m.Line != 99 || m.Seq != 3 {
		t.Fatalf("bytefrog exit: %v, %+v", err, m)
	}
}

// repeatReader hands out the same bytes forever.
type repeatReader struct {
	data []byte
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := copy(p[n:], r.data[r.off:])
		n += k
		r.off = (r.off + k) % len(r.data)
	}
	return n, nil
}

func TestDecoderFixedAllocs(t *testing.T) {
	for _, d := range []Dialect{dialectV1, dialectCP} {
		dec := NewDecoder(&repeatReader{data: fixedEvents(nil, d)}, d)
		var m Msg
		n := testing.AllocsPerRun(10000, func() {
			if err := dec.Next(&m); err != nil {
				panic(err)
			}
		})
		if n != 0 {
			t.Errorf("%v: %v allocations per Next; want 0", d.Flavor, n)
		}
	}
}

func TestDecoderVersionThenSetDialect(t *testing.T) {
	c := DefaultConfig()
	stream, err := AppendConfig(nil, Version2, &c)
	if err != nil {
		t.Fatal(err)
	}
	dec := NewDecoder(bytes.NewReader(stream), Dialect{})
	var m Msg
	if err := dec.Next(&m); !errors.Is(err, ErrVersion) {
		t.Fatalf("no version: got %v; want ErrVersion", err)
	}
	dec.SetDialect(Dialect{Version: Version2})
	if err := dec.Next(&m); err != nil || m.Type != MsgConfiguration || m.Config.HeartbeatInterval != c.HeartbeatInterval {
		t.Fatalf("after SetDialect: got %v, %+v", err, m)
	}
	if err := dec.Next(&m); err != io.EOF {
		t.Errorf("got %v; want io.EOF", err)
	}
}
