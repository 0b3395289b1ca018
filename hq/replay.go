package hq

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// TraceRecord is one record of a trace file.
type TraceRecord struct {
	Kind RecordKind
	Conn uint16        // 0: control connection; 1..: data connections
	Time time.Duration // since the run started (ms resolution)
	Data []byte        // valid until the next call to Next
}

// maxTraceWindow bounds the zstd window a trace file may ask for.
const maxTraceWindow = 64 << 20

// readChunk is the step in which record bytes are read, so that a declared
// length costs memory only as the bytes actually arrive.
const readChunk = 1 << 20

// TraceReader reads a trace file. It is not safe for concurrent use.
type TraceReader struct {
	comp    Compression
	release func() // frees the decompressor; nil if there is nothing to free
	r       *bufio.Reader
	h       TraceHeader
	hdr     [recHeaderSize]byte
	buf     []byte // grow-only, up to MaxTraceRecord
	err     error  // sticky
	col     *colDecoder
	cu      unit // the unit Next last read from col
}

// NewTraceReader reads the header of the trace file in r, in any
// Compression: the file's first bytes tell which. Call Close when done.
func NewTraceReader(r io.Reader) (*TraceReader, error) {
	src := &countingReader{r: r}
	br := bufio.NewReaderSize(src, readBufferSize)
	head, err := br.Peek(maxMagicSize)
	if len(head) == 0 {
		return nil, fmt.Errorf("%w: empty file: %w", ErrTraceFormat, noEOF(err))
	}
	c, ok := detectCompression(head)
	if !ok {
		return nil, fmt.Errorf("%w: unknown stream: it starts % x, not S2, zstd or %q", ErrTraceFormat,
			head[:min(len(head), maxMagicSize)], TraceMagic)
	}
	if c == CompressNone || c == CompressColumns {
		tr, err := newRawTraceReader(br)
		if err != nil {
			return nil, err
		}
		if want := map[Compression]uint16{CompressNone: TraceFormat, CompressColumns: TraceFormatColumns}[c]; tr.h.Format != want {
			return nil, fmt.Errorf("%w: format version %d in a %v file", ErrTraceFormat, tr.h.Format, c)
		}
		tr.comp = c
		if c == CompressColumns {
			d := bytefrog.Dialect{Version: tr.h.Version, Flavor: tr.h.Flavor, MaxConfigSize: int(tr.h.MaxConfigSize)}
			off := int64(traceHeaderSize + len(tr.h.Agent))
			if tr.col, err = newColDecoder(tr.r, off, d); err != nil {
				return nil, err
			}
			tr.release = tr.col.close
		}
		return tr, nil
	}
	dec, release, err := traceCodecs[c].newReader(br)
	if err != nil {
		return nil, fmt.Errorf("%w: %v stream: %w", ErrTraceFormat, c, err)
	}
	tr, err := newRawTraceReader(&streamReader{r: dec, src: src, c: c})
	if err != nil {
		if release != nil {
			release()
		}
		return nil, err
	}
	tr.comp, tr.release = c, release
	return tr, nil
}

// newRawTraceReader reads the uncompressed form of a trace file.
func newRawTraceReader(r io.Reader) (*TraceReader, error) {
	tr := &TraceReader{r: bufio.NewReaderSize(r, readBufferSize)}
	var fixed [traceHeaderSize]byte
	if _, err := io.ReadFull(tr.r, fixed[:]); err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrTraceFormat, err)
	}
	n, err := parseTraceHeader(&tr.h, fixed[:])
	if err != nil {
		return nil, err
	}
	agent := make([]byte, n)
	if _, err := io.ReadFull(tr.r, agent); err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrTraceFormat, err)
	}
	tr.h.Agent = string(agent)
	return tr, nil
}

// Compression returns the stream the file is in.
func (tr *TraceReader) Compression() Compression { return tr.comp }

// Header returns the file's header.
func (tr *TraceReader) Header() TraceHeader { return tr.h }

