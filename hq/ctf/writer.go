package ctf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
	"github.com/tadpole-trace/tadpole/transport/live"
)

var le = binary.LittleEndian

// Sink receives a trace as the Writer produces it. *live.Trace is one
// (served to live viewers); *Dir writes a trace directory.
type Sink interface {
	AppendMetadata(tsdl []byte)
	AddStream(classID uint64, channel string) int
	Publish(s int, idx live.Index, data []byte) error
	Beacon(s int, ts uint64)
	End()
}

// Config configures a Writer.
type Config struct {
	// PacketSize is the size at which a packet is cut (default 64 KiB).
	// A single larger event gets a packet of its own.
	PacketSize int
	// LiveTimer is the period at which Start's timer cuts every packet
	// with events and sends a beacon for every idle stream (default 1 s).
	LiveTimer time.Duration
	// Start is the run's start: relTime 0 (HQ's clock when Hello arrived).
	Start time.Time
	// Flavor is the run's MethodExit layout.
	Flavor bytefrog.Flavor
	// TickBytes, if set, makes the Writer tick by itself each time this
	// many packet bytes were published since the last tick: a replayed
	// recording has no timer, and a viewer must still see every stream
	// advance.
	TickBytes int64
	// Env adds fields to the trace's env block (hostname, program, …).
	Env map[string]string
}

// Defaults and bounds for Config.
const (
	DefaultPacketSize = 64 << 10
	MinPacketSize     = 1 << 10
	MaxPacketSize     = 16 << 20
	DefaultLiveTimer  = time.Second
)

// DefaultConfig returns the defaults.
func DefaultConfig() *Config {
	return &Config{PacketSize: DefaultPacketSize, LiveTimer: DefaultLiveTimer}
}

// ErrConfig: a Config field is out of range.
var ErrConfig = errors.New("ctf: bad config")

// Verify checks c and fills zero fields with defaults.
func (c *Config) Verify() error {
	switch {
	case c.PacketSize < 0 || c.PacketSize > 0 && c.PacketSize < MinPacketSize || c.PacketSize > MaxPacketSize:
		return fmt.Errorf("%w: PacketSize %d (%d..%d)", ErrConfig, c.PacketSize, MinPacketSize, MaxPacketSize)
	case c.LiveTimer < 0, c.TickBytes < 0:
		return fmt.Errorf("%w: LiveTimer %v", ErrConfig, c.LiveTimer)
	}
	if c.PacketSize == 0 {
		c.PacketSize = DefaultPacketSize
	}
	if c.LiveTimer == 0 {
		c.LiveTimer = DefaultLiveTimer
	}
	for k := range c.Env {
		if !validIdent(k) {
			return fmt.Errorf("%w: env key %q", ErrConfig, k)
		}
	}
	return nil
}

