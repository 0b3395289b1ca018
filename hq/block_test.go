package hq_test

import (
	"testing"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// blockRecorder is a BlockProcessor that logs the events of the blocks it
// gets, and retains them to read them again at the end.
type blockRecorder struct {
	recorder
	blocks []hq.Block
}

func (p *blockRecorder) Events(b hq.Block) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var m bytefrog.Msg
	d := bytefrog.Dialect{Version: bytefrog.Version1, Flavor: bytefrog.FlavorBytefrog}
	for i := range b.Len() {
		if _, err := d.Parse(&m, b.Event(i)); err == nil {
			p.seqs = append(p.seqs, m.Seq)
		}
	}
	b.Retain()
	p.blocks = append(p.blocks, b)
}

// A BlockProcessor gets every event by block, in sequence order, split
// where a data break falls, and no Message per event; a retained block
// still reads the same after the run. Beside it in hq.Processors, a plain
// Processor gets every event by Message.
func TestBlockProcessor(t *testing.T) {
	rec, plain := &blockRecorder{}, &recorder{}
	srv := start(t, func(c *hq.Config) {
		c.NewProcessor = func(*hq.Run) hq.Processor { return hq.Processors{rec, hq.Processors{nil, plain}} }
	})
	a, run, i := started(t, srv)
	g := hqtest.NewGen(bytefrog.FlavorBytefrog)
	must(t, a.DataBreak(100))
	must(t, a.Heartbeat(bytefrog.ModeTracing, 0)) // after the break, on the same connection
	must(t, run.WaitMode(ctxT(t), bytefrog.ModeTracing))
	must(t, a.Write(i, pairs(g, 150))) // seq 0..299, one chunk
	must(t, a.Shutdown(false))
	rep := wait(t, run)
	checkOK(t, rep, 300)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for k, s := range rec.seqs {
		if s != int32(k) {
			t.Fatalf("event %d has seq %d", k, s)
		}
	}
	if len(rec.seqs) != 300 {
		t.Fatalf("%d events by block, want 300", len(rec.seqs))
	}
	if at, ok := rec.breaks[100]; !ok || at != 100 {
		t.Errorf("break delivered after %d events (%v); want between the blocks, after 100", at, ok)
	}
	for _, ty := range rec.types {
		if ty.Sequenced() {
			t.Fatalf("a %v came by Message too", ty)
		}
	}
	plain.mu.Lock()
	if len(plain.seqs) != 300 || plain.breaks[100] != 100 {
		t.Errorf("the plain processor got %d events, its break after %d", len(plain.seqs), plain.breaks[100])
	}
	plain.mu.Unlock()
	n := 0
	d := bytefrog.Dialect{Version: bytefrog.Version1, Flavor: bytefrog.FlavorBytefrog}
	var m bytefrog.Msg
	for _, b := range rec.blocks {
		for j := range b.Len() {
			d.Parse(&m, b.Event(j))
			if m.Seq != int32(n) {
				t.Fatalf("retained event %d reads seq %d", n, m.Seq)
			}
			n++
		}
		b.Release()
	}
}
