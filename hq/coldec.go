package hq

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// colThreadState is one thread's cursor into its stream while a block is
// decoded.
type colThreadState struct {
	tid uint16
	// all holds each of the thread's columns in the block, at how much
	// of it has been read: offsets, so that reading stores no pointer.
	all      [colThreadCols][]byte
	at       [colThreadCols]int
	lastTime int32
	stack    []int32
}

// col returns the unread rest of column j.
func (th *colThreadState) col(j int) []byte { return th.all[j][th.at[j]:] }

// take marks column j read up to rest, a tail of col(j).
func (th *colThreadState) take(j int, rest []byte) { th.at[j] = len(th.all[j]) - len(rest) }

// colDecoder reads the blocks of a columnar trace file and hands back the
// units they hold. It is not safe for concurrent use.
type colDecoder struct {
	d      bytefrog.Dialect
	r      *bufio.Reader
	zdec   *zstd.Decoder
	off    int64 // file offset of the next block
	blkOff int64 // file offset of the current block
	class  *[256]uint8
	fixed  *[256]uint8

	comp    []byte
	payload []byte

	units  []byte // sections of the current block, consumed from the front
	order  []byte
	seqs   []byte
	blob   []byte
	thr    []colThreadState
	nUnits uint64

	nibbles bool // the order column holds two slots a byte
	half    bool // the next slot is the high nibble of c.order[0]

	runBase, nextSeq int32
	runLeft          uint64
	lastT            uint32
	bad              bool // a varint ran past its section or out of range

	// the data unit being decoded, when it needed more than one slab
	cur     unit
	remUn   uint64
	remEv   uint64
	curPerr error
	inUnit  bool

	v bytefrog.EventView

	kindSize [colMask + 1]uint8 // the Bytefrog size of each kind in the run's dialect; 0: not allowed
	exitCP   bool               // exits have the Code Pulse layout
	// recs: entries and exits go into slabs as records for the core's
	// colEvents (colcore.go) rather than as Bytefrog bytes.
	recs bool
	// pack: data units share a slab while it has packRoom bytes free, as a
	// connection's reads do (decodeBlock); the decoder holds a reference
	// to pk, the slab it fills, which is free from pkW on.
	pack bool
	pk   *slab
	pkW  int
}

// packRoom is the room a slab needs for another data unit: any message
// fits in it.
const packRoom = maxVerbatim + maxFixed

// unpack drops the decoder's reference to the slab it fills.
func (c *colDecoder) unpack() {
	if c.pk != nil {
		c.pk.unref()
		c.pk = nil
	}
}

func newColDecoder(r *bufio.Reader, off int64, d bytefrog.Dialect) (*colDecoder, error) {
	zd, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxColBlock),
		zstd.WithDecoderMaxWindow(maxTraceWindow))
	if err != nil {
		return nil, err
	}
	c := &colDecoder{d: d, r: r, zdec: zd, off: off, class: dataClasses(d.Version), fixed: fixedSizes(d),
		exitCP: d.Flavor == bytefrog.FlavorCodePulse}
	c.v.Init(nil, d)
	for k, t := range map[colKind]bytefrog.MsgType{colEntry: bytefrog.MsgMethodEntry, colExit: bytefrog.MsgMethodExit,
		colException: bytefrog.MsgException, colBubble: bytefrog.MsgExceptionBubble, colVisit: bytefrog.MsgMethodVisit} {
		c.kindSize[k] = c.fixed[t]
	}
	return c, nil
}

func (c *colDecoder) close() { c.zdec.Close() }

func (c *colDecoder) errf(format string, args ...any) error {
	return fmt.Errorf("%w: block at file offset %d: %s", ErrTraceFormat, c.blkOff, fmt.Sprintf(format, args...))
}

// block reads and decompresses the next block. It returns io.EOF at the
// end of the file.
func (c *colDecoder) block() error {
	rawLen, err := c.readBlock()
	if err != nil {
		return err
	}
	return c.load(rawLen)
}

