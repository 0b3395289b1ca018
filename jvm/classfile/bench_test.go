package classfile

import (
	"syscall"
	"testing"

	"github.com/tadpole-trace/tadpole/internal/jdkcorpus"
)

// benchSampleSize classes spread over the JDK image; one benchmark
// operation handles all of them, and ns/class is reported beside.
const benchSampleSize = 2000

func benchSample(b *testing.B) ([][]byte, int64) {
	b.Helper()
	jdkcorpus.Require(b)
	sample, err := jdkcorpus.Sample(benchSampleSize)
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, c := range sample {
		n += int64(len(c))
	}
	return sample, n
}

func runClassBench(b *testing.B, op func(b *testing.B, class []byte)) {
	sample, size := benchSample(b)
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		for _, c := range sample {
			op(b, c)
		}
	}
	classes := float64(b.N) * float64(len(sample))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/classes, "ns/class")
	// CPU time of the whole process (GC included) per class: steadier than
	// wall time on a loaded machine.
	b.ReportMetric(float64(cpuTime()-cpu0)/classes, "cpu-ns/class")
}

// BenchmarkParse: Parse only (constant pool decoded and checked,
// attributes kept as bytes).
func BenchmarkParse(b *testing.B) {
	runClassBench(b, func(b *testing.B, class []byte) {
		if _, err := Parse(class); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkParseWrite: Parse and write back unchanged.
func BenchmarkParseWrite(b *testing.B) {
	var buf []byte
	runClassBench(b, func(b *testing.B, class []byte) {
		c, err := Parse(class)
		if err != nil {
			b.Fatal(err)
		}
		if buf, err = c.AppendTo(buf[:0]); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkParseCodeWrite: Parse, decode every Code attribute (with its
// line, local-variable and stack-map tables), encode each back with
// SetCode, and write the class: the cost of touching every method.
func BenchmarkParseCodeWrite(b *testing.B) {
	var buf []byte
	runClassBench(b, func(b *testing.B, class []byte) {
		c, err := Parse(class)
		if err != nil {
			b.Fatal(err)
		}
		for i := range c.Methods {
			m := &c.Methods[i]
			code, err := m.Code(c.Pool)
			if err != nil {
				b.Fatal(err)
			}
			if code != nil {
				if err := m.SetCode(c.Pool, code); err != nil {
					b.Fatal(err)
				}
			}
		}
		if buf, err = c.AppendTo(buf[:0]); err != nil {
			b.Fatal(err)
		}
	})
}

// cpuTime returns the user+system CPU time of the process in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkParseCodeWriteArena: BenchmarkParseCodeWrite with a CodeArena
// reset after each class.
func BenchmarkParseCodeWriteArena(b *testing.B) {
	var buf []byte
	var arena CodeArena
	runClassBench(b, func(b *testing.B, class []byte) {
		c, err := Parse(class)
		if err != nil {
			b.Fatal(err)
		}
		for i := range c.Methods {
			m := &c.Methods[i]
			code, err := arena.Code(c.Pool, m)
			if err != nil {
				b.Fatal(err)
			}
			if code != nil {
				if err := arena.SetCode(c.Pool, m, code); err != nil {
					b.Fatal(err)
				}
			}
		}
		if buf, err = c.AppendTo(buf[:0]); err != nil {
			b.Fatal(err)
		}
		arena.Reset()
	})
}

// BenchmarkPoolAdd: Parse, then look up or append what an instrumenter
// adds to each class: four probe Methodrefs, a few Integer ids, the
// StackMapTable name and the Throwable class.
func BenchmarkPoolAdd(b *testing.B) {
	runClassBench(b, func(b *testing.B, class []byte) {
		c, err := Parse(class)
		if err != nil {
			b.Fatal(err)
		}
		p := c.Pool
		for _, m := range [...]struct{ name, desc string }{{"enter", "(I)V"}, {"exit", "(II)V"},
			{"thrown", "(Ljava/lang/Throwable;II)V"}, {"bubble", "(Ljava/lang/Throwable;I)V"}} {
			if _, err := p.AddMethodref("io/tadpole/Probe", m.name, m.desc); err != nil {
				b.Fatal(err)
			}
		}
		for id := int32(100000); id < 100005; id++ {
			if _, err := p.AddInteger(id); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := p.AddUTF8(AttrStackMapTable); err != nil {
			b.Fatal(err)
		}
		if _, err := p.AddClass("java/lang/Throwable"); err != nil {
			b.Fatal(err)
		}
	})
}
