package hq

import (
	"sync"
	"testing"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// probeTraffic is what the Go agent sends for BenchmarkIngestProcess's
// JVM probe buffers (TADPOLE_E2E_PRODUCER=probes): two threads, each
// handing over buffers of 8 184 events (rounds of serve → price,
// reserve → charge), every event of a buffer stamped with the buffer's
// millisecond, the threads' buffers taking turns, in agent buffers of
// 64 KiB over one connection.
var probeTraffic = sync.OnceValues(func() ([][]byte, int) {
	const rounds, buffers = 1023, 250
	var out, cur []byte
	seq := int32(0)
	ms := int32(1)
	for k := range buffers {
		tid := uint16(20 + k%2)
		if k%2 == 0 {
			ms++
		}
		for range rounds {
			for _, ev := range [8]struct {
				m    int32
				line uint16
				exit bool
			}{{0, 0, false}, {1, 0, false}, {1, 12, true}, {2, 0, false}, {3, 0, false}, {3, 40, true},
				{2, 31, true}, {0, 7, true}} {
				if ev.exit {
					cur = bytefrog.AppendMethodExit(cur, ms, seq, ev.m, ev.line, tid)
				} else {
					cur = bytefrog.AppendMethodEntry(cur, ms, seq, ev.m, tid)
				}
				seq++
				if len(cur) >= 64<<10 {
					out = append(out, cur...)
					cur = cur[:0]
				}
			}
		}
	}
	out = append(out, cur...)
	return [][]byte{out}, int(seq)
})

// BenchmarkWriterProbes measures the trace writer's work per event in the
// columnar layout on probeTraffic, without the file (benchColumnsEncode).
func BenchmarkWriterProbes(b *testing.B) {
	per, n := probeTraffic()
	benchColumnsEncode(b, per, n)
}
