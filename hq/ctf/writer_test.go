package ctf

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
	"github.com/tadpole-trace/tadpole/transport/live"
)

// recSink records what a Writer does.
type recSink struct {
	meta     []byte
	channels []string
	packets  [][]byte
	streamOf []int
	idx      []live.Index
	beacons  map[int]uint64
	ended    bool
}

func (s *recSink) AppendMetadata(b []byte) { s.meta = append(s.meta, b...) }
func (s *recSink) AddStream(_ uint64, ch string) int {
	s.channels = append(s.channels, ch)
	return len(s.channels) - 1
}
func (s *recSink) Publish(st int, idx live.Index, data []byte) error {
	s.packets = append(s.packets, data)
	s.streamOf = append(s.streamOf, st)
	s.idx = append(s.idx, idx)
	return nil
}
func (s *recSink) Beacon(st int, ts uint64) {
	if s.beacons == nil {
		s.beacons = map[int]uint64{}
	}
	s.beacons[st] = ts
}
func (s *recSink) End() { s.ended = true }

var t0 = time.Unix(1700000000, 0)

func entry(seq int32, tid uint16, method int32, rel int32) *bytefrog.Msg {
	return &bytefrog.Msg{Type: bytefrog.MsgMethodEntry, Seq: seq, ThreadID: tid, MethodID: method, RelTime: rel}
}

// packetInfo decodes a packet's header and context.
type packetInfo struct {
	magic, class                 uint32
	inst                         uint64
	begin, end, content, size, n uint64
	firstTS, lastTS              uint64
	events                       int
}

// parsePacket walks a packet of method_entry events only.
func parsePacket(t *testing.T, b []byte, methodLen int) packetInfo {
	t.Helper()
	p := packetInfo{magic: le.Uint32(b), class: le.Uint32(b[4:]), inst: le.Uint64(b[8:]),
		begin: le.Uint64(b[offBegin:]), end: le.Uint64(b[offEnd:]), content: le.Uint64(b[offContent:]),
		size: le.Uint64(b[offPacket:]), n: le.Uint64(b[offSeqNum:])}
	for off := PacketOverhead; off < len(b); {
		if id := EventClass(le.Uint16(b[off:])); id != EvMethodEntry {
			t.Fatalf("event class %v at %d", id, off)
		}
		ts := le.Uint64(b[off+2:])
		if p.events == 0 {
			p.firstTS = ts
		}
		p.lastTS = ts
		p.events++
		off += eventHeaderSize + 4 + 2 + 4 + methodLen + 1
	}
	return p
}

func TestPacketLayoutAndCutOnSize(t *testing.T) {
	sink := &recSink{}
	w, err := NewWriter(sink, &Config{Start: t0, PacketSize: MinPacketSize})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(sink.meta), "/* CTF 1.8") {
		t.Fatal("metadata does not start with the CTF 1.8 signature")
	}
	w.Message(&bytefrog.Msg{Type: bytefrog.MsgMapMethodSignature, MethodID: 1, Text: []byte("a/B.c;1;()V")})
	const n = 200
	for i := int32(0); i < n; i++ {
		w.Message(entry(i, 3, 1, i/10))
	}
	w.Close()
	if !sink.ended {
		t.Fatal("sink not ended")
	}
	events, prevEnd := 0, uint64(0)
	for i, b := range sink.packets {
		if sink.channels[sink.streamOf[i]] != "thread-3" {
			continue
		}
		p := parsePacket(t, b, len("a/B.c;1;()V"))
		switch {
		case p.magic != PacketMagic || p.class != StreamClassID || p.inst != 4:
			t.Fatalf("packet %d header %+v", i, p)
		case p.content != uint64(len(b))*8 || p.size != p.content:
			t.Fatalf("packet %d sizes %d/%d bits for %d bytes", i, p.content, p.size, len(b))
		case len(b) > MinPacketSize:
			t.Fatalf("packet %d of %d bytes; cut at %d", i, len(b), MinPacketSize)
		case p.begin > p.firstTS || p.end < p.lastTS || p.begin < prevEnd:
			t.Fatalf("packet %d times %d..%d, events %d..%d, previous end %d", i, p.begin, p.end, p.firstTS, p.lastTS, prevEnd)
		case sink.idx[i].TimestampBegin != p.begin || sink.idx[i].PacketSize != p.size:
			t.Fatalf("index %+v differs from the context %+v", sink.idx[i], p)
		}
		prevEnd = p.end
		events += p.events
	}
	if events != n {
		t.Fatalf("%d events in packets; want %d", events, n)
	}
	if ev, _ := w.Stats(); ev != n+1 {
		t.Fatalf("Stats: %d events", ev)
	}
}

