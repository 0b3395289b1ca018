//go:build cgo

package capi

import (
	"errors"
	"fmt"
	"testing"

	"github.com/tadpole-trace/tadpole/agent"
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
			b = agent.AppendBatchRecord(b, agent.BatchMarker, 0, 0, 0, 0, 1, "key", fmt.Sprint("value ", i))
		} else {
			b = agent.AppendBatchRecord(b, agent.BatchEntry, 0, 0, batchMethod.ID(), 0, 1, "", "")
		}
	}
	return b
}

func TestNextChunk(t *testing.T) {
	ten := batch(10)
	two := len(batch(2))
	three := len(batch(3))
	for _, c := range []struct {
		name string
		b    []byte
		max  int
		want int
	}{
		{"all fit", ten, 100, len(ten)},
		{"exactly", ten, 10, len(ten)},
		{"two", ten, 2, two},
		{"three with a marker", ten, 3, three},
		{"truncated after three", ten[:three+5], 10, three},
		{"malformed first", ten[:5], 10, 5},
		{"empty", nil, 10, 0},
	} {
		if got := nextChunk(c.b, c.max); got != c.want {
			t.Errorf("%s: got %d bytes; want %d", c.name, got, c.want)
		}
	}
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
		{agent.ErrBadBatch, codeInternalErr},
		{errors.New("something else"), codeInternalErr},
	} {
		if got := int(codeOf(c.err)); got != c.want {
			t.Errorf("codeOf(%v) = %d; want %d", c.err, got, c.want)
		}
	}
}

func TestSubmitChunks(t *testing.T) {
	saved := lib.maxBatch.Load()
	defer lib.maxBatch.Store(saved)
	b := batch(100)
	for _, max := range []int32{1, 7, 100, 1000} {
		lib.maxBatch.Store(max)
		if err := submit(1, b); err != nil {
			t.Errorf("max %d: %v", max, err)
		}
	}
	lib.maxBatch.Store(7)
	if err := submit(1, b[:len(b)-3]); !errors.Is(err, agent.ErrBadBatch) {
		t.Errorf("truncated batch: got %v; want ErrBadBatch", err)
	}
}

func TestSubmitAllocs(t *testing.T) {
	b := batch(300)
	saved := lib.maxBatch.Load()
	defer lib.maxBatch.Store(saved)
	for _, max := range []int32{4096, 64} {
		lib.maxBatch.Store(max)
		if n := testing.AllocsPerRun(100, func() { submit(1, b) }); n != 0 {
			t.Errorf("max %d: submit allocates %v times per batch; want 0", max, n)
		}
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

// FuzzNextChunk checks the batch splitter on arbitrary bytes: a chunk is
// never empty nor longer than the batch (so submit always progresses), and a
// valid batch is cut into valid batches of 1 to max whole records that
// together are the batch.
func FuzzNextChunk(f *testing.F) {
	f.Add(batch(10), 3)
	f.Add(batch(10)[:50], 2)
	f.Add([]byte{}, 1)
	f.Add(batch(1), 1)
	f.Add(batch(40), 7)
	f.Fuzz(func(t *testing.T, b []byte, max int) {
		if max < 1 || max > 1<<16 {
			return
		}
		n := nextChunk(b, max)
		if n > len(b) || (n == 0 && len(b) > 0) {
			t.Fatalf("chunk of %d bytes from %d", n, len(b))
		}
		if _, err := agent.SubmitBatch(1, b); err != nil {
			return // SubmitBatch rejects it whole; how it is cut does not matter
		}
		for off := 0; off < len(b); {
			n := nextChunk(b[off:], max)
			chunk := b[off : off+n]
			if _, err := agent.SubmitBatch(1, chunk); err != nil {
				t.Fatalf("chunk at %d (%d bytes) is not a valid batch: %v", off, n, err)
			}
			records := 0
			for r := 0; r < n; records++ {
				r += nextChunk(chunk[r:], 1)
			}
			if records < 1 || records > max {
				t.Fatalf("chunk at %d holds %d records; want 1 to %d", off, records, max)
			}
			off += n
		}
	})
}