func validIdent(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// Writer turns one run's Bytefrog messages into a CTF 1.8 trace. It is an
// hq.Processor. Streams: instance 0 "run" carries markers, mappings,
// thread names and data breaks; each traced thread gets its own stream
// (instance tid+1, channel "thread-<tid>") for its method and exception
// events, in HQ's sequence order. Timestamps are the run's start plus the
// agent's relTime, raised where needed so that they strictly increase in
// the order HQ releases events: a viewer merging the streams by time shows
// HQ's order. Methods are safe for concurrent use (the timer runs beside
// the run's core goroutine).
type Writer struct {
	cfg  Config
	sink Sink

	mu      sync.Mutex
	base    uint64 // Start in ns
	clock   uint64 // the last timestamp given
	run     *wstream
	threads map[uint16]*wstream
	order   []*wstream // every stream, for the timer
	added   bool       // streams added since the last tick
	methods names
	excs    names
	err     error // the sink's first error
	ended   bool
	events  int64
	bytes   int64
	tickAt  int64 // bytes at the last tick

	stop chan struct{}
	done chan struct{}
}

// names maps ids to strings: a slice for small ids, a map beyond.
type names struct {
	dense []string
	m     map[int32]string
}

const denseIDs = 1 << 16

func (n *names) set(id int32, s string) {
	if id >= 0 && id < denseIDs {
		for int(id) >= len(n.dense) {
			n.dense = append(n.dense, "")
		}
		n.dense[id] = s
		return
	}
	if n.m == nil {
		n.m = map[int32]string{}
	}
	n.m[id] = s
}

func (n *names) get(id int32) string {
	if id >= 0 && int(id) < len(n.dense) {
		return n.dense[id]
	}
	return n.m[id]
}

type wstream struct {
	idx    int    // sink stream index
	inst   uint64 // stream_instance_id
	buf    []byte // the open packet; nil when none
	begin  uint64
	last   uint64
	seqNum uint64
	// discarded counts the events lost before they were written
	// (cumulative, as CTF's events_discarded); only the run stream has
	// any.
	discarded uint64
}

// NewWriter writes the metadata to sink and returns a Writer; a nil cfg
// means the defaults.
func NewWriter(sink Sink, cfg *Config) (*Writer, error) {
	c := *DefaultConfig()
	if cfg != nil {
		c = *cfg
	}
	if err := c.Verify(); err != nil {
		return nil, err
	}
	w := &Writer{cfg: c, sink: sink, threads: map[uint16]*wstream{}}
	if !c.Start.IsZero() {
		w.base = uint64(c.Start.UnixNano())
	}
	w.clock = w.base
	keys := make([]string, 0, len(c.Env))
	for k := range c.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	sink.AppendMetadata(Metadata(c.Env, keys))
	w.run = w.addStream(0, "run")
	return w, nil
}

func (w *Writer) addStream(inst uint64, channel string) *wstream {
	s := &wstream{idx: w.sink.AddStream(StreamClassID, channel), inst: inst}
	w.order = append(w.order, s)
	w.added = true
	return s
}

func (w *Writer) thread(tid uint16) *wstream {
	s := w.threads[tid]
	if s == nil {
		s = w.addStream(uint64(tid)+1, fmt.Sprintf("thread-%d", tid))
		w.threads[tid] = s
	}
	return s
}

// stamp returns the timestamp of the next event: the run start plus relTime
// ms, or later, always after the previous one.
func (w *Writer) stamp(relTime int32, has bool) uint64 {
	ts := w.clock + 1
	if has && relTime > 0 {
		ts = max(ts, w.base+uint64(relTime)*uint64(time.Millisecond))
	}
	w.clock = ts
	return ts
}

// begin makes room for an event of n payload bytes in s's packet, cutting
// it when full, and appends the event header.
func (w *Writer) begin(s *wstream, ev EventClass, ts uint64, n int) {
	size := eventHeaderSize + n
	if s.buf != nil && len(s.buf)+size > w.cfg.PacketSize && len(s.buf) > PacketOverhead {
		w.cut(s, s.last)
	}
	if s.buf == nil {
		s.buf = make([]byte, PacketOverhead, max(w.cfg.PacketSize, PacketOverhead+size))
		s.begin = ts - 1 // the clock before this event: nothing published is later
	}
	s.buf = le.AppendUint16(s.buf, uint16(ev))
	s.buf = le.AppendUint64(s.buf, ts)
	s.last = ts
	w.events++
}

// cut closes s's open packet with timestamp_end end and publishes it.
func (w *Writer) cut(s *wstream, end uint64) {
	b := s.buf
	le.PutUint32(b, PacketMagic)
	le.PutUint32(b[4:], StreamClassID)
	le.PutUint64(b[8:], s.inst)
	bits := uint64(len(b)) * 8
	le.PutUint64(b[offBegin:], s.begin)
	le.PutUint64(b[offEnd:], end)
	le.PutUint64(b[offContent:], bits)
	le.PutUint64(b[offPacket:], bits)
	le.PutUint64(b[offSeqNum:], s.seqNum)
	le.PutUint64(b[offDiscard:], s.discarded)
	s.seqNum++
	s.buf = nil
	w.bytes += int64(len(b))
	err := w.sink.Publish(s.idx, live.Index{PacketSize: bits, ContentSize: bits, TimestampBegin: s.begin,
		TimestampEnd: end, EventsDiscarded: s.discarded}, b)
	if err != nil && w.err == nil {
		w.err = err
	}
}

func appendStr(b []byte, s []byte) []byte { return append(append(b, s...), 0) }

func appendI32(b []byte, v int32) []byte { return le.AppendUint32(b, uint32(v)) }

// Message implements hq.Processor.
func (w *Writer) Message(m *bytefrog.Msg) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.messageLocked(m)
}

