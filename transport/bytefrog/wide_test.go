package bytefrog

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
)

// threadCPU is the calling thread's CPU time in ns (RUSAGE_THREAD): on a
// shared machine, the measure of a single-goroutine benchmark.
func threadCPU() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(1, &ru) // RUSAGE_THREAD
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// cpuPerOp runs f under b with the goroutine locked to its thread and
// reports the thread's CPU ns per op.
func cpuPerOp(b *testing.B, f func(n int)) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	c0 := threadCPU()
	f(b.N)
	b.ReportMetric(float64(threadCPU()-c0)/float64(b.N), "cpu-ns/op")
}

// TestWideStores: the wide encoders write exactly the bytes of the
// field-by-field ones, across the values of every field, and nothing past
// their documented room.
func TestWideStores(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	edge := []int32{0, 1, -1, 0x7FFFFFFF, -0x80000000, 0x01020304, 0xFF, 0x100}
	val := func(i int) int32 {
		if i < len(edge) {
			return edge[i]
		}
		return int32(r.Uint32())
	}
	for i := 0; i < 2000; i++ {
		rel, seq, m := val(i%(len(edge)+3)), val((i/3)%(len(edge)+5)), val((i/7)%(len(edge)+2))
		line, tid := uint16(r.Uint32()), uint16(r.Uint32())
		if i < 64 {
			line, tid = uint16(val(i%len(edge))), uint16(val((i/8)%len(edge)))
		}
		thrown := i%2 == 0

		p := bytes.Repeat([]byte{0xA5}, PaddedSize+1)
		PutMethodEntryPadded(p, EventWord0(MsgMethodEntry, rel), seq, m, tid)
		if want := AppendMethodEntry(nil, rel, seq, m, tid); !bytes.Equal(p[:MethodEntrySize], want) || p[PaddedSize] != 0xA5 {
			t.Fatalf("entry rel %d seq %d m %d tid %d: % x; want % x then room up to %d", rel, seq, m, tid, p, want, PaddedSize)
		}
		p = bytes.Repeat([]byte{0xA5}, MethodExitSize+1)
		PutMethodExitWide(p, EventWord0(MsgMethodExit, rel), seq, m, line, tid)
		if want := AppendMethodExit(nil, rel, seq, m, line, tid); !bytes.Equal(p[:MethodExitSize], want) ||
			p[MethodExitSize] != 0xA5 {
			t.Fatalf("exit rel %d seq %d m %d line %d tid %d: % x; want % x", rel, seq, m, line, tid, p, want)
		}
		for exit := uint64(0); exit <= 1; exit++ {
			p = bytes.Repeat([]byte{0xA5}, EntryOrExitRoom+1)
			n := PutEntryOrExit(p, EventWord0(MsgMethodEntry, rel), seq, m, exit, line, tid)
			want := AppendMethodEntry(nil, rel, seq, m, tid)
			if exit == 1 {
				want = AppendMethodExit(nil, rel, seq, m, line, tid)
			}
			if n != len(want) || !bytes.Equal(p[:n], want) || p[EntryOrExitRoom] != 0xA5 {
				t.Fatalf("PutEntryOrExit exit %d rel %d seq %d m %d line %d tid %d: %d bytes % x; want % x", exit, rel,
					seq, m, line, tid, n, p, want)
			}
		}
		p = bytes.Repeat([]byte{0xA5}, MethodExitCodePulseSize+1)
		PutMethodExitCodePulseWide(p, EventWord0(MsgMethodExit, rel), seq, m, thrown, tid)
		if want := AppendMethodExitCodePulse(nil, rel, seq, m, thrown, tid); !bytes.Equal(p[:MethodExitCodePulseSize], want) ||
			p[MethodExitCodePulseSize] != 0xA5 {
			t.Fatalf("Code Pulse exit rel %d seq %d m %d tid %d: % x; want % x", rel, seq, m, tid, p, want)
		}
	}
}

func TestWideStoresDoNotAllocate(t *testing.T) {
	p := make([]byte, 64)
	w0, w1 := EventWord0(MsgMethodEntry, 5), EventWord0(MsgMethodExit, 5)
	n := testing.AllocsPerRun(1000, func() {
		PutMethodEntryPadded(p, w0, 1, 2, 3)
		PutMethodExitWide(p[16:], w1, 2, 2, 4, 3)
		PutMethodExitCodePulseWide(p[40:], w1, 3, 2, true, 3)
		PutEntryOrExit(p[20:], w0, 4, 2, 1, 5, 3)
	})
	if n != 0 {
		t.Errorf("%.1f allocations per run", n)
	}
}

// BenchmarkPutEntryExit compares writing an entry and an exit field by
// field with the wide stores.
func BenchmarkPutEntryExit(b *testing.B) {
	buf := make([]byte, 64<<10)
	const pair = MethodEntrySize + MethodExitSize
	b.Run("fields", func(b *testing.B) {
		cpuPerOp(b, func(N int) {
			n := 0
			for i := 0; i < N; i++ {
				if n+pair > len(buf) {
					n = 0
				}
				PutMethodEntry(buf[n:], 7, int32(2*i), 42, 3)
				PutMethodExit(buf[n+MethodEntrySize:], 7, int32(2*i+1), 42, 12, 3)
				n += pair
			}
		})
	})
	b.Run("wide", func(b *testing.B) {
		w0, w1 := EventWord0(MsgMethodEntry, 7), EventWord0(MsgMethodExit, 7)
		cpuPerOp(b, func(N int) {
			n := 0
			for i := 0; i < N; i++ {
				if n+pair+PaddedSize > len(buf) {
					n = 0
				}
				PutMethodEntryPadded(buf[n:], w0, int32(2*i), 42, 3)
				PutMethodExitWide(buf[n+MethodEntrySize:], w1, int32(2*i+1), 42, 12, 3)
				n += pair
			}
		})
	})
	b.Run("branchless", func(b *testing.B) {
		w0 := EventWord0(MsgMethodEntry, 7)
		cpuPerOp(b, func(N int) {
			n := 0
			for i := 0; i < N; i++ {
				if n+pair+PaddedSize > len(buf) {
					n = 0
				}
				n += PutEntryOrExit(buf[n:], w0, int32(2*i), 42, 0, 12, 3)
				n += PutEntryOrExit(buf[n:], w0, int32(2*i+1), 42, 1, 12, 3)
			}
		})
	})
}
