package live

import (
	"fmt"
	"sort"
	"sync"
)

// TraceConfig bounds a Trace.
type TraceConfig struct {
	// MaxBytes caps the packet bytes held (default 64 MiB). Metadata is
	// not counted: it is small and never dropped.
	MaxBytes int64
	// Block makes Publish wait, when MaxBytes is reached, until every
	// reader has passed the oldest packet (a recorded trace replayed for
	// one viewer). Otherwise the oldest packets are dropped, and a reader
	// that had not read them skips them (a live trace: ingest never
	// waits for a viewer).
	Block bool
}

// DefaultTraceMaxBytes is the default TraceConfig.MaxBytes.
const DefaultTraceMaxBytes = 64 << 20

// Trace is one CTF trace as a relay holds it: append-only metadata, data
// streams of published packets with their index entries, and per-stream
// inactivity beacons. A producer (the CTF writer) publishes into it;
// viewers read it through Readers, each with its own cursors. Its methods
// are safe for concurrent use. Published packet bytes are owned by the
// Trace and never modified.
type Trace struct {
	cfg TraceConfig

	mu      sync.Mutex
	cond    *sync.Cond // signalled when readers advance or the trace ends
	meta    []byte
	streams []*stream
	held    int64
	order   []pktRef // published packets, oldest first, for dropping
	ended   bool
	closed  bool // no reader will come: Publish stops waiting
	readers map[*Reader]struct{}
	demand  func()
}

type pktRef struct {
	stream int
	seq    uint64
}

type stream struct {
	classID   uint64
	channel   string
	first     uint64 // seq of packets[0]
	packets   []packet
	next      uint64 // offset of the next packet, bytes
	beacon    uint64
	hasBeacon bool
}

type packet struct {
	idx  Index
	data []byte
}

// NewTrace returns an empty trace; a nil cfg means the defaults.
func NewTrace(cfg *TraceConfig) *Trace {
	t := &Trace{readers: map[*Reader]struct{}{}}
	if cfg != nil {
		t.cfg = *cfg
	}
	if t.cfg.MaxBytes <= 0 {
		t.cfg.MaxBytes = DefaultTraceMaxBytes
	}
	t.cond = sync.NewCond(&t.mu)
	return t
}

// SetDemand sets the producer's hook that readers call, from their own
// goroutines and without the trace's lock, when they want the next packet
// of a stream: a producer that encodes on demand publishes what it has
// from there, at the viewers' pace.
func (t *Trace) SetDemand(f func()) {
	t.mu.Lock()
	t.demand = f
	t.mu.Unlock()
}

// AppendMetadata appends TSDL text. Each call must hold complete
// statements (viewers may parse what they have got so far); with
// babeltrace 2.0.4 each update must itself start with "/* CTF 1.8".
func (t *Trace) AppendMetadata(tsdl []byte) {
	t.mu.Lock()
	t.meta = append(t.meta, tsdl...)
	t.mu.Unlock()
}

// AddStream adds a data stream of CTF stream class classID and returns its
// index. channel names it for viewers' logs.
func (t *Trace) AddStream(classID uint64, channel string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.streams = append(t.streams, &stream{classID: classID, channel: channel})
	return len(t.streams) - 1
}

// Publish appends one packet to stream s. idx gives its sizes (bits),
// timestamps and discarded count; Publish sets Offset and StreamClassID.
// data is owned by the trace from now on. Publish clears the stream's
// beacon. With TraceConfig.Block it may wait for readers; it returns
// ErrClosed once the trace is closed.
func (t *Trace) Publish(s int, idx Index, data []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s < 0 || s >= len(t.streams) {
		return fmt.Errorf("live: no stream %d", s)
	}
	n := int64(len(data))
	for t.held > 0 && t.held+n > t.cfg.MaxBytes {
		if t.closed {
			return ErrClosed
		}
		if !t.cfg.Block {
			t.dropOldest()
			continue
		}
		if !t.trimRead() {
			t.cond.Wait()
		}
	}
	if t.closed {
		return ErrClosed
	}
	st := t.streams[s]
	idx.Offset = st.next
	idx.StreamClassID = st.classID
	st.next += uint64(len(data))
	st.packets = append(st.packets, packet{idx: idx, data: data})
	st.hasBeacon = false
	t.held += n
	if !t.cfg.Block {
		t.order = append(t.order, pktRef{s, st.first + uint64(len(st.packets)) - 1})
	}
	return nil
}

