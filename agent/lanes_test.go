package agent

import (
	"fmt"
	"math"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// TestThreadOrderAcrossLanes records from more goroutines than cores, on
// more Ps than cores, yielding between events so that goroutines move from
// P to P, and checks what reaches HQ: gap-free sequence numbers, and for
// every goroutine its entries, exits and markers in the order it recorded
// them, with timestamps that never go back.
func TestThreadOrderAcrossLanes(t *testing.T) {
	c := &captureConn{}
	s, end := pipelineSession(t, 256, 1<<20, c)
	// More Ps than when the session started: lanes are added as they record.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 2))
	const workers, rounds = 12, 1500
	outer := NewMethod("t/Lanes.outer;1;()V")
	inner := NewMethod("t/Lanes.inner;1;()V")
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			SetThreadName("w" + strconv.Itoa(w))
			for n := 0; n < rounds; n++ {
				f := outer.Enter()
				runtime.Gosched()
				Mark("w"+strconv.Itoa(w), strconv.Itoa(n))
				g := inner.Enter()
				runtime.Gosched()
				g.Exit()
				f.Exit()
			}
		}()
	}
	wg.Wait()
	end()
	if s.lanes.moved.Load() == 0 {
		t.Fatal("no goroutine moved between lanes: the test checked nothing")
	}
	t.Logf("%d events recorded after a move to another lane", s.lanes.moved.Load())

	type thread struct {
		stack   []int32
		entries int // entries of outer so far
		rel     int32
	}
	threads := map[uint16]*thread{}
	byName := map[string]*thread{}
	d := bytefrog.Dialect{Version: bytefrog.Version1, Flavor: bytefrog.FlavorBytefrog}
	var seq int32
	v := bytefrog.NewEventView(c.buf.Bytes(), d)
	var m bytefrog.Msg
	for v.Next() {
		v.Msg(&m)
		if m.Type == bytefrog.MsgMapThreadName {
			th := &thread{}
			threads[m.ThreadID] = th
			byName[string(m.Text)] = th
			continue
		}
		if !m.Type.Sequenced() {
			continue
		}
		if m.Seq != seq {
			t.Fatalf("sequence number %d; want %d", m.Seq, seq)
		}
		seq++
		if m.Type == bytefrog.MsgMarker {
			th := byName[string(m.Text)]
			if th == nil {
				t.Fatalf("marker %q before its thread was named", m.Text)
			}
			if want := strconv.Itoa(th.entries - 1); string(m.Value) != want || len(th.stack) != 1 {
				t.Fatalf("marker %s=%s after %d entries with %d calls open; want %s with 1 open",
					m.Text, m.Value, th.entries, len(th.stack), want)
			}
			continue
		}
		th := threads[m.ThreadID]
		if th == nil {
			t.Fatalf("event on unannounced thread %d", m.ThreadID)
		}
		if m.RelTime < th.rel {
			t.Fatalf("thread %d: time went from %d to %d ms", m.ThreadID, th.rel, m.RelTime)
		}
		th.rel = m.RelTime
		switch m.Type {
		case bytefrog.MsgMethodEntry:
			if m.MethodID == outer.ID() {
				th.entries++
			}
			th.stack = append(th.stack, m.MethodID)
		case bytefrog.MsgMethodExit:
			if len(th.stack) == 0 || th.stack[len(th.stack)-1] != m.MethodID {
				t.Fatalf("thread %d: exit of %d with calls %v open", m.ThreadID, m.MethodID, th.stack)
			}
			th.stack = th.stack[:len(th.stack)-1]
		}
	}
	if v.Err() != nil || len(v.Rest()) != 0 {
		t.Fatalf("parse: %v (%d bytes left)", v.Err(), len(v.Rest()))
	}
	if want := int32(workers * rounds * 5); seq != want {
		t.Fatalf("%d events; want %d", seq, want)
	}
	for name, th := range byName {
		if th.entries != rounds || len(th.stack) != 0 {
			t.Errorf("%s: %d rounds, %d calls open; want %d, 0", name, th.entries, len(th.stack), rounds)
		}
	}
	if len(byName) != workers {
		t.Errorf("%d threads named; want %d", len(byName), workers)
	}
}

