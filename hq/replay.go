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

// blockPipe decodes the blocks of a columnar file for the core, in the
// file's order, with every core busy all the way: the core's goroutine and
// pipeWorkers goroutines of the pipe's own share the decoding, one batch
// of a block (a step) at a time, so that no more goroutines than cores
// want to run and the core never waits behind a decoder for a CPU. The
// core takes the next batch of the current block when one is ready;
// otherwise it decodes the block's next step itself if no worker holds
// it, and if one does, a step of a later block while it waits. Workers
// take a step of the earliest block no one holds. Each block starts
// afresh (colDecoder.beginBlock), so any goroutine may take a block's next
// step; a block's steps run one at a time. At most window blocks are read
// and not yet taken by the core: memory stays bounded whatever the file.
// Units keep no reference to the decoders' buffers.
//
// next and close belong to the core's goroutine; the rest of the state is
// guarded by mu.
type blockPipe struct {
	col    *colDecoder // reads the frames; only while reading is set
	recs   bool        // the slabs hold records for colEvents (colcore.go)
	window int

	mu      sync.Mutex
	cond    sync.Cond // a step ended, a block was read or taken, or stop
	jobs    []*pipeJob
	free    []*colDecoder // decoders not in a block
	frames  [][]byte      // frame buffers, for reuse
	reading bool          // a goroutine reads the next frame
	last    error         // the error that ended the file (io.EOF at its end), once read
	stopped bool
	wg      sync.WaitGroup

	base uint32 // the units' clock at the current block's start (the core's)
}

// pipeJob is a block on its way to the core.
type pipeJob struct {
	comp   []byte // the frame, until its decoding begins
	rawLen uint32
	off    int64
	dec    *colDecoder // from the first step to the last
	held   bool        // a goroutine runs a step
	done   bool        // the last batch is decoded
	ready  []unitBatch // decoded, for the core in this order
}

// pipeWorkers is how many goroutines of its own a blockPipe has beside the
// core's: one for each other core, and no more than decoding needs.
func pipeWorkers() int { return min(max(runtime.GOMAXPROCS(0)-1, 0), 3) }

// newBlockPipe starts decoding col's blocks with workers goroutines beside
// the caller's; with recs, the slabs hold entries and exits as records
// for the core's colEvents (colcore.go), not as Bytefrog bytes. Call
// close when done, before col is closed.
func newBlockPipe(col *colDecoder, recs bool, workers int) *blockPipe {
	p := &blockPipe{col: col, recs: recs, window: workers + 2}
	p.cond.L = &p.mu
	p.wg.Add(workers)
	for range workers {
		go p.work()
	}
	return p
}

// work runs a worker: steps of the earliest block no one holds.
func (p *blockPipe) work() {
	defer p.wg.Done()
	p.mu.Lock()
	defer p.mu.Unlock()
	for !p.stopped {
		j := p.pick(0)
		if j == nil {
			if !p.stopped { // (pick may have let go of mu)
				p.cond.Wait()
			}
			continue
		}
		b := p.step(j)
		j.ready = append(j.ready, b)
	}
}

// next returns the next batch for the core, decoding it itself when that
// is quicker than waiting: the batches of each block in order, the blocks
// in the file's order, the units' times counted from the run's start. The
// last batch of the file carries its error (io.EOF at its end).
func (p *blockPipe) next() unitBatch {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		if len(p.jobs) == 0 {
			if p.last != nil {
				return unitBatch{err: p.last, end: true}
			}
			if !p.read() {
				p.cond.Wait()
			}
			continue
		}
		j := p.jobs[0]
		if len(j.ready) > 0 {
			b := j.ready[0]
			j.ready[0] = unitBatch{}
			j.ready = j.ready[1:]
			return p.take(b)
		}
		if !j.held && !j.done {
			return p.take(p.step(j))
		}
		if k := p.pick(1); k != nil { // decode ahead while j's step runs
			b := p.step(k)
			k.ready = append(k.ready, b)
			continue
		}
		p.cond.Wait()
	}
}