// readBlock reads the next block's frame into c.comp and returns its
// payload's size. It returns io.EOF at the end of the file.
func (c *colDecoder) readBlock() (uint32, error) {
	c.blkOff = c.off
	var h [blockHeaderSize]byte
	if n, err := io.ReadFull(c.r, h[:]); err != nil {
		if err == io.EOF {
			return 0, io.EOF
		}
		return 0, c.errf("block header cut short after %d of %d bytes (truncated file?)", n, blockHeaderSize)
	}
	rawLen := binary.BigEndian.Uint32(h[:])
	compLen := binary.BigEndian.Uint32(h[i32Size:])
	if rawLen > maxColBlock || compLen > maxColComp {
		return 0, fmt.Errorf("%w: block at file offset %d declares %d bytes, %d compressed (max %d, %d)",
			ErrTraceTooLarge, c.blkOff, rawLen, compLen, maxColBlock, maxColComp)
	}
	// Read in steps, so that a declared length costs memory only as the
	// bytes arrive.
	c.comp = c.comp[:0]
	for uint32(len(c.comp)) < compLen {
		step := int(min(compLen-uint32(len(c.comp)), readChunk))
		l := len(c.comp)
		if cap(c.comp)-l < step {
			nb := make([]byte, l, max(2*cap(c.comp), l+step))
			copy(nb, c.comp)
			c.comp = nb
		}
		c.comp = c.comp[:l+step]
		if n, err := io.ReadFull(c.r, c.comp[l:]); err != nil {
			return 0, c.errf("block of %d bytes cut short after %d (truncated file?)", compLen, l+n)
		}
	}
	c.off += blockHeaderSize + int64(compLen)
	return rawLen, nil
}

// load decompresses the frame in c.comp, of the block at c.blkOff, and
// splits its payload of rawLen bytes into sections.
func (c *colDecoder) load(rawLen uint32) error {
	if cap(c.payload) < int(rawLen) {
		// rawLen is capped and the frame is in hand; zstd checks the frame
		// against the space given.
		c.payload = make([]byte, 0, rawLen)
	}
	p, err := c.zdec.DecodeAll(c.comp, c.payload[:0])
	if err != nil {
		return c.errf("zstd: %v", err)
	}
	if len(p) != int(rawLen) {
		return c.errf("payload of %d bytes, header says %d", len(p), rawLen)
	}
	c.payload = p
	return c.sections(p)
}

// sections splits a payload into its sections.
func (c *colDecoder) sections(p []byte) error {
	var lens [colSections]uint64
	for i := range lens {
		v, n := binary.Uvarint(p)
		if n <= 0 {
			return c.errf("section table")
		}
		lens[i], p = v, p[n:]
	}
	var total uint64
	for _, l := range lens {
		total += l
		if l > uint64(len(p)) || total > uint64(len(p)) {
			return c.errf("sections of %v bytes in %d", lens, len(p))
		}
	}
	if total != uint64(len(p)) {
		return c.errf("sections of %d bytes, payload holds %d", total, len(p))
	}
	take := func(n uint64) []byte { b := p[:n:n]; p = p[n:]; return b }
	c.units, c.order, c.seqs = take(lens[0]), take(lens[1]), take(lens[2])
	thr := take(lens[3])
	var cols [colThreadCols][]byte
	for j := range cols {
		cols[j] = take(lens[4+j])
	}
	c.blob = take(lens[4+colThreadCols])
	var ok bool
	if c.nUnits, c.units, ok = uvarint(c.units); !ok {
		return c.errf("unit count")
	}
	nThr, thr, ok := uvarint(thr)
	if !ok || nThr > 1<<16 || nThr > uint64(len(thr)) {
		return c.errf("thread count")
	}
	c.thr = c.thr[:0]
	for i := range nThr {
		var tid uint64
		if tid, thr, ok = uvarint(thr); !ok || tid >= 1<<16 {
			return c.errf("thread %d: id", i)
		}
		c.thr = append(c.thr, colThreadState{tid: uint16(tid), stack: c.stackFor(len(c.thr))})
		th := &c.thr[i]
		for j := range th.all {
			var l uint64
			if l, thr, ok = uvarint(thr); !ok || l > uint64(len(cols[j])) {
				return c.errf("thread %d: column %d length", i, j)
			}
			th.all[j], th.at[j], cols[j] = cols[j][:l:l], 0, cols[j][l:]
		}
	}
	if len(thr) != 0 {
		return c.errf("%d bytes after the thread table", len(thr))
	}
	for j := range cols {
		if len(cols[j]) != 0 {
			return c.errf("column %d: %d bytes belong to no thread", j, len(cols[j]))
		}
	}
	c.runBase, c.nextSeq, c.runLeft, c.bad = 0, 0, 0, false
	c.nibbles, c.half = len(c.thr) <= maxNibbleSlots, false
	return nil
}