// TestLaneAfterPositions checks the slow path of a thread that changes
// lanes: it must pass exactly the lane it came from, as far as reserved,
// and every busy lane when that lane is unknown, unless it is a goroutine
// newer than any that recorded; and the lane it left must no longer take
// it for its current thread.
func TestLaneAfterPositions(t *testing.T) {
	ls := newLanes(64)
	a, b := ls.lane(0), ls.lane(1)
	a.tail, b.tail = 10, 3
	key := uint64(42)
	if got := ls.after(key, 0); !got.none() {
		t.Fatalf("new goroutine: after = %+v; want none", got)
	}
	if got := ls.after(key, 0); got.all == nil || fmt.Sprint(*got.all) != "[0 10 1 3]" {
		t.Fatalf("goroutine not newer than the newest: after = %+v; want both lanes", got)
	}
	if got := ls.after(hostThreadBit|7, 0); got.all == nil || len(*got.all) != 4 {
		t.Fatalf("host thread: after = %+v; want both lanes", got)
	}
	entry, at := lastEntry(key, 1)
	ls.last[at] = entry
	a.cur, b.cur = key+1, key
	if got := ls.after(key, 0); got.all != nil || got.lane != 1 || got.pos != 3 {
		t.Fatalf("thread last on lane 1: after = %+v; want lane 1 up to 3", got)
	}
	if a.cur != key+1 || b.cur != 0 {
		t.Fatalf("lanes' threads %d, %d after the move; want %d, 0", a.cur, b.cur, key+1)
	}
	other, _ := lastEntry(key+1<<20, 1)
	ls.last[at] = other
	b.cur = key
	if got := ls.after(key, 0); got.all == nil || len(*got.all) != 4 {
		t.Fatalf("entry taken by another thread: after = %+v; want both lanes", got)
	}
	if b.cur != 0 {
		t.Fatal("lane 1 still takes the thread for its own after a move from an unknown lane")
	}
}

// TestSuspendAcrossLanes suspends and resumes a run while goroutines on
// several Ps record: the run stays gap-free with one data break per
// suspension, and every goroutine's events keep their order.
func TestSuspendAcrossLanes(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	h := startHQ(t, nil)
	a, run := startAgent(t, h, testConfig(h.Srv.Addr()))
	outer := NewMethod("t/Lanes.suspendOuter;1;()V")
	inner := NewMethod("t/Lanes.suspendInner;1;()V")
	const workers, rounds, suspensions = 8, 35000, 3
	var progress [workers]atomic.Int64
	// least waits until every goroutine has made n rounds.
	least := func(n int64) {
		deadline := time.Now().Add(20 * time.Second)
		for w := range progress {
			for progress[w].Load() < n {
				if time.Now().After(deadline) {
					t.Fatalf("goroutine %d stuck at %d rounds", w, progress[w].Load())
				}
				time.Sleep(100 * time.Microsecond)
			}
		}
	}
	// A goroutine waits at gate k until the k-th suspension is over, so that
	// none runs out of rounds before the main goroutine, which may get a P
	// late, has suspended and resumed the run.
	var gates [suspensions]chan struct{}
	for k := range gates {
		gates[k] = make(chan struct{})
	}
	gate := func(k int) int { return 10000*(k+1) + 1000 }
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			SetThreadName("s" + strconv.Itoa(w))
			for n, k := 0, 0; n < rounds; n++ {
				if k < suspensions && n == gate(k) {
					<-gates[k]
					k++
				}
				outer.Enter()
				inner.Enter()
				runtime.Gosched()
				inner.ExitLine(n)
				outer.ExitLine(n)
				progress[w].Store(int64(n + 1))
			}
		}()
	}
	// Every suspension starts after each goroutine recorded 10000 rounds
	// more and ends with all of them waiting at the next gate.
	for k := 0; k < suspensions; k++ {
		least(int64(10000 * (k + 1)))
		if err := run.Suspend(); err != nil {
			t.Fatal(err)
		}
		waitMode(t, a, bytefrog.ModeSuspended)
		least(int64(gate(k)))
		if err := run.Unsuspend(); err != nil {
			t.Fatal(err)
		}
		waitMode(t, a, bytefrog.ModeTracing)
		close(gates[k])
	}
	wg.Wait()
	rep := finish(t, a, run)
	c := h.Collector(0)
	if !rep.OK || rep.GapCount != 0 {
		t.Fatalf("run not clean: %s, %d gaps", rep.Reason, rep.GapCount)
	}
	breaks := c.Breaks()
	if len(breaks) != suspensions {
		t.Fatalf("data breaks %v; want %d", breaks, suspensions)
	}
	// Suspension drops events, so calls need not nest; but each goroutine's
	// exits, numbered as it made them, arrive in that order.
	threads := c.ByThread()
	for name, evs := range threads {
		last, lastInner := -1, false
		for _, e := range evs {
			if e.Type != bytefrog.MsgMethodExit {
				continue
			}
			n, isInner := int(e.Line), e.Method == inner.ID()
			// What was recorded before a suspension precedes its break;
			// what was recorded after the next gate follows it.
			for k, b := range breaks {
				if n < gate(k) && e.Seq >= b || n >= gate(k) && e.Seq < b {
					t.Fatalf("%s: exit %d has sequence number %d; break %d is at %d", name, n, e.Seq, k, b)
				}
			}
			if n < last || n == last && isInner && !lastInner {
				t.Fatalf("%s: exit %d (inner %v) after exit %d (inner %v)", name, n, isInner, last, lastInner)
			}
			last, lastInner = n, isInner
		}
	}
	if len(threads) < 8 {
		t.Errorf("%d threads; want 8", len(threads))
	}
}

