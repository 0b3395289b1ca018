package agent

import (
	"math/bits"
	"runtime"
	"sync"
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
	kindThread                 // the lane's next slots are of thread slot.data; unsequenced
	kindProbes                 // a JVM thread's probe words (text.probes); unsequenced
)

// sequenced reports whether the slot becomes a Bytefrog message carrying a
// sequence number.
func (k kind) sequenced() bool { return k >= kindEntry && k <= kindMarker }

// slot is one event between instrumented code and the drain: 16 bytes,
// four to a cache line, because moving lines between the producing core
// and the drain's core is most of what an event costs. The producer writes
// data, then publishes the slot by storing hdr; the drain reads data only
// after seeing the header of the index it expects.
//
// A slot names no thread: a lane's events are those of the thread of its
// latest kindThread slot, which a producer writes only when another thread
// recorded on the lane last.
type slot struct {
	// data is method | rel<<32 for events (rel: ms since start), the
	// thread key for kindThread.
	data uint64
	// hdr is lap<<48 | exc<<hdrExcShift | line<<8 | flags | kind; atomic.
	// lap = index/len(slots) + 1, 16 bits.
	hdr uint64
}

// Header fields; what a slot holds is in hdr and data, so that a producer
// fills it with two stores.
const (
	hdrKind     = 0xF
	hdrThrown   = 1 << 4 // MethodExit: exit by exception (Code Pulse flavour)
	hdrAfter    = 1 << 5 // kindThread: text.after holds what the thread must come after
	hdrExcShift = 24
	hdrExcBits  = 24
	hdrLapShift = 48
)

// maxExceptionTypes bounds the exception ids a slot header holds.
const maxExceptionTypes = 1<<hdrExcBits - 1

// header packs an event's fields other than method and time, without the
// lap.
func header(k kind, exc int32, line uint16, thrown bool) uint64 {
	h := uint64(k) | uint64(line)<<8 | uint64(uint32(exc))<<hdrExcShift
	if thrown {
		h |= hdrThrown
	}
	return h
}

// eventData packs an event's method and time.
func eventData(method, rel int32) uint64 { return uint64(uint32(method)) | uint64(uint32(rel))<<32 }

// event is a recorded event as the drain processes it: unpacked from a
// slot, or read from a host batch.
type event struct {
	thread uint64 // thread key: goid, or hostThreadBit|host thread id
	method int32
	exc    int32
	rel    int32
	line   uint16
	thrown bool
}

// unpack sets ev to the event a slot holds, with header h, of thread. It
// sets the fields one by one: a composite literal would be built aside and
// copied, and that copy stalls on the stores just made.
func (ev *event) unpack(h, data, thread uint64) {
	ev.thread = thread
	ev.method = int32(uint32(data))
	ev.rel = int32(uint32(data >> 32))
	ev.exc = int32(h >> hdrExcShift & maxExceptionTypes)
	ev.line = uint16(h >> 8)
	ev.thrown = h&hdrThrown != 0
}

// text holds what a slot rarely needs, beside the slot of the same index
// so that slots stay small.
type text struct {
	key, value string
	batch      *[]byte   // kindBatch: the records, owned by the drain once published
	probes     *probeBuf // kindProbes: the words, owned by the drain once published
	after      behind    // kindThread with hdrAfter: lane positions the drain must pass first
}

// behind is what a thread's event must come after: the events the thread
// recorded on other lanes before. Usually that is one lane, as far as it
// had been reserved; when the thread's previous lane is unknown, all holds
// lane, position pairs for every lane that had events waiting.
type behind struct {
	lane int32
	pos  uint64
	all  *[]uint64
}

// none reports whether b asks for nothing: a position 0 is always passed.
func (b behind) none() bool { return b.pos == 0 && b.all == nil }

// hostThreadBit marks thread keys that come from a host (JVM or C thread)
// rather than from a goroutine id.
const hostThreadBit = 1 << 63

const cacheLine = 64

