package hq

import (
	"strings"
	"testing"

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

func TestPlainText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"", true},
		{"a", true},
		{"INFO benchmark record", true},
		{strings.Repeat("x", 8), true},
		{strings.Repeat("x", 17), true},
		{"\x01\x7f", true},
		{"nul\x00", false},
		{"\x00", false},
		{strings.Repeat("x", 15) + "\x00", false},
		{"\x00" + strings.Repeat("x", 15), false},
		{strings.Repeat("x", 9) + "\x00" + strings.Repeat("x", 9), false},
		{"välue", false},
		{strings.Repeat("x", 12) + "\xc0\x80", false},
		{strings.Repeat("x", 16) + "\x80", false},
	} {
		if got := plainText([]byte(tc.in)); got != tc.want {
			t.Errorf("plainText(%q) got %v; want %v", tc.in, got, tc.want)
		}
	}
}

// TestPlainMarker checks the framing of plain markers against the full
// parse: the same size and sequence number, and nothing taken that the
// parse would refuse or find incomplete.
func TestPlainMarker(t *testing.T) {
	d := bytefrog.Dialect{Version: bytefrog.Version3}
	long := strings.Repeat("k", bytefrog.MaxStringLen)
	for _, tc := range []struct {
		name  string
		raw   []byte
		plain bool
	}{
		{"log record", bytefrog.AppendMarker(nil, 1, 2, "log:bench.jul", "INFO benchmark record"), true},
		{"same key again", bytefrog.AppendMarker(nil, 1, 3, "log:bench.jul", "WARNING another"), true},
		{"empty", bytefrog.AppendMarker(nil, -1, 1<<31-1, "", ""), true},
		{"longest", bytefrog.AppendMarker(nil, 3, 4, long, long), true},
		{"U+0000 value", bytefrog.AppendMarker(nil, 5, 6, "k", "a\x00b"), false},
		{"non-ASCII key", bytefrog.AppendMarker(nil, 5, 7, "clé", "v"), false},
		{"non-ASCII value", bytefrog.AppendMarker(nil, 5, 8, "k", "välue 😀"), false},
		{"raw NUL in the value", rawMarker("k", "a\x00b"), false},
		{"raw NUL in the key", rawMarker("k\x00", "v"), false},
		{"raw 0x80", rawMarker("log:bench.jul", "\x80"), false},
	} {
		var p chunkParser
		p.lastKey = []byte("log:bench.jul")
		raw := append(tc.raw, 0xEE) // a trailing byte is not taken in
		size, seq := p.plainMarker(raw)
		var m bytefrog.Msg
		n, err := d.Parse(&m, raw)
		switch {
		case !tc.plain && size != 0:
			t.Errorf("%s: plainMarker took %d bytes; want 0 (the full parse decides)", tc.name, size)
		case tc.plain && (err != nil || size != n || seq != m.Seq):
			t.Errorf("%s: plainMarker got size %d, seq %d; want %d, %d (Parse: %v)", tc.name, size, seq, n, m.Seq, err)
		}
		// Every prefix is incomplete: never framed.
		for k := range len(tc.raw) {
			if size, _ := p.plainMarker(tc.raw[:k]); size != 0 {
				t.Fatalf("%s: plainMarker framed %d bytes of a %d-byte prefix", tc.name, size, k)
			}
		}
	}
}
