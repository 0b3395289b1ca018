package agent

import (
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"

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
	out := c.buf.Bytes()
	for len(out) > 0 {
		var m bytefrog.Msg
		n, err := d.Parse(&m, out)
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		out = out[n:]
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
// lanes: it must pass exactly the lane it came from, as far as reserved.
func TestLaneAfterPositions(t *testing.T) {
	ls := newLanes(64)
	a, b := ls.lane(0), ls.lane(1)
	a.tail, b.tail = 10, 3
	key := uint64(42)
	if got := ls.after(key, 0); len(got) != 4 {
		t.Fatalf("unknown thread: after = %v; want both lanes", got)
	}
	entry, at := lastEntry(key, 1)
	ls.last[at] = entry
	if got := ls.after(key, 0); fmt.Sprint(got) != "[1 3]" {
		t.Fatalf("thread last on lane 1: after = %v; want [1 3]", got)
	}
	other, _ := lastEntry(key+1<<20, 1)
	ls.last[at] = other
	if got := ls.after(key, 0); len(got) != 4 {
		t.Fatalf("entry taken by another thread: after = %v; want both lanes", got)
	}
}
