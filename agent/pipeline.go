package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// pipeline is the data side of a trace run: the ring (lanes) recording
// calls write, the drain that numbers and encodes their events, the pool
// of send buffers, the pending data breaks, the data connections and one
// writer per connection, and the millisecond clock events are stamped
// with. The control side (session) makes one when HQ sends Start and
// drives it with setMode, Break and Stop; the pipeline never calls the
// session, only the two callbacks it was given.
//
// Ownership: the pipeline owns every connection handed to newPipeline
// (it closes them). Its goroutines (drain, writers, clock) are its own and
// end before Done is closed. One shutdown channel (closed by Stop or a
// failure) and one error (nil after a clean stop) say how it ends.
//
// Recording calls reach it through the active pointer: the fields they
// read on every call come first, on a cache line of their own.
type pipeline struct {
	mode  atomic.Uint32 // bytefrog.Mode: the gate recording calls test
	clock atomic.Int32  // ms since begin
	lanes *lanes
	_     [cacheLine]byte

	cfg  pipeConfig
	log  *logger
	data []net.Conn
	pool *bufPool
	brk  breaks
	// begin is when Start arrived, the time base of every event;
	// beginMono is CLOCK_MONOTONIC at begin, for host batch timestamps.
	begin     time.Time
	beginMono int64
	events    atomic.Int64

	// mu orders mode changes with pauseCh and the shutdown.
	mu       sync.Mutex
	pauseCh  chan struct{} // non-nil while paused; closed on any other mode
	closed   bool          // shutdown is closed
	err      error         // why the pipeline failed; nil after a clean stop
	stopping atomic.Bool   // shutdown is closed (for recording calls)
	broken   atomic.Bool   // err is set: discard instead of sending

	started   bool          // Start ran, or Stop came first (under mu)
	clockWake chan struct{} // a recording call found the clock asleep
	shutdown  chan struct{} // closed when the pipeline begins to end
	done      chan struct{} // closed when every goroutine of the pipeline ended
	wg        sync.WaitGroup

	onBreak func(seq int32) // a data break at seq, for HQ
	onFail  func(error)     // the pipeline failed on its own

	// batchBytes counts the bytes of host batches waiting for the drain.
	// Hosts and the drain write it: it is kept off the line of brk, which
	// the drain reads for every slot.
	_          [cacheLine]byte
	batchBytes atomic.Int64
	batchRoom  batchRoom
}

// pipeConfig is what the pipeline takes from the agent's Config and HQ's
// configuration.
type pipeConfig struct {
	RingSize      int
	Budget        int // bytes of send buffers
	Flavor        bytefrog.Flavor
	FlushInterval time.Duration
	StallTimeout  time.Duration
}

// newPipeline makes a pipeline writing to conns, with begin (and
// beginMono, CLOCK_MONOTONIC at begin) as the time base. onBreak is called
// from the drain with the sequence number of each data break; onFail once
// when the pipeline fails by itself (a data connection broke or stalled,
// an internal error), not when it is stopped or aborted. Either may be
// nil. Nothing runs before Start.
func newPipeline(cfg pipeConfig, log *logger, conns []net.Conn, begin time.Time, beginMono int64,
	onBreak func(int32), onFail func(error)) *pipeline {
	p := &pipeline{
		cfg:       cfg,
		log:       log,
		data:      conns,
		lanes:     newLanes(cfg.RingSize),
		pool:      newBufPool(cfg.Budget),
		begin:     begin,
		beginMono: beginMono,
		shutdown:  make(chan struct{}),
		clockWake: make(chan struct{}, 1),
		done:      make(chan struct{}),
		onBreak:   onBreak,
		onFail:    onFail,
	}
	p.mode.Store(uint32(bytefrog.ModeInitializing))
	p.clock.Store(int32(time.Since(begin) / time.Millisecond))
	return p
}

// Start starts the drain, one writer per data connection and the clock.
// Later calls do nothing; so does a call after the pipeline was stopped or
// aborted.
func (p *pipeline) Start() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		return
	}
	p.started = true
	if p.closed {
		p.closeConns()
		close(p.done)
		return
	}
	p.wg.Add(1 + len(p.data) + 1)
	p.spawn("drain", newDrain(p).run)
	for _, c := range p.data {
		p.spawn("data writer", func() { p.writeData(c) })
	}
	p.spawn("clock", p.tick)
	go func() {
		p.wg.Wait()
		close(p.done)
	}()
}

