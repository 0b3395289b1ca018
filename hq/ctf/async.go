package ctf

import (
	"sync"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// Async sizes: the run's core hands its messages to the encoder in
// batches of about asyncBatch bytes; at most asyncQueue batches wait.
const (
	asyncBatch = 64 << 10
	asyncQueue = 64 // 4 MiB

	// DefaultBacklog is the bytes of a run kept for its first viewer
	// (about 60 k events): babeltrace2 starts at the end anyway.
	DefaultBacklog = 1 << 20
)

// Async is an hq.Processor that encodes on its own goroutine, and only
// once a viewer wants the trace (Start), so that a live run's ingest pays
// a copy of each message's bytes, and nothing more while nobody watches.
//
// Before Start the batches wait in a backlog of at most maxBacklog bytes:
// beyond, the oldest batch's events are dropped (its mappings are kept).
// After Start, when the encoder falls behind by asyncQueue batches, the
// events of the next batch are dropped (mappings kept). Dropped events are
// counted on the run stream's events_discarded, which viewers report as
// discarded events. Message, DataBreak and Finish are called from the
// run's core goroutine only; Start and Discard from anywhere.
type Async struct {
	w *Writer
	d bytefrog.Dialect

	mu         sync.Mutex // guards everything below against the timer and Start
	closed     bool       // Finish was called
	started    bool
	backlog    []batch
	backBytes  int
	maxBacklog int
	kept       []byte // mappings of backlog batches dropped
	cur        batch
	dropped    int64

	ch      chan batch
	startCh chan []batch // the backlog, once; closed without it by Discard
	once    sync.Once
	free    chan []byte
	stop    chan struct{}
	done    chan struct{}
}

type batch struct {
	data    []byte
	events  int64    // sequenced events in data
	maps    [][2]int // offsets of the mappings in data
	dropped int64    // events dropped before this batch
	tick    bool     // after data: the live timer ticks
}

// NewAsync returns a processor feeding w; its encoder waits for Start.
// maxBacklog bounds the bytes kept before Start (0: DefaultBacklog). Its live
// timer (w's LiveTimer) hands over the pending messages, then cuts the
// packets. Do not Start w itself.
func NewAsync(w *Writer, d bytefrog.Dialect, maxBacklog int) *Async {
	a := newAsync(d, maxBacklog, w.cfg.LiveTimer)
	a.w = w
	return a
}

// newAsync is NewAsync with the writer set later, by setWriter, before
// Start.
func newAsync(d bytefrog.Dialect, maxBacklog int, period time.Duration) *Async {
	if maxBacklog <= 0 {
		maxBacklog = DefaultBacklog
	}
	a := &Async{d: d, maxBacklog: maxBacklog, ch: make(chan batch, asyncQueue),
		startCh: make(chan []batch, 1), free: make(chan []byte, asyncQueue+2),
		done: make(chan struct{}), stop: make(chan struct{})}
	go a.encode()
	go a.timer(period)
	return a
}

func (a *Async) setWriter(w *Writer) {
	a.mu.Lock()
	a.w = w
	a.mu.Unlock()
}

// Start makes the encoder write the backlog and follow the run from now
// on. It is idempotent.
func (a *Async) Start() {
	a.once.Do(func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.started = true
		var first []batch
		if len(a.kept) > 0 || a.dropped > 0 {
			first = append(first, batch{data: a.kept, dropped: a.dropped})
			a.kept, a.dropped = nil, 0
		}
		a.startCh <- append(first, a.backlog...)
		a.backlog, a.backBytes = nil, 0
	})
}

// Discard gives up a trace never started: its backlog is freed and the
// encoder ends. It is idempotent, and does nothing after Start.
func (a *Async) Discard() {
	a.once.Do(func() {
		a.mu.Lock()
		a.backlog, a.kept = nil, nil
		a.mu.Unlock()
		close(a.startCh)
	})
}

func (a *Async) timer(period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			a.mu.Lock()
			if !a.closed && a.started {
				// Non-blocking: an encoder this far behind cuts packets
				// on size anyway.
				b := a.cur
				b.dropped, b.tick = a.dropped, true
				select {
				case a.ch <- b:
					a.cur, a.dropped = batch{}, 0
				default:
				}
			}
			a.mu.Unlock()
		case <-a.stop:
			return
		}
	}
}

