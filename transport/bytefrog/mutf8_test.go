package bytefrog

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

func TestAppendUTF(t *testing.T) {
	tests := []struct {
		name, in string
		want     []byte // body, without the length prefix
	}{
		{"empty", "", nil},
		{"ascii", "abc", []byte("abc")},
		{"NUL", "\x00", []byte{0xC0, 0x80}},
		{"NUL inside", "a\x00b", []byte{'a', 0xC0, 0x80, 'b'}},
		{"2-byte", "é", []byte{0xC3, 0xA9}},
		{"U+0080", "\u0080", []byte{0xC2, 0x80}},
		{"U+07FF", "\u07FF", []byte{0xDF, 0xBF}},
		{"U+0800", "\u0800", []byte{0xE0, 0xA0, 0x80}},
		{"3-byte", "€", []byte{0xE2, 0x82, 0xAC}},
		{"U+FFFF", "\uFFFF", []byte{0xEF, 0xBF, 0xBF}},
		{"U+10000", "\U00010000", []byte{0xED, 0xA0, 0x80, 0xED, 0xB0, 0x80}},
		{"pair", "😀", []byte{0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80}},
		{"U+10FFFF", "\U0010FFFF", []byte{0xED, 0xAF, 0xBF, 0xED, 0xBF, 0xBF}},
		{"invalid byte", "\xFF", []byte{0xEF, 0xBF, 0xBD}},
		{"truncated 2-byte", "a\xC3", []byte{'a', 0xEF, 0xBF, 0xBD}},
		{"surrogate in Go string", "\xED\xA0\x80", []byte{0xEF, 0xBF, 0xBD, 0xEF, 0xBF, 0xBD, 0xEF, 0xBF, 0xBD}},
		{"U+FFFD itself", "\uFFFD", []byte{0xEF, 0xBF, 0xBD}},
		{"mixed", "a\x00é😀", []byte{0x61, 0xC0, 0x80, 0xC3, 0xA9, 0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80}},
	}
	for _, tt := range tests {
		got := AppendUTF([]byte{0xAA}, tt.in)
		want := append(binary.BigEndian.AppendUint16([]byte{0xAA}, uint16(len(tt.want))), tt.want...)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: AppendUTF(%q) = % x; want % x", tt.name, tt.in, got, want)
		}
		if err := ValidUTF(got[3:]); err != nil {
			t.Errorf("%s: ValidUTF(AppendUTF(%q)) = %v; want nil", tt.name, tt.in, err)
		}
	}
}

// checkUTFPrefix checks an encoded writeUTF string: its prefix, its
// validity, its size, and that it decodes to a prefix of full (so no
// character or pair was split).
func checkUTFPrefix(t *testing.T, name string, enc []byte, wantLen int, full string) {
	t.Helper()
	n := int(binary.BigEndian.Uint16(enc))
	if n != len(enc)-u16Size || n != wantLen {
		t.Errorf("%s: prefix %d, body %d bytes; want %d", name, n, len(enc)-u16Size, wantLen)
	}
	if err := ValidUTF(enc[u16Size:]); err != nil {
		t.Errorf("%s: ValidUTF = %v; want nil", name, err)
	}
	if s := String(enc[u16Size:]); !strings.HasPrefix(full, s) {
		t.Errorf("%s: decodes to %d bytes that are not a prefix of the input", name, len(s))
	}
}

