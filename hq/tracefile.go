package hq

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// Trace file format, inside one compressed stream (see Compression) or
// none. Integers are big-endian.
//
//	header:
//	  magic            4  "TPHQ"
//	  format           u16  TraceFormat
//	  runId            u8
//	  version          u8   protocol version from Hello
//	  flavor           u8   0 bytefrog, 1 codepulse
//	  flags            u8   bit 0: ProjectHello
//	  projectId        i32
//	  start            i64  Unix nanoseconds
//	  heartbeat        i32  ms, as configured for the agent
//	  maxHeldEvents    i64  the limits the run was processed with
//	  maxHeldBytes     i64
//	  maxMappingBytes  i64
//	  maxConfigSize    i32
//	  topN             u16
//	  agent            u16 n, n bytes: remote address
//	records, until the end of the stream:
//	  kind u8, conn u16, time u32 (ms since start), n u32, n bytes
//
// Record kinds: 1 bytes received on conn (0 = control), 2 a message HQ sent
// on the control connection, 3 data connection conn accepted, 4 conn ended
// (bytes: the error, empty for EOF), 5 a remark of HQ's, 6 the end of the run
// (u8 ok, then the reason). Bytes received are recorded as they were read,
// so records need not align with messages.
const (
	TraceMagic  = "TPHQ"
	TraceFormat = 1
	// TraceExt begins the file name extension of every trace file; the
	// compression adds its own (Compression.Ext): ".tphq.s2",
	// ".tphq.zst", ".tphq".
	TraceExt = ".tphq"

	magicSize       = len(TraceMagic)
	u8Size          = 1
	u16Size         = 2
	i32Size         = 4
	i64Size         = 8
	traceHeaderSize = magicSize + u16Size + 4*u8Size + i32Size + i64Size + i32Size + 3*i64Size + i32Size +
		u16Size + u16Size
	recHeaderSize = u8Size + u16Size + i32Size + i32Size

	// MaxTraceRecord caps a record's length in a trace file: bytes
	// received come in reads of at most bigSlabSize, and a sent Configuration
	// is capped by MaxConfigSize.
	MaxTraceRecord = 64 << 20
)

// TraceHeader is the header of a trace file.
type TraceHeader struct {
	Format            uint16
	RunID             uint8
	Version           uint8
	Flavor            bytefrog.Flavor
	HasProjectID      bool
	ProjectID         int32
	Start             time.Time
	HeartbeatInterval int32 // ms
	MaxHeldEvents     int64
	MaxHeldBytes      int64
	MaxMappingBytes   int64
	MaxConfigSize     int32
	TopN              uint16
	Agent             string
}

func (h *TraceHeader) append(b []byte) []byte {
	b = append(b, TraceMagic...)
	b = binary.BigEndian.AppendUint16(b, h.Format)
	flags := byte(0)
	if h.HasProjectID {
		flags = 1
	}
	b = append(b, h.RunID, h.Version, byte(h.Flavor), flags)
	b = binary.BigEndian.AppendUint32(b, uint32(h.ProjectID))
	b = binary.BigEndian.AppendUint64(b, uint64(h.Start.UnixNano()))
	b = binary.BigEndian.AppendUint32(b, uint32(h.HeartbeatInterval))
	b = binary.BigEndian.AppendUint64(b, uint64(h.MaxHeldEvents))
	b = binary.BigEndian.AppendUint64(b, uint64(h.MaxHeldBytes))
	b = binary.BigEndian.AppendUint64(b, uint64(h.MaxMappingBytes))
	b = binary.BigEndian.AppendUint32(b, uint32(h.MaxConfigSize))
	b = binary.BigEndian.AppendUint16(b, h.TopN)
	agent := h.Agent[:min(len(h.Agent), 1<<16-1)]
	b = binary.BigEndian.AppendUint16(b, uint16(len(agent)))
	return append(b, agent...)
}

// parseTraceHeader decodes the fixed part of a header from b
// (traceHeaderSize bytes) and returns the agent address length.
func parseTraceHeader(h *TraceHeader, b []byte) (int, error) {
	b = b[:traceHeaderSize]
	if string(b[:magicSize]) != TraceMagic {
		return 0, fmt.Errorf("%w: magic %q", ErrTraceFormat, b[:magicSize])
	}
	o := magicSize
	h.Format = binary.BigEndian.Uint16(b[o:])
	if h.Format != TraceFormat && h.Format != TraceFormatColumns {
		return 0, fmt.Errorf("%w: format version %d (want %d or %d)", ErrTraceFormat, h.Format, TraceFormat,
			TraceFormatColumns)
	}
	o += u16Size
	h.RunID, h.Version, h.Flavor = b[o], b[o+1], bytefrog.Flavor(b[o+2])
	flags := b[o+3]
	o += 4 * u8Size
	if flags&^1 != 0 || h.Flavor > bytefrog.FlavorCodePulse || h.Version < bytefrog.Version1 ||
		h.Version > bytefrog.MaxVersion {
		return 0, fmt.Errorf("%w: header fields version %d, flavor %d, flags %#x", ErrTraceFormat, h.Version, h.Flavor, flags)
	}
	h.HasProjectID = flags&1 != 0
	h.ProjectID = int32(binary.BigEndian.Uint32(b[o:]))
	o += i32Size
	h.Start = time.Unix(0, int64(binary.BigEndian.Uint64(b[o:])))
	o += i64Size
	h.HeartbeatInterval = int32(binary.BigEndian.Uint32(b[o:]))
	o += i32Size
	h.MaxHeldEvents = int64(binary.BigEndian.Uint64(b[o:]))
	h.MaxHeldBytes = int64(binary.BigEndian.Uint64(b[o+i64Size:]))
	h.MaxMappingBytes = int64(binary.BigEndian.Uint64(b[o+2*i64Size:]))
	o += 3 * i64Size
	h.MaxConfigSize = int32(binary.BigEndian.Uint32(b[o:]))
	o += i32Size
	h.TopN = binary.BigEndian.Uint16(b[o:])
	o += u16Size
	if h.HeartbeatInterval <= 0 || h.MaxHeldEvents <= 0 || h.MaxHeldBytes <= 0 || h.MaxMappingBytes <= 0 ||
		h.MaxConfigSize < 0 {
		return 0, fmt.Errorf("%w: header limits out of range", ErrTraceFormat)
	}
	return int(binary.BigEndian.Uint16(b[o:])), nil
}

