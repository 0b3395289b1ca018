package ctf

import (
	"testing"
	"time"
)

// While a run is ingested, serving is held to its share of the time and
// the bytes delivered to the rate; otherwise it is never held.
func TestPacer(t *testing.T) {
	p := NewPacer(0.1, 0)
	t0 := time.Now()
	for range 10 {
		p.Pace(5*time.Millisecond, 0) // no ingest: no pause
	}
	if d := time.Since(t0); d > 40*time.Millisecond {
		t.Fatalf("paced without ingest: %v", d)
	}
	t0 = time.Now()
	for range 6 {
		p.ingesting()
		p.Pace(5*time.Millisecond, 0) // 30 ms of serving at 10%: about 300 ms
	}
	if d := time.Since(t0); d < 200*time.Millisecond || d > 2*time.Second {
		t.Fatalf("30 ms of serving while ingesting took %v; want about 250-300 ms at a 10%% share", d)
	}

	// 1 MB at 4 MB/s, in 64 KB packets: about 250 ms, less the burst.
	p = NewPacer(-1, 4e6)
	t0 = time.Now()
	for range 16 {
		p.ingesting()
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
	NewPacer(-1, -1).Pace(time.Second, 1<<30) // unpaced
	var nilPacer *Pacer
	nilPacer.ingesting()
	nilPacer.Pace(time.Second, 1<<30)
	if d := time.Since(t0); d > 50*time.Millisecond {
		t.Fatalf("an unpaced pacer paused %v", d)
	}
}
