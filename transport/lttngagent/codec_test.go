package lttngagent

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
)

// loadVectors reads testdata/vectors.txt: "<name> <hex>" per line.
func loadVectors(t testing.TB) map[string][]byte {
	t.Helper()
	f, err := os.Open("testdata/vectors.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := make(map[string][]byte)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		name, hx, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("bad vector line %q", line)
		}
		b, err := hex.DecodeString(strings.TrimSpace(hx))
		if err != nil {
			t.Fatalf("vector %s: %v", name, err)
		}
		m[name] = b
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestGoldenRegistration(t *testing.T) {
	v := loadVectors(t)["registration_jul_pid_0x2e6b"]
	want := Registration{Domain: DomainJUL, PID: 0x2e6b, Major: 2, Minor: 0}
	got, err := ParseRegistration(v)
	if err != nil || got != want {
		t.Errorf("ParseRegistration = %+v, %v; want %+v", got, err, want)
	}
	if b := AppendRegistration(nil, want); !bytes.Equal(b, v) {
		t.Errorf("AppendRegistration = %x; want %x", b, v)
	}
	if _, err := ParseRegistration(v[:RegistrationSize-1]); err != ErrShort {
		t.Errorf("short registration: got %v; want ErrShort", err)
	}
}

func TestGoldenListReply(t *testing.T) {
	v := loadVectors(t)
	for _, tc := range []struct {
		vec   string
		names []string
	}{
		{"list_reply_two", []string{"org.example.A", "org.example.B"}},
		{"list_reply_empty", nil},
	} {
		b, n := Dialect20.AppendListReply(nil, tc.names)
		if !bytes.Equal(b, v[tc.vec]) || n != len(tc.names) {
			t.Errorf("%s: AppendListReply = %x, %d; want %x, %d", tc.vec, b, n, v[tc.vec], len(tc.names))
		}
		got, used, err := Dialect20.ParseListReply(v[tc.vec])
		if err != nil || used != len(v[tc.vec]) || len(got) != len(tc.names) || (len(got) > 0 && !reflect.DeepEqual(got, tc.names)) {
			t.Errorf("%s: ParseListReply = %q, %d, %v; want %q, %d", tc.vec, got, used, err, tc.names, len(v[tc.vec]))
		}
	}
}

func TestGoldenCommands(t *testing.T) {
	v := loadVectors(t)
	const noLevel = math.MinInt32
	for _, tc := range []struct {
		vec string
		req Request
	}{
		{"cmd_list", Request{Cmd: CmdList}},
		{"cmd_reg_done", Request{Cmd: CmdRegDone}},
		{"cmd_enable_org.example.A", Request{Cmd: CmdEnable, Event: Event{
			Name: "org.example.A", LogLevel: noLevel, LogLevelType: LogLevelAll,
			Filter: `logger_name == "org.example.A"`}}},
		{"cmd_enable_org.*_loglevel_INFO", Request{Cmd: CmdEnable, Event: Event{
			Name: "org.*", LogLevel: 800, LogLevelType: LogLevelRange,
			Filter: `(logger_name == "org.*") && (int_loglevel >= 800)`}}},
		{"cmd_enable_org.example.B_loglevel-only_SEVERE_filter", Request{Cmd: CmdEnable, Event: Event{
			Name: "org.example.B", LogLevel: 1000, LogLevelType: LogLevelSingle,
			Filter: `((msg == "x") && (logger_name == "org.example.B")) && (int_loglevel == 1000)`}}},
		{"cmd_enable_all", Request{Cmd: CmdEnable, Event: Event{Name: "*", LogLevel: noLevel}}},
		{"cmd_disable_org.example.A", Request{Cmd: CmdDisable, Name: "org.example.A"}},
		{"cmd_app_ctx_enable_myprov_myctx", Request{Cmd: CmdAppCtxEnable, Provider: "myprov", Context: "myctx"}},
		{"cmd_app_ctx_disable_myprov_myctx", Request{Cmd: CmdAppCtxDisable, Provider: "myprov", Context: "myctx"}},
	} {
		b := v[tc.vec]
		h, err := Dialect20.ParseHeader(b)
		if err != nil {
			t.Fatalf("%s: ParseHeader: %v", tc.vec, err)
		}
		if h.DataSize != uint64(len(b)-headerSize20) || h.Cmd != tc.req.Cmd {
			t.Errorf("%s: header %+v; want data_size %d cmd %v", tc.vec, h, len(b)-headerSize20, tc.req.Cmd)
		}
		var got Request
		err = Dialect20.ParseRequest(&got, h, b[headerSize20:])
		if err != nil || !reflect.DeepEqual(got, tc.req) {
			t.Errorf("%s: ParseRequest = %+v, %v; want %+v", tc.vec, got, err, tc.req)
		}
		enc, err := Dialect20.AppendRequest(nil, &tc.req)
		if err != nil || !bytes.Equal(enc, b) {
			t.Errorf("%s: AppendRequest = %x, %v; want %x", tc.vec, enc, err, b)
		}
	}
	// The capture sizes quoted by the reference.
	if n := len(v["cmd_enable_org.example.A"]) - headerSize20; n != 299 {
		t.Errorf("enable org.example.A data_size %d; want 299", n)
	}
	if n := len(v["cmd_enable_all"]) - headerSize20; n != 268 {
		t.Errorf("enable -a data_size %d; want 268", n)
	}
	if n := len(v["cmd_app_ctx_enable_myprov_myctx"]) - headerSize20; n != 21 {
		t.Errorf("app ctx data_size %d; want 21", n)
	}
}

func TestGoldenReplies(t *testing.T) {
	v := loadVectors(t)
	for vec, code := range map[string]ReplyCode{"reply_success": ReplySuccess, "reply_unknown_name": ReplyUnknownName} {
		if b := AppendReply(nil, code); !bytes.Equal(b, v[vec]) {
			t.Errorf("AppendReply(%v) = %x; want %x", code, b, v[vec])
		}
		if got, err := ParseReply(v[vec]); err != nil || got != code {
			t.Errorf("ParseReply(%x) = %v, %v; want %v", v[vec], got, err, code)
		}
	}
	if _, err := ParseReply([]byte{0, 0, 1}); err != ErrShort {
		t.Errorf("ParseReply short: got %v; want ErrShort", err)
	}
}

func TestHeaderDialects(t *testing.T) {
	for _, tc := range []struct {
		d    Dialect
		h    Header
		want string
	}{
		{Dialect20, Header{DataSize: 268, Cmd: CmdEnable}, "000000000000010c0000000200000000"},
		{Dialect20, Header{DataSize: 1 << 63, Cmd: 7, Version: 9}, "80000000000000000000000700000009"},
		{DialectRFC01, Header{DataSize: 256, Cmd: CmdDisable}, "000000000000010000000000000000030000000000000000"},
		{DialectRFC01, Header{Cmd: 1 << 40, Version: 1}, "000000000000000000000100000000000000000000000001"},
	} {
		b := tc.d.AppendHeader(nil, tc.h)
		if hex.EncodeToString(b) != tc.want {
			t.Errorf("%v AppendHeader(%+v) = %x; want %s", tc.d, tc.h, b, tc.want)
		}
		got, err := tc.d.ParseHeader(b)
		if err != nil || got != tc.h {
			t.Errorf("%v ParseHeader(%x) = %+v, %v; want %+v", tc.d, b, got, err, tc.h)
		}
		if _, err := tc.d.ParseHeader(b[:len(b)-1]); err != ErrShort {
			t.Errorf("%v ParseHeader short: got %v; want ErrShort", tc.d, err)
		}
	}
	// A 64-bit RFC command must not alias a known 32-bit one.
	if Dialect20.Known(Command(1<<32+1)) || DialectRFC01.Known(Command(1<<32+1)) {
		t.Errorf("command 2^32+1 known; want unknown")
	}
}

// enablePayload builds an ENABLE payload with explicit fields, for malformed
// variants.
func enablePayload(lv int32, lt uint32, name []byte, flen uint32, filter []byte) []byte {
	p := binary.BigEndian.AppendUint32(nil, uint32(lv))
	p = binary.BigEndian.AppendUint32(p, lt)
	var field [NameFieldSize]byte
	copy(field[:], name)
	p = append(p, field[:]...)
	p = binary.BigEndian.AppendUint32(p, flen)
	return append(p, filter...)
}

func appCtxPayload(l1 uint32, s1 string, l2 uint32, s2 string) []byte {
	p := binary.BigEndian.AppendUint32(nil, l1)
	p = append(p, s1...)
	p = binary.BigEndian.AppendUint32(p, l2)
	return append(p, s2...)
}

func TestParseRequestErrors(t *testing.T) {
	long := bytes.Repeat([]byte{'a'}, NameFieldSize)
	for _, tc := range []struct {
		name    string
		d       Dialect
		cmd     Command
		payload []byte
		want    error
	}{
		{"list with payload", Dialect20, CmdList, []byte{1}, ErrBadSize},
		{"reg_done with payload", Dialect20, CmdRegDone, []byte{1, 2}, ErrBadSize},
		{"unknown command", Dialect20, 7, nil, ErrUnknownCommand},
		{"rfc has no reg_done", DialectRFC01, CmdRegDone, nil, ErrUnknownCommand},
		{"enable too short", Dialect20, CmdEnable, make([]byte, enableFixedSize-1), ErrBadSize},
		{"enable bad level type", Dialect20, CmdEnable, enablePayload(0, 3, []byte("a"), 0, nil), ErrBadPayload},
		{"enable name not terminated", Dialect20, CmdEnable, enablePayload(0, 0, long, 0, nil), ErrBadName},
		{"enable empty name", Dialect20, CmdEnable, enablePayload(0, 0, nil, 0, nil), ErrBadName},
		{"enable filter_len over data", Dialect20, CmdEnable, enablePayload(0, 0, []byte("a"), 5, []byte("ab\x00")), ErrBadSize},
		{"enable filter_len under data", Dialect20, CmdEnable, enablePayload(0, 0, []byte("a"), 2, []byte("ab\x00")), ErrBadSize},
		{"enable filter_len too large", Dialect20, CmdEnable, enablePayload(0, 0, []byte("a"), MaxFilterSize+1, nil), ErrTooLarge},
		{"enable filter_len 2^32-1", Dialect20, CmdEnable, enablePayload(0, 0, []byte("a"), math.MaxUint32, nil), ErrTooLarge},
		{"enable filter without NUL", Dialect20, CmdEnable, enablePayload(0, 0, []byte("a"), 2, []byte("ab")), ErrBadPayload},
		{"disable short", Dialect20, CmdDisable, make([]byte, 100), ErrBadSize},
		{"disable long", Dialect20, CmdDisable, make([]byte, 257), ErrBadSize},
		{"disable not terminated", Dialect20, CmdDisable, long, ErrBadName},
		{"disable empty", Dialect20, CmdDisable, make([]byte, NameFieldSize), ErrBadName},
		{"app ctx short", Dialect20, CmdAppCtxEnable, make([]byte, 7), ErrBadSize},
		{"app ctx len1 past end", Dialect20, CmdAppCtxEnable, appCtxPayload(100, "p\x00", 2, "c\x00"), ErrBadSize},
		{"app ctx len2 past end", Dialect20, CmdAppCtxDisable, appCtxPayload(2, "p\x00", 9, "c\x00"), ErrBadSize},
		{"app ctx trailing bytes", Dialect20, CmdAppCtxEnable, appCtxPayload(2, "p\x00", 2, "c\x00x"), ErrBadSize},
		{"app ctx zero len", Dialect20, CmdAppCtxEnable, appCtxPayload(0, "", 2, "c\x00"), ErrBadName},
		{"app ctx not NUL-ended", Dialect20, CmdAppCtxEnable, appCtxPayload(3, "p\x00x", 2, "c\x00"), ErrBadPayload},
		{"app ctx missing len2", Dialect20, CmdAppCtxEnable, appCtxPayload(6, "p\x00abc", 0, "")[:10], ErrBadSize},
		{"rfc enable empty payload", DialectRFC01, CmdEnable, nil, ErrBadSize},
		{"rfc enable too long", DialectRFC01, CmdEnable, make([]byte, NameFieldSize+1), ErrBadSize},
		{"rfc disable not terminated", DialectRFC01, CmdDisable, []byte("abc"), ErrBadName},
	} {
		h := Header{DataSize: uint64(len(tc.payload)), Cmd: tc.cmd}
		var r Request
		err := tc.d.ParseRequest(&r, h, tc.payload)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v; want %v", tc.name, err, tc.want)
		}
		var ce *CommandError
		if !errors.As(err, &ce) || ce.Cmd != tc.cmd {
			t.Errorf("%s: got %T %v; want *CommandError for %v", tc.name, err, err, tc.cmd)
		}
	}
	if err := Dialect20.ParseRequest(new(Request), Header{DataSize: 10, Cmd: CmdList}, nil); !errors.Is(err, ErrShort) {
		t.Errorf("payload shorter than data_size: got %v; want ErrShort", err)
	}
}

