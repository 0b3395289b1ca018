package bytefrog

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// msgVectorsFile holds byte-exact messages produced by Java's
// DataOutputStream and ObjectOutputStream (a copy of the reference file).
const msgVectorsFile = "testdata/bytefrog-vectors.txt"

// msgVector is one "###" entry of msgVectorsFile.
type msgVector struct {
	title string // heading without the "(N bytes)" suffix
	data  []byte
}

var msgVectorHeading = regexp.MustCompile(`^### (.*) \((\d+) bytes\)$`)

// loadMsgVectors parses msgVectorsFile, checking each entry's declared size.
func loadMsgVectors(tb testing.TB) []msgVector {
	tb.Helper()
	f, err := os.Open(msgVectorsFile)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var (
		vs    []msgVector
		sizes []int
	)
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(text, "###"):
			h := msgVectorHeading.FindStringSubmatch(text)
			if h == nil {
				tb.Fatalf("%s:%d: bad heading %q", msgVectorsFile, line, text)
			}
			size, _ := strconv.Atoi(h[2])
			vs = append(vs, msgVector{title: h[1]})
			sizes = append(sizes, size)
		case text == "" || strings.HasPrefix(text, "#"):
		default:
			if len(vs) == 0 {
				tb.Fatalf("%s:%d: bytes before the first heading", msgVectorsFile, line)
			}
			raw, err := hex.DecodeString(strings.ReplaceAll(text, " ", ""))
			if err != nil {
				tb.Fatalf("%s:%d: %v", msgVectorsFile, line, err)
			}
			vs[len(vs)-1].data = append(vs[len(vs)-1].data, raw...)
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	for i, v := range vs {
		if len(v.data) != sizes[i] {
			tb.Fatalf("vector %q: %d bytes; heading says %d", v.title, len(v.data), sizes[i])
		}
	}
	if len(vs) == 0 {
		tb.Fatal("no vectors")
	}
	return vs
}

// vectorConfig is the configuration in the vectors file.
func vectorConfig() Config {
	return Config{
		RunID:              0,
		HeartbeatInterval:  1000,
		Exclusions:         []string{".*"},
		Inclusions:         []string{"^com/example/[^/]+$"},
		BufferMemoryBudget: 25600,
		QueueRetryCount:    5,
		NumDataSenders:     1,
	}
}

// Dialects used by the tests.
var (
	dialectV1 = Dialect{Version: Version1, Flavor: FlavorBytefrog}
	dialectV2 = Dialect{Version: Version2, Flavor: FlavorCodePulse}
	dialectCP = Dialect{Version: Version4, Flavor: FlavorCodePulse}
)

// msgCase is a message with its expected decoding and its encoder.
type msgCase struct {
	d   Dialect
	msg Msg // as decoded; Raw is not compared
	enc func(b []byte) ([]byte, error)
}

func ok(f func(b []byte) []byte) func([]byte) ([]byte, error) {
	return func(b []byte) ([]byte, error) { return f(b), nil }
}

