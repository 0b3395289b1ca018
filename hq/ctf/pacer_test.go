package ctf

import (
	"testing"
	"time"
)

// While a run is ingested, serving is held to its share of the time and
// the bytes delivered to the rate; otherwise it is never held.
func TestPacer(t *testing.T) {
	p := NewPacer(0.1, 0, 0)
	t0 := time.Now()
	for range 10 {
		p.Pace(5*time.Millisecond, 0) // no ingest: no pause
	}
	if d := time.Since(t0); d > 40*time.Millisecond {
		t.Fatalf("paced without ingest: %v", d)
	}
	t0 = time.Now()
	for range 6 {
		p.ingesting(4096)
		p.Pace(5*time.Millisecond, 0) // 30 ms of serving at 10%: about 300 ms
	}
	if d := time.Since(t0); d < 200*time.Millisecond || d > 2*time.Second {
		t.Fatalf("30 ms of serving while ingesting took %v; want about 250-300 ms at a 10%% share", d)
	}

	// 1 MB at 4 MB/s, in 64 KB packets: about 250 ms, less the burst.
	p = NewPacer(-1, 4e6, 0)
	t0 = time.Now()
	for range 16 {
		p.ingesting(4096)
		p.Pace(0, 64e3)
	}
	if d := time.Since(t0); d < 150*time.Millisecond || d > 2*time.Second {
		t.Fatalf("1 MB delivered while ingesting took %v; want about 200-250 ms at 4 MB/s", d)
	}
	time.Sleep(2 * ingestQuiet)
	t0 = time.Now()
	for range 16 {
		p.Pace(time.Millisecond, 64e3) // no ingest: no pause
	}
	if d := time.Since(t0); d > 40*time.Millisecond {
		t.Fatalf("paced the bytes without ingest: %v", d)
	}

	t0 = time.Now()
	NewPacer(-1, -1, 0).Pace(time.Second, 1<<30) // unpaced
	var nilPacer *Pacer
	nilPacer.ingesting(4096)
	nilPacer.Pace(time.Second, 1<<30)
	if d := time.Since(t0); d > 50*time.Millisecond {
		t.Fatalf("an unpaced pacer paused %v", d)
	}
}

// Serving is paced only while the ingest runs above the pacer's rate of
// events: a light run leaves viewers at full speed.
func TestPacerHeavyOnly(t *testing.T) {
	p := NewPacer(0.01, 1e3, 1e6)
	t0 := time.Now()
	for range 20 {
		p.ingesting(100) // 2 000 events in a few ms, far below 1 M/s
		p.Pace(5*time.Millisecond, 64e3)
	}
	if p.active() {
		t.Fatal("paced at a light ingest")
	}
	if d := time.Since(t0); d > 100*time.Millisecond {
		t.Fatalf("a light ingest's serving took %v", d)
	}
	p.ingesting(int(1e6 * rateWindow.Seconds())) // a window's worth at once
	if !p.active() {
		t.Fatal("not paced at a heavy ingest")
	}
	t0 = time.Now()
	p.Pace(10*time.Millisecond, 0) // 10 ms at 1%: held back
	if d := time.Since(t0); d < 100*time.Millisecond {
		t.Fatalf("serving at a heavy ingest went on after %v", d)
	}
}
