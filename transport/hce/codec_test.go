package hce

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

func blockEnv(md5 bool, ctx uint32) []byte {
	return AppendBlocksEnvelope(nil, md5, &Block{Dest: 2, Src: 3, Iface: IfaceTadpole, Cmd: TPMark, Context: ctx,
		Data: append(AppendString(nil, "k"), AppendString(nil, "v")...)})
}

// readAll reads envelopes until a fatal error, returning the contexts of
// the blocks read and the recoverable errors met.
func readAll(t *testing.T, r io.Reader, cfg *Config) (ctxs []uint32, soft []error, end error, c *Codec) {
	c, err := NewCodec(r, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for {
		e, err := c.Read()
		if Recoverable(err) {
			soft = append(soft, err)
			continue
		}
		if err != nil {
			return ctxs, soft, err, c
		}
		bs, err := ParsePayload(nil, e.Payload)
		if err != nil {
			t.Fatalf("payload: %v", err)
		}
		for _, b := range bs {
			ctxs = append(ctxs, b.Context)
		}
	}
}

func TestFlippedBitMD5(t *testing.T) {
	for bit := 0; bit < 8; bit++ {
		var s []byte
		s = append(s, blockEnv(true, 1)...)
		bad := blockEnv(true, 2)
		bad[EnvelopeHeader+BlockHeader+2] ^= 1 << bit // inside the data
		s = append(s, bad...)
		s = append(s, blockEnv(true, 3)...)
		ctxs, soft, end, c := readAll(t, bytes.NewReader(s), nil)
		if end != io.EOF || len(soft) != 1 || !errors.Is(soft[0], ErrChecksum) {
			t.Fatalf("bit %d: end %v soft %v", bit, end, soft)
		}
		if len(ctxs) != 2 || ctxs[0] != 1 || ctxs[1] != 3 {
			t.Errorf("bit %d: got contexts %v; want [1 3]", bit, ctxs)
		}
		if got := c.Stats.ChecksumDrops.Load(); got != 1 {
			t.Errorf("ChecksumDrops %d; want 1", got)
		}
	}
	// Without MD5 the same flip goes through: MD5 is what catches it.
	bad := blockEnv(false, 2)
	bad[EnvelopeHeader+BlockHeader+7] ^= 1
	_, soft, _, _ := readAll(t, bytes.NewReader(bad), nil)
	if len(soft) != 0 {
		t.Errorf("no MD5: soft errors %v", soft)
	}
}

func TestResyncGarbage(t *testing.T) {
	garbage := [][]byte{
		{0},
		[]byte("some garbage \xfe\xc0\x48 almost a magic"),
		bytes.Repeat([]byte{0xFE}, 100),
		blockEnv(false, 99)[:3], // a cut magic
	}
	for i, g := range garbage {
		var s []byte
		s = append(s, blockEnv(false, 1)...)
		s = append(s, g...)
		s = append(s, blockEnv(true, 2)...)
		s = append(s, g...)
		s = append(s, blockEnv(false, 3)...)
		for _, r := range []io.Reader{bytes.NewReader(s), iotest.OneByteReader(bytes.NewReader(s))} {
			ctxs, _, end, c := readAll(t, r, nil)
			if end != io.EOF {
				t.Fatalf("garbage %d: %v", i, end)
			}
			if len(ctxs) != 3 || ctxs[0] != 1 || ctxs[1] != 2 || ctxs[2] != 3 {
				t.Errorf("garbage %d: contexts %v; want [1 2 3]", i, ctxs)
			}
			if c.Stats.Resyncs.Load() == 0 {
				t.Errorf("garbage %d: no resync counted", i)
			}
		}
	}
}

func TestHugeSize(t *testing.T) {
	env := AppendEnvelope(nil, 0, false, nil)
	env[offSize], env[offSize+1], env[offSize+2], env[offSize+3] = 0xFF, 0xFF, 0xFF, 0xF0
	c, _ := NewCodec(bytes.NewReader(env), nil, nil)
	_, err := c.Read()
	if !errors.Is(err, ErrTooLarge) || Recoverable(err) {
		t.Fatalf("got %v; want fatal ErrTooLarge", err)
	}
	if cap(c.rbuf) != 0 {
		t.Errorf("allocated %d bytes before the check", cap(c.rbuf))
	}
	// Exactly the cap passes.
	cfg := &Config{MaxPayload: 8}
	c, _ = NewCodec(bytes.NewReader(AppendEnvelope(nil, 0, false, make([]byte, 8))), nil, cfg)
	if _, err := c.Read(); err != nil {
		t.Fatalf("payload at the cap: %v", err)
	}
	c, _ = NewCodec(bytes.NewReader(AppendEnvelope(nil, 0, false, make([]byte, 9))), nil, cfg)
	if _, err := c.Read(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("payload over the cap: %v", err)
	}
}

func TestBadFlags(t *testing.T) {
	for _, f := range []Flags{FlagSocketConnect | FlagPipeConnect, 1, 1 << 30, FlagDisconnect | FlagConnectionComplete} {
		var s []byte
		s = append(s, AppendEnvelope(nil, f, false, nil)...)
		s = append(s, blockEnv(false, 5)...)
		ctxs, soft, end, c := readAll(t, bytes.NewReader(s), nil)
		if end != io.EOF || len(soft) != 1 || !errors.Is(soft[0], ErrBadFlags) || len(ctxs) != 1 || ctxs[0] != 5 {
			t.Errorf("flags %v: ctxs %v soft %v end %v", f, ctxs, soft, end)
		}
		if c.Stats.BadFlagDrops.Load() != 1 {
			t.Errorf("flags %v: BadFlagDrops %d", f, c.Stats.BadFlagDrops.Load())
		}
	}
}

func TestTruncated(t *testing.T) {
	env := blockEnv(false, 1)
	for n := 1; n < len(env); n++ {
		c, _ := NewCodec(bytes.NewReader(env[:n]), nil, nil)
		_, err := c.Read()
		if n >= sizeU32 && !errors.Is(err, ErrTruncated) {
			t.Fatalf("%d bytes: %v; want ErrTruncated", n, err)
		}
		if err == nil {
			t.Fatalf("%d bytes: no error", n)
		}
	}
}

func TestParsePayloadErrors(t *testing.T) {
	good := AppendPayload(nil, &Block{Dest: 1, Src: 2, Iface: IfaceAgentManager, Cmd: 1, Data: []byte{1, 2}})
	cases := []struct {
		name string
		p    []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"huge count", []byte{0xFF, 0xFF, 0xFF, 0xFF}, ErrTruncated},
		{"trailing", append(append([]byte(nil), good...), 0), ErrTrailing},
		{"short data", good[:len(good)-1], ErrTruncated},
		{"foreign header", func() []byte { b := append([]byte(nil), good...); b[4] = 0x12; return b }(), ErrBadHeaderID},
		{"other version", func() []byte { b := append([]byte(nil), good...); b[7] = 2; return b }(), ErrHeaderVersion},
		{"huge data size", func() []byte { b := append([]byte(nil), good...); b[4+28] = 0xFF; return b }(), ErrTruncated},
	}
	for _, c := range cases {
		if _, err := ParsePayload(nil, c.p); !errors.Is(err, c.want) {
			t.Errorf("%s: %v; want %v", c.name, err, c.want)
		}
	}
	if bs, err := ParsePayload(nil, good); err != nil || len(bs) != 1 {
		t.Fatalf("good: %v %v", bs, err)
	}
}