// stackFor reuses the call stack of the slot being filled.
func (c *colDecoder) stackFor(i int) []int32 {
	if i < cap(c.thr) {
		return c.thr[:i+1][i].stack[:0]
	}
	return nil
}

// uvarint reads a varint from the front of b.
func uvarint(b []byte) (uint64, []byte, bool) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), b[1:], true
	}
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, b, false
	}
	return v, b[n:], true
}

// uv reads a varint from *b, noting a bad one in c.bad.
func (c *colDecoder) uv(b *[]byte) uint64 {
	if s := *b; len(s) > 0 && s[0] < 0x80 {
		*b = s[1:]
		return uint64(s[0])
	}
	v, n := binary.Uvarint(*b)
	if n <= 0 {
		c.bad = true
		return 0
	}
	*b = (*b)[n:]
	return v
}

// bytes reads a length and that many bytes from *b.
func (c *colDecoder) bytes(b *[]byte, limit uint64) []byte {
	n := c.uv(b)
	if n > uint64(len(*b)) || n > limit {
		c.bad = true
		return nil
	}
	v := (*b)[:n:n]
	*b = (*b)[n:]
	return v
}

// next returns the next unit. Data received comes in a fresh slab whose
// reference goes to the caller; other units' bytes are valid until the
// next call. It returns io.EOF at the end of the file.
func (c *colDecoder) next(u *unit) error {
	if c.inUnit {
		return c.dataUnit(u)
	}
	for c.nUnits == 0 {
		if err := c.endBlock(); err != nil {
			return err
		}
		if err := c.block(); err != nil {
			return err
		}
	}
	return c.unit(u)
}

// endBlock checks that the units of the current block (if any) used every
// byte of its sections.
func (c *colDecoder) endBlock() error {
	if c.half { // the pad nibble
		if c.order[0]>>4 != 0 {
			return c.errf("event order: pad nibble %d", c.order[0]>>4)
		}
		c.order, c.half = c.order[1:], false
	}
	if len(c.units) != 0 || len(c.order) != 0 || len(c.seqs) != 0 || len(c.blob) != 0 {
		return c.errf("bytes left after the last unit")
	}
	for i := range c.thr {
		for j := range c.thr[i].all {
			if rest := c.thr[i].col(j); len(rest) != 0 {
				return c.errf("thread %d: %d bytes left in column %d", c.thr[i].tid, len(rest), j)
			}
		}
	}
	return nil
}

// unit decodes the next unit of the current block, which has one.
func (c *colDecoder) unit(u *unit) error {
	c.nUnits--
	if len(c.units) == 0 {
		return c.errf("unit table ends early")
	}
	kind := RecordKind(c.units[0])
	c.units = c.units[1:]
	if kind < RecordRecv || kind > RecordEnd {
		return c.errf("unit kind %d", kind)
	}
	conn := c.uv(&c.units)
	dt := c.uv(&c.units)
	if c.bad || conn > 1<<16-1 || dt > 1<<32-1 {
		return c.errf("%v unit: connection or time", kind)
	}
	c.lastT += uint32(dt)
	*u = unit{kind: kind, conn: uint16(conn), t: c.lastT}
	switch {
	case kind == RecordRecv && conn != controlConn:
		if len(c.units) == 0 {
			return c.errf("data unit: mode")
		}
		mode := c.units[0]
		c.units = c.units[1:]
		switch mode {
		case colUnparsed:
			u.raw = c.bytes(&c.units, MaxTraceRecord)
		case colParsed:
			wire := c.uv(&c.units)
			u.wire, u.wireSet = int64(min(wire, 1<<40)), true
			c.remUn = c.uv(&c.units)
			c.remEv = c.uv(&c.units)
			perr := c.bytes(&c.units, MaxTraceRecord)
			if c.bad {
				break
			}
			c.curPerr = nil
			if len(perr) > 0 {
				c.curPerr = errors.New(string(perr))
			}
			c.cur, c.inUnit = *u, true
			return c.dataUnit(u)
		default:
			return c.errf("data unit: mode %d", mode)
		}
	case kind == RecordClose && conn != controlConn:
		u.pending = int(min(c.uv(&c.units), 1<<31-1))
		u.raw = c.bytes(&c.units, MaxTraceRecord)
	default:
		u.raw = c.bytes(&c.units, MaxTraceRecord)
	}
	if c.bad {
		return c.errf("%v unit on connection %d: length", kind, conn)
	}
	return nil
}