// Next reads the next record into rec. It returns io.EOF at the end of the
// file, and an error wrapping ErrTraceFormat or ErrTraceTooLarge for a bad
// or truncated record.
func (tr *TraceReader) Next(rec *TraceRecord) error {
	if tr.err != nil {
		return tr.err
	}
	tr.err = tr.next(rec)
	return tr.err
}

func (tr *TraceReader) next(rec *TraceRecord) error {
	if tr.col != nil {
		return tr.nextColumns(rec)
	}
	if _, err := io.ReadFull(tr.r, tr.hdr[:]); err != nil {
		if err == io.EOF {
			return io.EOF
		}
		return fmt.Errorf("%w: record header: %w", ErrTraceFormat, err)
	}
	h := tr.hdr[:]
	kind := RecordKind(h[0])
	if kind < RecordRecv || kind > RecordEnd {
		return fmt.Errorf("%w: record kind %d", ErrTraceFormat, h[0])
	}
	conn := binary.BigEndian.Uint16(h[u8Size:])
	t := binary.BigEndian.Uint32(h[u8Size+u16Size:])
	n := int64(binary.BigEndian.Uint32(h[u8Size+u16Size+i32Size:]))
	if n > MaxTraceRecord {
		return fmt.Errorf("%w: %v record of %d bytes (max %d)", ErrTraceTooLarge, kind, n, MaxTraceRecord)
	}
	tr.buf = tr.buf[:0]
	for int64(len(tr.buf)) < n {
		step := int(min(n-int64(len(tr.buf)), readChunk))
		l := len(tr.buf)
		if cap(tr.buf)-l < step {
			nb := make([]byte, l, max(2*cap(tr.buf), l+step))
			copy(nb, tr.buf)
			tr.buf = nb
		}
		tr.buf = tr.buf[:l+step]
		if _, err := io.ReadFull(tr.r, tr.buf[l:]); err != nil {
			return fmt.Errorf("%w: %v record of %d bytes: %w", ErrTraceFormat, kind, n, noEOF(err))
		}
	}
	*rec = TraceRecord{Kind: kind, Conn: conn, Time: time.Duration(t) * time.Millisecond, Data: tr.buf}
	return nil
}

