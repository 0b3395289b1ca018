package agent

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/host"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// probeWords builds the words io.tadpole.Probe writes for calls pairs of
// entry and exit of method m, starting at ms.
func probeWords(m int32, ms int64, calls int) []int64 {
	w := []int64{ms<<8 | host.ProbeTime}
	for i := 0; i < calls; i++ {
		w = append(w, int64(m)<<8|host.ProbeEntry, int64(12)<<48|int64(m)<<8|host.ProbeExit)
	}
	return w
}

func TestAppendProbeBatch(t *testing.T) {
	m := NewMethod("t/P.probe;1;()V").ID()
	e := NewExceptionType("java.lang.IllegalStateException").ID()
	w := []int64{
		5<<8 | host.ProbeTime,
		int64(m)<<8 | host.ProbeEntry,
		int64(7)<<48 | int64(m)<<8 | host.ProbeThrown, int64(e),
		6<<8 | host.ProbeTime,
		int64(m)<<8 | host.ProbeBubble, int64(e),
		int64(m)<<8 | host.ProbeEntry,
		int64(9)<<48 | int64(m)<<8 | host.ProbeExit,
	}
	b, err := appendProbeBatch(nil, w)
	if err != nil {
		t.Fatal(err)
	}
	n, err := scanBatch(b)
	if err != nil || n != 5 {
		t.Fatalf("scanBatch: %d records, %v; want 5", n, err)
	}
	want := []struct {
		kind byte
		line uint16
		exc  int32
		ms   int64
	}{
		{batchEntry, bytefrog.NoLine, 0, 5}, {batchThrow, 7, e, 5}, {batchBubble, bytefrog.NoLine, e, 6},
		{batchEntry, bytefrog.NoLine, 0, 6}, {batchExit, 9, 0, 6},
	}
	for i, r := 0, b; i < len(want); i, r = i+1, r[batchHeaderSize:] {
		got := want[i]
		got.kind, got.line = r[0], binary.LittleEndian.Uint16(r[2:])
		got.exc = int32(binary.LittleEndian.Uint32(r[8:]))
		got.ms = int64(binary.LittleEndian.Uint64(r[16:])) / 1e6
		if got != want[i] || int32(binary.LittleEndian.Uint32(r[4:])) != m {
			t.Errorf("record %d: %+v method %d; want %+v method %d", i, got, binary.LittleEndian.Uint32(r[4:]), want[i], m)
		}
	}
	if b, err := appendProbeBatch(nil, []int64{int64(m)<<8 | host.ProbeThrown}); !errors.Is(err, host.ErrBadProbe) || len(b) != 0 {
		t.Errorf("exception word without its type: %d bytes, err %v; want none and host.ErrBadProbe", len(b), err)
	}
	for _, bad := range [][]int64{{int64(m)<<8 | 9}, {1 << 38}, {int64(m)<<8 | host.ProbeBubble, 1 << 30}} {
		// A bad word is left out; the entry after it is kept.
		b, err := appendProbeBatch(nil, append(bad, int64(m)<<8|host.ProbeEntry))
		if !errors.Is(err, host.ErrBadProbe) || !errors.Is(err, host.ErrBadBatch) || len(b) != batchHeaderSize || b[0] != batchEntry {
			t.Errorf("%x: %d bytes, err %v; want the entry and host.ErrBadProbe", bad, len(b), err)
		}
	}
	if n, err := host.SubmitProbes(1, w); n != 0 || err != nil {
		t.Errorf("no session: SubmitProbes = %d, %v; want 0, nil", n, err)
	}
}

func FuzzAppendProbeBatch(f *testing.F) {
	m := NewMethod("t/P.fuzz;1;()V").ID()
	seed := func(w []int64) []byte {
		b := make([]byte, 0, 8*len(w))
		for _, v := range w {
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
		return b
	}
	f.Add(seed(probeWords(m, 3, 4)))
	f.Add(seed([]int64{int64(m)<<8 | host.ProbeThrown, 1}))
	f.Fuzz(func(t *testing.T, data []byte) {
		w := make([]int64, len(data)/8)
		for i := range w {
			w[i] = int64(binary.LittleEndian.Uint64(data[8*i:]))
		}
		b, err := appendProbeBatch(nil, w)
		if err != nil {
			return
		}
		if len(b)%batchHeaderSize != 0 || len(b) > len(w)*batchHeaderSize {
			t.Fatalf("%d bytes for %d words", len(b), len(w))
		}
	})
}

// BenchmarkAppendProbeBatch is the Go side's conversion of one full probe
// buffer (8192 words: 4095 calls and a time word) into batch records.
func BenchmarkAppendProbeBatch(b *testing.B) {
	w := probeWords(NewMethod("t/P.bench;1;()V").ID(), 100, 4095)
	buf := make([]byte, 0, len(w)*batchHeaderSize)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf, _ = appendProbeBatch(buf[:0], w)
	}
	ev := float64(b.N) * float64(len(w)-1)
	b.ReportMetric(ev/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/ev, "ns/event")
}

// BenchmarkSubmitProbes is the agent's share of a flushed probe buffer:
// conversion, the batch's slot, the drain's numbering and encoding, into
// data connections that discard.
func BenchmarkSubmitProbes(b *testing.B) {
	p := sinkSession(b, 2)
	w := probeWords(NewMethod("t/P.submit;1;()V").ID(), monoNow()/1e6, 4095)
	host.SubmitProbes(7, w) // maps the method
	b.ReportAllocs()
	b.ResetTimer()
	done := pathCPU(b, p)
	for i := 0; i < b.N; i++ {
		if _, err := host.SubmitProbes(7, w); err != nil {
			b.Fatal(err)
		}
	}
	done(int64(b.N) * int64(len(w)-1))
	ev := float64(b.N) * float64(len(w)-1)
	b.ReportMetric(ev/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/ev, "ns/event")
}

