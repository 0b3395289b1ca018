package ctf

import (
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

func raw(m *bytefrog.Msg, b []byte) *bytefrog.Msg { m.Raw = b; return m }

func sigMsg(id int32, sig string) *bytefrog.Msg {
	m := &bytefrog.Msg{Type: bytefrog.MsgMapMethodSignature, MethodID: id, Text: []byte(sig)}
	return raw(m, bytefrog.AppendMapMethodSignature(nil, id, sig))
}

// runDiscarded returns the last events_discarded of the run stream.
func runDiscarded(s *recSink) uint64 {
	var d uint64
	for i, st := range s.streamOf {
		if st == 0 {
			d = s.idx[i].EventsDiscarded
		}
	}
	return d
}

// Nothing is encoded until a viewer asks (Fill); then every event kept
// is, packets are cut, and the trace ends once the run is complete.
func TestFeedEncodesOnDemand(t *testing.T) {
	sink := &recSink{}
	w, _ := NewWriter(sink, &Config{Start: t0, LiveTimer: time.Hour})
	f := NewFeed(w, bytefrog.Dialect{Version: 4}, 0)
	f.Message(sigMsg(1, "a/B.c;1;()V"))
	var buf []byte
	for i := int32(0); i < 1000; i++ {
		buf = bytefrog.AppendMethodEntry(buf[:0], 1, i, 1, 1)
		f.Message(raw(entry(i, 1, 1, 1), buf))
	}
	if ev, _ := w.Stats(); ev != 0 {
		t.Fatalf("%d events encoded before a viewer asked", ev)
	}
	f.Fill()
	if ev, _ := w.Stats(); ev != 1001 {
		t.Fatalf("%d events encoded, want 1001", ev)
	}
	if len(sink.packets) == 0 {
		t.Fatal("the first demand did not cut the packets (live timer)")
	}
	if mem, _ := f.Kept(); mem != 0 {
		t.Fatalf("%d bytes kept once encoded", mem)
	}
	n := len(sink.packets)
	f.Fill() // nothing new, within the live timer: nothing happens
	if len(sink.packets) != n || sink.ended {
		t.Fatal("an idle demand published packets or ended the trace")
	}
	f.Finish(nil)
	f.Fill()
	if !sink.ended {
		t.Fatal("the trace did not end after the run")
	}
	if mem, _ := f.Kept(); mem != 0 {
		t.Fatalf("%d bytes kept after the end", mem)
	}
}

// A run that outgrows the cap drops its oldest events, never a mapping,
// and the encoding counts them as discarded on the run stream.
func TestFeedDropsOldestKeepsMappings(t *testing.T) {
	sink := &recSink{}
	w, _ := NewWriter(sink, &Config{Start: t0, LiveTimer: time.Hour})
	f := NewFeed(w, bytefrog.Dialect{Version: 4}, 4*ownedChunk)
	f.Message(sigMsg(1, "a/B.c;1;()V"))
	const n = 100_000 // 1.5 MB: more than the cap
	var buf []byte
	for i := int32(0); i < n; i++ {
		buf = bytefrog.AppendMethodEntry(buf[:0], 1, i, 1, 1)
		f.Message(raw(entry(i, 1, 1, 1), buf))
		if i == n/4 {
			f.Message(sigMsg(2, "a/B.d;1;()V"))
			f.DataBreak(i + 1)
		}
	}
	if mem, dropped := f.Kept(); mem > 5*ownedChunk || dropped == 0 {
		t.Fatalf("kept %d bytes (cap %d), dropped %d events", mem, 4*ownedChunk, dropped)
	}
	f.Finish(nil)
	f.Fill()
	if w.methods.get(2) != "a/B.d;1;()V" || w.methods.get(1) != "a/B.c;1;()V" {
		t.Fatal("a mapping among dropped events was lost")
	}
	written, _ := w.Stats()
	d := runDiscarded(sink)
	// written counts the two mappings and the data break.
	if d == 0 || int64(d)+written != n+3 {
		t.Fatalf("written %d, discarded %d; want every one of %d accounted for", written, d, n+3)
	}
}

// A viewer that lags while the run goes on resumes at the oldest event
// kept, with the skipped events counted; Start raises the cap.
func TestFeedLaggingViewer(t *testing.T) {
	sink := &recSink{}
	w, _ := NewWriter(sink, &Config{Start: t0, LiveTimer: time.Hour})
	f := NewFeed(w, bytefrog.Dialect{Version: 4}, 2*ownedChunk)
	f.Start()
	var buf []byte
	seq := int32(0)
	add := func(k int) {
		for range k {
			buf = bytefrog.AppendMethodEntry(buf[:0], 1, seq, 1, 1)
			f.Message(raw(entry(seq, 1, 1, 1), buf))
			seq++
		}
	}
	add(1000)
	f.Fill()
	add(2_000_000) // 30 MB: beyond DefaultFeedMax
	if mem, _ := f.Kept(); mem > DefaultFeedMax+ownedChunk || mem < DefaultFeedMax/2 {
		t.Fatalf("kept %d bytes after Start, cap %d", mem, DefaultFeedMax)
	}
	f.Finish(nil)
	f.Fill()
	written, _ := w.Stats()
	d := runDiscarded(sink)
	if d == 0 || int64(d)+written != int64(seq) {
		t.Fatalf("written %d, discarded %d of %d", written, d, seq)
	}

	// Discard frees a run nobody watches.
	w2, _ := NewWriter(&recSink{}, nil)
	f2 := NewFeed(w2, bytefrog.Dialect{Version: 4}, 0)
	f2.Message(raw(entry(0, 1, 1, 1), bytefrog.AppendMethodEntry(nil, 1, 0, 1, 1)))
	f2.Discard()
	f2.Message(raw(entry(1, 1, 1, 1), bytefrog.AppendMethodEntry(nil, 1, 1, 1, 1)))
	if mem, _ := f2.Kept(); mem != 0 {
		t.Fatalf("kept %d bytes after Discard", mem)
	}
}

// While a run is ingested, a demand encodes a few thousand events, not
// everything kept; once the ingest stops, the next demand encodes the
// rest, and nothing is lost.
func TestFeedPacedFill(t *testing.T) {
	sink := &recSink{}
	w, _ := NewWriter(sink, &Config{Start: t0, LiveTimer: time.Hour})
	f := NewFeed(w, bytefrog.Dialect{Version: 4}, 0)
	f.pacer = NewPacer(DefaultServeShare, DefaultServeRate, -1)
	f.Start()
	f.pacer.ingesting(4096)
	var buf []byte
	const n = 50_000
	for i := int32(0); i < n; i++ {
		buf = bytefrog.AppendMethodEntry(buf[:0], 1, i, 1, 1)
		f.Message(raw(entry(i, 1, 1, 1), buf))
	}
	f.Fill()
	// Copied events come in items of up to ownedChunk bytes: a paced
	// demand stops after the item that reaches pacedFill.
	perItem := ownedChunk / len(buf)
	if ev, _ := w.Stats(); ev < pacedFill || ev > pacedFill+int64(perItem) {
		t.Fatalf("a paced demand encoded %d events; want %d to %d", ev, pacedFill, pacedFill+perItem)
	}
	time.Sleep(ingestQuiet + 50*time.Millisecond)
	f.Finish(nil)
	f.Fill()
	if ev, _ := w.Stats(); ev != n || runDiscarded(sink) != 0 || !sink.ended {
		t.Fatalf("after the ingest: %d events encoded, %d discarded, ended %v; want %d, 0, true", ev,
			runDiscarded(sink), sink.ended, n)
	}
}