// nextColumns reads the next unit of a columnar file as a record: data
// received holds its whole messages, the unsequenced ones first.
func (tr *TraceReader) nextColumns(rec *TraceRecord) error {
	u := &tr.cu
	if err := tr.col.next(u); err != nil {
		return err
	}
	data := u.raw
	if u.s != nil {
		tr.buf = append(tr.buf[:0], u.raw...)
		data = tr.buf
		u.s.unref()
		u.s = nil
	}
	*rec = TraceRecord{Kind: u.kind, Conn: u.conn, Time: time.Duration(u.t) * time.Millisecond, Data: data}
	return nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Close releases the decompressor.
func (tr *TraceReader) Close() {
	if tr.release != nil {
		tr.release()
		tr.release = nil
	}
}

// unitBatch is units of a block of a columnar file, decoded for the core:
// a block comes in one or more batches, the last one marked end, which
// carries the error that ended the file (io.EOF at its end) if any.
type unitBatch struct {
	us  []unit
	err error
	end bool   // the block's last batch
	dt  uint32 // end: how far the block's units moved the run's clock
}

// release drops the slab references of the batch's units from i on.
func (b *unitBatch) release(i int) {
	for _, u := range b.us[i:] {
		if u.s != nil {
			u.s.unref()
		}
	}
}

// blockJob is a block of a columnar file on its way to the core: its
// frame, and the batches it decodes to once a worker decodes it.
type blockJob struct {
	comp   []byte
	rawLen uint32
	off    int64
	out    chan unitBatch
}

// jobBatches is how many batches of a block wait for the core before its
// decoder waits: enough for a block of method events.
const jobBatches = 64

// drain releases the batches waiting in j, whose decoder is done.
func (j *blockJob) drain() {
	for {
		select {
		case b := <-j.out:
			b.release(0)
		default:
			return
		}
	}
}

// decodeWorkers is how many goroutines decode the blocks of a columnar
// file while the core takes them.
func decodeWorkers() int { return min(max(runtime.GOMAXPROCS(0), 1), 4) }

// decodeAhead decodes a columnar file in goroutines of its own, so that
// the core works on one block while the next ones are decompressed and
// decoded: one goroutine reads the blocks' frames, decodeWorkers decode
// blocks in parallel (each starts afresh), and one hands their units to
// the core in the file's order, in batches as the decoders make them (so
// that the core starts on a block while the rest of it decodes). Units
// keep no reference to the decoders' buffers. The last batch carries the
// error; closing stop ends the goroutines, which then drop what they hold,
// and the channel is closed once they are all done with col.
//
// With recs, the slabs hold entries and exits as records for the core's
// colEvents (colcore.go), not as Bytefrog bytes.
func decodeAhead(col *colDecoder, stop <-chan struct{}, recs bool) <-chan unitBatch {
	n := decodeWorkers()
	ch := make(chan unitBatch, 1)
	decs := make([]*colDecoder, 0, n)
	for range n {
		d, err := newColDecoder(nil, 0, col.d)
		if err != nil {
			for _, d := range decs {
				d.close()
			}
			ch <- unitBatch{err: err, end: true}
			close(ch)
			return ch
		}
		d.recs = recs
		decs = append(decs, d)
	}
	jobs := make(chan *blockJob, n)
	order := make(chan *blockJob, n)
	free := make(chan []byte, 2*n+1) // frames' buffers, for reuse
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1 + n)
	go func() { // the reader
		defer wg.Done()
		defer close(order)
		defer close(jobs)
		for {
			select {
			case b := <-free:
				col.comp = b
			default:
				col.comp = nil
			}
			j := &blockJob{out: make(chan unitBatch, jobBatches)}
			rawLen, err := col.readBlock()
			if err != nil {
				j.out <- unitBatch{err: err, end: true}
			} else {
				j.comp, j.rawLen, j.off = col.comp, rawLen, col.blkOff
				col.comp = nil
			}
			select {
			case order <- j:
			case <-quit:
				return
			}
			if err != nil {
				return
			}
			select {
			case jobs <- j:
			case <-quit:
				return
			}
		}
	}()
	for _, d := range decs {
		go func() { // a decoder
			defer wg.Done()
			defer d.close()
			for {
				select {
				case <-quit:
					return
				case j, ok := <-jobs:
					if !ok {
						return
					}
					d.decodeBlock(j.comp, j.rawLen, j.off, func(b unitBatch) bool {
						select {
						case j.out <- b:
							return true
						case <-quit:
							b.release(0)
							return false
						}
					})
					select {
					case free <- j.comp[:0]:
					default:
					}
				}
			}
		}()
	}
	go func() { // the one that keeps the order
		defer close(ch)
		var cur *blockJob
		defer func() {
			close(quit)
			wg.Wait()
			if cur != nil {
				cur.drain()
			}
			for j := range order {
				j.drain()
			}
		}()
		var base uint32
		for cur = range order {
			for {
				var b unitBatch
				select {
				case b = <-cur.out:
				case <-stop:
					return
				}
				for i := range b.us {
					b.us[i].t += base
				}
				if b.end {
					base += b.dt
				}
				select {
				case ch <- b:
				case <-stop:
					b.release(0)
					return
				}
				if b.err != nil {
					return
				}
				if b.end {
					break
				}
			}
		}
	}()
	return ch
}

// replayRecords lets replay feed the core records (colcore.go); tests
// turn it off to compare with Bytefrog slabs.
var replayRecords = true

// ReplayOptions configures Replay.
type ReplayOptions struct {
	// Processors receive the run's messages as live processors did.
	Processors []Processor
	// TopN overrides the number of methods listed (0: as recorded).
	TopN int
	// Lenient is Config.Lenient for the replayed run.
	Lenient bool
}

// ReplayFile replays the trace file at path; see Replay.
func ReplayFile(path string, opt *ReplayOptions) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rep, err := Replay(f, opt)
	if rep != nil {
		rep.TraceFile = path
	}
	return rep, err
}

// Replay feeds a trace file through the processing a live run uses and
// returns the same Report. A damaged file gives the report of what could
// be read and an error.
func Replay(r io.Reader, opt *ReplayOptions) (*Report, error) {
	tr, err := NewTraceReader(r)
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	return replay(tr, opt)
}

