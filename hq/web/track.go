package web

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/calltree"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// ev is one message waiting in a batch.
type ev struct {
	typ    bytefrog.MsgType
	tid    uint16
	at     int32
	method int32
	exc    int32 // the exception; for mappings and markers, the index of their text in the batch
	seq    int32 // markers, DataBreak; exception mappings: the exception id
}

// span is one bar of the timeline: calls at depth on thread tid from
// start to end (ms). Calls of at most a millisecond that follow each other
// within a millisecond are merged into one span (count of them; mixed when
// they were not all of method, the first one's); a longer call always has
// a span of its own.
type span struct {
	tid     uint16
	depth   uint8
	bubbled bool // a call of it ended by an exception
	short   bool // made of calls of at most 1 ms: later short calls may join
	mixed   bool
	method  int32
	start   int32
	end     int32
	count   int32
}

// tlFrame is one open call of a thread, as the timeline sees it.
type tlFrame struct {
	method int32
	start  int32
}

// tlThread is the timeline state of one thread.
type tlThread struct {
	stack   []tlFrame // at most maxStack
	deep    int       // calls entered beyond maxStack, still open
	pending []span    // per depth: the span that may still grow
	last    int32
	bubble  bubbling // an exception on its way up, when bubbling
	bubbles bool
}

// bubbling is an exception leaving calls on one thread.
type bubbling struct {
	exc     int32
	thrower int32   // the method that threw it; -1 when no throw was seen
	path    []int32 // the calls it ended, innermost first
	more    bool    // longer than maxBubbleLen
}

// bubblePath counts one way an exception took.
type bubblePath struct {
	exc     int32
	thrower int32
	path    []int32
	more    bool
	caught  int32 // the method it was caught in; -1 when it left the thread's outermost call
	count   int64
	last    int32
}

// marker is one marker or log record.
type marker struct {
	seq        int32
	at         int32
	key, value string
}

// batch is a run of messages handed from the run's core goroutine to the
// tracker's worker.
type batch struct {
	evs   []ev
	texts []string        // of mappings and markers: ev.exc indexes them (2 per marker)
	end   bool            // the run ended: Finish with report
	rep   *hq.Report      // for end
	done  chan<- struct{} // closed once the batch is taken in, if not nil
}

// Batches waiting for the worker; the run's core waits when they are all
// taken (the page then slows the run, never loses events).
const queuedBatches = 64

// tracker follows one run: it is the run's hq.Processor and holds what the
// page reads. The core goroutine calls Message, DataBreak and Finish, which
// only copy what matters into a batch; a worker goroutine takes the
// batches in, under mu, so that the run's core does not wait for the tree
// and readers wait at most one batch.
type tracker struct {
	key   int
	run   *hq.Run // nil in benchmarks
	cfg   *Config
	cur   *batch // being filled: core goroutine only
	queue chan *batch
	free  chan *batch
	ended bool              // Finish was called: core goroutine only
	keys  map[string]string // marker keys as received: their strings (markerKey; core goroutine only)
	// lossless makes the run's core wait for the worker instead of
	// leaving calls out (benchmarks measure the page's own rate so).
	lossless bool

	dropped        atomic.Int64 // calls left out: the worker was behind
	droppedMarkers atomic.Int64
	breaks         atomic.Int64 // data breaks of the page's own

	mu        sync.Mutex // guards everything below, and tree
	tree      *calltree.Tree
	threads   []*tlThread
	names     []int32 // method ids in the order they were mapped
	named     map[int32]bool
	spans     []span // ring
	nspans    uint64 // spans ever added
	markers   []marker
	nmarkers  uint64
	bubbles   map[uint64][]*bubblePath // by a hash of the path
	nbubbles  int
	bubblesX  int64 // bubble paths not kept (cap)
	finished  bool
	report    *hq.Report
	lastEvent int32

	pub     published // for readers; guarded by its own lock
	pubOnce sync.Mutex
	scratch []calltree.NodeValues // the next snapshot (under pubOnce)
}

func newTracker(key int, run *hq.Run, cfg *Config) (*tracker, error) {
	tc := cfg.Tree
	if tc == nil {
		// The page draws its own timeline: the tree keeps none.
		tc = &calltree.Config{MaxTimeline: -1}
	}
	tree, err := calltree.New(tc)
	if err != nil {
		return nil, err
	}
	t := &tracker{key: key, run: run, cfg: cfg, tree: tree,
		queue: make(chan *batch, queuedBatches), free: make(chan *batch, queuedBatches+1),
		keys: map[string]string{}, named: map[int32]bool{}, bubbles: map[uint64][]*bubblePath{},
		spans: make([]span, 0, min(cfg.Spans, 4096))}
	t.cur = t.newBatch()
	go t.work()
	return t, nil
}

