//go:build cgo

package capi

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/tadpole-trace/tadpole/agent"
	"github.com/tadpole-trace/tadpole/internal/host"
	"github.com/tadpole-trace/tadpole/internal/testhq"
)

func TestLevelNameOf(t *testing.T) {
	for _, c := range []struct {
		domain string
		level  int32
		want   string
	}{
		{"jul", 1000, "SEVERE"},
		{"jul", 950, "WARNING"},
		{"jul", 900, "WARNING"},
		{"jul", 800, "INFO"},
		{"jul", 700, "CONFIG"},
		{"jul", 500, "FINE"},
		{"jul", 300, "FINEST"},
		{"jul", 5, "FINEST"},
		{"jul", 1 << 30, "SEVERE"},
		{"log4j", 40000, "ERROR"},
		{"log4j", 5000, "TRACE"},
		{"python", 30, "WARNING"},
		{"python", 55, "CRITICAL"},
		{"other", 800, "INFO"},
	} {
		if got := levelNameOf(c.domain, c.level); got != c.want {
			t.Errorf("levelNameOf(%q, %d) = %q; want %q", c.domain, c.level, got, c.want)
		}
	}
}

// batch builds n records: entries, and a marker every third record.
// batchMethod is the method of batch's entries: a batch may only name
// registered methods.
var batchMethod = agent.NewMethod("capi/T.batch;1;()V")

func batch(n int) []byte {
	var b []byte
	for i := range n {
		if i%3 == 2 {
			b = host.AppendBatchRecord(b, host.BatchMarker, 0, 0, 0, 0, 1, "key", fmt.Sprint("value ", i))
		} else {
			b = host.AppendBatchRecord(b, host.BatchEntry, 0, 0, batchMethod.ID(), 0, 1, "", "")
		}
	}
	return b
}

func TestCodeOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, codeOK},
		{fmt.Errorf("%w: x", agent.ErrBadOption), codeInvalid},
		{errors.Join(fmt.Errorf("%w \"x\"", agent.ErrUnknownOption), errors.New("other")), codeInvalid},
		{fmt.Errorf("wrapped: %w", agent.ErrNoHQ), codeRefused},
		{agent.ErrRejected, codeRefused},
		{agent.ErrStartTimeout, codeTimedOut},
		{agent.ErrProtocol, codeProtocol},
		{agent.ErrAlreadyRunning, codeAlready},
		{ErrAlreadyStarted, codeAlready},
		{ErrNotStarted, codeNotTracing},
		{ErrTooManyLoggers, codeNoSpace},
		{ErrBadHandle, codeBadHandle},
		{host.ErrBadBatch, codeInternalErr},
		{errors.New("something else"), codeInternalErr},
	} {
		if got := int(codeOf(c.err)); got != c.want {
			t.Errorf("codeOf(%v) = %d; want %d", c.err, got, c.want)
		}
	}
}

func TestSubmitRejects(t *testing.T) {
	b := batch(100)
	if err := submit(1, b); err != nil {
		t.Errorf("valid batch: %v", err)
	}
	if err := submit(1, b[:len(b)-3]); !errors.Is(err, host.ErrBadBatch) {
		t.Errorf("truncated batch: got %v; want ErrBadBatch", err)
	}
}

func TestSubmitAllocs(t *testing.T) {
	b := batch(300)
	if n := testing.AllocsPerRun(100, func() { submit(1, b) }); n != 0 {
		t.Errorf("submit allocates %v times per batch; want 0", n)
	}
}

// BenchmarkSubmit measures the C API's hand-over of a full thread buffer
// when no run is on (the batch is validated, then dropped).
func BenchmarkSubmit(b *testing.B) {
	buf := batch(1365)
	b.ReportAllocs()
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		submit(1, buf)
	}
}

// TestProcs: the procs option sets the library runtime's GOMAXPROCS for
// the run, and its absence gives back the runtime's own choice.
func TestProcs(t *testing.T) {
	h := testhq.Start(t, nil)
	base := "hq=" + h.Addr() + ",lttng=off,log=none"
	for _, c := range []struct {
		opts string
		want int
	}{
		{base + ",procs=1", 1},
		{base + ",procs=3", 3},
		{base, runtimeProcs},
	} {
		if err := start(c.opts); err != nil {
			t.Fatalf("start(%q): %v", c.opts, err)
		}
		got := runtime.GOMAXPROCS(0)
		if err := stop(); err != nil {
			t.Fatalf("stop after %q: %v", c.opts, err)
		}
		if got != c.want {
			t.Errorf("start(%q): GOMAXPROCS %d; want %d", c.opts, got, c.want)
		}
	}
}