// neverStarted ends a pipeline that was closed before Start: nothing will
// run, its connections are closed, Done is closed.
func (p *pipeline) neverStarted() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.started {
		p.started = true
		p.closeConns()
		close(p.done)
	}
}

// Done is closed when every goroutine of a started pipeline has ended.
func (p *pipeline) Done() <-chan struct{} { return p.done }

// Err is why the pipeline failed; nil while it runs and after a clean
// stop.
func (p *pipeline) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

func (p *pipeline) failed() bool { return p.broken.Load() }

// currentMode is the mode recording calls see.
func (p *pipeline) currentMode() bytefrog.Mode { return bytefrog.Mode(p.mode.Load()) }

// setMode sets the mode recording calls see: Paused makes them wait,
// Suspended makes them return (with a data break, see Break), Tracing
// records, Shutdown ends recording. Tracing begins with the clock brought
// up to date: its updater may be starved on a busy host, and an event
// recorded from now on must not carry a time from before. After the
// shutdown the mode stays Shutdown.
func (p *pipeline) setMode(m bytefrog.Mode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setModeLocked(m)
}

func (p *pipeline) setModeLocked(m bytefrog.Mode) {
	if p.closed {
		m = bytefrog.ModeShutdown
	}
	if m == bytefrog.ModeTracing {
		p.refreshClock()
	}
	if m == bytefrog.ModePaused {
		if p.pauseCh == nil {
			p.pauseCh = make(chan struct{})
		}
		p.mode.Store(uint32(m))
		return
	}
	p.mode.Store(uint32(m))
	if p.pauseCh != nil {
		close(p.pauseCh)
		p.pauseCh = nil
	}
}

// Break suspends recording and queues a data break at the lanes' current
// positions: every event reserved before the mode changed comes before
// it, every one recorded after the next Tracing comes after it.
func (p *pipeline) Break() {
	p.mu.Lock()
	p.setModeLocked(bytefrog.ModeSuspended)
	suspended := !p.closed
	p.mu.Unlock()
	if suspended {
		p.brk.push(p.lanes.positions())
		p.lanes.nudge()
	}
}

// gate is the slow path of a recording call that found the mode other
// than Tracing: it waits out a pause and reports whether to record.
func (p *pipeline) gate() bool {
	for {
		switch bytefrog.Mode(p.mode.Load()) {
		case bytefrog.ModeTracing:
			return true
		case bytefrog.ModePaused:
			p.mu.Lock()
			ch := p.pauseCh
			p.mu.Unlock()
			if ch != nil {
				<-ch
			}
		default:
			return false
		}
	}
}

// end closes the shutdown channel, once, and records err as the failure
// if it is the first one. It reports whether err was recorded.
func (p *pipeline) end(err error) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	first := false
	if err != nil && p.err == nil {
		p.err, first = err, true
		p.broken.Store(true)
	}
	if !p.closed {
		p.setModeLocked(bytefrog.ModeShutdown)
		p.closed = true
		p.stopping.Store(true)
		close(p.shutdown)
	}
	return first
}

// Stop ends the pipeline cleanly: recording stops, every event already
// reserved is sent, the data connections are closed. When ctx ends first
// it aborts (events still queued are lost). It returns Err. A pipeline
// not started yet never starts.
func (p *pipeline) Stop(ctx context.Context) error {
	p.end(nil)
	p.neverStarted()
	p.lanes.nudge()
	select {
	case <-p.done:
	case <-ctx.Done():
		p.abort(fmt.Errorf("%w: shutdown: %w", ErrStopped, ctx.Err()))
		<-p.done
	}
	return p.Err()
}

// abort ends the pipeline at once with err: recording stops, queued data
// is dropped, the data connections are closed. It does not call onFail.
func (p *pipeline) abort(err error) {
	if p.end(err) {
		p.closeConns()
	}
}

// fail is abort from inside the pipeline: the owner hears of it through
// onFail.
func (p *pipeline) fail(err error) {
	if p.end(err) {
		p.closeConns()
		if p.onFail != nil {
			p.onFail(err)
		}
	}
}

func (p *pipeline) closeConns() {
	for _, c := range p.data {
		c.Close()
	}
}

// queued is the number of send buffers queued or being written.
func (p *pipeline) queued() int32 { return p.pool.waiting.Load() }

