package ctf_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/ctf"
	"github.com/tadpole-trace/tadpole/hq/hqtest"
)

// discardedRE matches babeltrace2's text line for a discarded-events
// message.
var discardedRE = regexp.MustCompile(`discarded (\d+) events`)

// A run ingested faster than viewers are served: while it is ingested,
// the bytes delivered stay within the serve rate and the feed within its
// cap; each babeltrace2 viewer prints a subsequence of HQ's
// events in HQ's order, reports every event it did not get as discarded,
// keeps printing until the run ends, and gets the run's last events once
// the ingest stops (pacing ends, it catches up).
func TestBabeltraceLivePaced(t *testing.T) {
	bt := needBabeltrace(t)
	dir := t.TempDir()
	h := startLiveHQWith(t, dir, &ctf.CatalogConfig{Writer: ctf.Config{LiveTimer: 200 * time.Millisecond}, PaceAbove: -1,
		FeedMax: 2 << 20})
	a, data := dialAgent(t, h.hq.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := h.hq.NextRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	in, url := h.session(t)
	v1, v2 := startViewer(t, bt, url), startViewer(t, bt, url)
	h.waitClients(t, in.ID, 2)

	// 600 k events (12 MB of Bytefrog, 6 times the feed's cap) in 30
	// writes over at least 1.5 s: up to 8 MB/s, beyond the 1 MiB/s of
	// CTF served.
	chunks, n := hqtest.Generate(hqtest.Workload{Events: 600_000, Methods: 200, Threads: 4, Chunk: 4096, Seed: 11})
	sent0 := h.live.Sent()
	t0 := time.Now()
	var maxKept int64
	per := (len(chunks) + 29) / 30
	for i := 0; i < len(chunks); i += per {
		for _, c := range chunks[i:min(i+per, len(chunks))] {
			if err := a.Write(data, c); err != nil {
				t.Fatal(err)
			}
		}
		kept, _ := h.cat.FeedStats(in.ID)
		maxKept = max(maxKept, kept)
		time.Sleep(50 * time.Millisecond)
	}
	// Up to the last write HQ is ingesting (the run's end, after it, lets
	// the viewers catch up unpaced).
	took := time.Since(t0)
	sent := h.live.Sent() - sent0
	if err := a.Shutdown(false); err != nil {
		t.Fatal(err)
	}
	rep, err := run.Wait(ctx)
	if err != nil || !rep.OK {
		t.Fatalf("run: %v %+v", err, rep)
	}
	if limit := int64(ctf.DefaultServeRate * (took.Seconds() + 0.5)); sent > limit {
		t.Errorf("%d packet bytes delivered in the %v of the ingest; the rate allows about %d", sent, took, limit)
	}
	if limit := int64(2<<20 + 2*hq.BlockBufferSize); maxKept > limit {
		t.Errorf("the feed kept %d bytes; want at most about its cap, %d", maxKept, limit)
	}
	for _, v := range []*viewer{v1, v2} {
		v.waitExit(t, time.Minute)
	}
	want := h.decoded.snapshot()
	if len(want) != n {
		t.Fatalf("HQ decoded %d events; %d sent", len(want), n)
	}
	for i, v := range []*viewer{v1, v2} {
		got := v.events()
		discarded := 0
		for _, l := range v.out {
			if m := discardedRE.FindStringSubmatch(l); m != nil {
				d, _ := strconv.Atoi(m[1])
				discarded += d
			}
		}
		for _, l := range strings.Split(v.stderr(), "\n") {
			if m := discardedRE.FindStringSubmatch(l); m != nil {
				d, _ := strconv.Atoi(m[1])
				discarded += d
			}
		}
		t.Logf("viewer %d: %d of %d events printed, %d reported discarded; %d bytes served while ingesting for %v",
			i+1, len(got), n, discarded, sent, took)
		// A subsequence of HQ's events, in HQ's order.
		j := 0
		for k, g := range got {
			for j < len(want) && want[j] != g {
				j++
			}
			if j == len(want) {
				t.Fatalf("viewer %d: event %d %q is not in HQ's order after the previous one", i+1, k, g)
			}
			j++
		}
		if len(got) == 0 || got[len(got)-1] != want[len(want)-1] {
			t.Errorf("viewer %d did not print the run's last event", i+1)
		}
		if discarded == 0 || discarded+len(got) != n {
			t.Errorf("viewer %d: %d printed + %d discarded; want %d", i+1, len(got), discarded, n)
		}
	}
}
