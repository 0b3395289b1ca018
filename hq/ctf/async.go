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
)

// Async is an hq.Processor that encodes on its own goroutine, so that a
// live run's ingest pays only a copy of each message's bytes. When the
// encoder falls behind by asyncQueue batches, the events of the next batch
// are dropped (its mappings are kept) and counted: the run stream's
// events_discarded tells viewers ("discarded events"). Message, DataBreak
// and Finish are called from the run's core goroutine only.
type Async struct {
	w *Writer
	d bytefrog.Dialect

	mu      sync.Mutex // guards cur, dropped and closed against the timer
	closed  bool
	stop    chan struct{}
	cur     batch
	ch      chan batch
	free    chan []byte
	done    chan struct{}
	dropped int64
}

type batch struct {
	data    []byte
	events  int64    // sequenced events in data
	maps    [][2]int // offsets of the mappings in data
	dropped int64    // events dropped before this batch
	tick    bool     // after data: the live timer ticks
}

// NewAsync starts w's encoder goroutine and its live timer (w's
// LiveTimer: each tick hands over the pending messages, then cuts the
// packets); messages are re-read with d. Do not Start w.
func NewAsync(w *Writer, d bytefrog.Dialect) *Async {
	a := &Async{w: w, d: d, ch: make(chan batch, asyncQueue), free: make(chan []byte, asyncQueue+2),
		done: make(chan struct{}), stop: make(chan struct{})}
	go a.encode()
	go a.timer(w.cfg.LiveTimer)
	return a
}

func (a *Async) timer(period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			a.mu.Lock()
			if !a.closed {
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

// flush hands the current batch to the encoder, or drops its events when
// the encoder is asyncQueue batches behind.
func (a *Async) flush() {
	b := a.cur
	b.dropped = a.dropped
	a.cur = batch{}
	select {
	case a.ch <- b:
		a.dropped = 0
		return
	default:
	}
	// Keep the mappings: later events need their names.
	a.dropped += b.events
	keep := b.data[:0:0]
	for _, r := range b.maps {
		keep = append(keep, b.data[r[0]:r[1]]...)
	}
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

// Finish implements hq.Processor: the encoder writes what is queued and
// ends the trace on its own; Finish does not wait for it.
func (a *Async) Finish(r *hq.Report) {
	close(a.stop)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	if len(a.cur.data) > 0 || a.dropped > 0 {
		b := a.cur
		b.dropped = a.dropped
		a.ch <- b // blocks at most until the encoder takes one batch
	}
	a.cur = batch{}
	close(a.ch)
}

// Wait waits until the encoder has written everything and ended the
// trace.
func (a *Async) Wait() { <-a.done }

func (a *Async) encode() {
	defer close(a.done)
	defer a.w.Close()
	var m bytefrog.Msg
	for b := range a.ch {
		a.w.mu.Lock()
		if b.dropped > 0 {
			a.w.run.discarded += uint64(b.dropped)
		}
		for d := b.data; len(d) > 0; {
			n, err := a.d.Parse(&m, d)
			if err != nil || n <= 0 {
				break // cannot happen: the core parsed these bytes
			}
			a.w.messageLocked(&m)
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
}

var _ hq.Processor = (*Async)(nil)
