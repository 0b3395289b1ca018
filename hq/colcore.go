package hq

import (
	"encoding/binary"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// Replay of a columnar file feeds the core entries and exits as the
// columns decode them, instead of rebuilding their Bytefrog bytes for the
// core to parse again: the decoder writes each one as a record of fixed
// size and native byte order into the slab (a slab with cols set), where
// the other sequenced messages (exceptions, bubbles, visits, markers) lie
// as Bytefrog bytes, as before. The core's colEvents takes a run of such
// a slab's events as events takes a run of a Bytefrog slab, and makes the
// same counts, checks, timings and findings in the same order: its loop is
// fastRun's on the record's fields, and every event its loop leaves goes
// the general way from Bytefrog bytes rebuilt in a scratch buffer, as do
// the events handed to processors that take single events. Processors
// that take Blocks read the slab's bytes, so a replay that has any gets
// Bytefrog slabs.

// A record: kind u8 (recEntry, recExit), flag u8 (the Code Pulse exit's
// exceptionThrown; 0 in the Bytefrog flavour), tid u16, relTime i32,
// methodId i32, line u16 (the Bytefrog exit's), 2 bytes of 0; little-endian.
const (
	recKind   = 0
	recFlag   = recKind + u8Size
	recTID    = recFlag + u8Size
	recTime   = recTID + u16Size
	recMethod = recTime + i32Size
	recLine   = recMethod + i32Size
	recSize   = recLine + 2*u16Size
)

// Record kinds: type bytes no Bytefrog message has.
const (
	recEntry = 0xf4
	recExit  = 0xf5
)

// putRec writes a record at the front of o.
func putRec(o *[recSize]byte, kind, flag uint8, tid uint16, rel, method int32, line uint16) {
	binary.LittleEndian.PutUint64(o[recKind:], uint64(kind)|uint64(flag)<<8|uint64(tid)<<16|uint64(uint32(rel))<<32)
	binary.LittleEndian.PutUint64(o[recMethod:], uint64(uint32(method))|uint64(line)<<32)
}

// recBytes returns the Bytefrog bytes of e, which lies in raw: the record
// rebuilt in c's scratch buffer (valid until the next call), or raw's
// bytes from e on.
func (c *core) recBytes(raw []byte, e event) []byte {
	b := raw[e.Off:]
	if b[0] != recEntry && b[0] != recExit {
		return b
	}
	h := (*[recSize]byte)(b)
	o := &c.recBuf
	rel := binary.LittleEndian.Uint32(h[recTime:])
	method := binary.LittleEndian.Uint32(h[recMethod:])
	tid := binary.LittleEndian.Uint16(h[recTID:])
	binary.BigEndian.PutUint32(o[offRelTime:], rel)
	binary.BigEndian.PutUint32(o[offSeq:], uint32(e.Seq))
	binary.BigEndian.PutUint32(o[offMethod:], method)
	if h[recKind] == recEntry {
		o[0] = byte(bytefrog.MsgMethodEntry)
		binary.BigEndian.PutUint16(o[offField4:], tid)
		return o[:bytefrog.MethodEntrySize]
	}
	o[0] = byte(bytefrog.MsgMethodExit)
	if c.exitSize == bytefrog.MethodExitCodePulseSize {
		o[offField4] = h[recFlag]
		binary.BigEndian.PutUint16(o[offTIDCP:], tid)
	} else {
		binary.BigEndian.PutUint16(o[offField4:], binary.LittleEndian.Uint16(h[recLine:]))
		binary.BigEndian.PutUint16(o[offTIDExit:], tid)
	}
	return o[:c.exitSize]
}

// colEvents processes evs, which lie in s, a slab of records, in order:
// as events does, runs of common events through colRun, each other event
// through emit.
func (c *core) colEvents(s *slab, evs []event) {
	raw := s.raw
	for i := 0; i < len(evs); i++ {
		if c.fastOK() {
			n := c.colRun(raw, evs[i:])
			if len(c.evs) > 0 {
				for _, e := range evs[i : i+n] {
					c.deliver(c.recBytes(raw, e))
				}
			}
			if i += n; i == len(evs) {
				return
			}
		}
		c.emit(s, c.recBytes(raw, evs[i]))
	}
}

// colRun is fastRun on records: it takes the entries and exits of the
// innermost call at the front of evs, which lie in raw, and returns how
// many it took, stopping where fastRun stops (a Bytefrog event is another
// type). The caller has checked fastOK.
func (c *core) colRun(raw []byte, evs []event) int {
	st, cl := &c.st, &c.call
	dense := st.methods.dense
	if len(cl.self) < len(dense) {
		cl.growSelf(len(dense))
	}
	self := cl.self[:len(dense)]
	thr := cl.thr
	entries := 0
	i := 0
loop:
	for ; i < len(evs); i++ {
		off := int(evs[i].Off)
		if off > len(raw)-recSize {
			break
		}
		h := (*[recSize]byte)(raw[off:])
		lo := binary.LittleEndian.Uint64(h[recKind:])
		method := int32(binary.LittleEndian.Uint32(h[recMethod:]))
		mi := uint(uint32(method))
		tid := uint16(lo >> (8 * recTID))
		if mi >= uint(len(dense)) || !dense[mi].mapped || int(tid) >= len(thr) {
			break
		}
		th := &thr[tid]
		n := len(th.stack)
		rel := int32(lo >> (8 * recTime))
		switch uint16(lo) {
		case recEntry: // (flag 0)
			if n >= th.room { // (the general way grows the stack)
				break loop
			}
			dense[mi].n1++
			entries++
			th.stack[:n+1][n] = frame{method: method, start: rel}
			th.stack = th.stack[:n+1] // (a store of the length alone)
		case recExit: // flag 0: no exception thrown (Code Pulse)
			if n <= th.floor || th.stack[n-1].method != method {
				break loop
			}
			f := th.stack[n-1]
			th.stack = th.stack[:n-1]
			total := max(int64(rel-f.start), 0)
			self[mi] += max(total-f.child, 0)
			if n-1 > th.floor {
				th.stack[n-2].child += total
			}
		default:
			break loop
		}
	}
	c.flushCounts(int64(entries), int64(i-entries))
	return i
}

// fastRecs is fastEvents writing records: it decodes the current unit's
// events into s from w while they are entries and exits whose varints are
// one byte each (method ids and lines two and three at most), of a block
// of at most maxNibbleSlots threads, inside the current sequence run, and
// returns where they end. It stops at the first event it leaves to the
// general way in events, having taken nothing of it. How many events it
// may take at most is counted once, so that the loop carries one count
// instead of the cursors it bounds.
func (c *colDecoder) fastRecs(s *slab, w int) int {
	raw := s.raw
	order := c.order
	half := 0
	if c.half {
		half = 1
	}
	ev := s.ev
	lim := min(c.remEv, c.runLeft, uint64((len(raw)-w)/recSize), uint64(cap(ev)-len(ev)),
		uint64(2*len(order)-half))
	exitCP := c.exitCP
	thr := c.thr
	out := ev[len(ev):cap(ev)]
	seq := c.nextSeq
	var i int
loop:
	for ; uint64(i) < lim; i++ {
		j := i + half // nibble index in order
		slot := int(order[j>>1]>>(4*(j&1))) & 0x0f
		if slot == 0 || slot > len(thr) {
			break
		}
		th := &thr[slot-1]
		ki := th.at[colKinds]
		if ki >= len(th.all[colKinds]) {
			break
		}
		code := colKind(th.all[colKinds][ki])
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
		o := (*[recSize]byte)(raw[w+i*recSize:])
		switch code &^ colTime {
		case colEntry:
			m, ok := th.method()
			if !ok {
				break loop
			}
			n := len(th.stack)
			if n == cap(th.stack) && n < maxStack {
				break loop // the general way grows the stack
			}
			th.at[colMethods]++
			if m >= 0x80 {
				th.at[colMethodsHi]++
			}
			putRec(o, recEntry, 0, th.tid, rel, m, 0)
			if n < maxStack {
				th.stack = th.stack[:n+1]
				th.stack[n] = m
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
			var method int32
			n := len(th.stack)
			if code&colTop == 0 {
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
				if n == 0 {
					break loop
				}
				method = th.stack[n-1]
			}
			if exitCP {
				putRec(o, recExit, uint8(x), th.tid, rel, method, 0)
			} else {
				putRec(o, recExit, 0, th.tid, rel, method, uint16(x-1))
			}
			th.at[colExtras] = xi + xn
			if n > 0 {
				th.stack = th.stack[:n-1]
			}
		default:
			break loop
		}
		th.at[colKinds], th.at[colTimes], th.lastTime = ki+1, ti, rel
		out[i] = event{Seq: seq + int32(i), Off: uint32(w + i*recSize)}
	}
	s.ev = ev[:len(ev)+i]
	j := i + half
	c.order, c.half = order[j>>1:], j&1 != 0
	c.remEv, c.runLeft, c.nextSeq = c.remEv-uint64(i), c.runLeft-uint64(i), seq+int32(i)
	return w + i*recSize
}