// dataUnit decodes the messages of the current data unit into a slab, as
// many as fit.
func (c *colDecoder) dataUnit(u *unit) error {
	*u = c.cur
	var s *slab
	w := 0
	if c.pk != nil && len(c.pk.raw)-c.pkW >= packRoom {
		s, w = c.pk, c.pkW
		s.ref(1)
	} else {
		c.unpack()
		s = getSlab()
		s.cols = c.recs
		if c.pack {
			s.ref(1)
			c.pk = s
		}
	}
	w0, e0, u0 := w, len(s.ev), len(s.un)
	raw := s.raw
	for c.remUn > 0 {
		if n, ok := c.peekLen(); !ok || n > uint64(len(raw)-w) {
			if ok && w > w0 {
				break // the rest goes in the next slab
			}
			s.unref()
			return c.errf("blob: unsequenced message")
		}
		msg := c.bytes(&c.blob, maxVerbatim)
		if c.bad {
			s.unref()
			return c.errf("blob: unsequenced message")
		}
		if err := c.verbatim(msg, classUnsequenced); err != nil {
			s.unref()
			return err
		}
		s.un = append(s.un, uint32(w))
		w += copy(raw[w:], msg)
		c.remUn--
	}
	if c.remUn == 0 {
		var err error
		if w, err = c.events(s, w); err != nil {
			s.unref()
			return err
		}
	}
	c.cur.wire = 0 // the bytes received count once
	if c.remUn == 0 && c.remEv == 0 {
		c.inUnit = false
		u.perr = c.curPerr
	} else if w == w0 {
		s.unref()
		return c.errf("message larger than a read buffer")
	}
	if s == c.pk {
		c.pkW = w
	}
	u.s, u.raw = s, raw[w0:w] // (cap: where the unit starts in s)
	u.ev, u.un = s.ev[e0:len(s.ev):len(s.ev)], s.un[u0:len(s.un):len(s.un)]
	return nil
}

// peekLen returns the length of the next blob entry without taking it.
func (c *colDecoder) peekLen() (uint64, bool) {
	v, n := binary.Uvarint(c.blob)
	return v, n > 0
}

// maxFixed is the largest fixed-size event.
const maxFixed = bytefrog.ExceptionSize

// events decodes the current unit's events into s from w, as many as fit,
// and returns where they end.
func (c *colDecoder) events(s *slab, w int) (int, error) {
	raw := s.raw
	for c.remEv > 0 {
		if c.nibbles && c.runLeft > 0 {
			if c.recs {
				w = c.fastRecs(s, w)
			} else {
				w = c.fastEvents(s, w)
			}
			if c.remEv == 0 {
				break
			}
		}
		order, half := c.order, c.half
		var slot uint64
		switch {
		case !c.nibbles:
			slot = c.uv(&c.order)
		case len(c.order) == 0:
			c.bad = true
		case c.half:
			slot, c.order, c.half = uint64(c.order[0]>>4), c.order[1:], false
		default:
			slot, c.half = uint64(c.order[0]&0x0f), true
		}
		if c.bad || slot > uint64(len(c.thr)) {
			return w, c.errf("event order: thread slot")
		}
		need := uint64(maxFixed)
		if slot == 0 {
			n, ok := c.peekLen()
			if !ok || n > maxVerbatim {
				return w, c.errf("blob: sequenced message")
			}
			need = n
		}
		if need > uint64(len(raw)-w) {
			c.order, c.half = order, half // in the next slab
			return w, nil
		}
		if c.runLeft == 0 {
			d := c.uv(&c.seqs)
			l := c.uv(&c.seqs)
			if c.bad || l == 0 || d > 1<<32-1 {
				return w, c.errf("sequence runs")
			}
			c.nextSeq = c.runBase + unzigzag(d)
			c.runLeft = l
			c.runBase = c.nextSeq + int32(l)
		}
		seq := c.nextSeq
		c.nextSeq++
		c.runLeft--
		c.remEv--
		if slot == 0 {
			msg := c.bytes(&c.blob, maxVerbatim)
			if c.bad {
				return w, c.errf("blob ends early")
			}
			if err := c.verbatim(msg, classSequenced); err != nil {
				return w, err
			}
			k := copy(raw[w:], msg)
			binary.BigEndian.PutUint32(raw[w+seqOffset:], uint32(seq))
			s.ev = append(s.ev, event{Seq: seq, Off: uint32(w)})
			w += k
			continue
		}
		th := &c.thr[slot-1]
		var size int
		if w, size = c.fixedEvent(th, raw, w, seq); size == 0 {
			return w, c.errf("thread %d: bad event", th.tid)
		}
		s.ev = append(s.ev, event{Seq: seq, Off: uint32(w)})
		w += size
	}
	return w, nil
}