func TestAppendUTFTruncates(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantLen int
	}{
		{"ascii exact", strings.Repeat("a", MaxStringLen), MaxStringLen},
		{"ascii over", strings.Repeat("a", MaxStringLen+10), MaxStringLen},
		{"2-byte", strings.Repeat("é", 40000), MaxStringLen - 1},
		{"3-byte exact", strings.Repeat("€", MaxStringLen/3), MaxStringLen},
		{"3-byte over", "a" + strings.Repeat("€", MaxStringLen/3), MaxStringLen - 2},
		{"NUL", "ab" + strings.Repeat("\x00", MaxStringLen), MaxStringLen - 1},
		// 6-byte pairs: the cut lands on each position inside a pair.
		{"pairs 0", strings.Repeat("😀", 11000), 10922 * pairSize},
		{"pairs 1", "a" + strings.Repeat("😀", 11000), 1 + 10922*pairSize},
		{"pairs 2", "ab" + strings.Repeat("😀", 11000), 2 + 10922*pairSize},
		{"pairs 3", "abc" + strings.Repeat("😀", 11000), 3 + 10922*pairSize},
		{"pairs 4", "abcd" + strings.Repeat("😀", 11000), 4 + 10921*pairSize},
		{"pairs 5", "abcde" + strings.Repeat("😀", 11000), 5 + 10921*pairSize},
		{"invalid bytes", strings.Repeat("\xFF", 30000), (MaxStringLen / 3) * 3},
	}
	for _, tt := range tests {
		got := AppendUTF(nil, tt.in)
		checkUTFPrefix(t, tt.name, got, tt.wantLen, string([]rune(tt.in)))
	}
}

func TestAppendUTFBytes(t *testing.T) {
	pairs := func(lead int) []byte {
		b := bytes.Repeat([]byte{'x'}, lead)
		for len(b) < MaxStringLen+pairSize {
			b = append(b, 0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80)
		}
		return b
	}
	tests := []struct {
		name    string
		in      []byte
		wantLen int
	}{
		{"short", []byte("abc"), 3},
		{"exact", bytes.Repeat([]byte{'a'}, MaxStringLen), MaxStringLen},
		{"ascii over", bytes.Repeat([]byte{'a'}, MaxStringLen+1), MaxStringLen},
		{"2-byte", bytes.Repeat([]byte{0xC3, 0xA9}, 40000), MaxStringLen - 1},
		{"3-byte", bytes.Repeat([]byte{0xE2, 0x82, 0xAC}, 30000), MaxStringLen},
		{"3-byte shifted", append([]byte{'a'}, bytes.Repeat([]byte{0xE2, 0x82, 0xAC}, 30000)...), MaxStringLen - 2},
		// 65535 = 6*10922 + 3: with lead bytes 0..5 the cut falls between
		// the halves of a pair, inside the low half or inside the high half.
		{"cut between halves", pairs(0), 10922 * pairSize},
		{"cut in low half 1", pairs(1), 1 + 10922*pairSize},
		{"cut in low half 2", pairs(2), 2 + 10922*pairSize},
		{"cut after pair", pairs(3), 3 + 10922*pairSize},
		{"cut in high half 1", pairs(4), 4 + 10921*pairSize},
		{"cut in high half 2", pairs(5), 5 + 10921*pairSize},
		{"lone high surrogates", bytes.Repeat([]byte{0xED, 0xA0, 0xBD}, 30000), MaxStringLen},
	}
	for _, tt := range tests {
		got := AppendUTFBytes(nil, tt.in)
		checkUTFPrefix(t, tt.name, got, tt.wantLen, String(tt.in))
		if !bytes.Equal(got[u16Size:], tt.in[:tt.wantLen]) {
			t.Errorf("%s: body is not a prefix of the input", tt.name)
		}
	}
	// Not modified UTF-8 at all: cut at the limit.
	junk := bytes.Repeat([]byte{0x80}, MaxStringLen+5)
	if got := AppendUTFBytes(nil, junk); len(got) != u16Size+MaxStringLen {
		t.Errorf("continuation bytes only: got %d bytes; want %d", len(got), u16Size+MaxStringLen)
	}
}