func TestTimestampsIncrease(t *testing.T) {
	sink := &recSink{}
	w, _ := NewWriter(sink, &Config{Start: t0})
	// relTime goes back: the clock still moves forward.
	for i, rel := range []int32{5, 3, 3, 9, 0} {
		w.Message(entry(int32(i), 1, 1, rel))
	}
	w.Close()
	b := sink.packets[len(sink.packets)-1]
	var last uint64
	for off := PacketOverhead; off < len(b); off += eventHeaderSize + 4 + 2 + 4 + 1 {
		ts := le.Uint64(b[off+2:])
		if ts <= last {
			t.Fatalf("timestamp %d after %d", ts, last)
		}
		last = ts
	}
	if want := uint64(t0.UnixNano()) + 9*uint64(time.Millisecond); last < want {
		t.Fatalf("last timestamp %d; want ≥ %d (relTime 9 ms)", last, want)
	}
}

func TestTickCutsAndBeacons(t *testing.T) {
	sink := &recSink{}
	w, _ := NewWriter(sink, &Config{Start: t0})
	w.Tick() // the run stream is new: an empty packet carries NEW_STREAM
	if len(sink.packets) != 1 || len(sink.packets[0]) != PacketOverhead {
		t.Fatalf("first tick: %d packets", len(sink.packets))
	}
	w.Message(entry(0, 1, 1, 1))
	w.Message(entry(1, 2, 1, 1))
	w.Tick()
	// thread-1 and thread-2 have events; the run stream gets an empty
	// packet because streams were added.
	if len(sink.packets) != 4 {
		t.Fatalf("%d packets after the second tick; want 4", len(sink.packets))
	}
	w.Message(entry(2, 1, 1, 1))
	w.Tick()
	clock := w.clock
	if sink.beacons[0] != clock || sink.beacons[2] != clock {
		t.Fatalf("beacons %v; want %d on the idle streams 0 and 2", sink.beacons, clock)
	}
	if _, ok := sink.beacons[1]; ok {
		t.Fatal("beacon on a stream that had events")
	}
	last := sink.idx[len(sink.idx)-1]
	if last.TimestampEnd != clock {
		t.Fatalf("packet cut by the timer ends at %d; want the clock %d", last.TimestampEnd, clock)
	}
	w.Message(entry(3, 1, 1, 1))
	w.Close()
	if p := sink.idx[len(sink.idx)-1]; p.TimestampBegin < clock {
		t.Fatalf("packet after a beacon at %d begins at %d", clock, p.TimestampBegin)
	}
}

func TestStartTimer(t *testing.T) {
	sink := &syncSink{recSink: &recSink{}}
	w, _ := NewWriter(sink, &Config{Start: t0, LiveTimer: 10 * time.Millisecond})
	w.Start()
	w.Message(entry(0, 1, 1, 1))
	deadline := time.Now().Add(5 * time.Second)
	for sink.count() < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	w.Close()
	if sink.count() < 2 {
		t.Fatal("the live timer did not cut the thread's packet")
	}
}

// syncSink is a recSink safe for the timer goroutine.
type syncSink struct {
	mu sync.Mutex
	*recSink
}

func (s *syncSink) Publish(st int, idx live.Index, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recSink.Publish(st, idx, data)
}

func (s *syncSink) Beacon(st int, ts uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recSink.Beacon(st, ts)
}

func (s *syncSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.packets)
}

func TestConfigVerify(t *testing.T) {
	for _, c := range []Config{{PacketSize: 10}, {PacketSize: MaxPacketSize + 1}, {LiveTimer: -1},
		{Env: map[string]string{"bad key": "x"}}, {TickBytes: -1}} {
		if err := c.Verify(); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	if _, err := NewWriter(&recSink{}, &Config{PacketSize: 1}); err == nil {
		t.Fatal("NewWriter with a bad config")
	}
}

func TestMetadataEnvQuoted(t *testing.T) {
	m := string(Metadata(map[string]string{"hostname": "a\"b\\c\n"}, []string{"hostname"}))
	if !strings.Contains(m, `hostname = "a\"b\\c ";`) {
		t.Fatalf("env not quoted: %s", m)
	}
	for i := EventClass(0); i < numEventClasses; i++ {
		if !strings.Contains(m, fmt.Sprintf("name = \"%v\";\n\tid = %d;", i, i)) {
			t.Fatalf("event class %v missing", i)
		}
	}
	if EventClass(99).String() != "UNKNOWN_EVENT_CLASS_99" {
		t.Fatal(EventClass(99).String())
	}
}
