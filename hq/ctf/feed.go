package ctf

import (
	"sync"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// Feed sizes.
const (
	// DefaultBacklog is the memory a run keeps for its first viewer while
	// none has come (about 50 k events in 4 read buffers): babeltrace2
	// starts at the end anyway.
	DefaultBacklog = 1 << 20
	// DefaultFeedMax is the memory a watched run keeps ahead of its
	// slowest encoding (about 800 k events): a viewer further behind
	// skips the oldest events, counted as discarded.
	DefaultFeedMax = 16 << 20

	ownedChunk = 64 << 10 // bytes of events copied per item (Message path)
	// pacedFill is the events encoded per demand while a run is
	// ingested (about 200 KB of packets, a fifth of a second at
	// DefaultServeRate): encoding keeps pace with the delivery, and the
	// pacer holds it to its share in small steps.
	pacedFill = 4096
)

// Feed is the hq.BlockProcessor that makes a run a live trace without
// costing its ingest: the run's core hands it the events by reference, a
// block at a time (one call and one atomic reference per block, nothing
// per event), and it keeps them, in sequence order, within a memory cap.
// Nothing is encoded on the ingest's side: a viewer that wants packets
// (live.Trace's demand hook, Fill) encodes the events kept so far into the
// trace, in its own goroutine, at its own pace; the packets are shared by
// every viewer of the run. When the cap is reached the oldest events are
// dropped (mappings and data breaks are kept): an encoding that was behind
// skips them and counts them in the run stream's events_discarded, which
// viewers report as discarded events. Memory is bounded by the cap plus a
// read buffer, whatever the viewers do.
//
// Message, Events, DataBreak and Finish are called by the run's core
// goroutine; Start, Fill and Discard from anywhere.
type Feed struct {
	d     bytefrog.Dialect
	pacer *Pacer // told of the ingest's activity; nil: none

	mu        sync.Mutex // guards the queue below
	items     []item     // items[0] has index head
	head      int64
	headEv    int64 // events in the items before head
	mem       int64 // memory kept by items
	max       int64 // cap of mem: backlog, then feedMax once started
	feedMax   int64
	kept      []item // non-event items dropped from the queue, for the encoding
	last      hq.Block
	hasLast   bool
	finished  bool
	started   bool
	discarded bool
	dropped   int64 // events dropped by the cap

	enc      sync.Mutex // one encoding at a time; guards below
	w        *Writer
	pos      int64 // index of the next item to encode
	posEv    int64 // events in the items before pos
	posIn    int   // events of item pos (a block) encoded already
	lastTick time.Time
	period   time.Duration
	closed   bool
}

// item kinds.
const (
	itemBlock  = iota // events by reference
	itemEvents        // copied events (Message path)
	itemMsg           // a copied mapping
	itemBreak         // a data break
)

type item struct {
	kind   uint8
	seq    int32 // itemBreak
	idx    int64 // index in the queue (kept items)
	events int64
	mem    int64
	b      hq.Block
	raw    []byte
}

// NewFeed returns a feed for w's run. backlog caps the memory kept before
// Start (0: DefaultBacklog); after Start the cap is max(backlog,
// DefaultFeedMax).
func NewFeed(w *Writer, d bytefrog.Dialect, backlog int) *Feed {
	f := newFeed(d, backlog, 0)
	f.setWriter(w)
	return f
}

func newFeed(d bytefrog.Dialect, backlog, feedMax int) *Feed {
	if backlog <= 0 {
		backlog = DefaultBacklog
	}
	if feedMax <= 0 {
		feedMax = DefaultFeedMax
	}
	return &Feed{d: d, max: int64(backlog), feedMax: int64(max(backlog, feedMax))}
}

func (f *Feed) setWriter(w *Writer) {
	f.enc.Lock()
	f.w = w
	f.period = w.cfg.LiveTimer
	f.enc.Unlock()
}

// Start raises the cap to the watched size: a viewer has come. It is
// idempotent.
func (f *Feed) Start() {
	f.mu.Lock()
	f.started = true
	f.max = f.feedMax
	f.mu.Unlock()
}

// Started reports whether Start was called.
func (f *Feed) Started() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.started
}