// spawn runs f in a goroutine of the pipeline. A panic there is a bug of
// the agent's: it is logged with its stack and fails the pipeline (tracing
// stops, the host keeps running) instead of ending the process. f's own
// deferred calls run first, so a goroutine that counts itself done still
// does.
func (p *pipeline) spawn(name string, f func()) {
	go func() {
		defer func() {
			if r := recover(); r != nil {
				p.log.logf(LevelError, "internal error in the %s: %v\n%s", name, r, debug.Stack())
				p.fail(fmt.Errorf("%w: internal error in the %s: %v", ErrInternal, name, r))
			}
		}()
		f()
	}()
}

// The millisecond clock events are stamped with is kept by the clock
// goroutine (tick), lazily: after clockAwake ticks it marks the clock
// asleep and stops, so that a process that records nothing pays nothing
// for it. A recording call that finds the clock asleep reads the time
// itself, stores it (the clock is awake again) and wakes the goroutine: a
// clock asleep is never read as a stamp. Asleep is the sign bit: the
// clock holds -(ms+1).
const clockAwake = 64

// now is the clock for a recording call; see clockAwake.
func (p *pipeline) now() int32 {
	if c := p.clock.Load(); c >= 0 {
		return c
	}
	return p.refreshClock()
}

// tick keeps the millisecond clock events are stamped with.
func (p *pipeline) tick() {
	defer p.wg.Done()
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-t.C:
			// The time of reading, not the tick's: a tick delivered late
			// carries a time from before ones already stored.
			p.refreshClock()
		case <-p.shutdown:
			return
		}
		if n%clockAwake != 0 || !p.sleepClock() {
			continue
		}
		t.Stop()
		select {
		case <-p.clockWake:
		case <-p.shutdown:
			return
		}
		p.refreshClock()
		p.lanes.nudge() // the drain may sleep long while the clock sleeps
		t.Reset(time.Millisecond)
	}
}

// sleepClock marks the clock asleep, unless a wake-up is already pending.
func (p *pipeline) sleepClock() bool {
	select {
	case <-p.clockWake:
		return false // recorded since the last sleep
	default:
	}
	for {
		old := p.clock.Load()
		if old < 0 || p.clock.CompareAndSwap(old, -old-1) {
			return true
		}
	}
}

// refreshClock brings the clock up to the time since begin, never back,
// wakes the clock goroutine if the clock was asleep, and returns it.
func (p *pipeline) refreshClock() int32 {
	ms := int32(time.Since(p.begin) / time.Millisecond)
	for {
		old := p.clock.Load()
		cur := old
		if old < 0 {
			cur = -old - 1
		}
		if ms <= cur {
			if old >= 0 {
				return old
			}
			ms = cur
		}
		if p.clock.CompareAndSwap(old, ms) {
			if old < 0 {
				select {
				case p.clockWake <- struct{}{}:
				default:
				}
			}
			return ms
		}
	}
}

// relMillis converts a CLOCK_MONOTONIC time to ms since begin.
func (p *pipeline) relMillis(monoNs int64) int32 {
	d := monoNs - p.beginMono
	if d < 0 {
		return 0
	}
	return int32(d / 1e6)
}

// writeData writes the filled send buffers to c until the drain closes the
// queue; after a failure it only recycles them.
func (p *pipeline) writeData(c net.Conn) {
	defer p.wg.Done()
	raw := newRawSender(c)
	for b := range p.pool.queue {
		if !p.failed() {
			if p.cfg.StallTimeout > 0 {
				c.SetWriteDeadline(time.Now().Add(p.cfg.StallTimeout))
			}
			var err error
			if raw != nil {
				err = raw.write(b.b)
			} else {
				_, err = c.Write(b.b)
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				p.fail(fmt.Errorf("%w for %v: tracing stopped so that the program does not wait: %w",
					ErrHQStalled, p.cfg.StallTimeout, err))
			} else if err != nil {
				p.fail(fmt.Errorf("data connection: %w", err))
			}
		}
		p.pool.waiting.Add(-1)
		p.pool.recycle(b)
	}
	closeWrite(c)
	c.Close()
}

// sendBuf is one pooled send buffer: a run of encoded data messages that
// goes to HQ in one write on one data connection.
type sendBuf struct {
	b []byte
}

