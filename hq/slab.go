package hq

import (
	"sync"
	"sync/atomic"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// Read buffers. A data connection reads into a slab and parses the messages
// in place; the core and the trace writer use the bytes where they lie, so a
// slab lives until every event it holds is released and its bytes are
// written. Slabs are pooled; nothing is allocated per event.
const (
	slabSize = 256 << 10 // bytes read into one slab
	// minRead is the free space below which a reader moves on to a fresh
	// slab, carrying the incomplete message it has. A carried message is
	// shorter than the largest data message (a Marker with two full
	// strings, 131083 bytes), so a fresh slab always has room for the rest.
	minRead = 32 << 10
)

// event is a sequenced message held for ordering: its number and where it
// starts in its slab, as the connection's EventView indexes it.
type event = bytefrog.SeqOff

// slab is one read buffer with the index of the messages parsed from it.
// raw is written only by the connection's reader, at offsets past those it
// has handed on; handed-on bytes and index entries are read-only.
type slab struct {
	raw  []byte   // slabSize bytes
	ev   []event  // sequenced messages, in stream order
	un   []uint32 // offsets of unsequenced messages, in stream order
	refs atomic.Int32
	// held counts the core's queue entries that keep the slab; it is
	// touched by the core goroutine only.
	held int32
	// cols: the slab's entries and exits are replay's records (colcore.go).
	cols bool
}

// slabEvents is the room a new slab's index has for events: as many as
// the smallest method event (MethodEntry) fills a slab with, so that
// indexing a full slab of method events never grows the index (which
// copied it a dozen times per slab). Only a slab of near-empty markers
// would need more.
const slabEvents = slabSize / minEventSize

// minEventSize is the size of a MethodEntry, the smallest method event.
const minEventSize = 15

var slabPool = sync.Pool{New: func() any {
	return &slab{raw: make([]byte, slabSize), ev: make([]event, 0, slabEvents)}
}}

// getSlab returns an empty slab holding one reference.
func getSlab() *slab {
	s := slabPool.Get().(*slab)
	s.ev, s.un, s.held, s.cols = s.ev[:0], s.un[:0], 0, false
	s.refs.Store(1)
	return s
}

// ref adds n references.
func (s *slab) ref(n int32) { s.refs.Add(n) }

// unref drops one reference; the last one returns the slab to the pool.
func (s *slab) unref() {
	switch n := s.refs.Add(-1); {
	case n == 0:
		slabPool.Put(s)
	case n < 0:
		panic("hq: slab reference count below zero")
	}
}