func TestParseRequestNames(t *testing.T) {
	// "Names are C strings: cut at the first NUL and don't rely on
	// trimming": bytes after the NUL are ignored, whatever they are.
	field := append([]byte("org.a\x00junk"), make([]byte, NameFieldSize-10)...)
	var got Request
	err := Dialect20.ParseRequest(&got, Header{DataSize: NameFieldSize, Cmd: CmdDisable}, field)
	if err != nil || got.Name != "org.a" {
		t.Errorf("DISABLE name = %q, %v; want %q", got.Name, err, "org.a")
	}
	max := strings.Repeat("n", MaxNameLen)
	err = Dialect20.ParseRequest(&got, Header{DataSize: NameFieldSize, Cmd: CmdDisable}, append([]byte(max), 0))
	if err != nil || got.Name != max {
		t.Errorf("DISABLE 255-byte name: got %d bytes, %v; want 255", len(got.Name), err)
	}
	// An inner NUL in the filter cuts it, as the sessiond's C string would.
	p := enablePayload(-5, 1, []byte("a"), 4, []byte("x\x00y\x00"))
	err = Dialect20.ParseRequest(&got, Header{DataSize: uint64(len(p)), Cmd: CmdEnable}, p)
	want := Event{Name: "a", LogLevel: -5, LogLevelType: LogLevelRange, Filter: "x"}
	if err != nil || got.Event != want {
		t.Errorf("ENABLE = %+v, %v; want %+v", got.Event, err, want)
	}
	// filter_len 1: an empty filter.
	p = enablePayload(0, 0, []byte("a"), 1, []byte{0})
	err = Dialect20.ParseRequest(&got, Header{DataSize: uint64(len(p)), Cmd: CmdEnable}, p)
	if err != nil || got.Event.Filter != "" {
		t.Errorf("ENABLE filter_len 1 = %+v, %v; want empty filter", got.Event, err)
	}
	// RFC v0.1: a bare name shorter than 256 bytes.
	err = DialectRFC01.ParseRequest(&got, Header{DataSize: 4, Cmd: CmdEnable}, []byte("abc\x00"))
	want = Event{Name: "abc", LogLevel: math.MinInt32, LogLevelType: LogLevelAll}
	if err != nil || got.Event != want {
		t.Errorf("RFC ENABLE = %+v, %v; want %+v", got.Event, err, want)
	}
}

func TestAppendRequestErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    Dialect
		r    Request
		want error
	}{
		{"unknown", Dialect20, Request{Cmd: 9}, ErrUnknownCommand},
		{"rfc app ctx", DialectRFC01, Request{Cmd: CmdAppCtxEnable, Provider: "p", Context: "c"}, ErrUnknownCommand},
		{"empty name", Dialect20, Request{Cmd: CmdEnable}, ErrBadName},
		{"long name", Dialect20, Request{Cmd: CmdDisable, Name: strings.Repeat("x", 256)}, ErrBadName},
		{"NUL in name", DialectRFC01, Request{Cmd: CmdEnable, Event: Event{Name: "a\x00b"}}, ErrBadName},
		{"NUL in filter", Dialect20, Request{Cmd: CmdEnable, Event: Event{Name: "a", Filter: "x\x00"}}, ErrBadPayload},
		{"huge filter", Dialect20, Request{Cmd: CmdEnable, Event: Event{Name: "a", Filter: strings.Repeat("x", MaxFilterSize)}}, ErrBadPayload},
		{"empty provider", Dialect20, Request{Cmd: CmdAppCtxEnable, Context: "c"}, ErrBadName},
	} {
		if _, err := tc.d.AppendRequest(nil, &tc.r); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v; want %v", tc.name, err, tc.want)
		}
	}
}

