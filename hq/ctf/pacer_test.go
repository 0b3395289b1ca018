package ctf

import (
	"testing"
	"time"
)

// While a run is ingested, serving is held to its share of the time;
// otherwise it is never held.
func TestPacer(t *testing.T) {
	p := NewPacer(0.1)
	t0 := time.Now()
	for range 10 {
		p.Pace(5 * time.Millisecond) // no ingest: no pause
	}
	if d := time.Since(t0); d > 40*time.Millisecond {
		t.Fatalf("paced without ingest: %v", d)
	}
	t0 = time.Now()
	for range 6 {
		p.ingesting()
		p.Pace(5 * time.Millisecond) // 30 ms of serving at 10%: about 300 ms
	}
	if d := time.Since(t0); d < 200*time.Millisecond || d > 2*time.Second {
		t.Fatalf("30 ms of serving while ingesting took %v; want about 250-300 ms at a 10%% share", d)
	}
	t0 = time.Now()
	NewPacer(-1).Pace(time.Second) // unpaced
	var nilPacer *Pacer
	nilPacer.ingesting()
	nilPacer.Pace(time.Second)
	if d := time.Since(t0); d > 50*time.Millisecond {
		t.Fatalf("an unpaced pacer paused %v", d)
	}
}
