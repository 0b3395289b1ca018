package hce

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"reflect"
	"strings"
	"testing"
)

// vector is one golden envelope: how to build it, and what it decodes to.
type vector struct {
	flags  Flags
	md5    bool
	blocks []*Block // command payload when non-nil
	raw    []byte   // transport payload otherwise
}

var reg = Registration{AgentID: 2, PID: 4242, Name: "tadpole:example", Ifaces: []InterfaceID{IfaceTadpole}}

var vectors = map[string]vector{
	"socket_connect":      {flags: FlagSocketConnect},
	"pipe_connect":        {flags: FlagPipeConnect, raw: AppendPipeConnect(nil, "/tmp/hce.fifo.42.1")},
	"connection_complete": {flags: FlagConnectionComplete, raw: AppendU32(nil, 2)},
	"connection_refused":  {flags: FlagConnectionRefused, raw: AppendU32(nil, uint32(ReasonHandshakeRequired))},
	"disconnect":          {flags: FlagDisconnect, raw: AppendU32(nil, uint32(ReasonShutdown))},
	"keepalive":           {},
	"register_md5": {md5: true, blocks: []*Block{{Dest: EngineID, Src: 2, Iface: IfaceAgentManager, Cmd: CmdRegisterAgent,
		Context: 1, Data: AppendRegistration(nil, &reg)}}},
	"query_running": {blocks: []*Block{{Dest: EngineID, Src: 3, Iface: IfaceAgentManager, Cmd: CmdQueryRunningAgents,
		Context: 7, Data: AppendIDs(nil, []InterfaceID{IfaceTadpole})}}},
	"attach_exclusive_and_enable": {blocks: []*Block{
		{Dest: EngineID, Src: 3, Iface: IfaceAgentManager, Cmd: CmdAttachToAgent, Context: 8, Data: AppendU32(AppendU32(nil, 2), AttachExclusive)},
		{Dest: 2, Src: 3, Iface: IfaceTadpole, Cmd: TPEnableLogger, Context: 9, Data: AppendString(nil, "example.shop")}}},
	"event_deregistered": {blocks: []*Block{{Dest: 3, Src: EngineID, Iface: IfaceAgentEvents, Cmd: EventAgentDeregistered,
		Context: 0x80000001, Data: AppendU32(nil, 2)}}},
	"rejected_md5": {md5: true, blocks: []*Block{{Dest: 3, Src: EngineID, Iface: 0x80001001, Cmd: CmdRejected, Context: 5,
		Data: AppendRejected(nil, ReasonUnknownInterface, 0x80001001, 1)}}},
	"tp_loggers": {blocks: []*Block{{Dest: 3, Src: 2, Iface: IfaceTadpole, Cmd: TPLoggers, Context: 10,
		Data: AppendLoggers(nil, []LoggerState{{"example.shop", true}, {"example.stock", false}})}}},
}

func (v vector) encode() []byte {
	if v.blocks != nil {
		return AppendBlocksEnvelope(nil, v.md5, v.blocks...)
	}
	return AppendEnvelope(nil, v.flags, v.md5, v.raw)
}

func readVectors(t testing.TB) map[string][]byte {
	f, err := os.Open("testdata/vectors.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]byte{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		name, hx, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("bad line %q", line)
		}
		b, err := hex.DecodeString(strings.ReplaceAll(hx, " ", ""))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = b
	}
	return out
}

// TestVectors checks each golden vector both ways: the exact bytes out of
// the encoder, the exact envelope and blocks out of the decoder.
func TestVectors(t *testing.T) {
	golden := readVectors(t)
	if len(golden) != len(vectors) {
		t.Errorf("testdata has %d vectors; want %d", len(golden), len(vectors))
	}
	for name, v := range vectors {
		want, ok := golden[name]
		if !ok {
			t.Errorf("%s: not in testdata (got %x)", name, v.encode())
			continue
		}
		if got := v.encode(); !bytes.Equal(got, want) {
			t.Errorf("%s: encoded\n%x\nwant\n%x", name, got, want)
		}
		c, _ := NewCodec(bytes.NewReader(want), nil, nil)
		e, err := c.Read()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		wantFlags := v.flags
		if v.md5 {
			wantFlags |= FlagMD5
		}
		if e.Flags != wantFlags {
			t.Errorf("%s: flags %v; want %v", name, e.Flags, wantFlags)
		}
		if v.blocks == nil {
			if !bytes.Equal(e.Payload, v.raw) {
				t.Errorf("%s: payload %x; want %x", name, e.Payload, v.raw)
			}
			continue
		}
		blocks, err := ParsePayload(nil, e.Payload)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i, b := range blocks {
			w := *v.blocks[i]
			w.HeaderID = HeaderID
			if !reflect.DeepEqual(b, w) {
				t.Errorf("%s block %d: got %+v; want %+v", name, i, b, w)
			}
		}
	}
}

// TestVectorsByHand pins the smallest vectors to bytes written out by hand
// from the table in doc.go, so that the golden file cannot drift with the
// encoder.
func TestVectorsByHand(t *testing.T) {
	zero := strings.Repeat("00", 16)
	for name, hx := range map[string]string{
		"socket_connect":      "fec04845" + "01000000" + zero + "00000000",
		"connection_complete": "fec04845" + "10000000" + zero + "00000004" + "00000002",
		"disconnect":          "fec04845" + "08000000" + zero + "00000004" + "00000001",
		"keepalive":           "fec04845" + "00000000" + zero + "00000000",
	} {
		want, _ := hex.DecodeString(hx)
		if got := vectors[name].encode(); !bytes.Equal(got, want) {
			t.Errorf("%s: %x; want %x", name, got, want)
		}
	}
	// A command block header: ID, dest, src, session, iface, cmd, ctx, size.
	b := AppendBlock(nil, &Block{Dest: 1, Src: 2, Iface: IfaceAgentManager, Cmd: CmdDeregisterAgent, Context: 3, Data: []byte{0, 0, 0, 2}})
	want, _ := hex.DecodeString("48430001" + "00000001" + "00000002" + "00000000" + "807ad001" + "0000000b" + "00000003" + "00000004" + "00000002")
	if !bytes.Equal(b, want) {
		t.Errorf("block %x; want %x", b, want)
	}
}
