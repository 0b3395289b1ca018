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
	slabSize = 256 << 10 // bytes of a slab
	// bigSlabSize is the read buffer of a data connection whose run has no
	// BlockProcessor: nothing keeps a block's slab beyond the core and the
	// trace writer, so a large one costs no memory held for long. Reads
	// four times the size mean a quarter of the read calls (and, on TCP,
	// of the window updates sent and their acknowledgements processed),
	// of the units for the core and the trace writer and of the wake-ups
	// between them. On the ingest benchmark's probe traffic with the file,
	// HQ took 34.2 against 39.7 CPU ns/event on average over one
	// connection, 33.6 against 36.0 over two (14 runs each, alternating,
	// on a loaded machine).
	bigSlabSize = 1 << 20
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

// minEventSize is the size of a MethodEntry, the smallest method event.
const minEventSize = 15

// slabPools holds free slabs of slabSize (0) and bigSlabSize (1) bytes.
var slabPools = [2]sync.Pool{
	{New: func() any { return newSlab(slabSize) }},
	{New: func() any { return newSlab(bigSlabSize) }},
}

// newSlab makes a slab of size bytes. Its index has room for as many
// events as the smallest method event (MethodEntry) fills it with, so that
// indexing a full slab of method events never grows the index (which copied
// it a dozen times per slab). Only a slab of near-empty markers would need
// more.
func newSlab(size int) *slab {
	return &slab{raw: make([]byte, size), ev: make([]event, 0, size/minEventSize)}
}

// poolOf returns the index in slabPools of slabs of size bytes.
func poolOf(size int) int {
	if size == bigSlabSize {
		return 1
	}
	return 0
}

// getSlab returns an empty slab of slabSize bytes holding one reference.
func getSlab() *slab { return getSlabOf(slabSize) }

// getSlabOf returns an empty slab of size bytes, slabSize or bigSlabSize,
// holding one reference.
func getSlabOf(size int) *slab {
	s := slabPools[poolOf(size)].Get().(*slab)
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
		slabPools[poolOf(len(s.raw))].Put(s)
	case n < 0:
		panic("hq: slab reference count below zero")
	}
}