var _ hq.Processor = (*tracker)(nil)

func (t *tracker) newBatch() *batch {
	select {
	case b := <-t.free:
		return b
	default:
		return &batch{evs: make([]ev, 0, t.cfg.Batch)}
	}
}

// pageBreak is the sequence number of the data breaks the page makes
// itself when it leaves calls out.
const pageBreak = -1

// handOff queues the current batch for the worker. When the worker is
// queuedBatches behind, the page does not slow the run down: it leaves the
// batch's calls out (counted in dropped), keeps its mappings and, room
// permitting, its markers, and starts the next batch with a data break of
// its own, so that the tree closes the calls it saw open.
func (t *tracker) handOff() {
	if t.lossless {
		t.queue <- t.cur
		t.cur = t.newBatch()
		return
	}
	select {
	case t.queue <- t.cur:
		t.cur = t.newBatch()
		return
	default:
	}
	b, nb := t.cur, t.newBatch()
	nb.evs = append(nb.evs, ev{typ: bytefrog.MsgDataBreak, seq: pageBreak})
	var calls, markers int64
	for _, e := range b.evs {
		switch e.typ {
		case bytefrog.MsgMethodEntry, bytefrog.MsgMethodExit, bytefrog.MsgException, bytefrog.MsgExceptionBubble:
			calls++
		case bytefrog.MsgDataBreak: // the page's break stands for it
		case bytefrog.MsgMarker:
			if len(nb.evs) >= t.cfg.Batch/2 {
				markers++
				continue
			}
			fallthrough
		default:
			k := e.exc
			e.exc = int32(len(nb.texts))
			nb.texts = append(nb.texts, b.texts[k], b.texts[k+1])
			nb.evs = append(nb.evs, e)
		}
	}
	t.dropped.Add(calls)
	t.droppedMarkers.Add(markers)
	t.breaks.Add(1)
	b.evs, b.texts = b.evs[:0], b.texts[:0]
	select {
	case t.free <- b:
	default:
	}
	t.cur = nb
}

// Message takes one message of the run (hq.Processor).
func (t *tracker) Message(m *bytefrog.Msg) {
	if t.ended {
		return
	}
	b := t.cur
	switch m.Type {
	case bytefrog.MsgMethodEntry, bytefrog.MsgMethodExit, bytefrog.MsgException, bytefrog.MsgExceptionBubble:
		b.evs = append(b.evs, ev{typ: m.Type, tid: m.ThreadID, at: m.RelTime, method: m.MethodID, exc: m.ExceptionID})
	case bytefrog.MsgMapMethodSignature, bytefrog.MsgMapException, bytefrog.MsgMapThreadName:
		b.evs = append(b.evs, ev{typ: m.Type, tid: m.ThreadID, at: m.RelTime, method: m.MethodID, exc: int32(len(b.texts))})
		b.texts = append(b.texts, bytefrog.String(m.Text), "")
		b.evs[len(b.evs)-1].seq = m.ExceptionID
	case bytefrog.MsgMarker:
		b.evs = append(b.evs, ev{typ: m.Type, at: m.RelTime, seq: m.Seq, exc: int32(len(b.texts))})
		b.texts = append(b.texts, t.markerKey(m.Text), clip(bytefrog.String(m.Value)))
	case bytefrog.MsgHeartbeat:
		// Once a heartbeat interval at least, what came shows.
		if len(b.evs) > 0 {
			t.handOff()
		}
		return
	default:
		return
	}
	if len(b.evs) >= t.cfg.Batch {
		t.handOff()
	}
}

// maxKeys bounds the marker keys a tracker keeps made.
const maxKeys = 1024

// markerKey returns the Go string of a marker's key, clipped: made once
// for a key that comes again (a logger's, for its log records).
func (t *tracker) markerKey(k []byte) string {
	if s, ok := t.keys[string(k)]; ok {
		return s
	}
	s := clip(bytefrog.String(k))
	if len(t.keys) < maxKeys {
		t.keys[string(k)] = s
	}
	return s
}