// messageLocked is Message with w.mu held.
func (w *Writer) messageLocked(m *bytefrog.Msg) {
	if w.ended || w.err != nil {
		return
	}
	if w.cfg.TickBytes > 0 && w.bytes-w.tickAt >= w.cfg.TickBytes {
		w.tickLocked()
	}
	switch m.Type {
	case bytefrog.MsgMethodEntry:
		w.methodEvent(m, EvMethodEntry, 0)
	case bytefrog.MsgMethodExit:
		s := w.methodEvent(m, EvMethodExit, 4+1)
		line, thrown := int32(-1), byte(0)
		if w.cfg.Flavor == bytefrog.FlavorCodePulse {
			if m.ExceptionThrown {
				thrown = 1
			}
		} else if m.Line != bytefrog.NoLine {
			line = int32(m.Line)
		}
		s.buf = append(appendI32(s.buf, line), thrown)
	case bytefrog.MsgException:
		exc := w.excs.get(m.ExceptionID)
		s := w.methodEvent(m, EvException, 4+len(exc)+1+4)
		s.buf = appendI32(s.buf, m.ExceptionID)
		s.buf = append(append(s.buf, exc...), 0)
		line := int32(-1)
		if m.Line != bytefrog.NoLine {
			line = int32(m.Line)
		}
		s.buf = appendI32(s.buf, line)
	case bytefrog.MsgExceptionBubble:
		exc := w.excs.get(m.ExceptionID)
		s := w.methodEvent(m, EvExceptionBubble, 4+len(exc)+1)
		s.buf = appendI32(s.buf, m.ExceptionID)
		s.buf = append(append(s.buf, exc...), 0)
	case bytefrog.MsgMethodVisit:
		s := w.methodEvent(m, EvMethodVisit, 4)
		s.buf = appendI32(s.buf, m.SourceLocationID)
	case bytefrog.MsgMarker:
		s := w.run
		w.begin(s, EvMarker, w.stamp(m.RelTime, true), 4+len(m.Text)+1+len(m.Value)+1)
		s.buf = appendI32(s.buf, m.Seq)
		s.buf = appendStr(appendStr(s.buf, m.Text), m.Value)
	case bytefrog.MsgMapThreadName:
		s := w.run
		w.begin(s, EvThreadName, w.stamp(m.RelTime, true), 2+len(m.Text)+1)
		s.buf = appendStr(le.AppendUint16(s.buf, m.ThreadID), m.Text)
	case bytefrog.MsgMapMethodSignature:
		w.methods.set(m.MethodID, string(m.Text))
		s := w.run
		w.begin(s, EvMethodSignature, w.stamp(0, false), 4+len(m.Text)+1)
		s.buf = appendStr(appendI32(s.buf, m.MethodID), m.Text)
	case bytefrog.MsgMapException:
		w.excs.set(m.ExceptionID, string(m.Text))
		s := w.run
		w.begin(s, EvExceptionClass, w.stamp(0, false), 4+len(m.Text)+1)
		s.buf = appendStr(appendI32(s.buf, m.ExceptionID), m.Text)
	case bytefrog.MsgMapSourceLocation:
		name := w.methods.get(m.MethodID)
		s := w.run
		w.begin(s, EvSourceLocation, w.stamp(0, false), 4+4+len(name)+1+4+4+2+2)
		s.buf = appendI32(s.buf, m.SourceLocationID)
		s.buf = append(append(appendI32(s.buf, m.MethodID), name...), 0)
		s.buf = appendI32(appendI32(s.buf, m.StartLine), m.EndLine)
		s.buf = le.AppendUint16(le.AppendUint16(s.buf, uint16(m.StartChar)), uint16(m.EndChar))
	case bytefrog.MsgDataBreak:
		w.dataBreakLocked(m.Seq)
	case bytefrog.MsgSourceLocationCount:
		name := w.methods.get(m.MethodID)
		s := w.run
		w.begin(s, EvSourceLocationCount, w.stamp(0, false), 4+len(name)+1+4)
		s.buf = append(append(appendI32(s.buf, m.MethodID), name...), 0)
		s.buf = appendI32(s.buf, m.Count)
	}
}

