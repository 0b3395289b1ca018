package bytefrog

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// hx decodes hex with optional spaces; a bad literal is a broken test.
func hx(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

var dialectBF4 = Dialect{Version: Version4, Flavor: FlavorBytefrog}

// codecTests cover every message type with edge values, in both MethodExit
// flavours.
var codecTests = []struct {
	name string
	d    Dialect
	wire string
	msg  Msg
	enc  func(b []byte) []byte
}{
	{"Hello", dialectV1, "00 04", Msg{Type: MsgHello, Version: 4},
		func(b []byte) []byte { return AppendHello(b, 4) }},
	{"ProjectHello", dialectCP, "10 04 ff ff ff ff", Msg{Type: MsgProjectHello, Version: 4, ProjectID: -1},
		func(b []byte) []byte { return AppendProjectHello(b, 4, -1) }},
	{"Start", dialectV1, "02", Msg{Type: MsgStart}, func(b []byte) []byte { return AppendCommand(b, MsgStart) }},
	{"Stop", dialectV1, "03", Msg{Type: MsgStop}, func(b []byte) []byte { return AppendCommand(b, MsgStop) }},
	{"Pause", dialectV1, "04", Msg{Type: MsgPause}, func(b []byte) []byte { return AppendCommand(b, MsgPause) }},
	{"Unpause", dialectV1, "05", Msg{Type: MsgUnpause}, func(b []byte) []byte { return AppendCommand(b, MsgUnpause) }},
	{"Suspend", dialectV1, "06", Msg{Type: MsgSuspend}, func(b []byte) []byte { return AppendCommand(b, MsgSuspend) }},
	{"Unsuspend", dialectV1, "07", Msg{Type: MsgUnsuspend}, func(b []byte) []byte { return AppendCommand(b, MsgUnsuspend) }},
	{"DataHelloReply", dialectV1, "1f", Msg{Type: MsgDataHelloReply},
		func(b []byte) []byte { return AppendCommand(b, MsgDataHelloReply) }},
	{"Heartbeat", dialectV1, "08 58 ff ff", Msg{Type: MsgHeartbeat, Mode: ModeShutdown, Buffers: 65535},
		func(b []byte) []byte { return AppendHeartbeat(b, ModeShutdown, 65535) }},
	{"Heartbeat unknown mode", dialectV1, "08 5a 00 01", Msg{Type: MsgHeartbeat, Mode: 'Z', Buffers: 1},
		func(b []byte) []byte { return AppendHeartbeat(b, 'Z', 1) }},
	{"DataBreak", dialectV1, "09 80 00 00 00", Msg{Type: MsgDataBreak, Seq: -1 << 31},
		func(b []byte) []byte { return AppendDataBreak(b, -1<<31) }},
	{"MapThreadName", dialectV1, "0a ff fe ff ff ff fe 00 06 6d 61 69 6e c0 80",
		Msg{Type: MsgMapThreadName, ThreadID: 0xfffe, RelTime: -2, Text: []byte("main\xc0\x80")},
		func(b []byte) []byte { return AppendMapThreadName(b, 0xfffe, -2, "main\x00") }},
	{"MapThreadName empty", dialectV1, "0a 00 00 00 00 00 00 00 00",
		Msg{Type: MsgMapThreadName, Text: []byte{}},
		func(b []byte) []byte { return AppendMapThreadName(b, 0, 0, "") }},
	{"MapMethodSignature", dialectV1, "0b ff ff ff ff 00 02 c3 a9",
		Msg{Type: MsgMapMethodSignature, MethodID: -1, Text: []byte("é")},
		func(b []byte) []byte { return AppendMapMethodSignature(b, -1, "é") }},
	{"MapException", dialectV1, "0c 00 00 00 07 00 06 ed a0 bd ed b8 80",
		Msg{Type: MsgMapException, ExceptionID: 7, Text: hx("ed a0 bd ed b8 80")},
		func(b []byte) []byte { return AppendMapException(b, 7, "😀") }},
	{"MapSourceLocation", dialectCP, "0d 01 02 03 04 ff ff ff ff 00 00 00 01 7f ff ff ff 00 05 80 00",
		Msg{Type: MsgMapSourceLocation, SourceLocationID: 0x01020304, MethodID: -1, StartLine: 1, EndLine: 1<<31 - 1, StartChar: 5, EndChar: -1 << 15},
		func(b []byte) []byte { return AppendMapSourceLocation(b, 0x01020304, -1, 1, 1<<31-1, 5, -1<<15) }},
	{"MethodVisit", dialectCP, "0e 00 00 00 01 00 00 00 02 00 00 00 03 00 00 00 04 ab cd",
		Msg{Type: MsgMethodVisit, RelTime: 1, Seq: 2, MethodID: 3, SourceLocationID: 4, ThreadID: 0xabcd},
		func(b []byte) []byte { return AppendMethodVisit(b, 1, 2, 3, 4, 0xabcd) }},
	{"SourceLocationCount", dialectCP, "0f ff ff ff fb 00 00 00 00",
		Msg{Type: MsgSourceLocationCount, MethodID: -5, Count: 0},
		func(b []byte) []byte { return AppendSourceLocationCount(b, -5, 0) }},
	{"MethodEntry", dialectV1, "14 ff ff ff fe 7f ff ff ff 01 02 03 04 ff fe",
		Msg{Type: MsgMethodEntry, RelTime: -2, Seq: 1<<31 - 1, MethodID: 0x01020304, ThreadID: 0xfffe},
		func(b []byte) []byte { return AppendMethodEntry(b, -2, 1<<31-1, 0x01020304, 0xfffe) }},
	{"MethodExit bytefrog", dialectBF4, "15 00 00 00 01 00 00 00 02 00 00 00 03 ff ff 00 01",
		Msg{Type: MsgMethodExit, RelTime: 1, Seq: 2, MethodID: 3, Line: NoLine, ThreadID: 1},
		func(b []byte) []byte { return AppendMethodExit(b, 1, 2, 3, NoLine, 1) }},
	{"MethodExit codepulse", dialectV2, "15 00 00 00 01 00 00 00 02 00 00 00 03 00 00 02",
		Msg{Type: MsgMethodExit, RelTime: 1, Seq: 2, MethodID: 3, ExceptionThrown: false, ThreadID: 2},
		func(b []byte) []byte { return AppendMethodExitCodePulse(b, 1, 2, 3, false, 2) }},
	{"MethodExit codepulse thrown", dialectCP, "15 00 00 00 01 00 00 00 02 00 00 00 03 01 ff ff",
		Msg{Type: MsgMethodExit, RelTime: 1, Seq: 2, MethodID: 3, ExceptionThrown: true, ThreadID: 0xffff},
		func(b []byte) []byte { return AppendMethodExitCodePulse(b, 1, 2, 3, true, 0xffff) }},
	{"Exception", dialectV1, "16 00 00 00 01 00 00 00 02 00 00 00 03 ff ff ff ff 00 00 ff ff",
		Msg{Type: MsgException, RelTime: 1, Seq: 2, MethodID: 3, ExceptionID: -1, Line: 0, ThreadID: 0xffff},
		func(b []byte) []byte { return AppendException(b, 1, 2, 3, -1, 0, 0xffff) }},
	{"ExceptionBubble", dialectV1, "17 00 00 00 01 00 00 00 02 00 00 00 03 00 00 00 09 00 07",
		Msg{Type: MsgExceptionBubble, RelTime: 1, Seq: 2, MethodID: 3, ExceptionID: 9, ThreadID: 7},
		func(b []byte) []byte { return AppendExceptionBubble(b, 1, 2, 3, 9, 7) }},
	{"DataHello", dialectV1, "1e ff", Msg{Type: MsgDataHello, RunID: 255},
		func(b []byte) []byte { return AppendDataHello(b, 255) }},
	{"ClassTransformed", dialectV1, "28 00 0b 63 6f 6d 2f 66 6f 6f 2f 42 61 72",
		Msg{Type: MsgClassTransformed, Text: []byte("com/foo/Bar")},
		func(b []byte) []byte { return AppendClassMsg(b, MsgClassTransformed, "com/foo/Bar") }},
	{"ClassIgnored empty", dialectV1, "29 00 00", Msg{Type: MsgClassIgnored, Text: []byte{}},
		func(b []byte) []byte { return AppendClassMsg(b, MsgClassIgnored, "") }},
	{"ClassTransformFailed", dialectV1, "2a 00 01 78", Msg{Type: MsgClassTransformFailed, Text: []byte("x")},
		func(b []byte) []byte { return AppendClassMsg(b, MsgClassTransformFailed, "x") }},
	{"Marker", dialectV1, "32 00 00 00 03 00 00 00 04 00 00 00 03 76 c0 80",
		Msg{Type: MsgMarker, RelTime: 3, Seq: 4, Text: []byte{}, Value: []byte("v\xc0\x80")},
		func(b []byte) []byte { return AppendMarker(b, 3, 4, "", "v\x00") }},
	{"Marker modified UTF-8", dialectV1, "32 00 00 00 03 00 00 00 04 00 00 00 03 76 c0 80",
		Msg{Type: MsgMarker, RelTime: 3, Seq: 4, Text: []byte{}, Value: []byte("v\xc0\x80")},
		func(b []byte) []byte { return AppendMarkerMUTF8(b, 3, 4, nil, []byte("v\xc0\x80")) }},
	{"Error", dialectV1, "63 00 03 e2 82 ac", Msg{Type: MsgError, Text: []byte("€")},
		func(b []byte) []byte { return AppendError(b, "€") }},
}

func TestCodecTable(t *testing.T) {
	for _, tt := range codecTests {
		t.Run(tt.name, func(t *testing.T) {
			want := hx(tt.wire)
			if got := tt.enc([]byte("pre")); !bytes.Equal(got, append([]byte("pre"), want...)) {
				t.Errorf("encode: got % x; want pre + % x", got, want)
			}
			if got, err := AppendMsg(nil, tt.d, &tt.msg); err != nil || !bytes.Equal(got, want) {
				t.Errorf("AppendMsg: got % x, %v; want % x", got, err, want)
			}
			var m Msg
			n, err := tt.d.Parse(&m, want)
			if err != nil || n != len(want) {
				t.Fatalf("Parse: got n=%d, %v; want n=%d", n, err, len(want))
			}
			if !sameMsg(&m, &tt.msg) || !bytes.Equal(m.Raw, want) {
				t.Errorf("Parse: got %+v; want %+v", m, tt.msg)
			}
			for i := range len(want) {
				if n, err := tt.d.Parse(&m, want[:i]); n != 0 || err != ErrShort {
					t.Errorf("Parse of %d of %d bytes: got n=%d, %v; want 0, ErrShort", i, len(want), n, err)
				}
			}
		})
	}
}

// TestParseLeavesOtherFields checks that Parse sets only the fields of the
// decoded type (and Type, Raw).
func TestParseLeavesOtherFields(t *testing.T) {
	m := Msg{Count: 77, Line: 5, Text: []byte("old")}
	if _, err := dialectV1.Parse(&m, AppendMethodEntry(nil, 1, 2, 3, 4)); err != nil {
		t.Fatal(err)
	}
	if m.Count != 77 || m.Line != 5 || string(m.Text) != "old" || m.Type != MsgMethodEntry || m.ThreadID != 4 {
		t.Errorf("got %+v; want Count 77, Line 5, Text old kept", m)
	}
}

func TestMethodExitFlavourByte(t *testing.T) {
	// Any non-zero flag is true; re-encoding writes 01.
	wire := hx("15 00 00 00 01 00 00 00 02 00 00 00 03 02 00 05")
	var m Msg
	if n, err := dialectCP.Parse(&m, wire); err != nil || n != MethodExitCodePulseSize || !m.ExceptionThrown || m.ThreadID != 5 {
		t.Fatalf("got n=%d, %v, %+v; want thrown, tid 5", n, err, m)
	}
	got, _ := AppendMsg(nil, dialectCP, &m)
	if want := hx("15 00 00 00 01 00 00 00 02 00 00 00 03 01 00 05"); !bytes.Equal(got, want) {
		t.Errorf("re-encoded: got % x; want % x", got, want)
	}
	// The same bytes in the Bytefrog flavour need one more byte.
	if n, err := dialectV1.Parse(&m, wire); n != 0 || err != ErrShort {
		t.Errorf("bytefrog flavour: got n=%d, %v; want ErrShort", n, err)
	}
	// An unknown Flavor value reads the Bytefrog layout.
	if n, err := (Dialect{Version: 1, Flavor: 9}).Parse(&m, append(wire, 0)); err != nil || n != MethodExitSize {
		t.Errorf("flavor 9: got n=%d, %v; want %d", n, err, MethodExitSize)
	}
}

func TestParseUnknownTypes(t *testing.T) {
	known := 0
	for i := range 256 {
		var m Msg
		n, err := dialectCP.Parse(&m, []byte{byte(i), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
		if MsgType(i).String() != "UNKNOWN_MSG_"+strconv.Itoa(i) {
			known++
			if errors.Is(err, ErrUnknownType) {
				t.Errorf("type %d: got %v", i, err)
			}
			continue
		}
		var ute *UnknownTypeError
		if n != 0 || !errors.As(err, &ute) || ute.Type != uint8(i) || !errors.Is(err, ErrUnknownType) {
			t.Errorf("type %d: got n=%d, %v; want 0, *UnknownTypeError{%d}", i, n, err, i)
		}
		if _, err := AppendMsg(nil, dialectCP, &Msg{Type: MsgType(i)}); !errors.Is(err, ErrUnknownType) {
			t.Errorf("AppendMsg type %d: got %v; want ErrUnknownType", i, err)
		}
	}
	if known != 28 {
		t.Errorf("%d known types; want 28", known)
	}
	if n, err := dialectV1.Parse(&Msg{}, nil); n != 0 || err != ErrShort {
		t.Errorf("empty input: got %d, %v; want 0, ErrShort", n, err)
	}
}

func TestParseInvalidUTF(t *testing.T) {
	bad := "ok\xF0\x9F\x98\x80" // a 4-byte form
	tests := []struct {
		name string
		wire []byte
		typ  MsgType
	}{
		{"MapThreadName", append(hx("0a 00 01 00 00 00 02 00 06"), bad...), MsgMapThreadName},
		{"MapMethodSignature", append(hx("0b 00 00 00 01 00 06"), bad...), MsgMapMethodSignature},
		{"MapException", append(hx("0c 00 00 00 01 00 06"), bad...), MsgMapException},
		{"ClassTransformed", append(hx("28 00 06"), bad...), MsgClassTransformed},
		{"ClassIgnored", append(hx("29 00 01"), 0x00), MsgClassIgnored},
		{"ClassTransformFailed", append(hx("2a 00 01"), 0x80), MsgClassTransformFailed},
		{"Error", append(hx("63 00 02"), 0xC3, 0x28), MsgError},
		{"Marker key", append(append(hx("32 00 00 00 01 00 00 00 02 00 06"), bad...), 0, 1, 'v'), MsgMarker},
		{"Marker value", append(hx("32 00 00 00 01 00 00 00 02 00 01 6b 00 06"), bad...), MsgMarker},
		{"Configuration JSON", append(hx("01 00 06"), bad...), MsgConfiguration},
	}
	for _, tt := range tests {
		var m Msg
		n, err := dialectCP.Parse(&m, append(tt.wire, 0x02)) // a Start follows
		if !errors.Is(err, ErrInvalidUTF) || n != len(tt.wire) || m.Type != tt.typ || !bytes.Equal(m.Raw, tt.wire) {
			t.Errorf("%s: got n=%d, %v, type %v; want n=%d, ErrInvalidUTF, %v", tt.name, n, err, m.Type, len(tt.wire), tt.typ)
		}
	}
}

func TestParseConfigLimits(t *testing.T) {
	small := Dialect{Version: Version1, MaxConfigSize: 100}
	tests := []struct {
		name  string
		d     Dialect
		wire  string
		n     int
		want  error
		short bool
	}{
		{"v1 over the cap, header only", small, "01 00 00 00 65", 0, ErrTooLarge, false},
		{"v1 at the cap is awaited", small, "01 00 00 00 64", 0, ErrShort, true},
		{"v1 over the default cap", dialectV1, "01 00 10 00 01", 0, ErrTooLarge, false},
		{"v1 at the default cap is awaited", dialectV1, "01 00 10 00 00", 0, ErrShort, true},
		{"v1 negative length", dialectV1, "01 80 00 00 00", 0, ErrTooLarge, false},
		{"v1 length -1", dialectV1, "01 ff ff ff ff", 0, ErrTooLarge, false},
		{"v1 garbage payload", dialectV1, "01 00 00 00 02 ac ed", 7, ErrBadConfig, false},
		{"v1 empty payload", dialectV1, "01 00 00 00 00", 5, ErrBadConfig, false},
		{"v2 over a small cap", Dialect{Version: 2, MaxConfigSize: 10}, "01 00 0b", 0, ErrTooLarge, false},
		{"v2 bad JSON", dialectV2, "01 00 01 7b", 4, ErrBadConfig, false},
		{"version 0", Dialect{}, "01 00 00 00 00", 0, ErrVersion, false},
		{"version 5", Dialect{Version: 5}, "01 00 00", 0, ErrVersion, false},
	}
	for _, tt := range tests {
		var m Msg
		n, err := tt.d.Parse(&m, hx(tt.wire))
		if n != tt.n || !errors.Is(err, tt.want) || (tt.short && err != ErrShort) {
			t.Errorf("%s: got n=%d, %v; want n=%d, %v", tt.name, n, err, tt.n, tt.want)
		}
	}
}

func TestAppendPanicsOnWrongType(t *testing.T) {
	for _, f := range []func(){
		func() { AppendCommand(nil, MsgHello) },
		func() { AppendCommand(nil, MsgMethodEntry) },
		func() { AppendClassMsg(nil, MsgError, "x") },
		func() { AppendClassMsg(nil, MsgMarker, "x") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic for a type that is not a command or class message")
				}
			}()
			f()
		}()
	}
}

func TestAppendConfigErrors(t *testing.T) {
	c := DefaultConfig()
	b := []byte("keep")
	for _, v := range []uint8{0, MaxVersion + 1, 255} {
		got, err := AppendConfig(b, v, &c)
		if !errors.Is(err, ErrVersion) || string(got) != "keep" {
			t.Errorf("version %d: got %q, %v; want unchanged, ErrVersion", v, got, err)
		}
	}
	if _, err := AppendMsg(nil, Dialect{}, &Msg{Type: MsgConfiguration}); !errors.Is(err, ErrVersion) {
		t.Errorf("AppendMsg version 0: got %v; want ErrVersion", err)
	}
}

func TestAppendMsgTruncatesText(t *testing.T) {
	long := bytes.Repeat([]byte("ab"), MaxStringLen)
	m := Msg{Type: MsgMarker, Text: long, Value: []byte("v")}
	got, err := AppendMsg(nil, dialectV1, &m)
	if err != nil || len(got) != MarkerMinSize+MaxStringLen+1 {
		t.Fatalf("got %d bytes, %v; want %d", len(got), err, MarkerMinSize+MaxStringLen+1)
	}
	var back Msg
	if _, err := dialectV1.Parse(&back, got); err != nil || !bytes.Equal(back.Text, long[:MaxStringLen]) || string(back.Value) != "v" {
		t.Errorf("Parse: %v", err)
	}
}

// fixedEvents appends one of each fixed-size event.
func fixedEvents(b []byte, d Dialect) []byte {
	b = AppendMethodEntry(b, 1, 2, 3, 4)
	if d.Flavor == FlavorCodePulse {
		b = AppendMethodExitCodePulse(b, 1, 3, 3, true, 4)
	} else {
		b = AppendMethodExit(b, 1, 3, 3, 10, 4)
	}
	b = AppendException(b, 1, 4, 3, 5, 10, 4)
	b = AppendExceptionBubble(b, 1, 5, 3, 5, 4)
	b = AppendMethodVisit(b, 1, 6, 3, 7, 4)
	b = AppendMapSourceLocation(b, 7, 3, 10, 11, -1, -1)
	b = AppendSourceLocationCount(b, 3, 1)
	b = AppendHeartbeat(b, ModeTracing, 3)
	b = AppendDataBreak(b, 8)
	b = AppendCommand(b, MsgStart)
	b = AppendHello(b, 1)
	b = AppendProjectHello(b, 4, 1)
	return AppendDataHello(b, 1)
}

func TestAppendFixedAllocs(t *testing.T) {
	buf := make([]byte, 0, 512)
	for _, d := range []Dialect{dialectV1, dialectCP} {
		if n := testing.AllocsPerRun(100, func() { buf = fixedEvents(buf[:0], d) }); n != 0 {
			t.Errorf("%v: %v allocations; want 0", d.Flavor, n)
		}
	}
	m := Msg{Type: MsgMethodEntry, RelTime: 1}
	if n := testing.AllocsPerRun(100, func() { buf, _ = AppendMsg(buf[:0], dialectV1, &m) }); n != 0 {
		t.Errorf("AppendMsg: %v allocations; want 0", n)
	}
}

func TestParseFixedAllocs(t *testing.T) {
	for _, d := range []Dialect{dialectV1, dialectCP} {
		stream := fixedEvents(nil, d)
		var m Msg
		n := testing.AllocsPerRun(100, func() {
			for b := stream; len(b) > 0; {
				k, err := d.Parse(&m, b)
				if err != nil {
					panic(err)
				}
				b = b[k:]
			}
		})
		if n != 0 {
			t.Errorf("%v: %v allocations; want 0", d.Flavor, n)
		}
	}
}

func TestGrow(t *testing.T) {
	var b []byte
	for i := range 100 {
		b = AppendMethodEntry(b, int32(i), int32(i), 0, 0)
	}
	if len(b) != 100*MethodEntrySize {
		t.Fatalf("len %d; want %d", len(b), 100*MethodEntrySize)
	}
	var m Msg
	for i := range 100 {
		if _, err := dialectV1.Parse(&m, b[i*MethodEntrySize:]); err != nil || m.Seq != int32(i) {
			t.Fatalf("event %d: seq %d, %v", i, m.Seq, err)
		}
	}
}

// TestAppendMarkerMUTF8Lengths: a marker of strings up to MaxStringLen
// bytes goes out whole, a longer one cut as AppendUTFBytes cuts it, at
// the end of a buffer with or without room.
func TestAppendMarkerMUTF8Lengths(t *testing.T) {
	for _, n := range []int{0, 1, 13, 255, 256, MaxStringLen - 1, MaxStringLen, MaxStringLen + 1, MaxStringLen + 7} {
		key := bytes.Repeat([]byte("k"), n%300)
		value := bytes.Repeat([]byte("v\xc0\x80\xe2\x82\xac"), n/6+1)[:n]
		for _, pre := range [][]byte{nil, make([]byte, 3, 3+1<<17)} {
			want := append([]byte(nil), pre...)
			want = append(want, byte(MsgMarker), 0, 0, 0, 9, 0, 0, 0, 10)
			want = AppendUTFBytes(want, key)
			want = AppendUTFBytes(want, value)
			if got := AppendMarkerMUTF8(append([]byte(nil), pre...), 9, 10, key, value); !bytes.Equal(got, want) {
				t.Fatalf("%d-byte value after %d bytes: %d bytes; want %d", n, len(pre), len(got), len(want))
			}
			if got := AppendMarkerMUTF8(pre, 9, 10, key, value); !bytes.Equal(got, want) {
				t.Fatalf("%d-byte value after %d bytes, room for it: %d bytes; want %d", n, len(pre), len(got), len(want))
			}
		}
	}
}