// DataBreak drops the open calls (hq.Processor).
func (t *tracker) DataBreak(seq int32) {
	if t.ended {
		return
	}
	t.cur.evs = append(t.cur.evs, ev{typ: bytefrog.MsgDataBreak, seq: seq})
	t.handOff()
}

// Finish ends the run (hq.Processor): it returns once the worker has
// taken everything in and the tree has added its warnings to r.
func (t *tracker) Finish(r *hq.Report) {
	if t.ended {
		return
	}
	t.ended = true
	done := make(chan struct{})
	t.cur.end, t.cur.rep, t.cur.done = true, r, done
	t.queue <- t.cur
	t.cur = nil
	<-done
	t.publish(time.Now())
}

// sync waits until the worker has taken in every message so far (tests
// and benchmarks).
func (t *tracker) sync() {
	done := make(chan struct{})
	t.cur.done = done
	t.queue <- t.cur
	t.cur = t.newBatch()
	<-done
}

// work takes the batches in until the run's end.
func (t *tracker) work() {
	var m bytefrog.Msg
	for b := range t.queue {
		t.mu.Lock()
		for i := range b.evs {
			e := &b.evs[i]
			switch e.typ {
			case bytefrog.MsgMethodEntry, bytefrog.MsgMethodExit, bytefrog.MsgException, bytefrog.MsgExceptionBubble:
				m.Type, m.ThreadID, m.RelTime, m.MethodID, m.ExceptionID = e.typ, e.tid, e.at, e.method, e.exc
				t.tree.Message(&m)
				t.timeline(e)
			case bytefrog.MsgMapMethodSignature, bytefrog.MsgMapException, bytefrog.MsgMapThreadName:
				m = bytefrog.Msg{Type: e.typ, ThreadID: e.tid, RelTime: e.at, MethodID: e.method, ExceptionID: e.seq,
					Text: []byte(b.texts[e.exc])}
				t.tree.Message(&m)
				if e.typ == bytefrog.MsgMapMethodSignature && !t.named[e.method] && len(t.names) < maxNames {
					t.named[e.method] = true
					t.names = append(t.names, e.method)
				}
			case bytefrog.MsgMarker:
				t.addMarker(marker{seq: e.seq, at: e.at, key: b.texts[e.exc], value: b.texts[e.exc+1]})
			case bytefrog.MsgDataBreak:
				t.tree.DataBreak(e.seq)
				t.closeAllLocked()
			}
		}
		end := b.end
		if end {
			t.tree.Finish(nil) // the page shows the tree's warnings; HQ's report stays its own
			t.closeAllLocked()
			t.finished = true
			t.report = b.rep
		}
		t.mu.Unlock()
		if b.done != nil {
			close(b.done)
		}
		if end {
			return
		}
		b.evs, b.texts, b.done = b.evs[:0], b.texts[:0], nil
		select {
		case t.free <- b:
		default:
		}
	}
}