// dropOldest drops the oldest packet held.
func (t *Trace) dropOldest() {
	r := t.order[0]
	t.order = t.order[1:]
	st := t.streams[r.stream]
	if r.seq < st.first {
		return // trimmed already
	}
	t.held -= int64(len(st.packets[0].data))
	st.packets[0] = packet{}
	st.packets = st.packets[1:]
	st.first++
}

// trimRead drops, on every stream, the leading packets every reader is
// done with (it has asked for a later index); it reports whether it
// dropped any.
func (t *Trace) trimRead() bool {
	dropped := false
	for i, st := range t.streams {
		done := st.first + uint64(len(st.packets))
		for rd := range t.readers {
			done = min(done, rd.doneLocked(i))
		}
		for st.first < done {
			t.held -= int64(len(st.packets[0].data))
			st.packets[0] = packet{}
			st.packets = st.packets[1:]
			st.first++
			dropped = true
		}
	}
	return dropped
}

// Beacon tells viewers that stream s has no data before ts (clock
// cycles): a viewer that has read every packet gets INACTIVE with ts.
func (t *Trace) Beacon(s int, ts uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s >= 0 && s < len(t.streams) {
		st := t.streams[s]
		st.beacon, st.hasBeacon = max(st.beacon, ts), true
	}
}

// End marks the trace complete: a viewer that has read everything gets
// HUP.
func (t *Trace) End() {
	t.mu.Lock()
	t.ended = true
	t.mu.Unlock()
}

// Ended reports whether End was called.
func (t *Trace) Ended() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ended
}

// Close ends the trace and releases a producer waiting in Publish.
func (t *Trace) Close() {
	t.mu.Lock()
	t.ended, t.closed = true, true
	t.cond.Broadcast()
	t.mu.Unlock()
}

// Streams returns the number of data streams.
func (t *Trace) Streams() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.streams)
}

// Held returns the packet bytes held.
func (t *Trace) Held() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.held
}

// Reader is one viewer's cursor in a trace: the next packet of each stream,
// the metadata bytes sent, the streams announced. Its methods are safe for
// concurrent use.
type Reader struct {
	t        *Trace
	seek     Seek
	next     []uint64 // per stream: seq of the next packet to hand out
	done     []uint64 // per stream: packets before it are read
	known    int      // streams announced to the viewer
	metaSent int
}

// NewReader returns a cursor starting at the oldest packet held
// (SeekBeginning) or after the newest (SeekLast). Streams added later start
// at their first packet. Close it when the viewer leaves.
func (t *Trace) NewReader(seek Seek) *Reader {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := &Reader{t: t, seek: seek}
	for _, st := range t.streams {
		n := st.first
		if seek == SeekLast {
			n += uint64(len(st.packets))
		}
		r.next = append(r.next, n)
	}
	t.readers[r] = struct{}{}
	return r
}

// Close releases the cursor.
func (r *Reader) Close() {
	t := r.t
	t.mu.Lock()
	delete(t.readers, r)
	t.cond.Broadcast()
	t.mu.Unlock()
}

// StreamInfo describes one data stream to a viewer.
type StreamInfo struct {
	Index   int
	ClassID uint64
	Channel string
}

// NewStreams returns the streams not announced yet and marks them
// announced.
func (r *Reader) NewStreams() []StreamInfo {
	t := r.t
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []StreamInfo
	for i := r.known; i < len(t.streams); i++ {
		out = append(out, StreamInfo{Index: i, ClassID: t.streams[i].classID, Channel: t.streams[i].channel})
	}
	r.known = len(t.streams)
	return out
}

