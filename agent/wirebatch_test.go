package agent

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/host"
)

// wireBatches makes batches of markers and thread names as the JVM's JUL
// converter makes them: modified UTF-8 strings (ASCII, NUL as C0 80,
// 2- and 3-byte characters, surrogates), times from before the time base
// on. flagged sets batchFlagWire on the markers.
func wireBatches(r *rand.Rand, beginMono int64, n int, flagged bool) [][]byte {
	pieces := []string{"a", "benchmark record", "\xc0\x80", "é", "€", "\xed\xa0\xbd\xed\xb8\x80", "\xed\xa0\xbd", " "}
	str := func(max int) string {
		var s string
		for k := r.IntN(max); k > 0; k-- {
			s += pieces[r.IntN(len(pieces))]
		}
		return s
	}
	var out [][]byte
	mono := beginMono - 3e6
	for range n {
		var b []byte
		for k := 1 + r.IntN(60); k > 0; k-- {
			mono += int64(r.IntN(3)) * 7e5
			if r.IntN(10) == 0 {
				b = host.AppendBatchRecord(b, batchName, batchFlagMUTF8, 0xFFFF, 0, 0, mono, "t"+str(4), "")
				continue
			}
			f := uint8(batchFlagMUTF8)
			if flagged {
				f |= batchFlagWire
			}
			b = host.AppendBatchRecord(b, batchMarker, f, 0xFFFF, 0, 0, mono, "log:"+str(3), "INFO "+str(12))
		}
		out = append(out, b)
	}
	return out
}

// TestWireBatchSameWire: the JUL converter's batches, handed over with
// SubmitWireBatch (no check, no copy, flagged markers copied as they are),
// put the same bytes on the wire as the same records through SubmitBatch,
// and count the same records.
func TestWireBatchSameWire(t *testing.T) {
	begin, beginMono := time.Now(), monoNow()
	for seed := uint64(1); seed <= 4; seed++ {
		run := func(flagged bool) ([]byte, []int) {
			bufs := wireBatches(rand.New(rand.NewPCG(seed, 3)), beginMono, 40, flagged)
			var ns []int
			wire := probeWire(t, 0, begin, beginMono, func() {
				for i, b := range bufs {
					thread := uint64(1 + i%3)
					if !flagged {
						n, err := host.SubmitBatch(thread, b)
						if err != nil {
							t.Fatal(err)
						}
						ns = append(ns, n)
						continue
					}
					bp := host.WireBatch()
					*bp = append(*bp, b...)
					if _, err := scanBatch(b); err == nil {
						t.Fatal("scanBatch took flagged markers")
					}
					n := 0
					for off := 0; off < len(b); off += recordSize(b[off:]) {
						n++
					}
					ns = append(ns, host.SubmitWireBatch(thread, bp, n))
				}
			})
			return wire, ns
		}
		want, wantN := run(false)
		got, gotN := run(true)
		if fmt.Sprint(gotN) != fmt.Sprint(wantN) {
			t.Errorf("seed %d: records taken %v; want %v", seed, gotN, wantN)
		}
		if !bytes.Equal(got, want) {
			i := 0
			for i < len(got) && i < len(want) && got[i] == want[i] {
				i++
			}
			t.Fatalf("seed %d: %d wire bytes, differing from SubmitBatch's %d at offset %d", seed, len(got), len(want), i)
		}
		if len(want) < 10<<10 {
			t.Fatalf("seed %d: only %d bytes on the wire", seed, len(want))
		}
	}
}