// lanes is the queue between instrumented code and the drain: one lane per
// processor (Go's P) that records, each a ring of slots with one producer
// at a time. A producer pins its goroutine to its P while it fills a slot,
// so it reserves an index with a plain load and store: no atomic
// read-modify-write on the path of every event, which on the cores this
// runs on costs more than the rest of the event together.
//
// The drain merges the lanes. Within a lane, order is the order of
// recording. Across lanes it takes the earliest millisecond first, and
// a thread's events keep their order when the thread moves from one P to
// another: the kindThread slot that starts its events on the new lane
// carries the position its previous lane had reached, and the drain passes
// that position first (see after). A producer whose lane is full waits
// for room: that is the back-pressure that keeps memory bounded while
// never dropping an event.
type lanes struct {
	size  int    // slots per lane, a power of two
	mask  uint64 // size-1
	shift uint   // log2(size)
	batch uint64 // a sleeping drain is woken once per batch slots of a lane

	all atomic.Pointer[[]*lane] // indexed by P id; nil until that P records
	mu  sync.Mutex              // serializes growth of all

	// last maps a thread key to the lane of its latest kindThread slot,
	// packed with a fingerprint of the key (see lastEntry): it is how a
	// thread that starts on a lane finds the lane it comes from.
	last []uint64
	// moved counts threads that started on a lane after recording on
	// another.
	moved atomic.Int64
	// newest is the highest goroutine id that has recorded.
	newest atomic.Uint64

	_ [cacheLine]byte
	// sleeping is 1 while the drain is parked waiting for wake. It has a
	// cache line of its own, written by the drain when it goes to sleep and
	// read by the producer of every batch-th slot of a lane.
	sleeping atomic.Uint32
	_        [cacheLine - 4]byte
	// closed is set when no drain will consume any more: producers that
	// still find no room give up instead of waiting forever.
	closed atomic.Bool
	wake   chan struct{}
}

// lane is one P's ring.
type lane struct {
	slots []slot
	texts []text
	id    int
	mu    sync.Mutex // see acquire
	_     [cacheLine]byte
	tail  uint64 // next index to reserve; written by the pinned producer (setTail), read by others atomically
	room  uint64 // producers reserve below it without loading head: head+size as last loaded
	// cur is the thread of the lane's latest kindThread slot, 0 before
	// any: a producer of that thread writes its events without naming
	// it. Written by the pinned producer; cleared when the thread starts
	// on another lane, so that coming back it names itself and comes after
	// what it recorded there. Atomic.
	cur  uint64
	_    [cacheLine - 24]byte
	head atomic.Uint64 // next index the drain consumes, stored every 64 slots and when it waits
	_    [cacheLine - 8]byte
}

// maxDrainBatch is the most slots of a lane a sleeping drain leaves to
// producers before one of them wakes it; a quarter of the lane when that is
// less.
const maxDrainBatch = 1024

// lastBits is log2 of the number of entries in lanes.last.
const lastBits = 14

func newLanes(size int) *lanes {
	ls := &lanes{
		size:  size,
		mask:  uint64(size - 1),
		shift: uint(bits.TrailingZeros(uint(size))),
		batch: uint64(min(maxDrainBatch, size/4)),
		last:  make([]uint64, 1<<lastBits),
		wake:  make(chan struct{}, 1),
	}
	all := make([]*lane, runtime.GOMAXPROCS(0))
	ls.all.Store(&all)
	return ls
}

// lane returns the lane of P p, making it on first use. It must not be
// called pinned: it may allocate and lock.
func (ls *lanes) lane(p int) *lane {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	all := *ls.all.Load()
	if p < len(all) && all[p] != nil {
		return all[p]
	}
	if p >= len(all) {
		grown := make([]*lane, p+1)
		copy(grown, all)
		all = grown
	} else {
		all = append([]*lane(nil), all...)
	}
	l := &lane{slots: make([]slot, ls.size), texts: make([]text, ls.size), id: p}
	all[p] = l
	ls.all.Store(&all)
	return l
}

