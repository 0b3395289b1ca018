package agent

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/internal/host"
	"github.com/tadpole-trace/tadpole/internal/testhq"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// probeSubmit hands a thread's probe words to the agent.
type probeSubmit func(thread uint64, w []int64) (int, error)

// submitProbesConverted is the general path of probe words: converted into
// a host batch (appendProbeBatch) and recorded as one. The direct path
// (copyProbes, the drain's probes) must put the same bytes on the wire.
func submitProbesConverted(thread uint64, w []int64) (int, error) {
	b, err := appendProbeBatch(nil, w)
	if len(b) == 0 {
		return 0, err
	}
	return submitBatch(thread, b, nil, len(b)/batchHeaderSize), err
}

// lentProbes hands probe words over as the JVM agent's converter does
// (host.HandProbes), each buffer in a copy of its own that Release
// poisons, so that a word read after its release changes the wire bytes;
// buffers larger than a JVM's take host.SubmitProbes. It counts the
// buffers lent and released.
type lentProbes struct {
	lent, released, twice atomic.Int64
}

type poisonedWords struct {
	w    []int64
	l    *lentProbes
	done atomic.Bool
}

func (p *poisonedWords) Release() {
	if p.done.Swap(true) {
		p.l.twice.Add(1)
		return
	}
	for i := range p.w {
		p.w[i] = int64(p.w[i]>>8)<<8 | host.ProbeEntry
	}
	p.l.released.Add(1)
}

func (l *lentProbes) submit(thread uint64, w []int64) (int, error) {
	if len(w) > maxProbeWords {
		return host.SubmitProbes(thread, w)
	}
	p := &poisonedWords{w: append([]int64(nil), w...), l: l}
	if len(w) > 0 && !host.HandProbes(thread, p.w, p) {
		return 0, errors.New("HandProbes did not take the words")
	}
	if len(w) > 0 {
		l.lent.Add(1)
	}
	return 0, nil
}

// check reports buffers not given back, or given back twice.
func (l *lentProbes) check(tb testing.TB) {
	tb.Helper()
	if l.lent.Load() != l.released.Load() || l.twice.Load() != 0 {
		tb.Fatalf("%d buffers lent, %d released, %d released twice", l.lent.Load(), l.released.Load(), l.twice.Load())
	}
}

