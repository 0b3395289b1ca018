package agent

import (
	"math/bits"
	"runtime"
	"sync/atomic"
	"time"
)

// kind is what a ring slot holds.
type kind uint8

const (
	kindEntry  kind = iota + 1 // MethodEntry
	kindExit                   // MethodExit (line, or thrown in the Code Pulse flavour)
	kindThrow                  // Exception
	kindBubble                 // ExceptionBubble
	kindMarker                 // Marker(key, value)
	kindName                   // thread (re)named: key is the name; unsequenced
	kindBatch                  // a host batch (text.batch) of records from one thread
)

// sequenced reports whether the slot becomes a Bytefrog message carrying a
// sequence number.
func (k kind) sequenced() bool { return k >= kindEntry && k <= kindMarker }

// slot is one event between instrumented code and the drain: 32 bytes, two
// to a cache line, because moving lines between the producing core and the
// drain's core is what an event costs. It is written by the goroutine that
// reserved its index and published by storing hdr last; the drain reads it
// only after seeing the header of the index it expects.
type slot struct {
	hdr    atomic.Uint32 // lap<<8 | kind; lap = index/len(slots) + 1 (24 bits)
	flag   bool          // MethodExit: exit by exception (Code Pulse flavour)
	line   uint16
	method int32
	exc    int32
	rel    int32
	_      int32
	thread uint64 // thread key: goid, or hostThreadBit|host thread id
}

// text holds the strings of a marker or a thread name, beside the slot of
// the same index so that slots stay small.
type text struct {
	key, value string
	batch      *[]byte // kindBatch: the records, owned by the drain once published
}

// hostThreadBit marks thread keys that come from a host (JVM or C thread)
// rather than from a goroutine id.
const hostThreadBit = 1 << 63

const cacheLine = 64

// ring is a multi-producer, single-consumer queue of slots. Producers
// reserve indexes with one atomic add, which fixes the global order of
// events; the single drain consumes them in that order. A producer whose
// index is a whole ring ahead of the drain waits for room: that is the
// back-pressure that keeps memory bounded while never dropping an event.
type ring struct {
	slots []slot
	texts []text
	mask  uint64
	shift uint // log2(len(slots))
	_     [cacheLine]byte
	tail  atomic.Uint64 // next index to reserve
	_     [cacheLine - 8]byte
	head  atomic.Uint64 // next index the drain consumes
	_     [cacheLine - 8]byte
	// sleeping is 1 while the drain is parked waiting for wake. Producers
	// read it on every publish, so it has a cache line of its own that the
	// drain writes only when it goes to sleep after a while without events.
	sleeping atomic.Uint32
	_        [cacheLine - 4]byte
	// closed is set when no drain will consume any more: producers that
	// still find no room give up instead of waiting forever.
	closed atomic.Bool
	wake   chan struct{}
}

func newRing(size int) *ring {
	return &ring{
		slots: make([]slot, size),
		texts: make([]text, size),
		mask:  uint64(size - 1),
		shift: uint(bits.TrailingZeros(uint(size))),
		wake:  make(chan struct{}, 1),
	}
}

// reserve returns the first of n consecutive indexes, waiting for room.
// ok is false when the ring closed while waiting; the caller then drops
// the event without publishing it.
func (r *ring) reserve(n uint64) (first uint64, ok bool) {
	first = r.tail.Add(n) - n
	last := first + n - 1
	if last-r.head.Load() < uint64(len(r.slots)) {
		return first, true
	}
	return first, r.waitRoom(last)
}

func (r *ring) waitRoom(last uint64) bool {
	size := uint64(len(r.slots))
	for spin := 0; last-r.head.Load() >= size; spin++ {
		if r.closed.Load() {
			return false
		}
		r.nudge()
		if spin < 64 {
			runtime.Gosched()
		} else {
			time.Sleep(50 * time.Microsecond)
		}
	}
	return true
}

// at returns the slot of index i.
func (r *ring) at(i uint64) *slot { return &r.slots[i&r.mask] }

// textAt returns the strings of index i.
func (r *ring) textAt(i uint64) *text { return &r.texts[i&r.mask] }

// lap is the 24-bit lap number the header of index i carries.
func (r *ring) lap(i uint64) uint32 { return uint32(i>>r.shift+1) & 0xFFFFFF }

// publish makes slot i, of kind k, visible to the drain and wakes it if it
// sleeps.
func (r *ring) publish(s *slot, i uint64, k kind) {
	s.hdr.Store(r.lap(i)<<8 | uint32(k))
	if r.sleeping.Load() != 0 {
		r.nudge()
	}
}

func (r *ring) nudge() {
	if r.sleeping.CompareAndSwap(1, 0) {
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
}

// ready reports whether slot i has been published.
func (r *ring) ready(i uint64) bool { return r.at(i).hdr.Load()>>8 == r.lap(i) }

// kindAt is the kind of published slot i.
func (r *ring) kindAt(i uint64) kind { return kind(r.at(i).hdr.Load()) }

// Drain back-off: after catching up, the drain naps briefly a few times
// before it sleeps until woken. Napping lets producers fill a run of slots
// that the drain then consumes in one burst; polling the slot a producer
// is writing would bounce its cache line between the cores on every event.
const (
	drainNap  = 20 * time.Microsecond
	drainNaps = 16
)

// park waits until slot i is published or d elapses (d ≤ 0: no limit).
// It reports whether the slot is ready.
func (r *ring) park(i uint64, d time.Duration, stop <-chan struct{}) bool {
	for nap := 0; nap < drainNaps; nap++ {
		if r.ready(i) {
			return true
		}
		if nap < 2 {
			runtime.Gosched()
		} else {
			time.Sleep(drainNap)
		}
	}
	r.sleeping.Store(1)
	if r.ready(i) {
		r.sleeping.Store(0)
		return true
	}
	var timeout <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-r.wake:
	case <-timeout:
	case <-stop:
	}
	r.sleeping.Store(0)
	return r.ready(i)
}