func TestRFC01RoundTrip(t *testing.T) {
	for _, r := range []Request{
		{Cmd: CmdList},
		{Cmd: CmdEnable, Event: Event{Name: "org.x", LogLevel: math.MinInt32}},
		{Cmd: CmdDisable, Name: "org.x"},
	} {
		b, err := DialectRFC01.AppendRequest(nil, &r)
		if err != nil {
			t.Fatal(err)
		}
		h, err := DialectRFC01.ParseHeader(b)
		if err != nil {
			t.Fatal(err)
		}
		var got Request
		err = DialectRFC01.ParseRequest(&got, h, b[headerSizeRFC01:])
		if err != nil || !reflect.DeepEqual(got, r) {
			t.Errorf("RFC round trip = %+v, %v; want %+v", got, err, r)
		}
	}
	names := []string{"b", "", "a.b.c", strings.Repeat("z", 256)}
	b, n := DialectRFC01.AppendListReply(nil, names)
	want := "0000000000000002" + hex.EncodeToString([]byte("b\x00a.b.c\x00")) + "00000001"
	if hex.EncodeToString(b) != want || n != 2 {
		t.Errorf("RFC list reply = %x, %d; want %s, 2", b, n, want)
	}
	got, used, err := DialectRFC01.ParseListReply(b)
	if err != nil || used != len(b) || !reflect.DeepEqual(got, []string{"b", "a.b.c"}) {
		t.Errorf("RFC ParseListReply = %q, %d, %v", got, used, err)
	}
	for i := 0; i < len(b); i++ {
		if _, _, err := DialectRFC01.ParseListReply(b[:i]); err != ErrShort {
			t.Errorf("RFC ParseListReply(%d of %d bytes): got %v; want ErrShort", i, len(b), err)
		}
	}
}