// methodEvent starts an event of a thread's stream with seq, tid, method
// id and name; extra is the size of the fields that follow.
func (w *Writer) methodEvent(m *bytefrog.Msg, ev EventClass, extra int) *wstream {
	s := w.thread(m.ThreadID)
	name := w.methods.get(m.MethodID)
	w.begin(s, ev, w.stamp(m.RelTime, true), 4+2+4+len(name)+1+extra)
	s.buf = appendI32(s.buf, m.Seq)
	s.buf = le.AppendUint16(s.buf, m.ThreadID)
	s.buf = appendI32(s.buf, m.MethodID)
	s.buf = append(append(s.buf, name...), 0)
	return s
}

// DataBreak implements hq.Processor: a data_break event on the run stream.
func (w *Writer) DataBreak(seq int32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dataBreakLocked(seq)
}

func (w *Writer) dataBreakLocked(seq int32) {
	if w.ended || w.err != nil {
		return
	}
	s := w.run
	w.begin(s, EvDataBreak, w.stamp(0, false), 4)
	s.buf = appendI32(s.buf, seq)
}

// Tick cuts every packet that has events and sends a beacon at the current
// clock for every idle stream; when streams were added since the last
// tick, the run stream gets a packet even if empty, so that a viewer whose
// streams are all idle still learns of them (babeltrace 2.0.4 reads the
// NEW_STREAM flag only with a packet).
func (w *Writer) Tick() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.ended {
		w.tickLocked()
	}
}

func (w *Writer) tickLocked() {
	w.tickAt = w.bytes
	for _, s := range w.order {
		switch {
		case s.buf != nil:
			w.cut(s, w.clock)
		case s == w.run && w.added:
			s.buf = make([]byte, PacketOverhead)
			s.begin = w.clock
			w.cut(s, w.clock)
		default:
			w.sink.Beacon(s.idx, w.clock)
		}
	}
	w.added = false
}

// Start runs Tick every LiveTimer until Finish or Close.
func (w *Writer) Start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stop != nil || w.ended {
		return
	}
	stop, done := make(chan struct{}), make(chan struct{})
	w.stop, w.done = stop, done
	go func() {
		defer close(done)
		t := time.NewTicker(w.cfg.LiveTimer)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				w.Tick()
			case <-stop:
				return
			}
		}
	}()
}

// Finish implements hq.Processor: it cuts the open packets, ends the
// trace and stops the timer.
func (w *Writer) Finish(r *hq.Report) {
	w.Close()
	if err := w.Err(); err != nil && r != nil {
		r.Warnings = append(r.Warnings, "ctf: "+err.Error())
	}
}

// Close is Finish without a report; it is idempotent.
func (w *Writer) Close() {
	w.mu.Lock()
	if !w.ended {
		for _, s := range w.order {
			if s.buf != nil {
				w.cut(s, w.clock)
			}
		}
		w.ended = true
		w.sink.End()
	}
	stop, done := w.stop, w.done
	w.stop = nil
	w.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// Err returns the sink's first error.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Stats returns the events written and the packet bytes published.
func (w *Writer) Stats() (events, bytes int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.events, w.bytes
}

var _ hq.Processor = (*Writer)(nil)
var _ Sink = (*live.Trace)(nil)