// Message implements hq.Processor: it copies the messages the CTF trace
// shows.
func (a *Async) Message(m *bytefrog.Msg) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch m.Type {
	case bytefrog.MsgMethodEntry, bytefrog.MsgMethodExit, bytefrog.MsgException, bytefrog.MsgExceptionBubble,
		bytefrog.MsgMethodVisit, bytefrog.MsgMarker:
		a.cur.events++
	case bytefrog.MsgMapThreadName, bytefrog.MsgMapMethodSignature, bytefrog.MsgMapException,
		bytefrog.MsgMapSourceLocation, bytefrog.MsgSourceLocationCount:
		a.cur.maps = append(a.cur.maps, [2]int{len(a.cur.data), len(a.cur.data) + len(m.Raw)})
	default:
		return
	}
	a.add(m.Raw)
}

func (a *Async) add(raw []byte) {
	if a.cur.data == nil {
		select {
		case b := <-a.free:
			a.cur.data = b[:0]
		default:
			a.cur.data = make([]byte, 0, asyncBatch+1024)
		}
	}
	a.cur.data = append(a.cur.data, raw...)
	if len(a.cur.data) >= asyncBatch {
		a.flush()
	}
}

// mappings returns the mapping messages of b.
func (b *batch) mappings(dst []byte) []byte {
	for _, r := range b.maps {
		dst = append(dst, b.data[r[0]:r[1]]...)
	}
	return dst
}

// flush hands the current batch to the encoder (or to the backlog before
// Start); a.mu is held.
func (a *Async) flush() {
	b := a.cur
	a.cur = batch{}
	if !a.started {
		a.backlog = append(a.backlog, b)
		a.backBytes += len(b.data)
		for a.backBytes > a.maxBacklog && len(a.backlog) > 1 {
			old := a.backlog[0]
			a.backlog = a.backlog[1:]
			a.backBytes -= len(old.data)
			a.dropped += old.events
			a.kept = old.mappings(a.kept)
			select {
			case a.free <- old.data: // reused: no fresh memory per batch
			default:
			}
		}
		return
	}
	b.dropped = a.dropped
	select {
	case a.ch <- b:
		a.dropped = 0
		return
	default:
	}
	// The encoder is behind: drop the events, keep the mappings (later
	// events need their names).
	a.dropped += b.events
	keep := b.mappings(nil)
	a.cur.data = append(b.data[:0], keep...)
	off := 0
	for _, r := range b.maps {
		n := r[1] - r[0]
		a.cur.maps = append(a.cur.maps, [2]int{off, off + n})
		off += n
	}
}

// DataBreak implements hq.Processor.
func (a *Async) DataBreak(seq int32) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.add(bytefrog.AppendDataBreak(nil, seq))
}

// Finish implements hq.Processor: the encoder writes what is queued (once
// started) and ends the trace on its own; Finish does not wait for it.
func (a *Async) Finish(r *hq.Report) {
	close(a.stop)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	if len(a.cur.data) > 0 {
		if a.started {
			b := a.cur
			b.dropped, a.dropped = a.dropped, 0
			a.ch <- b // blocks at most until the encoder takes one batch
		} else {
			a.backlog = append(a.backlog, a.cur)
		}
	}
	if a.started && a.dropped > 0 {
		a.ch <- batch{dropped: a.dropped}
	}
	a.cur = batch{}
	close(a.ch)
}

// Wait waits until the encoder has ended (after Finish and Start, or
// Discard).
func (a *Async) Wait() { <-a.done }

func (a *Async) encode() {
	defer close(a.done)
	backlog, ok := <-a.startCh
	if !ok {
		for range a.ch { // Discard: drain until Finish
		}
		return
	}
	a.mu.Lock()
	w := a.w // set before Start
	a.mu.Unlock()
	defer w.Close()
	var m bytefrog.Msg
	for _, b := range backlog {
		a.write(&m, b)
	}
	for b := range a.ch {
		a.write(&m, b)
	}
}

func (a *Async) write(m *bytefrog.Msg, b batch) {
	a.w.mu.Lock()
	if b.dropped > 0 {
		a.w.run.discarded += uint64(b.dropped)
	}
	for d := b.data; len(d) > 0; {
		n, err := a.d.Parse(m, d)
		if err != nil || n <= 0 {
			break // cannot happen: the core parsed these bytes
		}
		a.w.messageLocked(m)
		d = d[n:]
	}
	if b.tick && !a.w.ended {
		a.w.tickLocked()
	}
	a.w.mu.Unlock()
	select {
	case a.free <- b.data:
	default:
	}
}

var _ hq.Processor = (*Async)(nil)