func TestValidUTF(t *testing.T) {
	valid := [][]byte{
		nil,
		[]byte("plain ascii, long enough to use the word loop"),
		{0xC0, 0x80},
		{'a', 0xC0, 0x80, 'b'},
		{0xC2, 0x80},
		{0xC3, 0xA9},
		{0xDF, 0xBF},
		{0xE0, 0xA0, 0x80},
		{0xE2, 0x82, 0xAC},
		{0xEF, 0xBF, 0xBF},
		{0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80}, // pair
		{0xED, 0xA0, 0x80},                   // lone high surrogate
		{0xED, 0xB0, 0x80},                   // lone low surrogate
		{0xED, 0xB8, 0x80, 0xED, 0xA0, 0xBD}, // low before high
		{0xED, 0x9F, 0xBF},                   // U+D7FF
	}
	for _, b := range valid {
		if err := ValidUTF(b); err != nil {
			t.Errorf("ValidUTF(% x) = %v; want nil", b, err)
		}
	}
	invalid := [][]byte{
		{0x00},
		[]byte("raw NUL in a longer string\x00 here"),
		{0x80},
		{0xBF},
		{'a', 0x80, 'b'},
		{0xC0},
		{0xC0, 0x81},       // overlong U+0001
		{0xC1, 0xBF},       // overlong U+007F
		{0xC2},             // truncated
		{0xC2, 0x41},       // bad continuation
		{0xE0, 0x80, 0x80}, // overlong U+0000
		{0xE0, 0x9F, 0xBF}, // overlong U+07FF
		{0xE2, 0x82},       // truncated
		{0xE2},
		{0xE2, 0x28, 0xA1},
		{0xE2, 0x82, 0x28},
		{0xED, 0xA0, 0xBD, 0xED, 0xB8}, // truncated low half
		{0xF0, 0x9F, 0x98, 0x80},       // 4-byte form
		{0xF4, 0x8F, 0xBF, 0xBF},
		{0xF8, 0x88, 0x80, 0x80, 0x80},
		{0xFE},
		{0xFF},
	}
	for _, b := range invalid {
		if err := ValidUTF(b); err != ErrInvalidUTF {
			t.Errorf("ValidUTF(% x) = %v; want ErrInvalidUTF", b, err)
		}
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		in   []byte
		want string
	}{
		{nil, ""},
		{[]byte("abc"), "abc"},
		{[]byte("héllo €"), "héllo €"},
		{[]byte{0xC0, 0x80}, "\x00"},
		{[]byte{'a', 0xC0, 0x80, 0xC3, 0xA9, 0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80}, "a\x00é😀"},
		{[]byte{0xED, 0xAF, 0xBF, 0xED, 0xBF, 0xBF}, "\U0010FFFF"},
		{[]byte{0xED, 0xA0, 0x80}, "\uFFFD"},                                      // lone high
		{[]byte{0xED, 0xB0, 0x80, 'x'}, "\uFFFDx"},                                // lone low
		{[]byte{0xED, 0xA0, 0xBD, 0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80}, "\uFFFD😀"}, // high, then pair
		{[]byte{0xED, 0xB8, 0x80, 0xED, 0xA0, 0xBD}, "\uFFFD\uFFFD"},              // reversed pair
		{[]byte{0x00}, "\x00"},                                       // raw NUL passes
		{[]byte{0xFF, 'a'}, "\uFFFDa"},                               // invalid byte
		{[]byte{0xC0, 0x81}, "\uFFFD\uFFFD"},                         // overlong
		{[]byte{0xE2, 0x82}, "\uFFFD\uFFFD"},                         // truncated
		{[]byte{0xF0, 0x9F, 0x98, 0x80}, "\uFFFD\uFFFD\uFFFD\uFFFD"}, // 4-byte form
	}
	for _, tt := range tests {
		if got := String(tt.in); got != tt.want {
			t.Errorf("String(% x) = %q; want %q", tt.in, got, tt.want)
		}
		if got := AppendString([]byte("<"), tt.in); string(got) != "<"+tt.want {
			t.Errorf("AppendString(% x) = %q; want %q", tt.in, got, "<"+tt.want)
		}
	}
}

