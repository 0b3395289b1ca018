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
	kindEnd                    // host thread ended: its caches are dropped; unsequenced
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
	hdr    uint32 // lap<<8 | kind; lap = index/len(slots) + 1 (24 bits); atomic
	flag   bool   // MethodExit: exit by exception (Code Pulse flavour)
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
	shift uint   // log2(len(slots))
	batch uint64 // a sleeping drain is woken once per batch slots
	_     [cacheLine]byte
	tail  atomic.Uint64 // next index to reserve
	_     [cacheLine - 8]byte
	head  atomic.Uint64 // next index the drain consumes
	_     [cacheLine - 8]byte
	// sleeping is 1 while the drain is parked waiting for wake. It has a
	// cache line of its own, written by the drain when it goes to sleep and
	// read by the producer of every batch-th slot.
	sleeping atomic.Uint32
	_        [cacheLine - 4]byte
	// closed is set when no drain will consume any more: producers that
	// still find no room give up instead of waiting forever.
	closed atomic.Bool
	wake   chan struct{}
}

// maxDrainBatch is the most slots a sleeping drain leaves to producers
// before one of them wakes it; a quarter of the ring when that is less.
const maxDrainBatch = 1024

func newRing(size int) *ring {
	return &ring{
		slots: make([]slot, size),
		texts: make([]text, size),
		mask:  uint64(size - 1),
		shift: uint(bits.TrailingZeros(uint(size))),
		batch: uint64(min(maxDrainBatch, size/4)),
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

// publish makes slot i, of kind k, visible to the drain. The producer of
// the last slot of a batch also wakes the drain if it sleeps; the others
// publish with a plain release store and touch no shared line but the
// slot's own.
func (r *ring) publish(s *slot, i uint64, k kind) {
	v := r.lap(i)<<8 | uint32(k)
	if !r.closesBatch(i) {
		storeRelease(&s.hdr, v)
		return
	}
	r.publishLast(s, v)
}

// publishLast publishes the last slot of a batch with header v and wakes
// the drain if it sleeps. The store is sequentially consistent, so that the
// load of sleeping is not ordered before it: either the drain sees the
// slot or this sees the drain asleep.
func (r *ring) publishLast(s *slot, v uint32) {
	atomic.StoreUint32(&s.hdr, v)
	if r.sleeping.Load() != 0 {
		r.nudge()
	}
}

// closesBatch reports whether index i is the last of a batch.
func (r *ring) closesBatch(i uint64) bool { return i&(r.batch-1) == r.batch-1 }

func (r *ring) nudge() {
	if r.sleeping.CompareAndSwap(1, 0) {
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
}

// ready reports whether slot i has been published.
func (r *ring) ready(i uint64) bool { return atomic.LoadUint32(&r.at(i).hdr)>>8 == r.lap(i) }

// park is how the drain waits once it has caught up with the producers: it
// sleeps until the producer of the last slot of i's batch wakes it, a
// producer waits for room, stop closes, or d elapses (d ≤ 0: no limit).
// Sleeping until a batch is complete, rather than polling the slot a
// producer is writing, moves each cache line between the cores once.
func (r *ring) park(i uint64, d time.Duration, stop <-chan struct{}) {
	end := i | (r.batch - 1)
	r.sleeping.Store(1)
	if r.ready(end) {
		r.sleeping.Store(0)
		return
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
}

// await polls until slot i is published or d elapses, for a drain that
// knows a producer is about to publish it. It reports whether it was.
func (r *ring) await(i uint64, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for spin := 0; ; spin++ {
		if r.ready(i) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		if spin < 16 {
			runtime.Gosched()
		} else {
			time.Sleep(20 * time.Microsecond)
		}
	}
}
