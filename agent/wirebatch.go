package agent

import (
	"encoding/binary"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// Batches the agent's own code builds (the JVM's JUL converter, jni/jul.go)
// skip what a host's batch costs: they are made in a batchPool buffer
// (hostWireBatch) and published as they are (hostSubmitWireBatch), with
// no pass over them and no copy, and their markers, flagged
// batchFlagWire, go to the wire without a second UTF-8 check
// (markerRun). A host cannot set the flag: scanBatch refuses it.

// hostWireBatch is host.WireBatch.
func hostWireBatch() *[]byte {
	bp := batchPool.Get().(*[]byte)
	*bp = (*bp)[:0]
	return bp
}

// hostSubmitWireBatch is host.SubmitWireBatch.
func hostSubmitWireBatch(thread uint64, bp *[]byte, n int) int {
	if bp == nil {
		return 0
	}
	if n <= 0 || len(*bp) == 0 {
		batchPool.Put(bp)
		return 0
	}
	return submitBatch(thread, *bp, bp, n)
}

// Offsets in a batch record's header (host.BatchHeaderSize).
const (
	batchLen1Off = 12 // u16 length of the key
	batchLen2Off = 14 // u16 length of the value
	batchTimeOff = 16 // i64 CLOCK_MONOTONIC ns
)

// markerRun encodes the run of flagged markers of batch b from off (the
// first one is there) and returns the offset after them. Each is stamped
// with its record's time and the next sequence number, as drain.batch
// stamps a marker whose bytes are wire-ready.
func (d *drain) markerRun(b []byte, off int) int {
	lastMono, rel := int64(-1), int32(0)
	for off+batchHeaderSize <= len(b) {
		r := b[off : off+batchHeaderSize : off+batchHeaderSize]
		if r[0] != batchMarker || r[1]&batchFlagWire == 0 {
			break
		}
		l1 := int(binary.LittleEndian.Uint16(r[batchLen1Off:]))
		l2 := int(binary.LittleEndian.Uint16(r[batchLen2Off:]))
		size := (batchHeaderSize + l1 + l2 + batchAlign - 1) &^ (batchAlign - 1)
		if size > len(b)-off { // cannot happen: the agent built it
			return len(b)
		}
		if mono := int64(binary.LittleEndian.Uint64(r[batchTimeOff:])); mono != lastMono {
			lastMono, rel = mono, d.p.relMillis(mono)
		}
		if sb := d.buf(); sb != nil {
			// The strings fit their u16 lengths (host.SubmitWireBatch).
			p := b[off+batchHeaderSize : off+batchHeaderSize+l1+l2]
			sb.b = bytefrog.AppendMarkerMUTF8(sb.b, rel, d.seq, p[:l1], p[l1:])
			d.appended(sb)
		}
		off += size
	}
	return off
}