// BenchmarkCopyProbes is the submitting side's pass over a javac-shaped
// probe buffer: the copy and the check of every word.
func BenchmarkCopyProbes(b *testing.B) {
	methods := make([]int32, 512)
	for i := range methods {
		methods[i] = NewMethod(fmt.Sprintf("com/sun/tools/javac/X%d.m;1;()V", i)).ID()
	}
	bufs, _ := javacWords(methods, 1, 20000)
	dst := make([]int64, 0, maxProbeWords)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	c0 := threadCPU()
	for i := 0; i < b.N; i++ {
		dst, _, _, _ = copyProbes(dst[:0], bufs[0])
	}
	b.ReportMetric(float64(threadCPU()-c0)/float64(b.N*len(bufs[0])), "cpu-ns/word")
}

// drainAlone makes a drain of a pipeline that is never started, for
// benchmarks of the drain's own work on one goroutine; recycle gives the
// shipped send buffers back.
func drainAlone(tb testing.TB) (d *drain, recycle func()) {
	tb.Helper()
	log, _ := newLogger("none", LevelOff)
	cfg := testConfig("alone")
	pc := pipeConfig{RingSize: 1024, Budget: 4 << 20, Flavor: cfg.Flavor, FlushInterval: cfg.FlushInterval}
	p := newPipeline(pc, log, nil, time.Now(), monoNow(), nil, nil)
	d = newDrain(p)
	return d, func() {
		for {
			select {
			case b := <-p.pool.queue:
				p.pool.waiting.Add(-1)
				p.pool.recycle(b)
			default:
				return
			}
		}
	}
}

// threadCPU is the calling thread's CPU time in ns (RUSAGE_THREAD).
func threadCPU() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(1, &ru) // RUSAGE_THREAD
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkDrainProbes is the drain's work on a javac-shaped probe buffer
// alone, on one goroutine: numbering and encoding into send buffers.
// cpu-ns/event is the thread's CPU time, robust to a busy machine.
func BenchmarkDrainProbes(b *testing.B) {
	methods := make([]int32, 512)
	for i := range methods {
		methods[i] = NewMethod(fmt.Sprintf("com/sun/tools/javac/X%d.m;1;()V", i)).ID()
	}
	bufs, _ := javacWords(methods, 4, 20000)
	d, recycle := drainAlone(b)
	feed := func(w []int64) int64 {
		pb := probePool.Get().(*probeBuf)
		pb.w = append(pb.w[:0], w...)
		var t text
		t.probes = pb
		d.probes(7|hostThreadBit, &t)
		recycle()
		return int64(len(w) - timeWords(w))
	}
	for _, w := range bufs {
		feed(w)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var ev int64
	b.ReportAllocs()
	b.ResetTimer()
	c0 := threadCPU()
	for i := 0; i < b.N; i++ {
		ev += feed(bufs[i%len(bufs)])
	}
	b.ReportMetric(float64(threadCPU()-c0)/float64(ev), "cpu-ns/event")
}

// TestProbePathDoesNotAllocate: the JVM path allocates nothing per probe
// buffer once its methods are mapped — the check and copy, the drain's
// encoding, and the whole pipeline, whose allocations in any goroutine
// (drain, writers, clock) AllocsPerRun counts.
func TestProbePathDoesNotAllocate(t *testing.T) {
	methods := make([]int32, 64)
	for i := range methods {
		methods[i] = NewMethod(fmt.Sprintf("alloc/A%d.m;1;()V", i)).ID()
	}
	bufs, _ := javacWords(methods, 2, 3000)
	dst := make([]int64, 0, maxProbeWords)
	if n := testing.AllocsPerRun(100, func() { dst, _, _, _ = copyProbes(dst[:0], bufs[0]) }); n != 0 {
		t.Errorf("copyProbes allocates %.1f times per buffer", n)
	}
	d, recycle := drainAlone(t)
	i := 0
	feed := func() {
		pb := probePool.Get().(*probeBuf)
		pb.w = append(pb.w[:0], bufs[i%len(bufs)]...)
		i++
		tx := text{probes: pb}
		d.probes(7|hostThreadBit, &tx)
		recycle()
	}
	feed()
	feed()
	if n := testing.AllocsPerRun(100, feed); n != 0 {
		t.Errorf("the drain allocates %.1f times per probe buffer", n)
	}

	p := sinkSession(t, 2)
	submit := func() {
		if _, err := host.SubmitProbes(9, bufs[i%len(bufs)]); err != nil {
			t.Fatal(err)
		}
		i++
		for p.batchBytes.Load() != 0 {
			runtime.Gosched()
		}
	}
	submit()
	submit()
	if n := testing.AllocsPerRun(200, submit); n != 0 {
		t.Errorf("the pipeline allocates %.2f times per probe buffer", n)
	}
}

// TestLentProbesComeBack: the drain gives lent probe buffers back in
// groups, but keeps none while it waits: a buffer lent alone comes back
// while the run goes on, once its events are shipped.
func TestLentProbesComeBack(t *testing.T) {
	p := sinkSession(t, 1)
	m := NewMethod("lent/L.alone;1;()V").ID()
	free := make(chan *lentWords, 1)
	for round := range 3 {
		base := p.events.Load()
		l := &lentWords{w: probeWords(m, monoNow()/1e6, 10), free: free}
		if !host.HandProbes(7, l.w, l) {
			t.Fatal("HandProbes did not take the words")
		}
		select {
		case <-free:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: a buffer lent alone was not given back while the run went on", round)
		}
		waitEvents(t, p, base+20)
	}
}