// goldenMsgCases maps each message vector's title to what it must decode to
// and how to encode it.
func goldenMsgCases() map[string]msgCase {
	cfgV1 := vectorConfig()
	cfgV1.ClassName = JavaClassBytefrog
	cfgJSON := vectorConfig()
	cmd := func(t MsgType) msgCase {
		return msgCase{dialectV1, Msg{Type: t}, ok(func(b []byte) []byte { return AppendCommand(b, t) })}
	}
	return map[string]msgCase{
		"Hello v1 [0][1]": {dialectV1, Msg{Type: MsgHello, Version: 1},
			ok(func(b []byte) []byte { return AppendHello(b, 1) })},
		"Configuration v1 = [1][int len][java-serialized bytes]": {dialectV1,
			Msg{Type: MsgConfiguration, Config: cfgV1},
			func(b []byte) ([]byte, error) { c := vectorConfig(); return AppendConfig(b, Version1, &c) }},
		`Configuration v2+ = [1][writeUTF(json)] json={"bufferMemoryBudget":25600,"exclusions":[".*"],"heartbeatInterval":1000,"inclusions":["^com/example/[^/]+$"],"numDataSenders":1,"queueRetryCount":5,"runId":0}`: {
			dialectV2, Msg{Type: MsgConfiguration, Config: cfgJSON},
			func(b []byte) ([]byte, error) { c := vectorConfig(); return AppendConfig(b, Version2, &c) }},
		"Start [2]":     cmd(MsgStart),
		"Stop [3]":      cmd(MsgStop),
		"Pause [4]":     cmd(MsgPause),
		"Unpause [5]":   cmd(MsgUnpause),
		"Suspend [6]":   cmd(MsgSuspend),
		"Unsuspend [7]": cmd(MsgUnsuspend),
		"Heartbeat Tracing sendQueue=532": {dialectV1, Msg{Type: MsgHeartbeat, Mode: ModeTracing, Buffers: 532},
			ok(func(b []byte) []byte { return AppendHeartbeat(b, ModeTracing, 532) })},
		"Heartbeat Initializing sendQueue=0": {dialectV1, Msg{Type: MsgHeartbeat, Mode: ModeInitializing},
			ok(func(b []byte) []byte { return AppendHeartbeat(b, ModeInitializing, 0) })},
		"DataBreak seq=1234": {dialectV1, Msg{Type: MsgDataBreak, Seq: 1234},
			ok(func(b []byte) []byte { return AppendDataBreak(b, 1234) })},
		"MapThreadName tid=23 relTime=837 name='test thread'": {dialectV1,
			Msg{Type: MsgMapThreadName, ThreadID: 23, RelTime: 837, Text: []byte("test thread")},
			ok(func(b []byte) []byte { return AppendMapThreadName(b, 23, 837, "test thread") })},
		"MapMethodSignature id=1 sig='com/example/Foo.bar;1;(Ljava/lang/String;)V'": {dialectV1,
			Msg{Type: MsgMapMethodSignature, MethodID: 1, Text: []byte("com/example/Foo.bar;1;(Ljava/lang/String;)V")},
			ok(func(b []byte) []byte {
				return AppendMapMethodSignature(b, 1, "com/example/Foo.bar;1;(Ljava/lang/String;)V")
			})},
		"MapException id=1 'java.lang.IllegalStateException'": {dialectV1,
			Msg{Type: MsgMapException, ExceptionID: 1, Text: []byte("java.lang.IllegalStateException")},
			ok(func(b []byte) []byte { return AppendMapException(b, 1, "java.lang.IllegalStateException") })},
		"MethodEntry relTime=376433 seq=372 sig=785932 tid=13": {dialectV1,
			Msg{Type: MsgMethodEntry, RelTime: 376433, Seq: 372, MethodID: 785932, ThreadID: 13},
			ok(func(b []byte) []byte { return AppendMethodEntry(b, 376433, 372, 785932, 13) })},
		"MethodExit (bytefrog v1) relTime=376433 seq=372 sig=785932 line=34 tid=13": {dialectV1,
			Msg{Type: MsgMethodExit, RelTime: 376433, Seq: 372, MethodID: 785932, Line: 34, ThreadID: 13},
			ok(func(b []byte) []byte { return AppendMethodExit(b, 376433, 372, 785932, 34, 13) })},
		"MethodExit (Code Pulse, all versions) relTime=376433 seq=372 sig=785932 exThrown=true tid=13": {
			Dialect{Version: Version1, Flavor: FlavorCodePulse},
			Msg{Type: MsgMethodExit, RelTime: 376433, Seq: 372, MethodID: 785932, ExceptionThrown: true, ThreadID: 13},
			ok(func(b []byte) []byte { return AppendMethodExitCodePulse(b, 376433, 372, 785932, true, 13) })},
		"Exception relTime=376433 seq=372 sig=785932 exc=356 line=34 tid=13": {dialectV1,
			Msg{Type: MsgException, RelTime: 376433, Seq: 372, MethodID: 785932, ExceptionID: 356, Line: 34, ThreadID: 13},
			ok(func(b []byte) []byte { return AppendException(b, 376433, 372, 785932, 356, 34, 13) })},
		"ExceptionBubble relTime=376433 seq=372 sig=785932 exc=356 tid=13": {dialectV1,
			Msg{Type: MsgExceptionBubble, RelTime: 376433, Seq: 372, MethodID: 785932, ExceptionID: 356, ThreadID: 13},
			ok(func(b []byte) []byte { return AppendExceptionBubble(b, 376433, 372, 785932, 356, 13) })},
		"DataHello runId=5": {dialectV1, Msg{Type: MsgDataHello, RunID: 5},
			ok(func(b []byte) []byte { return AppendDataHello(b, 5) })},
		"DataHelloReply": cmd(MsgDataHelloReply),
		"ClassTransformed 'Foo'": {dialectV1, Msg{Type: MsgClassTransformed, Text: []byte("Foo")},
			ok(func(b []byte) []byte { return AppendClassMsg(b, MsgClassTransformed, "Foo") })},
		"ClassIgnored 'Bar'": {dialectV1, Msg{Type: MsgClassIgnored, Text: []byte("Bar")},
			ok(func(b []byte) []byte { return AppendClassMsg(b, MsgClassIgnored, "Bar") })},
		"ClassTransformFailed 'Foo'": {dialectV1, Msg{Type: MsgClassTransformFailed, Text: []byte("Foo")},
			ok(func(b []byte) []byte { return AppendClassMsg(b, MsgClassTransformFailed, "Foo") })},
		"Marker relTime=10 seq=7 key='k' value='v'": {dialectV1,
			Msg{Type: MsgMarker, RelTime: 10, Seq: 7, Text: []byte("k"), Value: []byte("v")},
			ok(func(b []byte) []byte { return AppendMarker(b, 10, 7, "k", "v") })},
		"Error 'Invalid Protocol Version'": {dialectV1, Msg{Type: MsgError, Text: []byte("Invalid Protocol Version")},
			ok(func(b []byte) []byte { return AppendError(b, "Invalid Protocol Version") })},
		"MapSourceLocation (v3+) slId=0 sig=1 start=10 end=10 sc=-1 ec=-1": {dialectCP,
			Msg{Type: MsgMapSourceLocation, SourceLocationID: 0, MethodID: 1, StartLine: 10, EndLine: 10, StartChar: -1, EndChar: -1},
			ok(func(b []byte) []byte { return AppendMapSourceLocation(b, 0, 1, 10, 10, -1, -1) })},
		"MethodVisit (v3+) relTime=5 seq=3 sig=1 slId=0 tid=0": {dialectCP,
			Msg{Type: MsgMethodVisit, RelTime: 5, Seq: 3, MethodID: 1, SourceLocationID: 0, ThreadID: 0},
			ok(func(b []byte) []byte { return AppendMethodVisit(b, 5, 3, 1, 0, 0) })},
		"SourceLocationCount (v3+) sig=1 count=4": {dialectCP, Msg{Type: MsgSourceLocationCount, MethodID: 1, Count: 4},
			ok(func(b []byte) []byte { return AppendSourceLocationCount(b, 1, 4) })},
		"ProjectHello (v4) version=4 projectId=42": {dialectCP, Msg{Type: MsgProjectHello, Version: 4, ProjectID: 42},
			ok(func(b []byte) []byte { return AppendProjectHello(b, 4, 42) })},
	}
}