// fastEvents decodes the current unit's events into s from w while they
// are the common ones, entries and exits whose varints are one byte each,
// of a block of at most maxNibbleSlots threads, inside the current
// sequence run, and returns where they end. It stops at the first event
// it leaves to the general way in events, having taken nothing of it:
// every way out of the loop comes before the event's columns are moved.
func (c *colDecoder) fastEvents(s *slab, w int) int {
	raw := s.raw
	order, half := c.order, c.half
	remEv, runLeft, seq := c.remEv, c.runLeft, c.nextSeq
	exitCP := c.exitCP
	entrySize, exitSize := int(c.kindSize[colEntry]), int(c.kindSize[colExit])
	ev := s.ev
loop:
	for remEv > 0 && runLeft > 0 && w <= len(raw)-maxFixed && len(order) > 0 && len(ev) < cap(ev) {
		slot := int(order[0] & 0x0f)
		if half {
			slot = int(order[0] >> 4)
		}
		if slot == 0 || slot > len(c.thr) {
			break
		}
		th := &c.thr[slot-1]
		ki := th.at[colKinds]
		if ki >= len(th.all[colKinds]) {
			break
		}
		code := colKind(th.all[colKinds][ki])
		k := code &^ colTime
		rel := th.lastTime
		ti := th.at[colTimes]
		if code&colTime != 0 {
			times := th.all[colTimes]
			if ti >= len(times) || times[ti] >= 0x80 {
				break
			}
			rel += unzigzag(uint64(times[ti]))
			ti++
		}
		o := (*[maxFixed]byte)(raw[w:])
		var method int32
		size := entrySize
		switch k {
		case colEntry:
			m, ok := th.method()
			if !ok {
				break loop
			}
			n := len(th.stack)
			if n == cap(th.stack) && n < maxStack {
				break loop // the general way grows the stack
			}
			method = m
			th.at[colMethods]++
			if m >= 0x80 {
				th.at[colMethodsHi]++
			}
			o[0] = byte(bytefrog.MsgMethodEntry)
			binary.BigEndian.PutUint16(o[offField4:], th.tid)
			if n < maxStack {
				th.stack = th.stack[:n+1]
				th.stack[n] = method
			}
		case colExit, colExit | colTop:
			xi, xs := th.at[colExtras], th.all[colExtras]
			if xi >= len(xs) {
				break loop
			}
			x := uint32(xs[xi])
			xn := 1
			if x >= 0x80 { // a line of two or three varint bytes
				if xi+2 >= len(xs) || exitCP {
					break loop
				}
				x &= 0x7f
				b1 := uint32(xs[xi+1])
				x |= (b1 & 0x7f) << 7
				xn = 2
				if b1 >= 0x80 {
					b2 := uint32(xs[xi+2])
					if b2 > 3 { // lines + 1 are at most 1<<16
						break loop
					}
					x |= b2 << 14
					xn = 3
				}
			}
			if !exitCP && (x == 0 || x > 1<<16) || exitCP && x > 0xff {
				break loop
			}
			if k == colExit {
				m, ok := th.method()
				if !ok {
					break loop
				}
				method = m
				th.at[colMethods]++
				if m >= 0x80 {
					th.at[colMethodsHi]++
				}
			} else {
				n := len(th.stack)
				if n == 0 {
					break loop
				}
				method = th.stack[n-1]
			}
			o[0] = byte(bytefrog.MsgMethodExit)
			if exitCP {
				o[offField4] = byte(x)
				binary.BigEndian.PutUint16(o[offTIDCP:], th.tid)
			} else {
				binary.BigEndian.PutUint16(o[offField4:], uint16(x-1))
				binary.BigEndian.PutUint16(o[offTIDExit:], th.tid)
			}
			th.at[colExtras] = xi + xn
			if n := len(th.stack); n > 0 {
				th.stack = th.stack[:n-1]
			}
			size = exitSize
		default:
			break loop
		}
		th.at[colKinds], th.at[colTimes], th.lastTime = ki+1, ti, rel
		binary.BigEndian.PutUint32(o[offRelTime:], uint32(rel))
		binary.BigEndian.PutUint32(o[offSeq:], uint32(seq))
		binary.BigEndian.PutUint32(o[offMethod:], uint32(method))
		ev = ev[:len(ev)+1]
		ev[len(ev)-1] = event{Seq: seq, Off: uint32(w)}
		w += size
		seq++
		runLeft--
		remEv--
		if half {
			order = order[1:]
		}
		half = !half
	}
	s.ev = ev
	c.order, c.half = order, half
	c.remEv, c.runLeft, c.nextSeq = remEv, runLeft, seq
	return w
}

