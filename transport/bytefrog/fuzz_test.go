package bytefrog

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf16"
	"unicode/utf8"
)

var genCorpus = flag.Bool("bytefrog.gencorpus", false, "rewrite testdata/fuzz seed files of the message codec from the vectors")

// fuzzMaxConfig keeps fuzzed configuration lengths small.
const fuzzMaxConfig = 1 << 14

func fuzzDialect(version uint8, codePulse bool) Dialect {
	d := Dialect{Version: version, MaxConfigSize: fuzzMaxConfig}
	if codePulse {
		d.Flavor = FlavorCodePulse
	}
	return d
}

// codecFuzzTargets are the fuzz targets whose seed files come from the
// vectors.
var codecFuzzTargets = []string{"FuzzParse", "FuzzDecoder", "FuzzUTF", "FuzzAppendUTF", "FuzzEventView"}

// fuzzSeeds derives the seed corpus of each fuzz target from the vectors:
// target → file name → arguments.
func fuzzSeeds(tb testing.TB) map[string]map[string][]any {
	seeds := map[string]map[string][]any{}
	for _, t := range codecFuzzTargets {
		seeds[t] = map[string][]any{}
	}
	cases := goldenMsgCases()
	var streamBF, streamCP, dataBF, dataCP []byte
	v3 := Dialect{Version: Version3}
	for i, v := range loadMsgVectors(tb) {
		name := fmt.Sprintf("vector-%02d-%s", i, slug(v.title))
		switch v.title {
		case vectorJavaPayload:
			continue
		case vectorMUTF:
			seeds["FuzzUTF"][name] = []any{v.data[u16Size:], uint16(0)}
			seeds["FuzzAppendUTF"][name] = []any{String(v.data[u16Size:]), uint16(1)}
			continue
		}
		c := cases[v.title]
		cp := c.d.Flavor == FlavorCodePulse
		seeds["FuzzParse"][name] = []any{v.data, c.d.Version, cp}
		if v3.DataMsg(c.msg.Type) {
			if c.msg.Type != MsgMethodExit || !cp {
				dataBF = append(dataBF, v.data...)
			}
			if c.msg.Type != MsgMethodExit || cp {
				dataCP = append(dataCP, v.data...)
			}
		}
		if c.msg.Type == MsgMethodExit || c.msg.Type == MsgConfiguration {
			if cp {
				streamCP = append(streamCP, v.data...)
			} else {
				streamBF = append(streamBF, v.data...)
			}
		} else {
			streamBF = append(streamBF, v.data...)
			streamCP = append(streamCP, v.data...)
		}
		if len(c.msg.Text) > 0 {
			seeds["FuzzUTF"][name] = []any{c.msg.Text, uint16(0)}
			seeds["FuzzAppendUTF"][name] = []any{string(c.msg.Text), uint16(1)}
		}
	}
	seeds["FuzzDecoder"]["vectors-bytefrog-v1"] = []any{streamBF, Version1, false}
	seeds["FuzzDecoder"]["vectors-codepulse-v2"] = []any{streamCP, Version2, true}
	seeds["FuzzEventView"]["data-bytefrog-v3"] = []any{dataBF, Version3, false}
	seeds["FuzzEventView"]["data-codepulse-v4"] = []any{dataCP, Version4, true}
	seeds["FuzzEventView"]["data-bytefrog-v1"] = []any{dataBF, Version1, false}
	seeds["FuzzEventView"]["vectors-bytefrog-v1"] = []any{streamBF, Version1, false}
	return seeds
}