func TestListReplySkipsInvalidNames(t *testing.T) {
	names := []string{"", "ok", "a\x00b", strings.Repeat("x", MaxNameLen), strings.Repeat("y", MaxNameLen+1)}
	b, n := Dialect20.AppendListReply(nil, names)
	got, used, err := Dialect20.ParseListReply(b)
	want := []string{"ok", strings.Repeat("x", MaxNameLen)}
	if err != nil || n != 2 || used != len(b) || !reflect.DeepEqual(got, want) {
		t.Errorf("list reply = %d names %v, err %v; want the 2 valid names", n, len(got), err)
	}
	if size := binary.BigEndian.Uint32(b[4:]); int(size) != len(b)-listHeaderSize20 {
		t.Errorf("data_size %d; want %d", size, len(b)-listHeaderSize20)
	}
}

func TestParseListReplyErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		hex  string
		want error
	}{
		{"short header", "0000000100000000", ErrShort},
		{"ret_code 2", "000000020000000000000000", ErrBadReply},
		{"names missing", "00000001000000040000000161", ErrShort},
		{"count too high", "0000000100000002000000026100", ErrBadReply},
		{"count too low", "000000010000000400000001610062" + "00", ErrBadReply},
		{"unterminated", "00000001000000020000000161" + "62", ErrBadReply},
		{"empty name", "000000010000000200000001" + "0000", ErrBadReply},
	} {
		b, _ := hex.DecodeString(tc.hex)
		if _, _, err := Dialect20.ParseListReply(b); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v; want %v", tc.name, err, tc.want)
		}
	}
}

func TestStrings(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{DomainJUL.String(), "JUL"},
		{DomainLog4j2.String(), "LOG4J2"},
		{Domain(9).String(), "UNKNOWN_DOMAIN_9"},
		{CmdAppCtxDisable.String(), "APP_CTX_DISABLE"},
		{Command(0).String(), "UNKNOWN_CMD_0"},
		{Command(1 << 40).String(), "UNKNOWN_CMD_1099511627776"},
		{ReplyUnknownName.String(), "UNKNOWN_NAME"},
		{ReplyCode(0).String(), "UNKNOWN_CODE_0"},
		{LogLevelSingle.String(), "SINGLE"},
		{LogLevelType(3).String(), "UNKNOWN_LOGLEVEL_TYPE_3"},
		{DialectRFC01.String(), "RFC-0.1"},
		{Dialect(2).String(), "UNKNOWN_DIALECT_2"},
		{DaemonUser.String(), "user"},
		{Daemon(5).String(), "UNKNOWN_DAEMON_5"},
		{ReplyList.String(), "list"},
		{ReplyKind(7).String(), "UNKNOWN_REPLY_KIND_7"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q; want %q", tc.got, tc.want)
		}
	}
}