func TestStringAllocs(t *testing.T) {
	ascii := []byte("com/example/Foo.bar;1;(Ljava/lang/String;)V")
	utf := []byte("com/exämple/Föö.bar;1;()V")
	mutf := AppendUTF(nil, "thread \x00 😀")[u16Size:]
	for _, in := range [][]byte{ascii, utf, mutf} {
		if n := testing.AllocsPerRun(100, func() { _ = String(in) }); n > 1 {
			t.Errorf("String(%q): %v allocations; want ≤ 1", in, n)
		}
	}
	buf := make([]byte, 0, 128)
	if n := testing.AllocsPerRun(100, func() { buf = AppendString(buf[:0], mutf) }); n != 0 {
		t.Errorf("AppendString: %v allocations; want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { buf = AppendUTF(buf[:0], "com/example/Foo") }); n != 0 {
		t.Errorf("AppendUTF: %v allocations; want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { buf = AppendUTF(buf[:0], "a\x00é😀") }); n != 0 {
		t.Errorf("AppendUTF (non-ASCII): %v allocations; want 0", n)
	}
}

func TestMUTFFromUTF8(t *testing.T) {
	tests := []struct{ in, want []byte }{
		{[]byte("abc"), []byte("abc")},
		{[]byte("a\x00b"), []byte{'a', 0xC0, 0x80, 'b'}},
		{[]byte("😀"), []byte{0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80}},
		// Already modified UTF-8: unchanged.
		{[]byte{0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80}, []byte{0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80}},
		{[]byte{0xC0, 0x80}, []byte{0xC0, 0x80}},
		// Not a 4-byte sequence: copied.
		{[]byte{0xF0, 'a'}, []byte{0xF0, 'a'}},
	}
	for _, tt := range tests {
		if got := mutfFromUTF8(nil, tt.in); !bytes.Equal(got, tt.want) {
			t.Errorf("mutfFromUTF8(% x) = % x; want % x", tt.in, got, tt.want)
		}
		// needsMUTF may be true for input that turns out unchanged.
		if !needsMUTF(tt.in) && !bytes.Equal(tt.in, tt.want) {
			t.Errorf("needsMUTF(% x) = %v", tt.in, needsMUTF(tt.in))
		}
	}
}

// TestPlainASCIIBytes checks the word-at-a-time test against the
// definition, for every length up to three words and a bad byte at every
// position.
func TestPlainASCIIBytes(t *testing.T) {
	naive := func(b []byte) bool {
		for _, c := range b {
			if c == 0 || c >= 0x80 {
				return false
			}
		}
		return true
	}
	for n := 0; n <= 24; n++ {
		b := []byte(strings.Repeat("a", n))
		if got := plainASCIIBytes(b); got != true {
			t.Errorf("len %d all ASCII: got %v; want true", n, got)
		}
		for i := 0; i < n; i++ {
			for _, bad := range []byte{0, 0x80, 0xC0, 0xFF, 0x7F, 0x01} {
				c := append([]byte(nil), b...)
				c[i] = bad
				if got, want := plainASCIIBytes(c), naive(c); got != want {
					t.Errorf("len %d, %#x at %d: got %v; want %v", n, bad, i, got, want)
				}
			}
		}
	}
}

// TestAsciiBits: asciiBits agrees with plainASCII on every length up to 40
// with one byte of each class (NUL, 0x01, 0x7F, 0x80, 0xC0, 0xFF) at every
// position, so a marker's strings are checked in full when not ASCII.
func TestAsciiBits(t *testing.T) {
	for n := 0; n <= 40; n++ {
		for pos := -1; pos < n; pos++ {
			for _, c := range []byte{0, 1, 0x7F, 0x80, 0xC0, 0xFF} {
				b := make([]byte, n)
				for i := range b {
					b[i] = 'a' + byte(i%26)
				}
				if pos >= 0 {
					b[pos] = c
				}
				if got, want := asciiBits(b)&asciiMask == 0, plainASCII(b); got != want {
					t.Fatalf("%d bytes, %#x at %d: asciiBits says ASCII %v; want %v", n, c, pos, got, want)
				}
			}
		}
	}
}