// take hands b, of the current block, to the core.
func (p *blockPipe) take(b unitBatch) unitBatch {
	for i := range b.us {
		b.us[i].t += p.base
	}
	if b.end {
		p.base += b.dt
		p.jobs[0] = nil
		p.jobs = p.jobs[1:]
		p.cond.Broadcast() // room for another block
	}
	return b
}

// pick returns the earliest block from jobs[from] on that needs a step and
// that no one holds, reading another if there is none and room for it;
// nil if there is nothing to do now.
func (p *blockPipe) pick(from int) *pipeJob {
	for {
		for _, j := range p.jobs[min(from, len(p.jobs)):] {
			if !j.held && !j.done {
				return j
			}
		}
		if !p.read() {
			return nil
		}
	}
}

// read reads the next block's frame into a job, without holding mu while
// it reads. It reports false when it could not: another goroutine reads,
// the window is full or the file has ended.
func (p *blockPipe) read() bool {
	if p.reading || p.last != nil || p.stopped || len(p.jobs) >= p.window {
		return false
	}
	p.reading = true
	if n := len(p.frames); n > 0 {
		p.col.comp, p.frames = p.frames[n-1], p.frames[:n-1]
	}
	p.mu.Unlock()
	j := &pipeJob{}
	rawLen, err := p.col.readBlock()
	if err == nil {
		j.comp, j.rawLen, j.off = p.col.comp, rawLen, p.col.blkOff
	}
	p.col.comp = nil
	p.mu.Lock()
	p.reading = false
	if err != nil {
		p.last = err
		j.done = true
		j.ready = append(j.ready, unitBatch{err: err, end: true})
	}
	p.jobs = append(p.jobs, j)
	p.cond.Broadcast()
	return true
}

// step decodes j's next batch, without holding mu while it decodes.
func (p *blockPipe) step(j *pipeJob) unitBatch {
	j.held = true
	begin := j.dec == nil
	if begin {
		if n := len(p.free); n > 0 {
			j.dec, p.free = p.free[n-1], p.free[:n-1]
		}
	}
	p.mu.Unlock()
	var b unitBatch
	if begin && j.dec == nil {
		d, err := newColDecoder(nil, 0, p.col.d)
		if err != nil {
			b = unitBatch{err: err, end: true}
		} else {
			d.recs = p.recs
			j.dec = d
		}
	}
	if begin && j.dec != nil {
		if err := j.dec.beginBlock(j.comp, j.rawLen, j.off); err != nil {
			b = unitBatch{err: err, end: true}
		}
	}
	if !b.end {
		b = j.dec.stepBlock()
	}
	p.mu.Lock()
	if begin && j.dec != nil {
		p.frames = append(p.frames, j.comp[:0])
		j.comp = nil
	}
	j.held = false
	// The block is free for its next step (or the batch is ready): the
	// core may consume this batch while a worker decodes the next.
	p.cond.Broadcast()
	if b.end {
		j.done = true
		if j.dec != nil {
			j.dec.unpack()
			p.free = append(p.free, j.dec)
			j.dec = nil
		}
	}
	return b
}

// close stops the workers, once their steps end, and drops what the pipe
// holds. The caller has taken its last batch.
func (p *blockPipe) close() {
	p.mu.Lock()
	p.stopped = true
	p.cond.Broadcast()
	p.mu.Unlock()
	p.wg.Wait()
	for _, j := range p.jobs {
		for _, b := range j.ready {
			b.release(0)
		}
		if j.dec != nil {
			j.dec.unpack()
			p.free = append(p.free, j.dec)
		}
	}
	p.jobs = nil
	for _, d := range p.free {
		d.close()
	}
	p.free = nil
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
		batch   unitBatch
		bi      int
	)
	var pipe *blockPipe
	if tr.col != nil {
		// Processors that take Blocks read the slabs' bytes.
		pipe = newBlockPipe(tr.col, replayRecords && len(c.blks) == 0, pipeWorkers())
		defer func() {
			// The workers must be done with the decoders before the
			// caller closes tr.col.
			batch.release(bi)
			pipe.close()
		}()
	}
	for !ended {
		var u unit
		if pipe != nil {
			if bi == len(batch.us) {
				if batch.err != nil {
					if batch.err != io.EOF {
						readErr = batch.err
					}
					break
				}
				batch, bi = pipe.next(), 0
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
