package agent

import (
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
)

// sequenced reports whether the slot becomes a Bytefrog message carrying a
// sequence number.
func (k kind) sequenced() bool { return k >= kindEntry && k <= kindMarker }

// slot is one event between instrumented code and the drain. It is written
// by the goroutine that reserved its index and published by storing
// ticket = index+1; the drain reads it only after seeing that ticket.
type slot struct {
	ticket atomic.Uint64
	kind   kind
	flag   bool // MethodExit: exit by exception (Code Pulse flavour)
	line   uint16
	method int32
	exc    int32
	rel    int32
	thread uint64 // thread key: goid, or hostThreadBit|host thread id
	key    string
	value  string
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
	mask  uint64
	_     [cacheLine]byte
	tail  atomic.Uint64 // next index to reserve
	_     [cacheLine - 8]byte
	head  atomic.Uint64 // next index the drain consumes
	_     [cacheLine - 8]byte
	// sleeping is 1 while the drain is parked waiting for wake.
	sleeping atomic.Uint32
	// closed is set when no drain will consume any more: producers that
	// still find no room give up instead of waiting forever.
	closed atomic.Bool
	wake   chan struct{}
}

func newRing(size int) *ring {
	return &ring{
		slots: make([]slot, size),
		mask:  uint64(size - 1),
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

// publish makes slot i visible to the drain and wakes it if it sleeps.
func (r *ring) publish(s *slot, i uint64) {
	s.ticket.Store(i + 1)
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
func (r *ring) ready(i uint64) bool { return r.at(i).ticket.Load() == i+1 }

// park waits until slot i is published or d elapses (d ≤ 0: no limit).
// It reports whether the slot is ready.
func (r *ring) park(i uint64, d time.Duration, stop <-chan struct{}) bool {
	for spin := 0; spin < 32; spin++ {
		if r.ready(i) {
			return true
		}
		runtime.Gosched()
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
