//go:build cgo

package capi

import (
	"encoding/binary"

	"github.com/tadpole-trace/tadpole/agent"
)

// Offsets of the batch record fields submit reads (agent/batch.go).
const (
	offLen1 = 1 + 1 + 2 + 4 + 4
	offLen2 = offLen1 + 2
	align   = 8
)

// nextChunk returns the length of the longest prefix of b holding at most
// maxRecords whole records. A malformed record ends the prefix there; a
// malformed first record gives all of b, for SubmitBatch to reject.
func nextChunk(b []byte, maxRecords int) int {
	off := 0
	for n := 0; n < maxRecords && off < len(b); n++ {
		r := b[off:]
		if len(r) < agent.BatchHeaderSize {
			break
		}
		size := agent.BatchHeaderSize + int(binary.LittleEndian.Uint16(r[offLen1:])) + int(binary.LittleEndian.Uint16(r[offLen2:]))
		size = (size + align - 1) &^ (align - 1)
		if size > len(r) {
			break
		}
		off += size
	}
	if off == 0 {
		return len(b)
	}
	return off
}

// submit hands a thread's records to the agent in chunks that fit its
// ring, so that a batch never waits for more room than the ring has.
func submit(thread uint64, b []byte) error {
	max := int(lib.maxBatch.Load())
	if len(b)/agent.BatchHeaderSize <= max {
		// Records are at least a header long: b holds at most max.
		_, err := agent.SubmitBatch(thread, b)
		return err
	}
	for len(b) > 0 {
		n := nextChunk(b, max)
		if _, err := agent.SubmitBatch(thread, b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}