// TestBreakHoldsLaterEvents suspends between two bursts that the drain
// takes together: the data break must still fall between them.
func TestBreakHoldsLaterEvents(t *testing.T) {
	c := &captureConn{}
	var got []int32 // written by the drain, read once it ended
	s, end := pipelineBreaks(t, 1024, 1<<20, func(seq int32) { got = append(got, seq) }, c)
	m := NewMethod("t/Lanes.break;1;()V")
	for i := 0; i < 100; i++ {
		m.Enter().Exit()
	}
	s.brk.push(s.lanes.positions()) // as a Suspend does, without waking the drain
	for i := 0; i < 100; i++ {
		m.Enter().Exit()
	}
	end()
	if len(got) != 1 || got[0] != 200 {
		t.Fatalf("data breaks %v; want [200]", got)
	}
}

// TestNamesOverflow checks that a bounded registry gives its last id to
// every name past the bound, under the overflow name.
func TestNamesOverflow(t *testing.T) {
	n := names{max: 3, overflow: "<more>"}
	var got []int32
	for _, s := range []string{"a", "b", "c", "d", "a"} {
		id, _ := n.intern(s)
		got = append(got, id)
	}
	if fmt.Sprint(got) != "[1 2 3 3 1]" {
		t.Fatalf("ids %v; want [1 2 3 3 1]", got)
	}
	if n.name(3) != "<more>" || !n.known(3) || n.known(4) {
		t.Fatalf("id 3 is %q (known %v, 4 known %v); want the overflow name", n.name(3), n.known(3), n.known(4))
	}
}

// TestSlotHeader checks that a slot header keeps each field of an event
// apart, at their widest.
func TestSlotHeader(t *testing.T) {
	ls := newLanes(64)
	for _, ev := range []event{
		{thread: 9, method: 1, exc: 0, rel: 0, line: 0},
		{thread: 9, method: math.MaxInt32, exc: maxExceptionTypes, rel: math.MaxInt32, line: noLine, thrown: true},
		{thread: 9, method: 77, exc: 5, rel: 123456, line: 4321},
	} {
		for _, i := range []uint64{0, 63, 64, 1 << 40} {
			h := ls.lap(i) | header(kindThrow, ev.exc, ev.line, ev.thrown)
			if !ls.current(h, i) || ls.current(h, i+64) || kind(h&hdrKind) != kindThrow {
				t.Fatalf("index %d: header %#x does not hold its lap and kind", i, h)
			}
			var got event
			if got.unpack(h, eventData(ev.method, ev.rel), 9); got != ev {
				t.Fatalf("index %d: unpacked %+v; want %+v", i, got, ev)
			}
		}
	}
}