// list returns the lanes made so far, indexed by P id, with nil holes.
func (ls *lanes) list() []*lane { return *ls.all.Load() }

// lastEntry packs a thread key's fingerprint with lane p, and gives the
// index of its entry in last.
func lastEntry(key uint64, p int) (entry uint64, at int) {
	h := key * 0x9E3779B97F4A7C15
	return h&^0xFFFF | uint64(p&0xFFFF), int(h >> (64 - lastBits))
}

// after is the slow path of a thread that is not lane p's current thread:
// it returns what the thread's next event must come after, and makes
// sure that no other lane still takes the thread for its current one.
// Called unpinned, before the event's slot is reserved: every earlier
// event of the thread was published by then.
func (ls *lanes) after(key uint64, p int) behind {
	entry, at := lastEntry(key, p)
	e := atomic.LoadUint64(&ls.last[at])
	all := ls.list()
	if e&^0xFFFF == entry&^0xFFFF {
		// The thread's previous lane is known: only it matters.
		if q := int(e & 0xFFFF); q < len(all) && all[q] != nil {
			atomic.CompareAndSwapUint64(&all[q].cur, key, 0)
			return behind{lane: int32(q), pos: all[q].published()}
		}
		return behind{}
	}
	// A goroutine with a higher id than any that recorded has recorded
	// nothing: its first event comes after nothing.
	if key&hostThreadBit == 0 {
		for newest := ls.newest.Load(); key > newest; newest = ls.newest.Load() {
			if ls.newest.CompareAndSwap(newest, key) {
				return behind{}
			}
		}
	}
	// Unknown: a thread whose entry another thread took, a host thread,
	// or a goroutine whose id was handed out before a newer one recorded.
	// Pass every lane as far as it has been reserved.
	var pos []uint64
	for q, l := range all {
		if l != nil {
			atomic.CompareAndSwapUint64(&l.cur, key, 0)
			if t := l.published(); t > l.head.Load() {
				pos = append(pos, uint64(q), t)
			}
		}
	}
	if pos == nil {
		return behind{}
	}
	return behind{lane: -1, all: &pos}
}

// published returns the lane's next index to reserve: every index before
// it is published or about to be.
func (l *lane) published() uint64 { return atomic.LoadUint64(&l.tail) }

// lap is the lap number the header of index i carries, in place.
func (ls *lanes) lap(i uint64) uint64 { return lapOf(i, ls.shift) }

// current reports whether header h is that of index i.
func (ls *lanes) current(h, i uint64) bool { return onLap(h, i, ls.shift) }

// lapOf is the lap number, in place, of index i of a lane of 1<<shift
// slots; onLap reports whether header h carries it. The drain's hot loop
// calls them with the shift in a local.
func lapOf(i uint64, shift uint) uint64  { return (i>>(shift&63) + 1) << hdrLapShift }
func onLap(h, i uint64, shift uint) bool { return (h^lapOf(i, shift))>>hdrLapShift == 0 }

// ready reports whether slot i of lane l has been published.
func (ls *lanes) ready(l *lane, i uint64) bool {
	return ls.current(atomic.LoadUint64(&l.slots[i&ls.mask].hdr), i)
}

// publish makes slot i of a lane, with header h (without the lap),
// visible to the drain. The producer of the last slot of a batch also
// wakes the drain if it sleeps; the others publish with a plain release
// store and touch no shared line but the slot's own.
func (ls *lanes) publish(s *slot, i, h uint64) {
	v := ls.lap(i) | h
	if i&(ls.batch-1) != ls.batch-1 {
		storeRelease(&s.hdr, v)
		return
	}
	ls.publishLast(s, v)
}

// publishLast publishes the last slot of a batch with header v and wakes
// the drain if it sleeps. The store is sequentially consistent, so that the
// load of sleeping is not ordered before it: either the drain sees the
// slot or this sees the drain asleep.
func (ls *lanes) publishLast(s *slot, v uint64) {
	atomic.StoreUint64(&s.hdr, v)
	if ls.sleeping.Load() != 0 {
		ls.nudge()
	}
}