func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 48 {
			break
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// corpusFile renders arguments in the format of `go test fuzz v1`.
func corpusFile(args []any) []byte {
	var b bytes.Buffer
	b.WriteString("go test fuzz v1\n")
	for _, a := range args {
		switch a := a.(type) {
		case []byte:
			fmt.Fprintf(&b, "[]byte(%q)\n", a)
		case string:
			fmt.Fprintf(&b, "string(%q)\n", a)
		case uint8:
			fmt.Fprintf(&b, "byte(%q)\n", a)
		case uint16:
			fmt.Fprintf(&b, "uint16(%d)\n", a)
		case bool:
			fmt.Fprintf(&b, "bool(%v)\n", a)
		default:
			panic(fmt.Sprintf("corpusFile: %T", a))
		}
	}
	return b.Bytes()
}

// TestFuzzCorpusFromVectors checks that testdata/fuzz holds the seed files
// derived from the vectors; run with -bytefrog.gencorpus to rewrite them.
func TestFuzzCorpusFromVectors(t *testing.T) {
	for target, files := range fuzzSeeds(t) {
		dir := filepath.Join("testdata", "fuzz", target)
		if *genCorpus {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for name, args := range files {
			path := filepath.Join(dir, name)
			want := corpusFile(args)
			if *genCorpus {
				if err := os.WriteFile(path, want, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s: missing or stale (err %v); run go test -run TestFuzzCorpusFromVectors -bytefrog.gencorpus", path, err)
			}
		}
	}
}

// isCodecError reports whether err wraps one of the decoding sentinels.
func isCodecError(err error) bool {
	for _, s := range []error{ErrUnknownType, ErrTooLarge, ErrInvalidUTF, ErrBadConfig, ErrVersion} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// skippable reports whether a decoding error leaves the stream in sync.
func skippable(err error) bool {
	return errors.Is(err, ErrInvalidUTF) || errors.Is(err, ErrBadConfig)
}

func FuzzParse(f *testing.F) {
	f.Add([]byte{}, Version1, false)
	f.Add([]byte{0x01, 0x00, 0x00, 0x00, 0x02, 0xac, 0xed}, Version1, false)
	f.Add([]byte{0x32, 0, 0, 0, 1, 0, 0, 0, 2, 0, 1, 0xC0, 0, 2, 0xC0, 0x80}, Version4, true)
	f.Fuzz(func(t *testing.T, data []byte, version uint8, codePulse bool) {
		d := fuzzDialect(version, codePulse)
		var m Msg
		n, err := d.Parse(&m, data)
		if err == ErrShort {
			if n != 0 {
				t.Fatalf("ErrShort with n=%d", n)
			}
			return
		}
		if n < 0 || n > len(data) {
			t.Fatalf("n=%d of %d bytes, err %v", n, len(data), err)
		}
		if err != nil {
			if !isCodecError(err) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			if n > 0 && (!skippable(err) || !bytes.Equal(m.Raw, data[:n])) {
				t.Fatalf("framed error %v: n=%d, Raw % x", err, n, m.Raw)
			}
			return
		}
		if n == 0 || !bytes.Equal(m.Raw, data[:n]) || m.Type != MsgType(data[0]) {
			t.Fatalf("n=%d, type %v, Raw % x", n, m.Type, m.Raw)
		}
		for _, k := range []int{0, n / 2, n - 1} {
			if k2, err := d.Parse(&Msg{}, data[:k]); err != ErrShort || k2 != 0 {
				t.Fatalf("prefix of %d of %d bytes: got %d, %v; want ErrShort", k, n, k2, err)
			}
		}
		enc, err := AppendMsg(nil, d, &m)
		if err != nil {
			t.Fatalf("AppendMsg(%+v): %v", m, err)
		}
		var m2 Msg
		n2, err := d.Parse(&m2, enc)
		if err != nil || n2 != len(enc) || !sameMsg(&m, &m2) {
			t.Fatalf("round trip: got n=%d/%d, %v\n%+v\nwant\n%+v", n2, len(enc), err, m2, m)
		}
		// Apart from configurations (Java serialization has several forms
		// for one value) and the Code Pulse flag (any non-zero byte is
		// true), encoding is the exact inverse of decoding.
		flagged := m.Type == MsgMethodExit && d.Flavor == FlavorCodePulse && data[offField4] > 1
		if m.Type != MsgConfiguration && !flagged && !bytes.Equal(enc, data[:n]) {
			t.Fatalf("re-encoded % x; read % x", enc, data[:n])
		}
	})
}

// parsedStep is one result of reading a stream.
type parsedStep struct {
	typ MsgType
	raw string
	err string // error class
}

func errClass(err error) string {
	switch {
	case err == nil:
		return ""
	case err == io.EOF:
		return "EOF"
	case errors.Is(err, ErrTruncated):
		return "truncated"
	}
	for _, s := range []error{ErrUnknownType, ErrTooLarge, ErrInvalidUTF, ErrBadConfig, ErrVersion} {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	return "other: " + err.Error()
}

// parseSteps reads data with Parse alone, as a Decoder should.
func parseSteps(d Dialect, data []byte) []parsedStep {
	var out []parsedStep
	for off := 0; ; {
		var m Msg
		n, err := d.Parse(&m, data[off:])
		switch {
		case err == nil:
			out = append(out, parsedStep{m.Type, string(m.Raw), ""})
			off += n
			continue
		case err == ErrShort && off == len(data):
			return append(out, parsedStep{err: "EOF"})
		case err == ErrShort:
			return append(out, parsedStep{err: "truncated"})
		case n > 0:
			out = append(out, parsedStep{m.Type, string(m.Raw), errClass(err)})
			off += n
			continue
		}
		return append(out, parsedStep{err: errClass(err)})
	}
}

// decodeSteps reads data with a Decoder fed one byte at a time, and also
// returns the messages it decoded.
func decodeSteps(t *testing.T, d Dialect, r io.Reader, limit int) ([]parsedStep, []Msg) {
	var (
		out  []parsedStep
		msgs []Msg
	)
	dec := NewDecoder(r, d)
	for range limit {
		var m Msg
		err := dec.Next(&m)
		if err == nil {
			out = append(out, parsedStep{m.Type, string(m.Raw), ""})
			m.Text, m.Value, m.Raw = bytes.Clone(m.Text), bytes.Clone(m.Value), nil
			msgs = append(msgs, m)
			continue
		}
		if skippable(err) {
			out = append(out, parsedStep{m.Type, string(m.Raw), errClass(err)})
			continue
		}
		return append(out, parsedStep{err: errClass(err)}), msgs
	}
	t.Fatalf("no end after %d messages", limit)
	return nil, nil
}

func FuzzDecoder(f *testing.F) {
	f.Add([]byte{0x14}, Version1, false)
	f.Add(append(AppendMarker(nil, 1, 2, "k", "v"), 0x63, 0x00, 0x01, 0xFF, 0x02), Version1, false)
	f.Fuzz(func(t *testing.T, data []byte, version uint8, codePulse bool) {
		d := fuzzDialect(version, codePulse)
		want := parseSteps(d, data)
		got, msgs := decodeSteps(t, d, iotest.OneByteReader(bytes.NewReader(data)), len(data)+2)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("Decoder read\n%v\nParse read\n%v", got, want)
		}
		got2, _ := decodeSteps(t, d, bytes.NewReader(data), len(data)+2)
		if fmt.Sprint(got2) != fmt.Sprint(want) {
			t.Fatalf("Decoder over a whole buffer read\n%v\nParse read\n%v", got2, want)
		}
		// Re-encode what was decoded and read it again.
		var enc []byte
		for i := range msgs {
			var err error
			if enc, err = AppendMsg(enc, d, &msgs[i]); err != nil {
				t.Fatalf("AppendMsg(%+v): %v", msgs[i], err)
			}
		}
		_, again := decodeSteps(t, d, bytes.NewReader(enc), len(enc)+2)
		if len(again) != len(msgs) {
			t.Fatalf("re-read %d messages; want %d", len(again), len(msgs))
		}
		for i := range msgs {
			if !sameMsg(&again[i], &msgs[i]) {
				t.Fatalf("message %d: re-read %+v; want %+v", i, again[i], msgs[i])
			}
		}
	})
}

// refUnits decodes modified UTF-8 into UTF-16 code units the way
// DataInputStream.readUTF does, but also rejecting what ValidUTF rejects
// (raw 00, overlong forms other than C0 80).
func refUnits(b []byte) ([]uint16, bool) {
	var u []uint16
	for i := 0; i < len(b); {
		c := int(b[i])
		switch c >> 4 {
		case 0, 1, 2, 3, 4, 5, 6, 7:
			if c == 0 {
				return nil, false
			}
			u = append(u, uint16(c))
			i++
		case 12, 13:
			if i+1 >= len(b) || b[i+1]&0xC0 != 0x80 {
				return nil, false
			}
			v := (c&0x1F)<<6 | int(b[i+1]&0x3F)
			if v < 0x80 && !(c == 0xC0 && b[i+1] == 0x80) {
				return nil, false
			}
			u = append(u, uint16(v))
			i += 2
		case 14:
			if i+2 >= len(b) || b[i+1]&0xC0 != 0x80 || b[i+2]&0xC0 != 0x80 {
				return nil, false
			}
			v := (c&0x0F)<<12 | int(b[i+1]&0x3F)<<6 | int(b[i+2]&0x3F)
			if v < 0x800 {
				return nil, false
			}
			u = append(u, uint16(v))
			i += 3
		default:
			return nil, false
		}
	}
	return u, true
}

// refEncode encodes UTF-16 code units as writeUTF does (no prefix).
func refEncode(units []uint16) []byte {
	var b []byte
	for _, c := range units {
		switch {
		case c >= 1 && c <= 0x7F:
			b = append(b, byte(c))
		case c <= 0x7FF:
			b = append(b, byte(0xC0|c>>6), byte(0x80|c&0x3F))
		default:
			b = append(b, byte(0xE0|c>>12), byte(0x80|(c>>6)&0x3F), byte(0x80|c&0x3F))
		}
	}
	return b
}

// hasLoneSurrogate reports whether units has a surrogate outside a pair.
func hasLoneSurrogate(units []uint16) bool {
	for i := 0; i < len(units); i++ {
		switch c := units[i]; {
		case c >= surr1 && c < surr2:
			if i+1 < len(units) && units[i+1] >= surr2 && units[i+1] < surr3 {
				i++
				continue
			}
			return true
		case c >= surr2 && c < surr3:
			return true
		}
	}
	return false
}

// FuzzUTF checks the modified UTF-8 decoders against a reference decoder;
// pad ASCII bytes put in front of data move it across the MaxStringLen cut
// of AppendUTFBytes while corpus entries stay small.
func FuzzUTF(f *testing.F) {
	f.Add([]byte{0xED, 0xA0, 0xBD, 0xED, 0xB8}, uint16(0))
	f.Add([]byte{0xC0, 0x80, 0x00, 0xF0, 0x9F, 0x98, 0x80}, uint16(0))
	f.Add([]byte{0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80, 0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80}, uint16(MaxStringLen-7))
	f.Fuzz(func(t *testing.T, data []byte, pad uint16) {
		units, ok := refUnits(data)
		err := ValidUTF(data)
		if (err == nil) != ok || (err != nil && err != ErrInvalidUTF) {
			t.Fatalf("ValidUTF(% x) = %v; reference decoder says valid=%v", data, err, ok)
		}
		s := String(data)
		if got := string(AppendString(nil, data)); got != s {
			t.Fatalf("AppendString = %q; String = %q", got, s)
		}
		if !utf8.ValidString(s) {
			t.Fatalf("String(% x) = %q is not valid UTF-8", data, s)
		}
		checkAppendUTFBytes(t, data, int(pad), ok)
		if !ok {
			return
		}
		if want := string(utf16.Decode(units)); s != want {
			t.Fatalf("String(% x) = %q; want %q", data, s, want)
		}
		if !bytes.Equal(refEncode(units), data) {
			t.Fatalf("reference re-encoding differs: not canonical input was accepted")
		}
		if !hasLoneSurrogate(units) && len(data) <= MaxStringLen {
			if enc := AppendUTF(nil, s); !bytes.Equal(enc[u16Size:], data) {
				t.Fatalf("AppendUTF(String(% x)) = % x", data, enc)
			}
		}
	})
}

// checkAppendUTFBytes writes pad bytes of 'a' then data with
// AppendUTFBytes: the body must be a prefix of the input, cut only when
// needed, and (for valid input) cut on a character and pair boundary.
func checkAppendUTFBytes(t *testing.T, data []byte, pad int, valid bool) {
	if pad+len(data) <= MaxStringLen {
		pad = 0 // no cut either way; keep the run cheap
	}
	in := append(bytes.Repeat([]byte{'a'}, pad), data...)
	enc := AppendUTFBytes([]byte{0xAA}, in)[1:]
	body := enc[u16Size:]
	if int(enc[0])<<8|int(enc[1]) != len(body) || !bytes.HasPrefix(in, body) {
		t.Fatalf("AppendUTFBytes: prefix % x, %d bytes, not a prefix of the input", enc[:u16Size], len(body))
	}
	if len(in) <= MaxStringLen {
		if len(body) != len(in) {
			t.Fatalf("AppendUTFBytes cut %d bytes to %d", len(in), len(body))
		}
		return
	}
	if len(body) > MaxStringLen || len(body) <= MaxStringLen-pairSize {
		t.Fatalf("AppendUTFBytes cut %d bytes to %d", len(in), len(body))
	}
	if valid && (ValidUTF(body) != nil || !strings.HasPrefix(String(in), String(body))) {
		t.Fatalf("AppendUTFBytes split a character or a pair at %d", len(body))
	}
}

// FuzzAppendUTF checks the encoder against a reference; the string is
// repeated rep times (at most MaxStringLen+pairSize bytes in all) so that
// small corpus entries reach the truncation limit.
func FuzzAppendUTF(f *testing.F) {
	f.Add("", uint16(1))
	f.Add("a\x00é😀\xff", uint16(1))
	f.Add("😀", uint16(10923))
	f.Add("ab😀", uint16(8000))
	f.Fuzz(func(t *testing.T, part string, rep uint16) {
		s := part
		if len(part) > 0 && rep > 1 {
			s = strings.Repeat(part, min(int(rep), (MaxStringLen+pairSize)/len(part)+1))
		}
		enc := AppendUTF([]byte{0xAA}, s)[1:]
		body := enc[u16Size:]
		if int(enc[0])<<8|int(enc[1]) != len(body) || len(body) > MaxStringLen {
			t.Fatalf("prefix % x for %d bytes", enc[:u16Size], len(body))
		}
		if err := ValidUTF(body); err != nil {
			t.Fatalf("AppendUTF(%q) is not valid: %v", s, err)
		}
		runes := []rune(s) // invalid bytes become U+FFFD, as AppendUTF writes them
		want := refEncode(utf16.Encode(runes))
		if len(want) <= MaxStringLen {
			if !bytes.Equal(body, want) {
				t.Fatalf("AppendUTF(%q) = % x; want % x", s, body, want)
			}
			if got := String(body); got != string(runes) {
				t.Fatalf("String(AppendUTF(%q)) = %q", s, got)
			}
			return
		}
		// Truncated: a prefix of whole characters, short of the limit by
		// less than one character.
		if !bytes.HasPrefix(want, body) || len(body) <= MaxStringLen-pairSize {
			t.Fatalf("truncated to %d bytes, not a prefix of whole characters", len(body))
		}
		if !strings.HasPrefix(string(runes), String(body)) {
			t.Fatalf("truncation split a character")
		}
	})
}