// clip bounds a text kept for the page.
func clip(s string) string {
	if len(s) <= maxTextLen {
		return s
	}
	s = s[:maxTextLen]
	for len(s) > 0 && !utf8Start(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	if len(s) > 0 {
		s = s[:len(s)-1] // the cut rune's first byte
	}
	return s + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func (t *tracker) addMarker(mk marker) {
	if len(t.markers) < t.cfg.Markers {
		t.markers = append(t.markers, mk)
	} else {
		t.markers[t.nmarkers%uint64(t.cfg.Markers)] = mk
	}
	t.nmarkers++
}

func (t *tracker) thread(tid uint16) *tlThread {
	if int(tid) >= len(t.threads) {
		t.threads = append(t.threads, make([]*tlThread, int(tid)+1-len(t.threads))...)
	}
	th := t.threads[tid]
	if th == nil {
		th = &tlThread{pending: make([]span, t.cfg.SpanDepth)}
		t.threads[tid] = th
	}
	return th
}

// timeline follows one event for the timeline and the bubble paths.
func (t *tracker) timeline(e *ev) {
	th := t.thread(e.tid)
	at := max(e.at, th.last) // monotonic per thread, as the tree makes it
	th.last = at
	t.lastEvent = max(t.lastEvent, at)
	if th.bubbles && !(e.typ == bytefrog.MsgExceptionBubble && e.exc == th.bubble.exc) {
		t.endBubble(th)
	}
	switch e.typ {
	case bytefrog.MsgMethodEntry:
		if th.deep > 0 || len(th.stack) >= maxStack {
			th.deep++
			return
		}
		th.stack = append(th.stack, tlFrame{method: e.method, start: at})
	case bytefrog.MsgException:
		th.startBubble(e.exc, e.method)
	case bytefrog.MsgMethodExit, bytefrog.MsgExceptionBubble:
		bubbled := e.typ == bytefrog.MsgExceptionBubble
		if bubbled {
			if !th.bubbles {
				th.startBubble(e.exc, -1)
			}
			b := &th.bubble
			if len(b.path) < maxBubbleLen {
				b.path = append(b.path, e.method)
			} else {
				b.more = true
			}
		}
		if th.deep > 0 {
			th.deep--
			return
		}
		n := len(th.stack)
		if n == 0 {
			return
		}
		f := th.stack[n-1]
		th.stack = th.stack[:n-1]
		t.closeCall(th, e.tid, n-1, f, at, bubbled)
	}
}

// closeCall adds the call f, which ended at at, to the timeline.
func (t *tracker) closeCall(th *tlThread, tid uint16, depth int, f tlFrame, at int32, bubbled bool) {
	if depth >= len(th.pending) {
		return
	}
	p := &th.pending[depth]
	short := at-f.start <= 1
	if p.count > 0 && p.short && short && f.start-p.end <= 1 {
		p.end = at
		p.count++
		p.bubbled = p.bubbled || bubbled
		p.mixed = p.mixed || p.method != f.method
		return
	}
	if p.count > 0 {
		t.addSpan(*p)
	}
	*p = span{tid: tid, depth: uint8(depth), bubbled: bubbled, short: short, method: f.method, start: f.start, end: at, count: 1}
}

func (t *tracker) addSpan(s span) {
	if len(t.spans) < t.cfg.Spans {
		t.spans = append(t.spans, s)
	} else {
		t.spans[t.nspans%uint64(t.cfg.Spans)] = s
	}
	t.nspans++
}

// settleLocked moves the pending spans that can no longer grow (their end
// is more than a millisecond behind their thread) to the ring; with all,
// every pending span.
func (t *tracker) settleLocked(all bool) {
	for _, th := range t.threads {
		if th == nil {
			continue
		}
		for d := range th.pending {
			p := &th.pending[d]
			if p.count > 0 && (all || th.last-p.end > 1) {
				t.addSpan(*p)
				p.count = 0
			}
		}
	}
}

// startBubble begins the path of exception exc, thrown in thrower (-1:
// unknown).
func (th *tlThread) startBubble(exc, thrower int32) {
	th.bubbles = true
	th.bubble = bubbling{exc: exc, thrower: thrower, path: th.bubble.path[:0]}
}

// endBubble records where the exception of th stopped: the method whose
// call is now the innermost, which caught it.
func (t *tracker) endBubble(th *tlThread) {
	b := &th.bubble
	th.bubbles = false
	caught := int32(-1)
	if n := len(th.stack); n > 0 {
		caught = th.stack[n-1].method
	}
	h := uint64(14695981039346656037)
	mix := func(v int32) {
		h ^= uint64(uint32(v))
		h *= 1099511628211
	}
	mix(b.exc)
	mix(b.thrower)
	mix(caught)
	for _, m := range b.path {
		mix(m)
	}
	for _, p := range t.bubbles[h] {
		if p.exc == b.exc && p.thrower == b.thrower && p.caught == caught && p.more == b.more && slices.Equal(p.path, b.path) {
			p.count++
			p.last = th.last
			return
		}
	}
	if t.nbubbles >= t.cfg.BubblePaths {
		t.bubblesX++
		return
	}
	t.nbubbles++
	t.bubbles[h] = append(t.bubbles[h], &bubblePath{exc: b.exc, thrower: b.thrower, path: slices.Clone(b.path), more: b.more,
		caught: caught, count: 1, last: th.last})
}

// closeAllLocked ends every open call (a data break or the end of the
// run) at its thread's last time and settles the timeline.
func (t *tracker) closeAllLocked() {
	for tid, th := range t.threads {
		if th == nil {
			continue
		}
		th.deep = 0
		if th.bubbles {
			th.stack = th.stack[:0]
			t.endBubble(th)
		}
		for n := len(th.stack); n > 0; n = len(th.stack) {
			f := th.stack[n-1]
			th.stack = th.stack[:n-1]
			t.closeCall(th, uint16(tid), n-1, f, th.last, false)
		}
	}
	t.settleLocked(true)
}