func appendRecordHeader(b []byte, kind RecordKind, conn uint16, t uint32, n int) []byte {
	b = append(b, byte(kind))
	b = binary.BigEndian.AppendUint16(b, conn)
	b = binary.BigEndian.AppendUint32(b, t)
	return binary.BigEndian.AppendUint32(b, uint32(n))
}

// appendEnd encodes the body of an end record.
func appendEnd(b []byte, ok bool, reason string) []byte {
	v := byte(0)
	if ok {
		v = 1
	}
	return append(append(b, v), reason...)
}

// traceWriter writes one run's trace file from its own goroutine; the core
// hands it units in processing order.
type traceWriter struct {
	path string
	f    *os.File
	enc  io.WriteCloser // the compressor; its Close does not close f
	col  *colEncoder    // instead of enc, for CompressColumns
	ch   chan unit
	done chan struct{}
	hdr  []byte
	once sync.Once
	err  error // first write error; read after done
}

const (
	// traceQueue is how many units may wait for the trace writer: with
	// runQueue, up to 32 MiB of big slabs a run (16 and 64 gave the same
	// rates).
	traceQueue = 16
	// traceWindow is the zstd window: with WithLowerEncoderMem the encoder
	// shifts its history every block, so a small window is markedly
	// faster, and event streams gain little from distant matches.
	traceWindow = 512 << 10
)

// createTrace creates the trace file at path, compressed with c, and
// writes its header.
func createTrace(path string, h *TraceHeader, c Compression) (*traceWriter, error) {
	if !c.valid() {
		return nil, fmt.Errorf("%w: compression %v", ErrConfig, c)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	if c == CompressColumns {
		hh := *h
		hh.Format = TraceFormatColumns
		// Blocks go to the file as they are made, one write each, so that
		// the file keeps up with the run.
		col, err := newColEncoder(f, bytefrog.Dialect{Version: h.Version, Flavor: h.Flavor,
			MaxConfigSize: int(h.MaxConfigSize)})
		if err != nil {
			f.Close()
			os.Remove(path)
			return nil, err
		}
		w := &traceWriter{path: path, f: f, col: col, ch: make(chan unit, traceQueue), done: make(chan struct{})}
		if _, err := f.Write(hh.append(nil)); err != nil {
			w.err = err
		}
		go w.loop()
		return w, nil
	}
	enc, err := traceCodecs[c].newWriter(f)
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	w := &traceWriter{path: path, f: f, enc: enc, ch: make(chan unit, traceQueue), done: make(chan struct{})}
	if _, err := enc.Write(h.append(nil)); err != nil {
		w.err = err
	}
	go w.loop()
	return w, nil
}

// record queues u; for data it passes on the unit's trace reference.
func (w *traceWriter) record(u *unit) { w.ch <- *u }

func (w *traceWriter) loop() {
	defer close(w.done)
	for u := range w.ch {
		if w.col != nil {
			if w.err == nil {
				w.err = w.col.add(&u)
			}
		} else if w.err == nil {
			w.hdr = appendRecordHeader(w.hdr[:0], u.kind, u.conn, u.t, len(u.raw))
			if _, err := w.enc.Write(w.hdr); err != nil {
				w.err = err
			} else if _, err := w.enc.Write(u.raw); err != nil {
				w.err = err
			}
		}
		if u.s != nil {
			u.s.unref()
		}
	}
	if w.col != nil {
		if err := w.col.close(); err != nil && w.err == nil {
			w.err = err
		}
	} else if err := w.enc.Close(); err != nil && w.err == nil {
		w.err = err
	}
	if err := w.f.Close(); err != nil && w.err == nil {
		w.err = err
	}
}

// close flushes and closes the file; it returns the first write error.
func (w *traceWriter) close() error {
	w.once.Do(func() { close(w.ch) })
	<-w.done
	if w.err != nil && !errors.Is(w.err, os.ErrClosed) {
		return fmt.Errorf("trace file %s: %w", w.path, w.err)
	}
	return w.err
}