func (ls *lanes) nudge() {
	if ls.sleeping.CompareAndSwap(1, 0) {
		select {
		case ls.wake <- struct{}{}:
		default:
		}
	}
}

// hasRoom reloads the drain's head of lane l for its pinned producer and
// reports whether index i fits.
func (ls *lanes) hasRoom(l *lane, i uint64) bool {
	l.room = l.head.Load() + uint64(ls.size)
	return i < l.room
}

// waitRoom waits, unpinned, until lane l is no longer full. It reports
// false when the drain has ended.
func (ls *lanes) waitRoom(l *lane) bool {
	size := uint64(ls.size)
	for spin := 0; l.published()-l.head.Load() >= size; spin++ {
		if ls.closed.Load() {
			return false
		}
		ls.nudge()
		if spin < 64 {
			runtime.Gosched()
		} else {
			time.Sleep(50 * time.Microsecond)
		}
	}
	return !ls.closed.Load()
}

// claim pins the calling goroutine to its P and reserves the next slot of
// that P's lane for thread key, after a kindThread slot when key is not
// the lane's current thread. It returns with the goroutine still pinned:
// the caller fills the slot and calls commit. ok is false, unpinned, when
// the drain has ended. It is the path of everything but the fixed-size
// events of a lane's current thread, which recordOn writes out inline.
func (ls *lanes) claim(key uint64) (l *lane, i uint64, sl *slot, ok bool) {
	var after behind
	computed := false
	for {
		p := procPin()
		all := ls.list()
		if p >= len(all) || all[p] == nil {
			procUnpin()
			ls.lane(p)
			continue
		}
		l = all[p]
		l.acquire()
		i = loadTail(l)
		start := atomic.LoadUint64(&l.cur) != key
		last := i
		if start {
			last++
		}
		if last >= l.room && !ls.hasRoom(l, last) {
			l.release()
			procUnpin()
			if !ls.waitRoom(l) {
				return nil, 0, nil, false
			}
			continue
		}
		if start {
			if !computed {
				l.release()
				procUnpin()
				after, computed = ls.after(key, p), true
				continue
			}
			ls.start(l, i, key, after)
			i++
		}
		sl = &l.slots[i&ls.mask]
		setTail(l, i+1)
		return l, i, sl, true
	}
}

// start publishes at index i of lane l, reserved by its pinned producer, a
// kindThread slot that makes key the lane's current thread, coming after
// the events after names.
func (ls *lanes) start(l *lane, i, key uint64, after behind) {
	entry, at := lastEntry(key, l.id)
	atomic.StoreUint64(&ls.last[at], entry)
	atomic.StoreUint64(&l.cur, key)
	h := uint64(kindThread)
	if !after.none() {
		l.texts[i&ls.mask].after = after
		h |= hdrAfter
		ls.moved.Add(1)
	}
	sl := &l.slots[i&ls.mask]
	sl.data = key
	ls.publish(sl, i, h)
}

// commit publishes a slot of lane l reserved by claim, with header h
// (without the lap), and unpins.
func (ls *lanes) commit(l *lane, sl *slot, i, h uint64) {
	ls.publish(sl, i, h)
	l.release()
	procUnpin()
}

// void publishes claimed slot i of lane l as one that changes nothing: a
// kindThread slot naming the thread the lane already has, key. It unpins.
func (ls *lanes) void(l *lane, sl *slot, i, key uint64) {
	sl.data = key
	ls.commit(l, sl, i, uint64(kindThread))
}

// positions returns how far each lane has been reserved, indexed by lane.
func (ls *lanes) positions() []uint64 {
	all := ls.list()
	pos := make([]uint64, len(all))
	for q, l := range all {
		if l != nil {
			pos[q] = l.published()
		}
	}
	return pos
}