// probeWire runs a pipeline of one data connection with time base begin
// (beginMono), has feed submit through it, stops it and returns the bytes
// written.
func probeWire(tb testing.TB, flavor bytefrog.Flavor, begin time.Time, beginMono int64, feed func()) []byte {
	tb.Helper()
	// One P, so one lane: the threads' buffers reach the drain in the
	// order they were submitted. With more, the submitting goroutine may
	// move between lanes, which the drain merges by time, and the threads
	// may interleave otherwise (each thread's order is kept either way).
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	log, _ := newLogger("none", LevelOff)
	c := &captureConn{}
	// A small budget: send buffers of 4 KiB, filled and shipped often.
	pc := pipeConfig{RingSize: 64, Budget: 64 << 10, Flavor: flavor, FlushInterval: 5 * time.Millisecond}
	p := newPipeline(pc, log, []net.Conn{c}, begin, beginMono, nil, nil)
	p.Start()
	p.setMode(bytefrog.ModeTracing)
	if !active.CompareAndSwap(nil, p) {
		tb.Fatal("another session is active")
	}
	feed()
	err := p.Stop(context.Background())
	active.CompareAndSwap(p, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return c.buf.Bytes()
}

// randomProbes makes probe buffers of every shape a JVM sends and some it
// should not: nested entries and exits, time words (also before the time
// base, and none at the start of a buffer), exceptions thrown and
// bubbling, methods whose ids are first used in the middle of a buffer,
// words naming ids never given out, an exception word without its type,
// a word of an unknown kind; from three threads.
func randomProbes(r *rand.Rand, methods, excs []int32, beginMono int64, buffers int) (threads []uint64, bufs [][]int64) {
	ms := beginMono/1e6 - 2
	var stacks [3][]int32
	for b := 0; b < buffers; b++ {
		th := r.IntN(3)
		n := 1 + r.IntN(3000)
		switch {
		case b%17 == 8:
			n = maxProbeWords + 1 + r.IntN(100) // larger than a JVM's: the general path
		case r.IntN(4) == 0:
			n = r.IntN(40)
		}
		var w []int64
		if r.IntN(8) != 0 {
			w = append(w, ms<<8|host.ProbeTime)
		}
		st := stacks[th]
		for len(w) < n {
			switch x := r.IntN(1000); {
			case x < 8:
				ms += int64(r.IntN(3))
				w = append(w, ms<<8|host.ProbeTime)
			case x < 12 && len(st) > 0:
				m := st[len(st)-1]
				st = st[:len(st)-1]
				e := excs[r.IntN(len(excs))]
				w = append(w, int64(r.IntN(100))<<48|int64(m)<<8|host.ProbeThrown, int64(e))
				w = append(w, int64(m)<<8|host.ProbeBubble, int64(e))
			case x < 13:
				w = append(w, int64(1<<30)<<8|host.ProbeEntry) // never given out
			case x < 14:
				w = append(w, int64(methods[0])<<8|host.ProbeBubble, 1<<29) // exception id never given out
			case x < 15 && b%7 == 3:
				w = append(w, int64(methods[0])<<8|9) // unknown kind: the general path
			case x < 500 && len(st) < 30 || len(st) == 0:
				m := methods[r.IntN(len(methods))]
				if r.IntN(2) == 0 {
					m = methods[r.IntN(min(4, len(methods)))]
				}
				st = append(st, m)
				w = append(w, int64(m)<<8|host.ProbeEntry)
			default:
				m := st[len(st)-1]
				st = st[:len(st)-1]
				w = append(w, int64(r.IntN(70000))<<48|int64(m)<<8|host.ProbeExit)
			}
		}
		if b%11 == 5 {
			w = append(w, int64(methods[0])<<8|host.ProbeThrown) // its type word is missing
		}
		stacks[th] = st
		threads = append(threads, uint64(100+th))
		bufs = append(bufs, w)
	}
	return threads, bufs
}

// TestProbesDirectSameWire: the direct path of probe words puts on the
// wire exactly the bytes of the general path — numbering, thread names,
// mappings before first use, times, lines, exceptions, bad words left
// out — in both MethodExit flavours, and returns the same counts and
// errors. So do words lent in place (host.HandProbes, checked by the
// drain alone), each buffer given back once, after its last read.
func TestProbesDirectSameWire(t *testing.T) {
	var methods, excs []int32
	for i := 0; i < 40; i++ {
		methods = append(methods, NewMethod(fmt.Sprintf("wire/W%d.m;9;()V", i)).ID())
	}
	for i := 0; i < 3; i++ {
		excs = append(excs, NewExceptionType(fmt.Sprintf("wire.E%d", i)).ID())
	}
	begin, beginMono := time.Now(), monoNow()
	for _, flavor := range []bytefrog.Flavor{bytefrog.FlavorBytefrog, bytefrog.FlavorCodePulse} {
		for seed := uint64(1); seed <= 6; seed++ {
			threads, bufs := randomProbes(rand.New(rand.NewPCG(seed, 7)), methods, excs, beginMono, 60)
			run := func(submit probeSubmit) ([]byte, []int, []bool) {
				var ns []int
				var bad []bool
				wire := probeWire(t, flavor, begin, beginMono, func() {
					for i, w := range bufs {
						n, err := submit(threads[i], w)
						if err != nil && !errors.Is(err, host.ErrBadProbe) {
							t.Fatalf("buffer %d: %v", i, err)
						}
						ns, bad = append(ns, n), append(bad, err != nil)
					}
				})
				return wire, ns, bad
			}
			want, wantN, wantBad := run(submitProbesConverted)
			got, gotN, gotBad := run(host.SubmitProbes)
			if fmt.Sprint(gotN, gotBad) != fmt.Sprint(wantN, wantBad) {
				t.Errorf("flavour %v seed %d: counts and errors %v %v; want %v %v", flavor, seed, gotN, gotBad, wantN, wantBad)
			}
			if !bytes.Equal(got, want) {
				i := 0
				for i < len(got) && i < len(want) && got[i] == want[i] {
					i++
				}
				t.Fatalf("flavour %v seed %d: %d wire bytes, differing from the general path's %d at offset %d", flavor,
					seed, len(got), len(want), i)
			}
			if len(want) < 100<<10 {
				t.Fatalf("flavour %v seed %d: only %d bytes on the wire", flavor, seed, len(want))
			}
			var l lentProbes
			if lent, _, _ := run(l.submit); !bytes.Equal(lent, want) {
				t.Fatalf("flavour %v seed %d: %d wire bytes from lent words, %d from the general path", flavor, seed,
					len(lent), len(want))
			}
			l.check(t)
		}
	}
}

// TestProbesDirectToHQ: probe buffers from several threads at once reach
// the reference HQ whole: every event once, numbered without a gap, in
// order per thread (stack discipline), with the times and lines the words
// carry.
func TestProbesDirectToHQ(t *testing.T) {
	h := startHQ(t, nil)
	a, run := startAgent(t, h, testConfig(h.Srv.Addr()))
	m := NewMethod("probe/P.outer;9;()V").ID()
	inner := NewMethod("probe/P.inner;9;()V").ID()
	e := NewExceptionType("probe.Boom").ID()
	const threads, buffers, depth = 4, 40, 100
	done := make(chan error, threads)
	for th := 0; th < threads; th++ {
		go func() {
			var err error
			for b := 0; b < buffers && err == nil; b++ {
				w := []int64{(monoNow()/1e6)<<8 | host.ProbeTime}
				for i := 0; i < depth; i++ {
					w = append(w, int64(m)<<8|host.ProbeEntry, int64(inner)<<8|host.ProbeEntry)
					if i%10 == 0 {
						w = append(w, int64(i)<<48|int64(inner)<<8|host.ProbeThrown, int64(e),
							int64(inner)<<8|host.ProbeBubble, int64(e))
					} else {
						w = append(w, int64(i)<<48|int64(inner)<<8|host.ProbeExit)
					}
				}
				for i := 0; i < depth; i++ {
					w = append(w, int64(depth-i)<<48|int64(m)<<8|host.ProbeExit)
				}
				var n int
				n, err = host.SubmitProbes(uint64(500+th), w)
				if err == nil && n != 4*depth+depth/10 {
					err = fmt.Errorf("SubmitProbes took %d events; want %d", n, 4*depth+depth/10)
				}
			}
			done <- err
		}()
	}
	for th := 0; th < threads; th++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	rep := finish(t, a, run)
	c := testhqCollector(h)
	checkProbeEvents(t, rep, c, threads*buffers*(4*depth+depth/10), m, inner, depth)
}

// FuzzProbesDirect feeds arbitrary words through both paths of probe
// words: the same bytes on the wire, the same counts and errors; and
// lent (host.HandProbes): the same bytes, every buffer given back once.
func FuzzProbesDirect(f *testing.F) {
	m, e := NewMethod("fuzz/F.probe;1;()V").ID(), NewExceptionType("fuzz.ProbeError").ID()
	seed := func(w ...int64) []byte {
		b := make([]byte, 0, 8*len(w))
		for _, v := range w {
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
		return b
	}
	f.Add(seed(probeWords(m, 3, 4)...))
	f.Add(seed(int64(m)<<8|host.ProbeEntry, int64(m)<<8|host.ProbeThrown, int64(e), 5<<8|host.ProbeTime,
		int64(m)<<8|host.ProbeBubble, int64(e)))
	f.Add(seed(int64(m)<<8|host.ProbeExit, int64(m)<<8|7, int64(m)<<8|host.ProbeThrown))
	begin, beginMono := time.Now(), monoNow()
	f.Fuzz(func(t *testing.T, data []byte) {
		w := make([]int64, len(data)/8)
		for i := range w {
			w[i] = int64(binary.LittleEndian.Uint64(data[8*i:]))
		}
		var n [2]int
		var bad [2]bool
		var wire [2][]byte
		for i, submit := range []probeSubmit{submitProbesConverted, host.SubmitProbes} {
			wire[i] = probeWire(t, bytefrog.FlavorBytefrog, begin, beginMono, func() {
				var err error
				n[i], err = submit(3, w)
				bad[i] = err != nil
			})
		}
		if n[0] != n[1] || bad[0] != bad[1] || !bytes.Equal(wire[0], wire[1]) {
			t.Fatalf("direct path: %d events, error %v, %d bytes; general path: %d, %v, %d bytes", n[1], bad[1],
				len(wire[1]), n[0], bad[0], len(wire[0]))
		}
		var l lentProbes
		lent := probeWire(t, bytefrog.FlavorBytefrog, begin, beginMono, func() { l.submit(3, w) })
		if !bytes.Equal(lent, wire[0]) {
			t.Fatalf("lent words: %d bytes; general path: %d bytes", len(lent), len(wire[0]))
		}
		l.check(t)
	})
}

func testhqCollector(h *testhq.HQ) *testhq.Collector { return h.Collector(0) }

// checkProbeEvents checks TestProbesDirectToHQ's run: clean and complete,
// and on every thread the stack discipline of its calls — each exit or
// bubble of the method on top, each exception thrown in it — with the
// lines the words carried.
func checkProbeEvents(t *testing.T, rep *hq.Report, c *testhq.Collector, want int, outer, inner int32, depth int) {
	t.Helper()
	testhq.CheckClean(t, rep, c, want)
	stacks := map[uint16][]int32{}
	innerExits := map[uint16]int{}
	for _, e := range c.Events() {
		st := stacks[e.Thread]
		switch e.Type {
		case bytefrog.MsgMethodEntry:
			stacks[e.Thread] = append(st, e.Method)
			continue
		case bytefrog.MsgException:
			if len(st) == 0 || st[len(st)-1] != e.Method || e.Method != inner {
				t.Fatalf("seq %d: exception in method %d, stack %v", e.Seq, e.Method, st)
			}
			continue
		}
		if len(st) == 0 || st[len(st)-1] != e.Method {
			t.Fatalf("seq %d: %v of method %d, stack %v", e.Seq, e.Type, e.Method, st)
		}
		stacks[e.Thread] = st[:len(st)-1]
		if e.Type == bytefrog.MsgMethodExit {
			i := innerExits[e.Thread] % depth
			switch {
			case e.Method == inner && int(e.Line) != i:
				t.Fatalf("seq %d: inner exit at line %d; want %d", e.Seq, e.Line, i)
			case e.Method == outer && (e.Line < 1 || int(e.Line) > depth):
				t.Fatalf("seq %d: outer exit at line %d", e.Seq, e.Line)
			}
		}
		if e.Method == inner {
			innerExits[e.Thread]++
		}
	}
	for th, st := range stacks {
		if len(st) != 0 {
			t.Errorf("thread %d ends with %d frames open", th, len(st))
		}
	}
}
