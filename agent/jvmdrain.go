package agent

import (
	"encoding/binary"

	"github.com/tadpole-trace/tadpole/internal/host"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// batchRun is the drain's fast path through a host batch (the JVM agent's
// probe buffers are runs of entries and exits): from offset off, it writes
// out entry and exit records of thread, the thread of the previous event,
// of methods already mapped, while the send buffer has room, as encode
// does for ring slots. It returns the offset of the first record it left
// to the general path (off when none).
func (d *drain) batchRun(b []byte, off int, thread uint64) int {
	if d.cur == nil || !d.lastOK || d.lastKey != thread || d.codePulse {
		return off
	}
	sent, tid, seq := d.methodSent, d.lastTid, d.seq
	buf := d.cur.b
	n := len(buf)
	// Every message, and the scratch after it, fits below stop.
	stop := min(d.full, cap(buf)-bytefrog.EntryOrExitRoom+1)
	buf = buf[:cap(buf)]
	lastMono, rel := int64(-1), int32(0)
	for off+batchHeaderSize <= len(b) && n < stop {
		r := b[off : off+batchHeaderSize : off+batchHeaderSize]
		if binary.LittleEndian.Uint32(r[12:]) != 0 { // strings: not an entry or exit
			break
		}
		m := int32(binary.LittleEndian.Uint32(r[4:]))
		// exit is 0 for an entry, 1 for an exit: one path for both.
		exit := uint64(r[0]) - batchEntry
		if uint(m) >= uint(len(sent)) || !sent[m] || exit > 1 {
			break
		}
		if mono := int64(binary.LittleEndian.Uint64(r[16:])); mono != lastMono {
			lastMono, rel = mono, d.p.relMillis(mono)
		}
		n += bytefrog.PutEntryOrExit(buf[n:n+bytefrog.EntryOrExitRoom], bytefrog.EventWord0(bytefrog.MsgMethodEntry, rel),
			seq, m, exit, binary.LittleEndian.Uint16(r[2:]), tid)
		seq++
		off += batchHeaderSize
	}
	d.ranTo(seq, buf[:n])
	return off
}

// probes handles a published probe buffer (kindProbes): words checked by
// copyProbes, or lent by a host (hostHandProbes) and checked here, each
// as it is encoded. Runs of entries and exits of mapped methods go
// straight into the send buffer (probeRun); every other word takes the
// path of a slot of its own (process), which maps, names and encodes,
// unless it names an unregistered id or is of no known kind: then it is
// left out, as copyProbes leaves it.
func (d *drain) probes(thread uint64, t *text) {
	pb := t.probes
	t.probes = nil
	w := pb.w
	defer func() {
		d.p.batchBytes.Add(-int64(len(w)) * probeWordSize)
		d.p.batchRoom.made()
		d.done(pb)
	}()
	// Each event is stamped with the latest time word before it; before
	// any, with CLOCK_MONOTONIC 0 (as a host batch record would be).
	rel := d.p.relMillis(0)
	var ev event
	var rt text
	ev.thread = thread
	for i := 0; i < len(w); {
		next, r := d.probeRun(w, i, thread, rel)
		rel = r
		if next != i {
			i = next
			continue
		}
		v := uint64(w[i])
		i++
		k := byte(v)
		if k == host.ProbeTime {
			rel = d.p.relMillis(probeMono(v))
			continue
		}
		ev.method, ev.exc, ev.rel, ev.thrown = int32(uint32(v>>8)), 0, rel, false
		ev.line = uint16(v >> 48)
		var kd kind
		switch k {
		case host.ProbeEntry:
			kd, ev.line = kindEntry, bytefrog.NoLine
		case host.ProbeExit:
			kd = kindExit
		case host.ProbeThrown, host.ProbeBubble:
			if i >= len(w) {
				continue // copyProbes keeps the type word with its event
			}
			ev.exc = int32(uint32(w[i]))
			i++
			kd = kindThrow
			if k == host.ProbeBubble {
				kd, ev.line = kindBubble, bytefrog.NoLine
			}
		default:
			continue // copyProbes keeps no other kind
		}
		if !methodNames.known(ev.method) || (kd == kindThrow || kd == kindBubble) && !exceptionNames.known(ev.exc) {
			continue
		}
		d.process(kd, &ev, &rt)
	}
}

// done gives a probe buffer back once the drain has read it. Lent words
// go back to their owner in groups of releaseBatch (releaseHeld): a host
// whose threads wait for a free buffer then wakes them once per group,
// and a woken thread finds several. The drain gives back what it holds
// before it waits for anything (run, next) and when it ends.
func (d *drain) done(pb *probeBuf) {
	if pb.owner == nil {
		pb.done()
		return
	}
	d.held = append(d.held, pb)
	if len(d.held) >= releaseBatch {
		d.releaseHeld()
	}
}

// releaseBatch is how many lent probe buffers the drain gives back at
// once.
const releaseBatch = 4

// releaseHeld gives back the lent probe buffers the drain holds.
func (d *drain) releaseHeld() {
	for i, pb := range d.held {
		d.held[i] = nil
		pb.done()
	}
	d.held = d.held[:0]
}

// probeMono is the CLOCK_MONOTONIC time, in ns, of time word v.
func probeMono(v uint64) int64 { return int64(v>>8) * 1e6 }

// probeRun is the drain's fast path through probe words: from index i, it
// writes out the entries and exits of thread, the thread of the previous
// event, of methods already mapped, and follows the time words, while the
// send buffer has room, as encode does for ring slots. rel is the time of
// the words from i; it returns the index of the first word it left to the
// general path (i when none) and the time there.
func (d *drain) probeRun(w []int64, i int, thread uint64, rel int32) (int, int32) {
	if d.cur == nil || !d.lastOK || d.lastKey != thread {
		return i, rel
	}
	if d.codePulse {
		return d.probeRunCodePulse(w, i, rel)
	}
	seq := d.seq
	buf := d.cur.b
	n := len(buf)
	// Every message of the run, and the scratch after it, fits below stop.
	stop := min(d.full, cap(buf)-bytefrog.EntryOrExitRoom+1)
	buf = buf[:cap(buf)]
	for i < len(w) && n < stop {
		var k int
		n, seq, k = putProbeRun(buf, n, stop, w[i:], d.methodSent, rel, seq, d.lastTid)
		i += k
		if i >= len(w) || n >= stop {
			break
		}
		v := uint64(w[i])
		if byte(v) != host.ProbeTime {
			break
		}
		rel = d.p.relMillis(probeMono(v))
		i++
	}
	d.ranTo(seq, buf[:n])
	return i, rel
}

// putProbeRun writes into buf from offset n the entries and exits that
// begin w, of methods marked in sent, while n is below stop, where
// stop+EntryOrExitRoom-1 is at most len(buf): numbered from seq, stamped
// with rel, of thread tid. It returns the new offset and sequence number,
// and the words written out.
//
// This is the drain's whole cost per JVM event. It takes the words in
// blocks that cannot reach stop, so that no word needs a room check: a
// first pass finds how many words of the block are entries and exits of
// mapped methods, a second writes them out with nothing to check.
func putProbeRun(buf []byte, n, stop int, w []int64, sent []bool, rel int32, seq int32, tid uint16) (int, int32, int) {
	i := 0
	for n < stop && i < len(w) {
		// The words of the block start below stop: each adds at most
		// EntryOrExitRoom bytes.
		q := min((stop-n+bytefrog.EntryOrExitRoom-1)/bytefrog.EntryOrExitRoom, probeBlock)
		run := w[i:min(len(w), i+q)]
		j := mappedRun(run, sent)
		o := putEntriesExits(buf[n:n+j*bytefrog.EntryOrExitRoom], run[:j], rel, seq, tid)
		n += o
		seq += int32(j)
		i += j
		if j < len(run) {
			break
		}
	}
	return n, seq, i
}

// probeBlock is the most words putProbeRun checks before it writes them
// out: they are still in the L1 cache when it does.
const probeBlock = 512

// mappedRun is the length of the run of entries and exits of methods
// marked in sent that begins w. Compiled on its own, its loop keeps
// everything in registers (inlined, it reloads them a word).
//
//go:noinline
func mappedRun(w []int64, sent []bool) int {
	for j, x := range w {
		v := uint64(x)
		if k, m := v&0xFF, uint32(v>>8); k > host.ProbeExit || uint(m) >= uint(len(sent)) || !sent[m] {
			return j
		}
	}
	return len(w)
}

// putEntriesExits writes the entries and exits w (words mappedRun took)
// at the start of dst, which holds EntryOrExitRoom bytes a word: numbered
// from seq, stamped with rel, of thread tid. It returns the bytes written.
//
// Each message is a type byte and two big-endian 64-bit stores, bytes 1–8
// (the time and the sequence number) and 9–16 (the method id, then an
// entry's thread id or an exit's line, then the thread id): an entry's
// last two of them are scratch, which the next message overwrites.
func putEntriesExits(dst []byte, w []int64, rel, seq int32, tid uint16) int {
	head := uint64(uint32(rel)) << 32
	t := uint64(tid)
	entryTail := t<<16 | t
	s := uint32(seq)
	o := 0
	for _, x := range w {
		v := uint64(x)
		exit := v & host.ProbeExit // mappedRun took entries and exits only
		// Entries and exits alternate without a pattern: no branch.
		tail := entryTail ^ (entryTail^(v>>48<<16|t))&-exit
		p := (*[bytefrog.EntryOrExitRoom]byte)(dst[o : o+bytefrog.EntryOrExitRoom])
		// MsgMethodExit is MsgMethodEntry+1 (bytefrog.PutEntryOrExit).
		p[0] = byte(bytefrog.MsgMethodEntry) + byte(exit)
		binary.BigEndian.PutUint64(p[1:9], head|uint64(s))
		binary.BigEndian.PutUint64(p[9:], uint64(uint32(v>>8))<<32|tail)
		o += bytefrog.MethodEntrySize + int(exit)*(bytefrog.MethodExitSize-bytefrog.MethodEntrySize)
		s++
	}
	return o
}

// probeRunCodePulse is probeRun for the Code Pulse flavour of MethodExit.
func (d *drain) probeRunCodePulse(w []int64, i int, rel int32) (int, int32) {
	sent, tid, seq := d.methodSent, d.lastTid, d.seq
	buf := d.cur.b
	n := len(buf)
	stop := min(d.full, cap(buf)-bytefrog.PaddedSize+1)
	buf = buf[:cap(buf)]
	entry, exit := bytefrog.EventWord0(bytefrog.MsgMethodEntry, rel), bytefrog.EventWord0(bytefrog.MsgMethodExit, rel)
loop:
	for ; i < len(w) && n < stop; i++ {
		v := uint64(w[i])
		m := uint32(v >> 8)
		switch byte(v) {
		case host.ProbeEntry:
			if uint(m) >= uint(len(sent)) || !sent[m] {
				break loop
			}
			bytefrog.PutMethodEntryPadded(buf[n:n+bytefrog.PaddedSize], entry, seq, int32(m), tid)
			n += bytefrog.MethodEntrySize
		case host.ProbeExit:
			if uint(m) >= uint(len(sent)) || !sent[m] {
				break loop
			}
			bytefrog.PutMethodExitCodePulseWide(buf[n:n+bytefrog.MethodExitCodePulseSize], exit, seq, int32(m), false, tid)
			n += bytefrog.MethodExitCodePulseSize
		case host.ProbeTime:
			rel = d.p.relMillis(probeMono(v))
			entry, exit = bytefrog.EventWord0(bytefrog.MsgMethodEntry, rel), bytefrog.EventWord0(bytefrog.MsgMethodExit, rel)
			continue
		default:
			break loop
		}
		seq++
	}
	d.ranTo(seq, buf[:n])
	return i, rel
}