func TestParseDomain(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Domain
		err  bool
	}{
		{"jul", DomainJUL, false},
		{"LOG4J", DomainLog4j, false},
		{"Python", DomainPython, false},
		{"log4j2", DomainLog4j2, false},
		{"ust", DomainNone, true},
		{"", DomainNone, true},
	} {
		got, err := ParseDomain(tc.in)
		if got != tc.want || (err != nil) != tc.err || (err != nil && !errors.Is(err, ErrBadDomain)) {
			t.Errorf("ParseDomain(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestLogLevelMatch(t *testing.T) {
	for _, tc := range []struct {
		t            LogLevelType
		value, level int32
		want         bool
	}{
		{LogLevelAll, math.MinInt32, math.MinInt32, true},
		{LogLevelAll, 1000, 300, true},
		{LogLevelRange, 800, 800, true},  // INFO enables INFO
		{LogLevelRange, 800, 1000, true}, // and SEVERE
		{LogLevelRange, 800, 700, false}, // not CONFIG
		{LogLevelSingle, 1000, 1000, true},
		{LogLevelSingle, 1000, 900, false},
		{LogLevelType(3), 0, 0, false},
	} {
		if got := (Event{LogLevel: tc.value, LogLevelType: tc.t}).MatchLevel(tc.level); got != tc.want {
			t.Errorf("%v %d level %d: got %v; want %v", tc.t, tc.value, tc.level, got, tc.want)
		}
	}
}

func TestParsePort(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"5345\n", 5345},
		{" 5346 \n", 5346},
		{"5347", 5347},
		{"5345\n5\n", 5345}, // tail of an older, longer content
		{"65535\n", 65535},
		{"1\n", 1},
		{"0\n", 0},
		{"65536\n", 0},
		{"-5345\n", 0},
		{"53x45\n", 0},
		{"\n5345\n", 0},
		{"", 0},
	} {
		got, err := ParsePort([]byte(tc.in))
		if got != tc.want || (tc.want == 0) != (err != nil) || (err != nil && !errors.Is(err, ErrBadPortFile)) {
			t.Errorf("ParsePort(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestConfigVerify(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Config)
		ok   bool
	}{
		{"default", func(*Config) {}, true},
		{"python rfc", func(c *Config) { c.Domain, c.Dialect = DomainPython, DialectRFC01 }, true},
		{"domain none", func(c *Config) { c.Domain = DomainNone }, false},
		{"domain ust", func(c *Config) { c.Domain = DomainUST }, false},
		{"dialect 2", func(c *Config) { c.Dialect = 2 }, false},
		{"negative pid", func(c *Config) { c.PID = -1 }, false},
		{"fallback port", func(c *Config) { c.FallbackPort = 70000 }, false},
		{"negative delay", func(c *Config) { c.RetryDelay = -1 }, false},
		{"negative timeout", func(c *Config) { c.CommandTimeout = -1 }, false},
		{"negative list", func(c *Config) { c.MaxListBytes = -1 }, false},
	} {
		c := DefaultConfig()
		tc.mod(&c)
		err := c.Verify()
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrBadConfig)) {
			t.Errorf("%s: Verify = %v; want ok %v", tc.name, err, tc.ok)
		}
	}
}

func TestDefaultUserPortFile(t *testing.T) {
	t.Setenv("LTTNG_HOME", "/lh")
	t.Setenv("HOME", "/h")
	if got := DefaultUserPortFile(); got != "/lh/.lttng/agent.port" {
		t.Errorf("with LTTNG_HOME: got %q; want /lh/.lttng/agent.port", got)
	}
	t.Setenv("LTTNG_HOME", "")
	if got := DefaultUserPortFile(); got != "/h/.lttng/agent.port" {
		t.Errorf("with HOME: got %q; want /h/.lttng/agent.port", got)
	}
}