// Titles of the two vectors that are not messages.
const (
	vectorJavaPayload = "java-serialized RuntimeAgentConfigurationV1(runId=0,hb=1000,exc=[.*],inc=[^com/example/[^/]+$],budget=25600,retry=5,senders=1)"
	vectorMUTF        = `modified UTF-8 sample: writeUTF("a\u0000\u00e9\ud83d\ude00")`
)

// sameMsg compares two decoded messages, ignoring Raw.
func sameMsg(a, b *Msg) bool {
	x, y := *a, *b
	x.Raw, y.Raw = nil, nil
	return reflect.DeepEqual(x, y)
}

// TestGoldenVectors checks every vector both ways: the encoder produces
// exactly its bytes, and the decoder turns its bytes into exactly the
// expected message.
func TestGoldenVectors(t *testing.T) {
	cases := goldenMsgCases()
	seen := map[string]bool{}
	for _, v := range loadMsgVectors(t) {
		seen[v.title] = true
		t.Run(v.title, func(t *testing.T) {
			switch v.title {
			case vectorJavaPayload:
				checkJavaPayloadVector(t, v.data)
				return
			case vectorMUTF:
				checkMUTFVector(t, v.data)
				return
			}
			c, found := cases[v.title]
			if !found {
				t.Fatalf("no expectation for vector %q", v.title)
			}
			prefix := []byte{0xEE} // encoders must append, not overwrite
			got, err := c.enc(prefix)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			if !bytes.Equal(got[1:], v.data) || got[0] != 0xEE {
				t.Errorf("encode: got % x; want % x", got[1:], v.data)
			}
			got, err = AppendMsg(nil, c.d, &c.msg)
			if err != nil || !bytes.Equal(got, v.data) {
				t.Errorf("AppendMsg: got % x, %v; want % x", got, err, v.data)
			}

			var m Msg
			n, err := c.d.Parse(&m, v.data)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if n != len(v.data) || !bytes.Equal(m.Raw, v.data) {
				t.Errorf("Parse: got n=%d, Raw % x; want n=%d", n, m.Raw, len(v.data))
			}
			if !sameMsg(&m, &c.msg) {
				t.Errorf("Parse: got %+v; want %+v", m, c.msg)
			}
			// Followed by more bytes, the message still ends where it ends.
			n, err = c.d.Parse(&m, append(append([]byte{}, v.data...), 0x02, 0xFF))
			if err != nil || n != len(v.data) {
				t.Errorf("Parse with trailing bytes: got n=%d, %v; want n=%d", n, err, len(v.data))
			}
		})
	}
	for title := range cases {
		if !seen[title] {
			t.Errorf("expectation %q matches no vector in %s", title, msgVectorsFile)
		}
	}
}

