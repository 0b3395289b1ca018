package agent

import (
	"encoding/binary"
	"slices"

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
		l1 := int(binary.LittleEndian.Uint16(r[12:]))
		l2 := int(binary.LittleEndian.Uint16(r[14:]))
		size := (batchHeaderSize + l1 + l2 + batchAlign - 1) &^ (batchAlign - 1)
		if size > len(b)-off { // cannot happen: the agent built it
			return len(b)
		}
		if mono := int64(binary.LittleEndian.Uint64(r[16:])); mono != lastMono {
			lastMono, rel = mono, d.p.relMillis(mono)
		}
		if sb := d.buf(); sb != nil {
			// bytefrog.AppendMarkerMUTF8's bytes, written in place: the
			// strings fit their u16 lengths (host.SubmitWireBatch).
			p := b[off+batchHeaderSize : off+batchHeaderSize+l1+l2]
			n := len(sb.b)
			need := bytefrog.MarkerMinSize + l1 + l2
			if cap(sb.b)-n < need {
				sb.b = slices.Grow(sb.b, need)
			}
			w := sb.b[n : n+need]
			w[0] = byte(bytefrog.MsgMarker)
			binary.BigEndian.PutUint32(w[1:], uint32(rel))
			binary.BigEndian.PutUint32(w[5:], uint32(d.seq))
			binary.BigEndian.PutUint16(w[9:], uint16(l1))
			copy(w[11:], p[:l1])
			binary.BigEndian.PutUint16(w[11+l1:], uint16(l2))
			copy(w[13+l1:], p[l1:])
			sb.b = sb.b[:n+need]
			d.appended(sb)
		}
		off += size
	}
	return off
}