// method peeks at the thread's next method id when it takes at most two
// bytes (the second in the high column): ids below 1<<14.
func (th *colThreadState) method() (int32, bool) {
	mi, lo := th.at[colMethods], th.all[colMethods]
	if mi >= len(lo) {
		return 0, false
	}
	v := int32(lo[mi])
	if v < 0x80 {
		return v, true
	}
	hi, h := th.at[colMethodsHi], th.all[colMethodsHi]
	if hi >= len(h) || h[hi] >= 0x80 {
		return 0, false
	}
	return v&0x7f | int32(h[hi])<<7, true
}

// fixedEvent decodes thread th's next event, numbered seq, into raw at w,
// which has room for it. It returns its size, 0 if it does not decode.
func (c *colDecoder) fixedEvent(th *colThreadState, raw []byte, w int, seq int32) (int, int) {
	kinds := th.col(colKinds)
	if len(kinds) == 0 {
		return w, 0
	}
	code := colKind(kinds[0])
	th.take(colKinds, kinds[1:])
	k := code & colMask
	size := int(c.kindSize[k])
	if size == 0 || code&^(colTop|colTime|colMask) != 0 {
		return w, 0
	}
	rel := th.lastTime
	if code&colTime != 0 {
		t := th.col(colTimes)
		var d uint64
		if len(t) > 0 && t[0] < 0x80 {
			d, t = uint64(t[0]), t[1:]
		} else {
			d = c.uv(&t)
		}
		th.take(colTimes, t)
		rel += unzigzag(d)
		th.lastTime = rel
	}
	var method uint32
	if code&colTop != 0 {
		n := len(th.stack)
		if n == 0 || k == colEntry || k == colVisit {
			return w, 0
		}
		method = uint32(th.stack[n-1])
	} else {
		lo := th.col(colMethods)
		if len(lo) == 0 {
			return w, 0
		}
		th.take(colMethods, lo[1:])
		v := uint64(lo[0])
		if v >= 0x80 {
			hi := th.col(colMethodsHi)
			v = v&0x7f | c.uv(&hi)<<7
			th.take(colMethodsHi, hi)
			if v > 1<<32-1 {
				return w, 0
			}
		}
		method = uint32(v)
	}
	o := raw[w : w+maxFixed]
	x := th.col(colExtras)
	var v uint64
	if k != colEntry {
		if len(x) > 0 && x[0] < 0x80 {
			v, x = uint64(x[0]), x[1:]
		} else {
			v = c.uv(&x)
		}
	}
	switch k {
	case colEntry:
		o[0] = byte(bytefrog.MsgMethodEntry)
		binary.BigEndian.PutUint16(o[offField4:], th.tid)
		if len(th.stack) < maxStack {
			th.stack = append(th.stack, int32(method))
		}
	case colExit:
		o[0] = byte(bytefrog.MsgMethodExit)
		if c.exitCP {
			if v > 0xff {
				return w, 0
			}
			o[offField4] = byte(v)
			binary.BigEndian.PutUint16(o[offTIDCP:], th.tid)
		} else {
			if v == 0 || v > 1<<16 {
				return w, 0
			}
			binary.BigEndian.PutUint16(o[offField4:], uint16(v-1))
			binary.BigEndian.PutUint16(o[offTIDExit:], th.tid)
		}
		th.pop()
	case colException:
		o[0] = byte(bytefrog.MsgException)
		line := c.uv(&x)
		if v > 1<<32-1 || line == 0 || line > 1<<16 {
			return w, 0
		}
		binary.BigEndian.PutUint32(o[offField4:], uint32(v))
		binary.BigEndian.PutUint16(o[offField5:], uint16(line-1))
		binary.BigEndian.PutUint16(o[offTIDExc:], th.tid)
	case colBubble:
		o[0] = byte(bytefrog.MsgExceptionBubble)
		if v > 1<<32-1 {
			return w, 0
		}
		binary.BigEndian.PutUint32(o[offField4:], uint32(v))
		binary.BigEndian.PutUint16(o[offField5:], th.tid)
		th.pop()
	case colVisit:
		o[0] = byte(bytefrog.MsgMethodVisit)
		if v > 1<<32-1 {
			return w, 0
		}
		binary.BigEndian.PutUint32(o[offField4:], uint32(v))
		binary.BigEndian.PutUint16(o[offField5:], th.tid)
	}
	if c.bad {
		return w, 0
	}
	th.take(colExtras, x)
	binary.BigEndian.PutUint32(o[offRelTime:], uint32(rel))
	binary.BigEndian.PutUint32(o[offSeq:], uint32(seq))
	binary.BigEndian.PutUint32(o[offMethod:], method)
	return w, size
}

