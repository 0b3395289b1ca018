package cbench

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/capi/ctest"
	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/internal/testpeers"
)

// startHQ starts a reference HQ on loopback.
func startHQ(tb testing.TB) *hq.Server {
	tb.Helper()
	cfg := hq.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	srv, err := hq.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return srv
}

// compare runs bench.c once and checks HQ received every tadpole event.
func compare(tb testing.TB, pairs, threads, rounds int) Result {
	tb.Helper()
	lib := ctest.BuildLib(tb)
	prog := Build(tb, lib)
	sd := testpeers.StartSessiond(tb)
	srv := startHQ(tb)
	res := prog.Run(tb, sd, srv.Addr(), pairs, threads, rounds)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := srv.NextRun(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	rep, err := run.Wait(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	if !rep.OK || rep.GapCount != 0 || rep.Sequenced != res.TadpoleEvents {
		tb.Fatalf("tadpole run: ok %v (%s), %d gaps, %d events; want %d", rep.OK, rep.Reason, rep.GapCount, rep.Sequenced, res.TadpoleEvents)
	}
	return res
}

func TestMain(m *testing.M) {
	code := m.Run()
	ctest.Cleanup()
	os.Exit(code)
}

// TestCompareLTTngUST runs the side-by-side comparison briefly and logs it.
func TestCompareLTTngUST(t *testing.T) {
	res := compare(t, 200000, 1, 3)
	t.Logf("ns/event: tadpole %.1f (recording alone %.1f), lttng-ust %.1f, empty call %.1f; ratio %.2f; lttng stop: %s",
		res.NsPerEvent["tadpole"], res.NsPerEvent["tadpole-record"], res.NsPerEvent["lttng-ust"],
		res.NsPerEvent["empty-call"], res.Ratio, res.LTTngStop)
	// The LTTng probe really recorded (or, in discard mode, counted as
	// discarded, which lttng stop reports).
	if n := CountLTTngEvents(t, res.TraceDir); n != res.TadpoleEvents/2 && !strings.Contains(res.LTTngStop, "discarded") {
		t.Errorf("LTTng trace has %d events; want %d", n, res.TadpoleEvents/2)
	}
}

// BenchmarkCompareLTTngUST reports the comparison as metrics; each
// iteration is a whole run of bench.c.
func BenchmarkCompareLTTngUST(b *testing.B) {
	for _, threads := range []int{1, 2} {
		b.Run(map[int]string{1: "threads=1", 2: "threads=2"}[threads], func(b *testing.B) {
			var res Result
			for range b.N {
				res = compare(b, 2000000, threads, 5)
			}
			b.Logf("lttng stop: %s", res.LTTngStop)
			b.ReportMetric(res.NsPerEvent["tadpole"], "tadpole-ns/event")
			b.ReportMetric(res.NsPerEvent["tadpole-record"], "tadpole-record-ns/event")
			b.ReportMetric(res.NsPerEvent["lttng-ust"], "lttng-ns/event")
			b.ReportMetric(res.Ratio, "ratio")
		})
	}
}
