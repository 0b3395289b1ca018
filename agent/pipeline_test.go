package agent

import (
	"context"
	"errors"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/host"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// closeCount is a discarding connection that counts its closes.
type closeCount struct {
	discardConn
	n atomic.Int32
}

func (c *closeCount) Close() error { c.n.Add(1); return nil }

// TestLazyClock: with nothing recorded the clock goroutine stops, and a
// recording call then stamps the time of the call, not the time the clock
// stopped; the goroutine resumes.
func TestLazyClock(t *testing.T) {
	p, end := pipelineSession(t, 1024, 1<<20, discardConn{})
	defer end()
	deadline := time.Now().Add(10 * time.Second)
	for p.clock.Load() >= 0 {
		if time.Now().After(deadline) {
			t.Fatal("the clock goroutine still runs 10s after the last recording call")
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(30 * time.Millisecond) // time passes while the clock sleeps
	want := int32(time.Since(p.begin) / time.Millisecond)
	if got := p.now(); got < want {
		t.Fatalf("a recording call after the clock slept stamps %d ms; want at least %d", got, want)
	}
	if c := p.clock.Load(); c < 0 {
		t.Fatalf("clock %d still asleep after a recording call", c)
	}
	// Awake again: the goroutine moves it without recording calls.
	before := p.clock.Load()
	for p.clock.Load() == before || p.clock.Load() < 0 {
		if time.Now().After(deadline) {
			t.Fatalf("clock stayed at %d after it was woken", before)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestPipelineStopBeforeStart: a pipeline stopped before it started never
// starts, closes its connections and ends at once.
func TestPipelineStopBeforeStart(t *testing.T) {
	log, _ := newLogger("none", LevelOff)
	c := &closeCount{}
	p := newPipeline(pipeConfig{RingSize: 1024, Budget: 1 << 20, FlushInterval: time.Millisecond}, log,
		[]net.Conn{c}, time.Now(), monoNow(), nil, nil)
	if err := p.Stop(context.Background()); err != nil {
		t.Fatalf("Stop = %v; want nil", err)
	}
	p.Start()
	select {
	case <-p.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done still open")
	}
	if c.n.Load() == 0 {
		t.Error("connection not closed")
	}
}

// TestPipelineAbort: abort ends a running pipeline with its error, which
// Err and Stop report; onFail is not called for it.
func TestPipelineAbort(t *testing.T) {
	log, _ := newLogger("none", LevelOff)
	failed := make(chan error, 1)
	p := newPipeline(pipeConfig{RingSize: 1024, Budget: 1 << 20, FlushInterval: time.Millisecond}, log,
		[]net.Conn{discardConn{}}, time.Now(), monoNow(), nil, func(err error) { failed <- err })
	p.Start()
	errX := errors.New("x")
	p.abort(errX)
	if err := p.Stop(context.Background()); !errors.Is(err, errX) {
		t.Errorf("Stop = %v; want %v", err, errX)
	}
	if p.gate() || p.currentMode() != bytefrog.ModeShutdown {
		t.Errorf("mode %v after abort; want Shutdown", p.currentMode())
	}
	select {
	case err := <-failed:
		t.Errorf("onFail(%v) after abort", err)
	default:
	}
}

// TestIdleDrainWakes: while nothing records the drain sleeps long, yet the
// first event after the pause reaches the data connection within a flush
// interval or so, and so does a host batch below the wake-up size.
func TestIdleDrainWakes(t *testing.T) {
	c := &captureConn{}
	p, end := pipelineSession(t, 1024, 1<<20, c)
	defer end()
	m := NewMethod("t/Idle.call;1;()V")
	written := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.buf.Len()
	}
	for round := range 2 {
		deadline := time.Now().Add(10 * time.Second)
		for p.clock.Load() >= 0 {
			if time.Now().After(deadline) {
				t.Fatal("the clock goroutine still runs 10s after the last recording call")
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond) // the drain parks for long
		before := written()
		t0 := time.Now()
		if round == 0 {
			m.Enter().Exit()
		} else {
			b := host.AppendBatchRecord(nil, host.BatchEntry, 0, 0, m.ID(), 0, monoNow(), "", "")
			if _, err := hostSubmitBatch(1, b); err != nil {
				t.Fatal(err)
			}
		}
		for written() == before {
			if time.Since(t0) > idleWait/2 {
				t.Fatalf("round %d: nothing written %v after an event recorded while idle", round, time.Since(t0))
			}
			time.Sleep(time.Millisecond)
		}
		t.Logf("round %d: written %v after the call", round, time.Since(t0).Round(time.Millisecond))
	}
}

// TestPipelineNoLeak: every goroutine of a pipeline ends with it, whether
// it is stopped, aborted, or stopped before it started.
func TestPipelineNoLeak(t *testing.T) {
	log, _ := newLogger("none", LevelOff)
	before := runtime.NumGoroutine()
	for i := range 30 {
		p := newPipeline(pipeConfig{RingSize: 1024, Budget: 1 << 20, FlushInterval: time.Millisecond}, log,
			[]net.Conn{discardConn{}, discardConn{}}, time.Now(), monoNow(), nil, nil)
		switch i % 3 {
		case 0:
			p.Start()
			p.setMode(bytefrog.ModeTracing)
			p.Stop(context.Background())
		case 1:
			p.Start()
			p.abort(errors.New("x"))
		case 2:
			p.Stop(context.Background())
			p.Start()
		}
		<-p.Done()
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after 30 pipelines ended; %d before", runtime.NumGoroutine(), before)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestBufPoolWaitsForLow: a drain that finds no send buffer free sleeps
// until a quarter of them are free again, not until the first, so that
// behind a slow HQ the writers wake it once per several buffers; a stop
// ends the wait, and a free buffer is taken at once.
func TestBufPoolWaitsForLow(t *testing.T) {
	p := newBufPool(16 * maxBufSize)
	if n, low := cap(p.free), int(p.low); n != 16 || low != 4 {
		t.Fatalf("%d buffers, low %d; want 16 and 4", n, low)
	}
	var bs []*sendBuf
	for range 16 {
		if !p.token(nil) {
			t.Fatal("no token with buffers free")
		}
		bs = append(bs, p.take())
	}
	got := make(chan bool, 1)
	go func() { got <- p.token(nil) }()
	for !p.want.Load() { // it waits
		time.Sleep(time.Millisecond)
	}
	for i := range int(p.low) - 1 {
		p.recycle(bs[i])
		select {
		case <-got:
			t.Fatalf("the drain woke with %d buffers free; want %d", i+1, p.low)
		case <-time.After(20 * time.Millisecond):
		}
	}
	p.recycle(bs[p.low-1])
	select {
	case ok := <-got:
		if !ok {
			t.Fatal("token reported a stop")
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the drain did not wake with %d buffers free", p.low)
	}
	if n := p.nfree.Load(); n != p.low-1 || len(p.free) != int(n) {
		t.Fatalf("%d free counted, %d tokens; want %d", n, len(p.free), p.low-1)
	}
	for range p.low - 1 {
		if !p.token(nil) {
			t.Fatal("no token with buffers free")
		}
	}
	stop := make(chan struct{})
	go func() { got <- p.token(stop) }()
	time.Sleep(10 * time.Millisecond)
	close(stop)
	select {
	case ok := <-got:
		if ok {
			t.Fatal("token took a buffer none was free")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a stop did not end the wait")
	}
}