func (th *colThreadState) pop() {
	if len(th.stack) > 0 {
		th.stack = th.stack[:len(th.stack)-1]
	}
}

// verbatim checks a message kept as it is: a whole message of the class
// given.
func (c *colDecoder) verbatim(msg []byte, class uint8) error {
	if len(msg) == 0 || c.class[msg[0]] != class || c.fixed[msg[0]] != 0 && class == classSequenced {
		return c.errf("kept message of type %d where a %s one belongs", firstByte(msg),
			map[uint8]string{classSequenced: "sequenced", classUnsequenced: "unsequenced"}[class])
	}
	v := &c.v
	v.Reset(msg)
	if !v.Next() {
		if err := v.Err(); err != nil {
			return c.errf("kept %v message: %v", bytefrog.MsgType(msg[0]), errors.Unwrap(err))
		}
		return c.errf("kept %v message: %v", bytefrog.MsgType(msg[0]), bytefrog.ErrShort)
	}
	if n := len(v.Raw()); n != len(msg) {
		return c.errf("kept %v message of %d bytes holds %d", bytefrog.MsgType(msg[0]), len(msg), n)
	}
	return nil
}

func firstByte(b []byte) int {
	if len(b) == 0 {
		return -1
	}
	return int(b[0])
}

// beginBlock starts decoding a whole block, whose frame is comp, with c, a
// decoder of its own: every block starts afresh but for the units' clock,
// which goes on from the previous block's last unit, so the units' times
// here count from the block's start. stepBlock then hands out its units.
// The frame is no longer needed once beginBlock returns.
func (c *colDecoder) beginBlock(comp []byte, rawLen uint32, off int64) error {
	c.comp, c.blkOff, c.lastT, c.inUnit, c.nUnits = comp, off, 0, false, 0
	c.pack = true
	err := c.load(rawLen)
	c.comp = nil
	return err
}

// stepBlock decodes the next batch of the block begun with beginBlock: at
// most batchUnits units or about batchEvents events, so that the core
// starts on a block before its end is decoded. The last batch is marked
// end, carries the error that ended the block, if any, and in dt how far
// the block's last unit moved the clock; after it, c holds no slab. The
// units keep no reference to c's buffers.
func (c *colDecoder) stepBlock() unitBatch {
	var b unitBatch
	events := 0
	for c.inUnit || c.nUnits > 0 {
		if b.us == nil {
			b.us = make([]unit, 0, min(c.nUnits+1, batchUnits))
		}
		var u unit
		var err error
		if c.inUnit {
			err = c.dataUnit(&u)
		} else {
			err = c.unit(&u)
		}
		if err != nil {
			c.unpack()
			b.err, b.end = err, true
			return b
		}
		if u.s == nil {
			u.raw = bytes.Clone(u.raw)
		}
		b.us = append(b.us, u)
		if events += len(u.ev); len(b.us) == batchUnits || events >= batchEvents {
			return b
		}
	}
	c.unpack()
	b.err, b.dt, b.end = c.endBlock(), c.lastT, true
	return b
}

// A block's units go to the core in batches of at most batchUnits units or
// about batchEvents events.
const (
	batchUnits  = 64
	batchEvents = 16 << 10
)
