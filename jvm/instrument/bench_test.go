package instrument

import (
	"testing"

	"github.com/tadpole-trace/tadpole/internal/jdkcorpus"
)

// benchSample is the number of JDK classes the benchmarks rewrite per op.
const benchSample = 2000

// BenchmarkInstrument rewrites a sample of the JDK corpus (every method
// instrumented, class written back) and reports ns per class and MB/s of
// input class files.
func BenchmarkInstrument(b *testing.B) {
	jdkcorpus.Require(b)
	sample, err := jdkcorpus.Sample(benchSample)
	if err != nil {
		b.Fatal(err)
	}
	total := 0
	for _, c := range sample {
		total += len(c)
	}
	cfg := DefaultConfig()
	cfg.Exclude = nil
	x, err := New(&cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, c := range sample {
			if _, _, err := x.InstrumentClass(c); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(sample)), "ns/class")
}

// BenchmarkRelocate measures relocation alone on a 32 KB method that needs
// widening.
func BenchmarkRelocate(b *testing.B) {
	code := bigJump(OpGoto, 32760)
	chunks := []Chunk{{At: 0, Bytes: make([]byte, 8)}, {At: len(code) - 2, Owned: true, Bytes: make([]byte, 12)}}
	b.SetBytes(int64(len(code)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Relocate(code, chunks, nil); err != nil {
			b.Fatal(err)
		}
	}
}
