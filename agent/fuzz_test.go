package agent

import (
	"bytes"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/host"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// FuzzScanBatch feeds arbitrary bytes as a host batch: scanning never
// panics, and a batch it accepts re-encodes record by record to the same
// bytes.
func FuzzScanBatch(f *testing.F) {
	m, e := NewMethod("fuzz/F.scan;1;()V").ID(), NewExceptionType("fuzz.ScanError").ID()
	var b []byte
	b = host.AppendBatchRecord(b, batchName, 0, 0, 0, 0, 1, "worker-1", "")
	b = host.AppendBatchRecord(b, batchEntry, 0, 0, m, 0, 2, "", "")
	b = host.AppendBatchRecord(b, batchThrow, 0, 7, m, e, 3, "", "")
	b = host.AppendBatchRecord(b, batchBubble, batchFlagThrown, 0, m, e, 4, "", "")
	b = host.AppendBatchRecord(b, batchMarker, batchFlagMUTF8, 0, 0, 0, 5, "k", "v\xc0\x80")
	f.Add(b)
	f.Add(b[:batchHeaderSize+3])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := scanBatch(b)
		if err != nil {
			if !errors.Is(err, host.ErrBadBatch) || n != 0 {
				t.Fatalf("scanBatch = %d, %v", n, err)
			}
			return
		}
		var out []byte
		for off := 0; off < len(b); {
			r := b[off:]
			size := recordSize(r)
			l1 := int(r[12]) | int(r[13])<<8
			l2 := int(r[14]) | int(r[15])<<8
			p := r[batchHeaderSize:]
			out = host.AppendBatchRecord(out, r[0], r[1], uint16(r[2])|uint16(r[3])<<8,
				int32(uint32(r[4])|uint32(r[5])<<8|uint32(r[6])<<16|uint32(r[7])<<24),
				int32(uint32(r[8])|uint32(r[9])<<8|uint32(r[10])<<16|uint32(r[11])<<24),
				int64(uint64(r[16])|uint64(r[17])<<8|uint64(r[18])<<16|uint64(r[19])<<24|
					uint64(r[20])<<32|uint64(r[21])<<40|uint64(r[22])<<48|uint64(r[23])<<56),
				string(p[:l1]), string(p[l1:l1+l2]))
			// Padding bytes are not part of the record's meaning.
			copy(out[len(out)-size+batchHeaderSize+l1+l2:], r[batchHeaderSize+l1+l2:size])
			off += size
		}
		if string(out) != string(b) {
			t.Fatalf("re-encoded batch differs:\n%x\n%x", out, b)
		}
	})
}

// FuzzParseOptions: any options string gives a configuration or an error
// that wraps one of the option errors; never a panic.
func FuzzParseOptions(f *testing.F) {
	for _, s := range []string{
		"hq=127.0.0.1:8765,connect_timeout=5s",
		"protocol=4,project_id=42,flavor=codepulse",
		"log=none,log_level=debug,logs=lttng,lttng_port=5345",
		"bogus=1,,=,protocol=",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := DefaultConfig()
		if err := c.ParseOptions(s); err != nil {
			if !errors.Is(err, ErrUnknownOption) && !errors.Is(err, ErrBadOption) {
				t.Fatalf("ParseOptions(%q) = %v", s, err)
			}
			return
		}
		c.Verify()
	})
}

// captureConn is a data connection that keeps what is written to it.
type captureConn struct {
	net.Conn
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *captureConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(b)
}

func (c *captureConn) Close() error { return nil }

func (c *captureConn) SetWriteDeadline(time.Time) error { return nil }

// FuzzHostBatch sends arbitrary host batches through the agent: whatever a
// host hands over, what goes to HQ parses as Bytefrog (modified UTF-8
// included), with one sequenced message per event or marker record.
func FuzzHostBatch(f *testing.F) {
	m, e := NewMethod("fuzz/F.host;1;()V").ID(), NewExceptionType("fuzz.HostError").ID()
	var b []byte
	b = host.AppendBatchRecord(b, batchName, batchFlagMUTF8, 0, 0, 0, 1, "w\xc0\x80", "")
	b = host.AppendBatchRecord(b, batchEntry, 0, 0, m, 0, 2, "", "")
	b = host.AppendBatchRecord(b, batchExit, batchFlagThrown, 9, m, 0, 2, "", "")
	b = host.AppendBatchRecord(b, batchThrow, 0, 7, m, e, 3, "", "")
	b = host.AppendBatchRecord(b, batchMarker, batchFlagMUTF8, 0, 0, 0, 5, "k", "v\xc0\x80\xed\xa0\xbd\xed\xb8\x80")
	b = host.AppendBatchRecord(b, batchMarker, 0, 0, 0, 0, 5, "k\x00", "é\xff")
	b = host.AppendBatchRecord(b, batchMarker, batchFlagMUTF8, 0, 0, 0, 5, "\xc0", "\x00\xf0\x9f\x98\x80")
	b = host.AppendBatchRecord(b, batchEnd, 0, 0, 0, 0, 6, "", "")
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := scanBatch(b); err != nil {
			return
		}
		want := 0
		for off := 0; off < len(b); off += recordSize(b[off:]) {
			if batchKinds[b[off]].sequenced() {
				want++
			}
		}
		c := &captureConn{}
		_, end := pipelineSession(t, 64, 64<<10, c)
		_, err := host.SubmitBatch(1, b)
		end()
		if err != nil {
			t.Fatalf("SubmitBatch of a scanned batch: %v", err)
		}
		d := bytefrog.Dialect{Version: bytefrog.Version1, Flavor: bytefrog.FlavorBytefrog}
		got := 0
		v := bytefrog.NewEventView(c.buf.Bytes(), d)
		for v.Next() {
			if v.Sequenced() {
				got++
			}
		}
		if v.Err() != nil || len(v.Rest()) != 0 {
			t.Fatalf("the agent wrote what HQ cannot parse: %v (%d bytes left)", v.Err(), len(v.Rest()))
		}
		if got != want {
			t.Fatalf("%d sequenced messages for %d records", got, want)
		}
	})
}
