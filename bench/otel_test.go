package bench

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/tadpole-trace/tadpole/agent"
	"github.com/tadpole-trace/tadpole/hq"
)

// tracedHQ starts a reference HQ and a tadpole agent tracing into it.
func tracedHQ(tb testing.TB) (*agent.Agent, *hq.Server) {
	tb.Helper()
	cfg := hq.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.Agent.BufferMemoryBudget = 4 << 20
	cfg.Agent.NumDataSenders = 2
	srv, err := hq.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		tb.Fatal(err)
	}
	ac := agent.DefaultConfig()
	ac.HQ = srv.Addr()
	ac.Log = "none"
	ac.LTTng = false
	a, err := agent.Start(context.Background(), ac)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		a.Shutdown(ctx)
		srv.Shutdown(ctx)
	})
	return a, srv
}

// nopExporter drops spans after the batch processor hands them over, so the
// comparison measures span creation and recording, not an export format.
type nopExporter struct{}

func (nopExporter) ExportSpans(context.Context, []trace.ReadOnlySpan) error { return nil }
func (nopExporter) Shutdown(context.Context) error                          { return nil }

func otelTracer(tb testing.TB) oteltrace.Tracer {
	tp := trace.NewTracerProvider(
		trace.WithSampler(trace.AlwaysSample()),
		trace.WithBatcher(nopExporter{}),
	)
	tb.Cleanup(func() { tp.Shutdown(context.Background()) })
	return tp.Tracer("bench")
}

var mTraced = agent.NewMethod("bench/Service.handle;1;()V")

//go:noinline
func work(x int) int { return x*31 + 7 }

func BenchmarkTadpoleTracedCall(b *testing.B) {
	tracedHQ(b)
	b.ReportAllocs()
	b.ResetTimer()
	x := 0
	for i := 0; i < b.N; i++ {
		f := mTraced.Enter()
		x = work(x)
		f.Exit()
	}
}

func BenchmarkOTelTracedCall(b *testing.B) {
	tr := otelTracer(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	x := 0
	for i := 0; i < b.N; i++ {
		_, span := tr.Start(ctx, "handle")
		x = work(x)
		span.End()
	}
}

func BenchmarkUntracedCall(b *testing.B) {
	x := 0
	for i := 0; i < b.N; i++ {
		x = work(x)
	}
}

// compareRounds is how many times each side of a comparison runs; the
// best round counts, as the one least disturbed by the rest of the machine.
const compareRounds = 3

// best runs the benchmarks in turn, compareRounds times, and returns each
// one's lowest ns/op with its allocs/op.
func best(fs ...func(*testing.B)) (ns []float64, allocs []int64) {
	ns = make([]float64, len(fs))
	allocs = make([]int64, len(fs))
	for r := 0; r < compareRounds; r++ {
		for i, f := range fs {
			res := testing.Benchmark(f)
			per := float64(res.T.Nanoseconds()) / float64(res.N)
			if r == 0 || per < ns[i] {
				ns[i], allocs[i] = per, res.AllocsPerOp()
			}
		}
	}
	return ns, allocs
}

// TestCompareOTel runs the same traced call with tadpole (into a
// discarding HQ, and into the reference HQ, which parses, reorders and
// checks everything) and with an OpenTelemetry-Go span (SDK provider,
// always sampled, batch processor, no-op exporter), and prints the costs and
// the ratios. Note the batch span processor drops spans when its queue is
// full, while tadpole never drops: its cost includes delivering every event.
func TestCompareOTel(t *testing.T) {
	if testing.Short() {
		t.Skip("side-by-side benchmark")
	}
	ns, allocs := best(BenchmarkUntracedCall, BenchmarkTadpoleTracedCall, BenchmarkTadpoleTracedCallSink,
		BenchmarkOTelTracedCall)
	tp, sink, ot := ns[1], ns[2], ns[3]
	fmt.Fprintf(os.Stdout, "\ntraced call, side by side (best of %d runs; ns/op, allocs/op):\n", compareRounds)
	for i, name := range []string{"untraced", "tadpole Enter/Exit → HQ", "tadpole Enter/Exit → discarding HQ",
		"OpenTelemetry-Go span Start/End"} {
		fmt.Fprintf(os.Stdout, "  %-34s %9.1f ns %4d allocs\n", name, ns[i], allocs[i])
	}
	fmt.Fprintf(os.Stdout, "  ratio OpenTelemetry / tadpole (both exporting nowhere): %.1f×\n", ot/sink)
	fmt.Fprintf(os.Stdout, "  ratio OpenTelemetry / tadpole (tadpole into the reference HQ): %.1f×\n\n", ot/tp)
}