func replay(tr *TraceReader, opt *ReplayOptions) (*Report, error) {
	if opt == nil {
		opt = &ReplayOptions{}
	}
	h := tr.Header()
	cc := coreConfig{
		dialect:         bytefrog.Dialect{Version: h.Version, Flavor: h.Flavor, MaxConfigSize: int(h.MaxConfigSize)},
		maxHeldEvents:   int(min(h.MaxHeldEvents, 1<<31-1)),
		maxHeldBytes:    h.MaxHeldBytes,
		maxMappingBytes: h.MaxMappingBytes,
		topN:            int(h.TopN),
		hbInterval:      h.HeartbeatInterval,
		lenient:         opt.Lenient,
	}
	if opt.TopN > 0 {
		cc.topN = opt.TopN
	}
	c := newCore(cc, opt.Processors, nil)
	c.rep.RunID, c.rep.Agent, c.rep.Start = h.RunID, h.Agent, h.Start
	c.rep.ProjectID, c.rep.HasProjectID = h.ProjectID, h.HasProjectID

	var parsers [MaxDataConnsLimit + 1]*chunkParser
	defer func() {
		for _, p := range parsers {
			if p != nil {
				p.close()
			}
		}
	}()
	var (
		rec     TraceRecord
		readErr error
		ended   bool
		units   <-chan unitBatch
		batch   unitBatch
		bi      int
	)
	if tr.col != nil {
		stop := make(chan struct{})
		// Processors that take Blocks read the slabs' bytes.
		ch := decodeAhead(tr.col, stop, replayRecords && len(c.blks) == 0)
		units = ch
		defer func() {
			// The decoder goroutine must be done with the decoder before
			// the caller closes it.
			close(stop)
			for b := range ch {
				b.release(0)
			}
			batch.release(bi)
		}()
	}
	for !ended {
		var u unit
		if units != nil {
			if bi == len(batch.us) {
				if batch.err != nil {
					if batch.err != io.EOF {
						readErr = batch.err
					}
					break
				}
				batch, bi = <-units, 0
				if len(batch.us) == 0 {
					continue
				}
			}
			u = batch.us[bi]
			bi++
		} else {
			if err := tr.Next(&rec); err != nil {
				if err != io.EOF {
					readErr = err
				}
				break
			}
			u = unit{kind: rec.Kind, conn: rec.Conn, t: uint32(rec.Time / time.Millisecond), raw: rec.Data}
		}
		var p *chunkParser
		if int(u.conn) < len(parsers) {
			p = parsers[u.conn]
		}
		switch u.kind {
		case RecordRecv:
			if u.conn == controlConn || u.s != nil {
				c.handle(&u) // the core takes the slab's reference
				break
			}
			if p == nil {
				c.handle(&u) // the core notes data for a connection not open
				break
			}
			t := u.t
			p.feed(u.raw, func(pu *unit) {
				pu.conn, pu.t = u.conn, t
				c.handle(pu)
			})
		case RecordOpen:
			if u.conn != controlConn && int(u.conn) < len(parsers) && p == nil {
				parsers[u.conn] = newChunkParser(cc.dialect, 1)
			}
			c.handle(&u)
		case RecordClose:
			if p != nil {
				u.pending = max(u.pending, p.pending())
				p.close()
				parsers[u.conn] = nil
			}
			c.handle(&u)
		case RecordEnd:
			ended = true
			c.t = u.t
			ok := len(u.raw) > 0 && u.raw[0] == 1
			if !ok && !c.failed {
				c.failed = true
				c.rep.Reason = "failed"
				if len(u.raw) > 1 {
					c.rep.Reason = string(u.raw[1:])
				}
			}
		default:
			c.handle(&u)
		}
	}
	if !ended && readErr == nil {
		c.rep.warn("trace file has no end record: HQ stopped before the run ended")
	}
	rep := c.finish()
	rep.End = rep.Start.Add(time.Duration(c.t) * time.Millisecond)
	if readErr != nil {
		rep.warn(readErr.Error())
	}
	return rep, readErr
}