// Discard releases everything kept and keeps nothing more (nobody will
// read the run live). It is idempotent.
func (f *Feed) Discard() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.discarded = true
	for i := range f.items {
		if f.items[i].kind == itemBlock {
			f.items[i].b.Release()
		}
		f.headEv += f.items[i].events
	}
	f.head += int64(len(f.items))
	f.items, f.kept, f.hasLast = nil, nil, false
	f.mem = 0
}

// Events implements hq.BlockProcessor: it keeps b by reference.
func (f *Feed) Events(b hq.Block) {
	f.pacer.ingesting(b.Len())
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.discarded {
		return
	}
	b.Retain()
	it := item{kind: itemBlock, b: b, events: int64(b.Len())}
	if !f.hasLast || !b.SameBuffer(f.last) {
		it.mem = hq.BlockBufferSize
	}
	f.last, f.hasLast = b, true
	f.push(it)
}

// Message implements hq.Processor: it copies the mappings the trace
// shows (and the events, for a core that does not hand blocks).
func (f *Feed) Message(m *bytefrog.Msg) {
	switch m.Type {
	case bytefrog.MsgMethodEntry, bytefrog.MsgMethodExit, bytefrog.MsgException, bytefrog.MsgExceptionBubble,
		bytefrog.MsgMethodVisit, bytefrog.MsgMarker:
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.discarded {
			return
		}
		if n := len(f.items); n > 0 && f.items[n-1].kind == itemEvents && len(f.items[n-1].raw)+len(m.Raw) <= cap(f.items[n-1].raw) {
			last := &f.items[n-1]
			last.raw = append(last.raw, m.Raw...)
			last.events++
			return
		}
		raw := append(make([]byte, 0, max(ownedChunk, len(m.Raw))), m.Raw...)
		f.push(item{kind: itemEvents, raw: raw, events: 1, mem: int64(cap(raw))})
	case bytefrog.MsgMapThreadName, bytefrog.MsgMapMethodSignature, bytefrog.MsgMapException,
		bytefrog.MsgMapSourceLocation, bytefrog.MsgSourceLocationCount:
		f.mu.Lock()
		defer f.mu.Unlock()
		if !f.discarded {
			f.push(item{kind: itemMsg, raw: append([]byte(nil), m.Raw...), mem: int64(len(m.Raw))})
		}
	}
}

// DataBreak implements hq.Processor.
func (f *Feed) DataBreak(seq int32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.discarded {
		f.push(item{kind: itemBreak, seq: seq})
	}
}

// Finish implements hq.Processor: the run is complete; the encoding ends
// the trace when it gets there.
func (f *Feed) Finish(*hq.Report) {
	f.mu.Lock()
	f.finished = true
	f.mu.Unlock()
}

// push queues it and drops the oldest items beyond the cap; f.mu is held.
func (f *Feed) push(it item) {
	f.items = append(f.items, it)
	f.mem += it.mem
	for f.mem > f.max && len(f.items) > 1 {
		old := f.items[0]
		f.items[0] = item{}
		f.items = f.items[1:]
		f.mem -= old.mem
		switch old.kind {
		case itemBlock:
			old.b.Release()
		case itemMsg, itemBreak:
			// Later events need the names: kept for the encoding.
			old.idx = f.head
			f.kept = append(f.kept, old)
		}
		f.head++
		f.headEv += old.events
		f.dropped += old.events
	}
	if cap(f.items) > 64 && len(f.items) < cap(f.items)/4 {
		f.items = append([]item(nil), f.items...) // let the dropped front go
	}
}

