package live

import (
	"sync/atomic"
	"testing"
	"time"
)

// pacerFunc is a Pacer that is always pacing.
type pacerFunc func(time.Duration, int)

func (pacerFunc) Paced() bool                         { return true }
func (f pacerFunc) Pace(busy time.Duration, sent int) { f(busy, sent) }

// A producer that encodes on demand publishes from the viewer's request:
// GET_NEXT_INDEX calls the demand hook when the viewer has no packet left,
// and not when it has one; Pace gets every request's time.
func TestDemandAndPace(t *testing.T) {
	tr := newTestTrace()
	var demands, paced, sentBytes atomic.Int64
	tr.SetDemand(func() {
		if demands.Add(1) == 1 {
			tr.Publish(0, Index{PacketSize: 80, ContentSize: 80}, pkt(10, 'd'))
			tr.Publish(0, Index{PacketSize: 80, ContentSize: 80}, pkt(10, 'e'))
		}
	})
	cat := &testCatalog{ss: []Session{&testSession{info: SessionInfo{ID: 1, Hostname: "h", Name: "s", LiveTimer: 1}, trace: tr}}}
	cfg := DefaultConfig()
	cfg.Pacer = pacerFunc(func(d time.Duration, sent int) {
		sentBytes.Add(int64(sent))
		if d < 0 {
			t.Errorf("negative busy time %v", d)
		}
		paced.Add(1)
	})
	_, addr := startServer(t, cat, cfg)
	c := dialTest(t, addr)
	c.connect()
	c.create()
	_, ss := c.attach(1, SeekLast)
	id := ss[1].ID
	if x := c.index(id); x.Status != IndexOK || x.Offset != 0 {
		t.Fatalf("first index after the demand: %+v", x)
	}
	if x := c.index(id); x.Status != IndexOK || x.Offset != 10 {
		t.Fatalf("second index: %+v", x)
	}
	// A packet's bytes, from the trace's own buffer, counted as sent.
	if st, _, data := c.packet(id, 12, 8); st != PacketOK || string(data) != "eeeeeeee" {
		t.Fatalf("packet: %v %q", st, data)
	}
	if n := demands.Load(); n != 1 {
		t.Fatalf("%d demands; want 1 (the second packet was there)", n)
	}
	if x := c.index(id); x.Status != IndexRetry || demands.Load() != 2 {
		t.Fatalf("third index: %+v after %d demands; want RETRY after 2", x, demands.Load())
	}
	tr.End()
	if x := c.index(id); x.Status != IndexHup || demands.Load() != 2 {
		t.Fatalf("after the end: %+v, %d demands; want HUP, no demand", x, demands.Load())
	}
	// connect, create, attach, 4 indexes, a packet: Pace follows each
	// reply, with the packet bytes it carried.
	for deadline := time.Now().Add(5 * time.Second); paced.Load() < 8; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Pace called %d times; want 8", paced.Load())
		}
	}
	if n := paced.Load(); n != 8 {
		t.Fatalf("Pace called %d times; want 8", n)
	}
	if n := sentBytes.Load(); n != 8 {
		t.Fatalf("Pace was told of %d packet bytes; want 8", n)
	}
}