// bufPool is the fixed set of send buffers allowed by the memory budget.
// The drain takes a free buffer, fills it and queues it; a data writer
// writes it and returns it. When every buffer is queued or in flight the
// drain waits, the ring fills up, and instrumented code waits: nothing is
// dropped while tracing and memory stays bounded.
//
// The free buffers are taken last in, first out: the next one filled is
// the one a writer gave back last, whose lines the kernel has just read,
// so that the encoder's stores hit the cache rather than memory.
//
// A drain that finds no buffer free waits until low of them are (token):
// while the writers are behind (HQ or the socket is the bottleneck), the
// writers wake it once per low buffers, not once per buffer, and it fills
// them in one go. Each wake-up of a parked goroutine costs a futex call
// and a thread switch, on cores the traced program needs.
type bufPool struct {
	size    int           // nominal capacity of a buffer
	full    int           // a buffer is shipped once it holds this many bytes
	free    chan struct{} // one token per buffer in idle
	nfree   atomic.Int32  // tokens in free, at most: the drain takes one, then counts it
	low     int32         // free buffers a waiting drain waits for
	want    atomic.Bool   // the drain waits in token
	room    chan struct{} // wakes the drain in token
	mu      sync.Mutex
	idle    []*sendBuf    // buffers ready to be filled, the latest given back last
	queue   chan *sendBuf // filled buffers waiting for a data writer
	waiting atomic.Int32  // buffers queued or being written
	shipped atomic.Int64  // bytes queued for the data writers, for the management endpoint
}

// Buffer sizing: start at 64 KiB and halve until the budget holds at least
// minBuffers buffers; never below minBufSize. Large buffers mean few write
// calls: at 16 bytes an event, a 64 KiB buffer is one system call per
// ≈4000 events.
const (
	maxBufSize = 64 << 10
	minBufSize = 512
	minBuffers = 10
)

func newBufPool(budget int) *bufPool {
	size := maxBufSize
	for size > minBufSize && budget/size < minBuffers {
		size /= 2
	}
	n := budget / size
	if n < 2 {
		n = 2
	}
	p := &bufPool{
		size:  size,
		full:  size - size/10,
		free:  make(chan struct{}, n),
		low:   int32(max(1, n/4)),
		room:  make(chan struct{}, 1),
		idle:  make([]*sendBuf, 0, n),
		queue: make(chan *sendBuf, n),
	}
	for i := 0; i < n; i++ {
		p.recycle(&sendBuf{b: make([]byte, 0, size)})
	}
	return p
}

// take returns the free buffer given back last; the caller received a
// token from free first.
func (p *bufPool) take() *sendBuf {
	p.mu.Lock()
	b := p.idle[len(p.idle)-1]
	p.idle[len(p.idle)-1] = nil
	p.idle = p.idle[:len(p.idle)-1]
	p.mu.Unlock()
	return b
}

// recycle resets b and returns it to the free list; a buffer that grew for
// a very long string is replaced by one of nominal size.
func (p *bufPool) recycle(b *sendBuf) {
	if cap(b.b) > 2*p.size {
		b.b = make([]byte, 0, p.size)
	}
	b.b = b.b[:0]
	p.mu.Lock()
	p.idle = append(p.idle, b)
	p.mu.Unlock()
	p.free <- struct{}{}
	// After the count, want: the drain sets want, then reads the count.
	if p.nfree.Add(1) >= p.low && p.want.Load() && p.want.CompareAndSwap(true, false) {
		select {
		case p.room <- struct{}{}:
		default:
		}
	}
}

// token takes a free buffer's token for the drain (the only taker). With
// none free it waits until low of them are (see bufPool), or until stop
// is closed: then it reports false (a nil stop: it waits for the
// buffers).
func (p *bufPool) token(stop <-chan struct{}) bool {
	select {
	case <-p.free:
		p.nfree.Add(-1)
		return true
	default:
	}
	for {
		p.want.Store(true)
		if p.nfree.Load() >= p.low {
			p.want.Store(false)
			break
		}
		select {
		case <-p.room:
			continue
		case <-stop:
		}
		p.want.Store(false)
		return false
	}
	<-p.free
	p.nfree.Add(-1)
	return true
}

// breaks is the queue of lane positions (indexed by lane) at which
// tracing was suspended.
type breaks struct {
	mu      sync.Mutex
	at      [][]uint64
	pending atomic.Bool
}

func (b *breaks) push(pos []uint64) {
	b.mu.Lock()
	b.at = append(b.at, pos)
	b.pending.Store(true)
	b.mu.Unlock()
}

// first returns the earliest pending break, nil when none.
func (b *breaks) first() []uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.at) == 0 {
		return nil
	}
	return b.at[0]
}

// pop removes the earliest pending break.
func (b *breaks) pop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.at = b.at[1:]
	b.pending.Store(len(b.at) > 0)
}