// Fill encodes the events kept and not encoded yet into the trace (the
// viewer's demand), cuts the packets every live-timer period, and ends
// the trace once the run is complete and encoded. It returns at once when
// there is nothing new.
func (f *Feed) Fill() {
	f.enc.Lock()
	defer f.enc.Unlock()
	if f.w == nil || f.closed {
		return
	}
	w := f.w
	var m bytefrog.Msg
	f.mu.Lock()
	end := f.head + int64(len(f.items))
	f.mu.Unlock()
	budget := -1 // events left to encode; negative: no limit
	if f.pacer.active() {
		// Small steps while a run is ingested, so that encoding follows
		// the paced delivery and the pacer holds it to its share evenly.
		budget = pacedFill
	}
	for f.pos < end && budget != 0 {
		if budget < 0 && f.pacer.active() {
			budget = pacedFill // the ingest resumed meanwhile
		}
		f.mu.Lock()
		if f.pos < f.head {
			// Dropped before we got there: names and breaks are kept.
			var kept []item
			for _, k := range f.kept {
				if k.idx >= f.pos {
					kept = append(kept, k)
				}
			}
			f.kept = f.kept[:0]
			skipped := f.headEv - f.posEv - int64(f.posIn)
			f.pos, f.posEv, f.posIn = f.head, f.headEv, 0
			f.mu.Unlock()
			w.mu.Lock()
			if skipped > 0 {
				w.run.discarded += uint64(skipped)
				if w.run.buf == nil {
					// A packet carries the count, even with no event.
					w.run.buf = make([]byte, PacketOverhead, w.cfg.PacketSize)
					w.run.begin = w.clock
				}
			}
			for i := range kept {
				f.encode(w, &m, &kept[i], 0, -1)
			}
			w.mu.Unlock()
			continue
		}
		it := f.items[f.pos-f.head]
		if it.kind == itemBlock {
			it.b.Retain() // dropping it meanwhile must not free it
		}
		f.mu.Unlock()
		w.mu.Lock()
		to := f.encode(w, &m, &it, f.posIn, budget)
		w.mu.Unlock()
		if it.kind == itemBlock {
			it.b.Release()
		}
		n := int(it.events)
		if it.kind == itemBlock {
			n = to - f.posIn
		}
		if budget > 0 {
			budget = max(budget-n, 0)
		}
		if it.kind == itemBlock && to < it.b.Len() {
			f.posIn = to // the budget ran out inside the block
			continue
		}
		f.pos++
		f.posEv += it.events
		f.posIn = 0
		if f.pos%64 == 0 {
			f.forgetEncoded()
		}
	}
	f.forgetEncoded()
	f.mu.Lock()
	finished := f.finished && f.pos == f.head+int64(len(f.items))
	f.mu.Unlock()
	switch {
	case finished:
		f.closed = true
		w.Close()
		f.Discard()
	case time.Since(f.lastTick) >= f.period:
		f.lastTick = time.Now()
		w.Tick()
	}
}

// forgetEncoded releases the items encoded already: their read buffers go
// back to the ingest. f.enc is held.
func (f *Feed) forgetEncoded() {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := int(f.pos - f.head)
	if n <= 0 || f.discarded {
		return
	}
	for i := range n {
		it := &f.items[i]
		f.mem -= it.mem
		if it.kind == itemBlock {
			it.b.Release()
		}
		*it = item{}
	}
	f.items = f.items[n:]
	f.head, f.headEv = f.pos, f.posEv
	if cap(f.items) > 64 && len(f.items) < cap(f.items)/4 {
		f.items = append([]item(nil), f.items...)
	}
}

// encode writes one item, or of a block the events from on, at most
// budget of them (negative: no limit); it returns where a block's
// encoding stopped. w.mu is held.
func (f *Feed) encode(w *Writer, m *bytefrog.Msg, it *item, from, budget int) int {
	switch it.kind {
	case itemBlock:
		to := it.b.Len()
		if budget >= 0 {
			to = min(to, from+budget)
		}
		for i := from; i < to; i++ {
			if _, err := f.d.Parse(m, it.b.Event(i)); err == nil {
				w.messageLocked(m)
			}
		}
		return to
	case itemEvents, itemMsg:
		for d := it.raw; len(d) > 0; {
			n, err := f.d.Parse(m, d)
			if err != nil || n <= 0 {
				break // cannot happen: the core parsed these bytes
			}
			w.messageLocked(m)
			d = d[n:]
		}
	case itemBreak:
		w.dataBreakLocked(it.seq)
	}
	return 0
}

// Kept returns the memory the feed keeps and the events it dropped.
func (f *Feed) Kept() (mem, dropped int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mem, f.dropped
}

var _ hq.BlockProcessor = (*Feed)(nil)
