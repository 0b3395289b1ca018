package ctf

import (
	"sync"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
	"github.com/tadpole-trace/tadpole/transport/live"
)

// gateSink blocks Publish until opened.
type gateSink struct {
	mu   sync.Mutex
	rec  recSink
	gate chan struct{}
}

func (s *gateSink) AppendMetadata(b []byte) { s.rec.AppendMetadata(b) }
func (s *gateSink) AddStream(c uint64, ch string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rec.AddStream(c, ch)
}
func (s *gateSink) Publish(st int, idx live.Index, data []byte) error {
	<-s.gate
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rec.Publish(st, idx, data)
}
func (s *gateSink) Beacon(st int, ts uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rec.Beacon(st, ts)
}
func (s *gateSink) End() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rec.End()
}

func raw(m *bytefrog.Msg, b []byte) *bytefrog.Msg { m.Raw = b; return m }

// The live timer hands over a small batch: a quiet run still shows.
func TestAsyncTimerFlushes(t *testing.T) {
	sink := &gateSink{gate: make(chan struct{})}
	close(sink.gate)
	w, _ := NewWriter(sink, &Config{Start: t0, LiveTimer: 20 * time.Millisecond})
	a := NewAsync(w, bytefrog.Dialect{Version: 4}, 0)
	a.Start()
	a.Message(raw(entry(0, 1, 1, 1), bytefrog.AppendMethodEntry(nil, 1, 0, 1, 1)))
	deadline := time.Now().Add(5 * time.Second)
	for {
		sink.mu.Lock()
		n := len(sink.rec.packets)
		sink.mu.Unlock()
		if ev, _ := w.Stats(); ev > 0 && n > 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the event was not written within the live timer")
		}
		time.Sleep(5 * time.Millisecond)
	}
	a.Finish(nil)
	a.Wait()
}

// An encoder that falls behind loses events, never mappings, and the run
// stream counts them as discarded.
func TestAsyncDropsWhenBehind(t *testing.T) {
	sink := &gateSink{gate: make(chan struct{})}
	w, _ := NewWriter(sink, &Config{Start: t0, PacketSize: MinPacketSize, LiveTimer: time.Hour})
	a := NewAsync(w, bytefrog.Dialect{Version: 4}, 0)
	a.Start()
	sig := bytefrog.AppendMapMethodSignature(nil, 1, "a/B.c;1;()V")
	var m bytefrog.Msg
	m.Type, m.MethodID, m.Text = bytefrog.MsgMapMethodSignature, 1, []byte("a/B.c;1;()V")
	a.Message(raw(&m, sig))
	const n = 600_000 // 9 MB: far more than asyncQueue batches
	var buf []byte
	for i := int32(0); i < n; i++ {
		buf = bytefrog.AppendMethodEntry(buf[:0], 1, i, 1, 1)
		a.Message(raw(entry(i, 1, 1, 1), buf))
		if i == n/2 {
			// a mapping in a batch that is dropped is kept
			s2 := bytefrog.AppendMapMethodSignature(nil, 2, "a/B.d;1;()V")
			var m2 bytefrog.Msg
			m2.Type, m2.MethodID, m2.Text = bytefrog.MsgMapMethodSignature, 2, []byte("a/B.d;1;()V")
			a.Message(raw(&m2, s2))
		}
	}
	close(sink.gate)
	a.Finish(nil)
	a.Wait()
	if a.w.methods.get(2) != "a/B.d;1;()V" {
		t.Fatal("a mapping in a dropped batch was lost")
	}
	written, _ := w.Stats()
	var discarded uint64
	for i, st := range sink.rec.streamOf {
		if st == 0 {
			discarded = sink.rec.idx[i].EventsDiscarded
		}
	}
	if discarded == 0 || int64(discarded)+written < n {
		t.Fatalf("written %d, discarded %d; want some discarded and every event accounted for (%d)", written, discarded, n)
	}
}

// Before a viewer starts the encoder, nothing is encoded; the backlog is
// bounded, dropping its oldest events but no mapping.
func TestAsyncBacklog(t *testing.T) {
	sink := &gateSink{gate: make(chan struct{})}
	close(sink.gate)
	w, _ := NewWriter(sink, &Config{Start: t0, LiveTimer: time.Hour})
	a := NewAsync(w, bytefrog.Dialect{Version: 4}, 4*asyncBatch)
	var m bytefrog.Msg
	m.Type, m.MethodID, m.Text = bytefrog.MsgMapMethodSignature, 1, []byte("a/B.c;1;()V")
	a.Message(raw(&m, bytefrog.AppendMapMethodSignature(nil, 1, "a/B.c;1;()V")))
	const n = 100_000 // 1.5 MB: more than the backlog
	var buf []byte
	for i := int32(0); i < n; i++ {
		buf = bytefrog.AppendMethodEntry(buf[:0], 1, i, 1, 1)
		a.Message(raw(entry(i, 1, 1, 1), buf))
	}
	if ev, _ := w.Stats(); ev != 0 {
		t.Fatalf("%d events encoded before Start", ev)
	}
	a.Start()
	a.Finish(nil)
	a.Wait()
	written, _ := w.Stats()
	var discarded uint64
	for i, st := range sink.rec.streamOf {
		if st == 0 {
			discarded = sink.rec.idx[i].EventsDiscarded
		}
	}
	if w.methods.get(1) != "a/B.c;1;()V" || discarded == 0 || int64(discarded)+written != n+1 {
		t.Fatalf("written %d (mapping included), discarded %d; want %d in all, some discarded", written, discarded, n+1)
	}

	// Discard frees a trace nobody started.
	w2, _ := NewWriter(&recSink{}, nil)
	a2 := NewAsync(w2, bytefrog.Dialect{Version: 4}, 0)
	a2.Message(raw(entry(0, 1, 1, 1), bytefrog.AppendMethodEntry(nil, 1, 0, 1, 1)))
	a2.Discard()
	a2.Finish(nil)
	a2.Wait()
}