// Done reports whether the trace has ended, every stream is announced and
// this reader has been handed every packet held: the session is over for
// it.
func (r *Reader) Done() bool {
	t := r.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.ended || r.known < len(t.streams) {
		return false
	}
	for i, st := range t.streams {
		if max(r.nextLocked(i), st.first) < st.first+uint64(len(st.packets)) {
			return false
		}
	}
	return true
}

func (r *Reader) nextLocked(s int) uint64 {
	for len(r.next) <= s {
		r.next = append(r.next, r.t.streams[len(r.next)].first)
	}
	return r.next[s]
}

// doneLocked returns the seq before which this reader has read every
// packet of stream s: those before the index it asked for last.
func (r *Reader) doneLocked(s int) uint64 {
	if s < len(r.done) {
		return r.done[s]
	}
	if s < len(r.next) {
		return r.next[s] // SeekLast: nothing before is wanted
	}
	return r.t.streams[s].first
}

// flagsLocked returns the flags a reply to this reader carries.
func (r *Reader) flagsLocked() Flags {
	var f Flags
	if r.metaSent < len(r.t.meta) {
		f |= FlagNewMetadata
	}
	if r.known < len(r.t.streams) {
		f |= FlagNewStream
	}
	return f
}

// NextIndex returns the next index of stream s for this reader and
// advances past it, following lttng-relayd 2.13: HUP once the trace has
// ended and every packet was handed out, INACTIVE with the beacon when
// there is none to hand out, else RETRY; flags on every status.
func (r *Reader) NextIndex(s int) Index {
	t := r.t
	t.mu.Lock()
	demand := t.demand
	if demand != nil && !t.ended && s >= 0 && s < len(t.streams) {
		st := t.streams[s]
		if max(r.nextLocked(s), st.first) >= st.first+uint64(len(st.packets)) {
			t.mu.Unlock()
			demand()
			t.mu.Lock()
		}
	}
	defer t.mu.Unlock()
	if s < 0 || s >= len(t.streams) {
		return Index{Status: IndexErr}
	}
	st := t.streams[s]
	n := r.nextLocked(s)
	if n < st.first {
		// Dropped before this reader got them: skip; the packet sequence
		// numbers tell the viewer.
		n = st.first
	}
	end := st.first + uint64(len(st.packets))
	// Asking for the next index means the previous packet is read.
	for len(r.done) <= s {
		r.done = append(r.done, r.doneLocked(len(r.done)))
	}
	if n > r.done[s] {
		r.done[s] = n
		t.cond.Broadcast()
	}
	var x Index
	switch {
	case n >= end && t.ended:
		x = Index{Status: IndexHup}
	case n >= end && st.hasBeacon:
		x = Index{Status: IndexInactive, TimestampEnd: st.beacon, StreamClassID: st.classID}
	case n >= end:
		x = Index{Status: IndexRetry}
	default:
		x = st.packets[n-st.first].idx
		x.Status = IndexOK
		n++
	}
	r.next[s] = n
	x.Flags = r.flagsLocked()
	return x
}

// Packet returns up to max bytes of stream s from byte offset off, which
// must fall inside a packet held; the slice is shared and read-only. ok is
// false when the range is not held.
func (r *Reader) Packet(s int, off uint64, max int) (data []byte, flags Flags, ok bool) {
	t := r.t
	t.mu.Lock()
	defer t.mu.Unlock()
	flags = r.flagsLocked()
	if s < 0 || s >= len(t.streams) {
		return nil, flags, false
	}
	st := t.streams[s]
	i := sort.Search(len(st.packets), func(i int) bool {
		p := &st.packets[i]
		return p.idx.Offset+uint64(len(p.data)) > off
	})
	if i == len(st.packets) || st.packets[i].idx.Offset > off {
		return nil, flags, false
	}
	p := &st.packets[i]
	d := p.data[off-p.idx.Offset:]
	if len(d) > max {
		d = d[:max]
	}
	return d, flags, true
}

// Metadata returns the metadata not sent to this reader yet and marks it
// sent. It is nil when there is none.
func (r *Reader) Metadata() []byte {
	t := r.t
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.meta[r.metaSent:len(t.meta):len(t.meta)]
	r.metaSent = len(t.meta)
	if len(m) == 0 {
		return nil
	}
	return m
}