// checkJavaPayloadVector checks the bare v1 payload against the
// configuration payload codec.
func checkJavaPayloadVector(t *testing.T, data []byte) {
	t.Helper()
	c := vectorConfig()
	if got := AppendJavaConfig(nil, &c); !bytes.Equal(got, data) {
		t.Errorf("AppendJavaConfig: got % x; want % x", got, data)
	}
	got, err := ParseJavaConfig(data)
	want := vectorConfig()
	want.ClassName = JavaClassBytefrog
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseJavaConfig: got %+v, %v; want %+v", got, err, want)
	}
}

// checkMUTFVector checks the writeUTF sample.
func checkMUTFVector(t *testing.T, data []byte) {
	t.Helper()
	const s = "a\x00é😀"
	if got := AppendUTF(nil, s); !bytes.Equal(got, data) {
		t.Errorf("AppendUTF(%q): got % x; want % x", s, got, data)
	}
	if got := AppendUTFBytes(nil, data[u16Size:]); !bytes.Equal(got, data) {
		t.Errorf("AppendUTFBytes: got % x; want % x", got, data)
	}
	if err := ValidUTF(data[u16Size:]); err != nil {
		t.Errorf("ValidUTF: got %v; want nil", err)
	}
	if got := String(data[u16Size:]); got != s {
		t.Errorf("String: got %q; want %q", got, s)
	}
}
