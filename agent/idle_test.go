package agent

import (
	"syscall"
	"testing"
	"time"
)

// BenchmarkIdleSession measures what an active run costs a process that
// records nothing: the 1 ms clock ticker, the drain's idle wake-ups and the
// flush timer, as process CPU per second of wall time ("none": the same
// wait without a run).
func BenchmarkIdleSession(b *testing.B) {
	for _, tc := range []struct {
		name string
		run  bool
	}{{"none", false}, {"session", true}} {
		b.Run(tc.name, func(b *testing.B) {
			if tc.run {
				sinkSession(b, 1)
			}
			cpu := func() time.Duration {
				var ru syscall.Rusage
				syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
				return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			}
			b.ReportAllocs()
			c0, t0 := cpu(), time.Now()
			for range b.N {
				time.Sleep(10 * time.Millisecond)
			}
			wall := time.Since(t0)
			b.ReportMetric(float64((cpu()-c0).Microseconds())/wall.Seconds(), "cpu-µs/s")
		})
	}
}
