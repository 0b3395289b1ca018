package hq

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// rawMarker is a Marker with key and value as they are, valid or not.
func rawMarker(key, value string) []byte {
	b := []byte{byte(bytefrog.MsgMarker), 0, 0, 0, 5, 0, 0, 0, 9}
	b = append(b, byte(len(key)>>8), byte(len(key)))
	b = append(b, key...)
	b = append(b, byte(len(value)>>8), byte(len(value)))
	return append(b, value...)
}

// TestParserMarkers checks the connection parser's framing of markers
// against the full parse: the same sequence number for the ones Parse
// takes, an error at the marker's stream offset for the others, and
// nothing framed from an incomplete one.
func TestParserMarkers(t *testing.T) {
	d := bytefrog.Dialect{Version: bytefrog.Version3}
	long := strings.Repeat("k", bytefrog.MaxStringLen)
	lead := bytefrog.AppendMethodEntry(nil, 1, 1, 2, 3)
	for _, tc := range []struct {
		name string
		raw  []byte
	}{
		{"log record", bytefrog.AppendMarker(nil, 1, 2, "log:bench.jul", "INFO benchmark record")},
		{"empty", bytefrog.AppendMarker(nil, -1, 1<<31-1, "", "")},
		{"longest", bytefrog.AppendMarker(nil, 3, 4, long, long)},
		{"U+0000 value", bytefrog.AppendMarker(nil, 5, 6, "k", "a\x00b")},
		{"non-ASCII key", bytefrog.AppendMarker(nil, 5, 7, "clé", "v")},
		{"non-ASCII value", bytefrog.AppendMarker(nil, 5, 8, "k", "välue 😀")},
		{"raw NUL in the value", rawMarker("k", "a\x00b")},
		{"raw NUL in the key", rawMarker("k\x00", "v")},
		{"raw 0x80", rawMarker("log:bench.jul", "\x80")},
	} {
		var m bytefrog.Msg
		_, perr := d.Parse(&m, tc.raw)
		for _, cut := range []int{len(tc.raw), len(tc.raw) - 1, len(tc.raw) / 2, 1} {
			p := newChunkParser(d, 1)
			var ev []event
			var err error
			p.feed(append(lead[:len(lead):len(lead)], tc.raw[:cut]...), func(u *unit) {
				ev = append(ev, u.ev...)
				err = u.perr
				u.s.unref()
			})
			pending := p.pending()
			p.close()
			switch {
			case cut < len(tc.raw):
				if err != nil || len(ev) != 1 || pending != cut {
					t.Errorf("%s cut to %d bytes: %d events, %d pending, %v; want the entry, %d pending", tc.name, cut, len(ev), pending, err, cut)
				}
			case perr != nil:
				want := fmt.Sprintf("at stream offset %d: %v", len(lead), perr)
				if err == nil || err.Error() != want || !errors.Is(err, bytefrog.ErrInvalidUTF) || len(ev) != 1 {
					t.Errorf("%s: %d events, %v; want 1, %s", tc.name, len(ev), err, want)
				}
			default:
				if err != nil || len(ev) != 2 || ev[1].Seq != m.Seq || ev[1].Off != uint32(len(lead)) {
					t.Errorf("%s: %+v, %v; want seq %d at %d", tc.name, ev, err, m.Seq, len(lead))
				}
			}
		}
	}
}

// BenchmarkParser measures a data connection's reader without the socket:
// framing, checking and indexing the messages of BenchmarkReorder's
// traffic as it arrives in reads of 64 KiB.
func BenchmarkParser(b *testing.B) {
	chunks, n := hqtest.Generate(hqtest.Workload{Events: 1_000_000, Methods: 300, Threads: 8, Chunk: 4096, Seed: 7})
	var data []byte
	for _, c := range chunks {
		data = append(data, c...)
	}
	d := bytefrog.Dialect{Version: bytefrog.Version1}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		p := newChunkParser(d, 1)
		events := 0
		for off := 0; off < len(data); off += 64 << 10 {
			p.feed(data[off:min(off+64<<10, len(data))], func(u *unit) {
				events += len(u.ev)
				u.s.unref()
			})
		}
		p.close()
		if events != n || p.err != nil {
			b.Fatalf("%d events, %v; want %d", events, p.err, n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n)/float64(b.N), "ns/event")
}
