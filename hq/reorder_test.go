package hq

import (
	"math"
	"reflect"
	"testing"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

type seqLog struct {
	got    []int32
	breaks []int32 // the event count each break came after, as -(count+1)
}

func (l *seqLog) Message(m *bytefrog.Msg) {
	if m.Type.Sequenced() {
		l.got = append(l.got, m.Seq)
	}
}
func (l *seqLog) DataBreak(seq int32) { l.got = append(l.got, -1000-seq%1000) }
func (l *seqLog) Finish(*Report)      {}

func entries(seqs ...int32) []byte {
	b := bytefrog.AppendMapThreadName(nil, 1, 0, "t")
	b = bytefrog.AppendMapMethodSignature(b, 1, "a/B.c;1;()V")
	for _, s := range seqs {
		b = bytefrog.AppendMethodEntry(b, 0, s, 1, 1)
	}
	return b
}

// TestReorderWrap orders events across the i32 wrap, from two connections,
// with numbers going backwards, a gap, a duplicate and data breaks.
func TestReorderWrap(t *testing.T) {
	const top = math.MaxInt32
	const bottom = math.MinInt32
	d := bytefrog.Dialect{Version: bytefrog.Version1}
	log := &seqLog{}
	c := newCore(testCoreConfig(d), []Processor{log}, nil)
	c.next = top - 3
	c.open(1)
	c.open(2)
	ps := []*chunkParser{nil, newChunkParser(d, 1), newChunkParser(d, 1)}
	feed := func(conn uint16, b []byte) {
		ps[conn].feed(b, func(u *unit) { u.conn = conn; c.handle(u) })
	}
	feed(2, entries(top-1, top, bottom+3))
	c.dataBreak(bottom)                              // pending: the event bottom comes later
	c.dataBreak(bottom + 2)                          // inside the gap
	feed(1, entries(top-3, bottom, top-2, bottom+1)) // top-2 goes backwards on conn 1
	if got := c.held; got != 1 {
		t.Errorf("%d held after the merge; want 1 (bottom+3, waiting for bottom+2)", got)
	}
	feed(2, entries(bottom+1, bottom+4)) // a duplicate (and backwards), then behind the gap
	c.dataBreak(top - 3)                 // passed long ago
	c.ctlClosed, c.sawX = true, true
	for _, conn := range []uint16{1, 2} {
		c.handle(&unit{kind: RecordClose, conn: conn})
		ps[conn].close()
	}
	if !c.done() {
		t.Fatal("core not done with every connection closed")
	}
	rep := c.finish()
	want := []int32{top - 3, top - 2, top - 1, top, -1000 - bottom%1000, bottom, bottom + 1,
		-1000 - (top-3)%1000, -1000 - (bottom+2)%1000, bottom + 3, bottom + 4}
	if !reflect.DeepEqual(log.got, want) {
		t.Errorf("delivered %v; want %v", log.got, want)
	}
	if !reflect.DeepEqual(rep.Gaps, []SeqRange{{bottom + 2, bottom + 2}}) || rep.Missing != 1 {
		t.Errorf("gaps %v (%d missing); want [%d]", rep.Gaps, rep.Missing, int32(bottom+2))
	}
	if !reflect.DeepEqual(rep.Duplicates, []int32{bottom + 1}) || rep.OutOfOrder != 2 {
		t.Errorf("duplicates %v, %d out of order; want [%d], 2", rep.Duplicates, rep.OutOfOrder, int32(bottom+1))
	}
	if !reflect.DeepEqual(rep.DataBreaks, []int32{bottom, bottom + 2}) || !reflect.DeepEqual(rep.LateBreaks, []int32{top - 3}) {
		t.Errorf("breaks %v, late %v; want [%d %d], [%d]", rep.DataBreaks, rep.LateBreaks, int32(bottom), int32(bottom+2), int32(top-3))
	}
	if rep.OK {
		t.Errorf("result %s; want failed (gap)", rep.Result())
	}
}
