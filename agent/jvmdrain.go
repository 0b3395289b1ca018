package agent

import (
	"encoding/binary"

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
	stop := min(d.full, cap(buf)-bytefrog.MethodExitSize+1)
	buf = buf[:cap(buf)]
	lastMono, rel := int64(-1), int32(0)
loop:
	for off+batchHeaderSize <= len(b) && n < stop {
		r := b[off : off+batchHeaderSize : off+batchHeaderSize]
		if binary.LittleEndian.Uint32(r[12:]) != 0 { // strings: not an entry or exit
			break
		}
		m := int32(binary.LittleEndian.Uint32(r[4:]))
		if uint(m) >= uint(len(sent)) || !sent[m] {
			break
		}
		if mono := int64(binary.LittleEndian.Uint64(r[16:])); mono != lastMono {
			lastMono, rel = mono, d.p.relMillis(mono)
		}
		switch r[0] {
		case batchEntry:
			bytefrog.PutMethodEntry(buf[n:n+bytefrog.MethodEntrySize], rel, seq, m, tid)
			n += bytefrog.MethodEntrySize
		case batchExit:
			bytefrog.PutMethodExit(buf[n:n+bytefrog.MethodExitSize], rel, seq, m, binary.LittleEndian.Uint16(r[2:]), tid)
			n += bytefrog.MethodExitSize
		default:
			break loop
		}
		seq++
		off += batchHeaderSize
	}
	d.counted += int64(seq - d.seq)
	d.seq = seq
	d.cur.b = buf[:n]
	if n >= d.full {
		d.ship()
	}
	return off
}
