package agent

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/internal/host"
	"github.com/tadpole-trace/tadpole/internal/testhq"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

func TestScanBatchRejects(t *testing.T) {
	good := host.AppendBatchRecord(nil, batchMarker, 0, 0, 0, 0, 1, "key", "value")
	tests := map[string][]byte{
		"short header":              good[:batchHeaderSize-1],
		"overrun":                   good[:batchHeaderSize+2],
		"unknown kind":              host.AppendBatchRecord(nil, 9, 0, 0, 1, 0, 1, "", ""),
		"zero kind":                 host.AppendBatchRecord(nil, 0, 0, 0, 1, 0, 1, "", ""),
		"method id never given out": host.AppendBatchRecord(nil, batchEntry, 0, 0, 1<<30, 0, 1, "", ""),
		"method id 0":               host.AppendBatchRecord(nil, batchExit, 0, 0, 0, 0, 1, "", ""),
		"exception id never given out": host.AppendBatchRecord(nil, batchThrow, 0, 0,
			NewMethod("t/T.rejects;1;()V").ID(), 1<<30, 1, "", ""),
		"trailing junk": append(append([]byte{}, good...), 1, 2, 3),
		"the agent's wire flag": host.AppendBatchRecord(nil, batchMarker, batchFlagMUTF8|batchFlagWire, 0, 0, 0, 1,
			"key", "value"),
	}
	for name, b := range tests {
		if _, err := scanBatch(b); !errors.Is(err, host.ErrBadBatch) {
			t.Errorf("%s: scanBatch = %v; want host.ErrBadBatch", name, err)
		}
	}
	if n, err := scanBatch(good); n != 1 || err != nil {
		t.Errorf("scanBatch(good) = %d, %v", n, err)
	}
}

// TestHostBatches feeds batches the way the JVM and C hosts do, from
// several host threads at once, and checks HQ gets every event once, in
// order per thread, numbered without a gap, with names and mappings.
func TestHostBatches(t *testing.T) {
	h := startHQ(t, func(c *hq.Config) { c.Agent.NumDataSenders = 4 })
	a, run := startAgent(t, h, testConfig(h.Srv.Addr()))
	const threads, batches, pairs = 6, 50, 40
	m := NewMethod("host/C.work;1;()V")
	e := NewExceptionType("host.Boom")
	var wg sync.WaitGroup
	for th := 0; th < threads; th++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var b []byte
			b = host.AppendBatchRecord(b, batchName, 0, 0, 0, 0, monoNow(), fmt.Sprintf("host-%d", th), "")
			if _, err := host.SubmitBatch(uint64(1000+th), b); err != nil {
				t.Error(err)
			}
			for i := 0; i < batches; i++ {
				b = b[:0]
				for j := 0; j < pairs; j++ {
					now := monoNow()
					b = host.AppendBatchRecord(b, batchEntry, 0, 0, m.ID(), 0, now, "", "")
					if j == 0 {
						b = host.AppendBatchRecord(b, batchThrow, 0, 7, m.ID(), e.ID(), now, "", "")
						b = host.AppendBatchRecord(b, batchBubble, batchFlagThrown, 0, m.ID(), e.ID(), now, "", "")
						continue
					}
					b = host.AppendBatchRecord(b, batchExit, 0, 12, m.ID(), 0, now, "", "")
				}
				b = host.AppendBatchRecord(b, batchMarker, batchFlagMUTF8, 0, 0, 0, monoNow(), "batch", "a\xc0\x80b")
				n, err := host.SubmitBatch(uint64(1000+th), b)
				if err != nil || n != 2*pairs+2 {
					t.Errorf("SubmitBatch = %d, %v", n, err)
				}
			}
		}()
	}
	wg.Wait()
	rep := finish(t, a, run)
	c := h.Collector(0)
	testhq.CheckClean(t, rep, c, threads*batches*(2*pairs+2))
	if got := rep.Events[bytefrog.MsgExceptionBubble]; got != threads*batches {
		t.Errorf("%d bubbles; want %d", got, threads*batches)
	}
	depth := map[uint16]int{}
	for _, e := range c.Events() {
		tid := e.Thread
		switch e.Type {
		case bytefrog.MsgMethodEntry:
			depth[tid]++
		case bytefrog.MsgMethodExit, bytefrog.MsgExceptionBubble:
			depth[tid]--
		}
		if depth[tid] < 0 || depth[tid] > 1 {
			t.Fatalf("thread %d: depth %d at seq %d: events out of order", tid, depth[tid], e.Seq)
		}
	}
	hosts := 0
	names := c.Names()
	for _, n := range names {
		if len(n) > 5 && n[:5] == "host-" {
			hosts++
		}
	}
	if hosts != threads {
		t.Errorf("%d host threads named; want %d: %v", hosts, threads, names)
	}
	if m := marks(c); m[0] != "batch=a\x00b" {
		t.Errorf("marker %q; want modified UTF-8 decoded", m[0])
	}
}