func TestDataErrors(t *testing.T) {
	if _, err := ParseIDs[uint32]([]byte{0x40, 0, 0, 0}); !errors.Is(err, ErrTruncated) {
		t.Errorf("ParseIDs huge count: %v", err)
	}
	long := AppendU32(nil, MaxString+1)
	long = append(long, make([]byte, MaxString+1)...)
	if _, err := ParsePipeConnect(long); !errors.Is(err, ErrString) {
		t.Errorf("long string: %v", err)
	}
	if _, err := ParseStrings(append(AppendU32(nil, 1), AppendString(nil, "\xff\xfe")...)); !errors.Is(err, ErrString) {
		t.Errorf("not UTF-8: %v", err)
	}
	if _, err := ParseRegistration(AppendU32(nil, 2)); !errors.Is(err, ErrTruncated) {
		t.Errorf("short registration: %v", err)
	}
	// A registration without the interface extension is accepted.
	r, err := ParseRegistration(AppendString(AppendU64(AppendU32(nil, 2), 7), "x"))
	if err != nil || r.Name != "x" || r.PID != 7 || r.Ifaces != nil {
		t.Errorf("seed-only registration: %+v %v", r, err)
	}
}

func TestNames(t *testing.T) {
	cases := []struct{ got, want string }{
		{FlagSocketConnect.String(), "SOCKET_CONNECT"},
		{(FlagMD5 | FlagDisconnect).String(), "MD5|DISCONNECT"},
		{Flags(1).String(), "UNKNOWN_FLAGS_0x1"},
		{IfaceAgentManager.String(), "HII_AGENT_MANAGER"},
		{InterfaceID(0x80001001).String(), "UNKNOWN_INTERFACE_0x80001001"},
		{CmdAttachToAgent.Name(IfaceAgentManager), "CID_ATTACH_TO_AGENT"},
		{CmdAgentAttachDenied.Name(IfaceAgentManager), "CID_AGENT_ATTACH_DENIED"},
		{EventAgentDeregistered.Name(IfaceAgentEvents), "EID_AGENT_DEREGISTERED"},
		{CmdRejected.Name(0x1234), "CID_COMMAND_REJECTED"},
		{CommandID(0x777).Name(IfaceAgentManager), "UNKNOWN_CMD_0x777"},
		{TPEnableLogger.Name(IfaceTadpole), "TP_ENABLE_LOGGER"},
		{ReasonExclusivelyLocked.String(), "EXCLUSIVELY_LOCKED"},
		{Reason(999).String(), "UNKNOWN_REASON_999"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %s; want %s", c.got, c.want)
		}
	}
	if len(reasonNames) != int(ReasonTooManyConnections)+1 {
		t.Errorf("%d reason names for %d reasons", len(reasonNames), ReasonTooManyConnections+1)
	}
}

func TestEnvelopeSizes(t *testing.T) {
	if EnvelopeHeader != 28 || BlockHeader != 32 {
		t.Fatalf("header sizes %d, %d; want 28, 32", EnvelopeHeader, BlockHeader)
	}
	// The largest PIPE_CONNECT fits one atomic FIFO write (PIPE_BUF 4096).
	if n := len(AppendEnvelope(nil, FlagPipeConnect, true, AppendPipeConnect(nil, string(make([]byte, MaxPipeName))))); n > 4096 {
		t.Fatalf("PIPE_CONNECT of %d bytes", n)
	}
}

func TestConfigVerify(t *testing.T) {
	bad := []Config{{MaxPayload: -1}, {HandshakeTimeout: -1}, {IdleTimeout: 1, KeepAlive: 2}}
	for _, c := range bad {
		if _, err := c.withDefaults(); !errors.Is(err, ErrBadConfig) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	d := DefaultConfig()
	if err := d.Verify(); err != nil {
		t.Fatal(err)
	}
}
