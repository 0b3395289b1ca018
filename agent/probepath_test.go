package agent

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/host"
)

// javacWords builds probe buffers shaped like a traced compiler's: a walk
// over a call tree (depth 1–40, calls of 512 methods of which a few are
// hot), exits with line numbers, a time word every msEvery events, each
// buffer at most host's 8192 words and starting with a time word, as
// io.tadpole.Probe fills them. It returns the buffers and their events.
func javacWords(methods []int32, buffers int, msEvery int) ([][]int64, int) {
	rnd := uint64(0x9E3779B97F4A7C15)
	next := func() uint64 {
		rnd ^= rnd << 13
		rnd ^= rnd >> 7
		rnd ^= rnd << 17
		return rnd
	}
	pick := func() int32 {
		r := next()
		if r&3 != 0 { // three calls in four go to 16 hot methods
			return methods[r>>8%16]
		}
		return methods[r>>8%uint64(len(methods))]
	}
	var stack []int32
	ms, events, sinceTick := int64(monoNow()/1e6), 0, 0
	out := make([][]int64, buffers)
	for i := range out {
		w := make([]int64, 0, 8192)
		w = append(w, ms<<8|host.ProbeTime)
		for len(w) < 8192-3 {
			if sinceTick >= msEvery {
				ms++
				sinceTick = 0
				w = append(w, ms<<8|host.ProbeTime)
			}
			r := next()
			if len(stack) == 0 || len(stack) < 40 && r%100 < 50 {
				m := pick()
				stack = append(stack, m)
				w = append(w, int64(m)<<8|host.ProbeEntry)
			} else {
				m := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				w = append(w, int64(r>>20%2000)<<48|int64(m)<<8|host.ProbeExit)
			}
			events++
			sinceTick++
		}
		out[i] = w
	}
	return out, events
}

// processCPU is this process's CPU time, user and system, in ns.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkProbePath is the JVM path's CPU per event off the traced
// thread: javac-shaped probe buffers (javacWords) handed over as the
// converter does, numbered, mapped and encoded by the drain, written by
// two data writers into connections that discard. lent: the words lent in
// place (host.HandProbes, as the converter hands over the buffers of
// probe.c's pool: 32 of them, each given back once encoded); copied:
// copied and checked first (host.SubmitProbes, the path of buffers with
// JUL records). cpu-ns/event is the process's CPU time (every goroutine:
// the submitting one, the drain, the writers, the GC) per event, measured
// until the last event is shipped; off-thread-ns/event leaves out the
// submitting goroutine's thread (the traced thread, which copies into the
// lent buffers).
func BenchmarkProbePath(b *testing.B) {
	for _, lent := range []bool{true, false} {
		name := "copied"
		if lent {
			name = "lent"
		}
		b.Run(name, func(b *testing.B) { benchProbePath(b, lent) })
	}
}

// lentWords is a test host's buffer of probe words lent to the agent,
// given back into free.
type lentWords struct {
	w    []int64
	free chan *lentWords
}

func (l *lentWords) Release() { l.free <- l }

func benchProbePath(b *testing.B, lent bool) {
	p := sinkSession(b, 2)
	methods := make([]int32, 512)
	for i := range methods {
		methods[i] = NewMethod(fmt.Sprintf("com/sun/tools/javac/X%d.m;1;()V", i)).ID()
	}
	bufs, perRound := javacWords(methods, 16, 20000)
	// probe.c's pool: each buffer holds one of bufs, in turn.
	free := make(chan *lentWords, 32)
	for i := 0; i < cap(free); i++ {
		free <- &lentWords{w: append([]int64(nil), bufs[i%len(bufs)]...), free: free}
	}
	submit := func(i int) {
		if !lent {
			if _, err := host.SubmitProbes(7, bufs[i%len(bufs)]); err != nil {
				b.Fatal(err)
			}
			return
		}
		l := <-free
		// As the JVM's traced thread copies its buffer into the pool's:
		// the drain reads lines another core has just written.
		copy(l.w, bufs[i%cap(free)%len(bufs)])
		if !host.HandProbes(7, l.w, l) {
			b.Fatal("HandProbes did not take the words")
		}
	}
	count := func(i int) int64 {
		w := bufs[i%len(bufs)]
		if lent {
			w = bufs[i%cap(free)%len(bufs)]
		}
		return int64(len(w) - timeWords(w))
	}
	// Map every method first: the benchmark measures the steady state.
	for i := range bufs {
		submit(i)
	}
	waitEvents(b, p, int64(perRound))
	var want int64
	for i := 0; i < b.N; i++ {
		want += count(len(bufs) + i)
	}
	// The submitting goroutine is the traced thread: its CPU is counted
	// apart.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	base := p.events.Load()
	cpu0, thread0 := processCPU(), threadCPU()
	for i := 0; i < b.N; i++ {
		submit(len(bufs) + i)
	}
	thread := threadCPU() - thread0
	waitEvents(b, p, base+want)
	cpu := processCPU() - cpu0
	b.StopTimer()
	b.ReportMetric(float64(cpu)/float64(want), "cpu-ns/event")
	b.ReportMetric(float64(cpu-thread)/float64(want), "off-thread-ns/event")
	b.ReportMetric(float64(want)/float64(b.N), "events/op")
}

// timeWords counts the time words of a buffer made by javacWords.
func timeWords(w []int64) int {
	t := 0
	for _, v := range w {
		if byte(v) == host.ProbeTime {
			t++
		}
	}
	return t
}

// waitEvents waits until the pipeline has shipped n events.
func waitEvents(tb testing.TB, p *pipeline, n int64) {
	tb.Helper()
	deadline := time.Now().Add(time.Minute)
	for p.events.Load() < n {
		if time.Now().After(deadline) {
			tb.Fatalf("%d events shipped; want %d", p.events.Load(), n)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// BenchmarkGoPath is the Go host's CPU per event: nested traced calls of
// 64 methods from one goroutine (Method.Enter, Frame.Exit), through the
// ring, the drain and the encoder, into two data connections that
// discard. cpu-ns/event is the process's CPU time (the recording goroutine
// included) per event, measured until the last event is shipped.
func BenchmarkGoPath(b *testing.B) {
	p := sinkSession(b, 2)
	ms := make([]*Method, 64)
	for i := range ms {
		ms[i] = NewMethod(fmt.Sprintf("go/G%d.m;1;()V", i))
	}
	var events int64
	var calls func(depth int, r uint64) uint64
	calls = func(depth int, r uint64) uint64 {
		events += 2
		f := ms[r%uint64(len(ms))].Enter()
		r = r*0x9E3779B97F4A7C15 + 1
		if depth > 0 {
			for j := uint64(0); j < r>>61; j++ { // 0 to 7 callees
				r = calls(depth-1, r)
			}
		}
		f.Exit()
		return r
	}
	calls(4, 1) // maps the methods
	base := p.events.Load()
	waitEvents(b, p, base)
	b.ReportAllocs()
	b.ResetTimer()
	base = p.events.Load()
	events = 0
	cpu0 := processCPU()
	r := uint64(1)
	for i := 0; i < b.N; i++ {
		r = calls(2, r)
	}
	waitEvents(b, p, base+events)
	cpu := processCPU() - cpu0
	b.StopTimer()
	b.ReportMetric(float64(cpu)/float64(events), "cpu-ns/event")
	b.ReportMetric(float64(events)/float64(b.N), "events/op")
}