// TestThreadEnd checks that a host thread that ended and a new thread with
// the same host id get two wire thread ids, each with its own name.
func TestThreadEnd(t *testing.T) {
	h := startHQ(t, nil)
	a, run := startAgent(t, h, testConfig(h.Srv.Addr()))
	m := NewMethod("host/C.end;1;()V")
	for _, name := range []string{"first", "second"} {
		now := monoNow()
		b := host.AppendBatchRecord(nil, batchName, 0, 0, 0, 0, now, name, "")
		b = host.AppendBatchRecord(b, batchEntry, 0, 0, m.ID(), 0, now, "", "")
		b = host.AppendBatchRecord(b, batchExit, 0, 3, m.ID(), 0, now, "", "")
		b = host.AppendBatchRecord(b, batchEnd, 0, 0, 0, 0, now, "", "")
		if _, err := host.SubmitBatch(42, b); err != nil {
			t.Fatal(err)
		}
	}
	rep := finish(t, a, run)
	c := h.Collector(0)
	testhq.CheckClean(t, rep, c, 4)
	byThread := c.ByThread()
	if len(byThread["first"]) != 2 || len(byThread["second"]) != 2 {
		t.Errorf("events by thread %v; want 2 for first and 2 for second", byThread)
	}
}

// TestBatchMarkerStrings checks that host markers keep their text whether
// the host hands over UTF-8 or modified UTF-8, ASCII or not.
func TestBatchMarkerStrings(t *testing.T) {
	h := startHQ(t, nil)
	a, run := startAgent(t, h, testConfig(h.Srv.Addr()))
	tests := []struct {
		flags      uint8
		key, value string
		want       string
	}{
		{0, "ascii", "plain", "ascii=plain"},
		{0, "utf8", "é😀", "utf8=é😀"},
		{0, "nul", "a\x00b", "nul=a\x00b"},
		{batchFlagMUTF8, "mutf8", "a\xc0\x80b\xed\xa0\xbd\xed\xb8\x80", "mutf8=a\x00b😀"},
		{batchFlagMUTF8, "", "", "="},
		{batchFlagMUTF8, "bad", "a\xffb\x00", "bad=a\uFFFDb\x00"}, // not modified UTF-8: converted
		// Valid only together: a character cut between key and value.
		{batchFlagMUTF8, "k\xe2\x82", "\xac", "k\uFFFD\uFFFD=\uFFFD"},
	}
	var b []byte
	for _, tt := range tests {
		b = host.AppendBatchRecord(b, batchMarker, tt.flags, 0, 0, 0, monoNow(), tt.key, tt.value)
	}
	if _, err := host.SubmitBatch(9, b); err != nil {
		t.Fatal(err)
	}
	rep := finish(t, a, run)
	c := h.Collector(0)
	testhq.CheckClean(t, rep, c, len(tests))
	got := marks(c)
	for i, tt := range tests {
		if i >= len(got) || got[i] != tt.want {
			t.Errorf("marker %d: got %q; want %q", i, got, tt.want)
		}
	}
}

// A host may leave anything in the fields its record kind does not use: an
// entry's exception id is not one, and must not be mapped (an id of 8e8
// once made the drain allocate a table that size).
func TestBatchIgnoresUnusedFields(t *testing.T) {
	m := NewMethod("t/T.unused;1;()V").ID()
	b := host.AppendBatchRecord(nil, batchEntry, 0, 0, m, 0, monoNow(), "", "")
	binary.LittleEndian.PutUint32(b[8:], 0x30303030) // exception id of an entry
	mk := host.AppendBatchRecord(nil, batchMarker, 0, 0, 0, 0, monoNow(), "k", "v")
	binary.LittleEndian.PutUint32(mk[4:], 0x30303030) // method id of a marker
	binary.LittleEndian.PutUint32(mk[8:], 0x30303031)
	b = append(b, mk...)
	c := &captureConn{}
	_, end := pipelineSession(t, 64, 64<<10, c)
	if _, err := host.SubmitBatch(1, b); err != nil {
		t.Fatal(err)
	}
	end()
	v := bytefrog.NewEventView(c.buf.Bytes(), bytefrog.Dialect{Version: bytefrog.Version1, Flavor: bytefrog.FlavorBytefrog})
	var types []bytefrog.MsgType
	for v.Next() {
		types = append(types, v.Type())
		if v.Type() == bytefrog.MsgMapException {
			t.Errorf("MapException for an id no record carries")
		}
	}
	if v.Err() != nil || len(types) == 0 {
		t.Fatalf("output: %v, %v", types, v.Err())
	}
}
