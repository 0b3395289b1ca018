package jni

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unicode/utf16"

	"github.com/tadpole-trace/tadpole/internal/host"
)

// julWord and julLevelWord build a JUL record's words (Probe.Buf.jul).
func julWord(h, n int) int64            { return int64(n)<<32 | int64(h)<<8 | probeJul }
func julLevelWord(off, lv int) int64    { return int64(off)<<32 | int64(uint32(int32(lv))) }
func julNameWord(off, n int) int64      { return int64(n)<<32 | int64(off)<<8 | probeJulName }
func timeWord(ms int64) int64           { return ms<<8 | host.ProbeTime }
func eventWord(kind, m, line int) int64 { return int64(line)<<48 | int64(m)<<8 | int64(kind) }

// batchRec is one host batch record, decoded.
type batchRec struct {
	kind   byte
	mutf8  bool
	mono   int64
	s1, s2 string
}

func decodeBatch(t *testing.T, b []byte) []batchRec {
	t.Helper()
	var out []batchRec
	for off := 0; off < len(b); {
		r := b[off:]
		if len(r) < host.BatchHeaderSize {
			t.Fatalf("batch cut at %d", off)
		}
		l1, l2 := int(binary.LittleEndian.Uint16(r[12:])), int(binary.LittleEndian.Uint16(r[14:]))
		p := r[host.BatchHeaderSize:]
		out = append(out, batchRec{r[0], r[1]&host.BatchFlagMUTF8 != 0, int64(binary.LittleEndian.Uint64(r[16:])),
			string(p[:l1]), string(p[l1 : l1+l2])})
		size := host.RecordSize(r)
		if size%host.BatchAlign != 0 || size > len(r) {
			t.Fatalf("record at %d: size %d of %d bytes", off, size, len(r))
		}
		off += size
	}
	return out
}

// submitted is what submitJul handed over, in order.
type submitted struct {
	probes []int64    // a run of probe words
	recs   []batchRec // or a batch
}

func runSubmitJul(t *testing.T, ev []int64, chars string) []submitted {
	t.Helper()
	var got []submitted
	out := 0 // batch buffers given out and not handed back
	submitJul(7, ev, utf16.Encode([]rune(chars)), &julSink{
		probes: func(th uint64, w []int64) (int, error) {
			if th != 7 {
				t.Errorf("probes of thread %d", th)
			}
			got = append(got, submitted{probes: slices.Clone(w)})
			return len(w), nil
		},
		batch: func() *[]byte {
			out++
			b := make([]byte, 0, 64) // small: records grow it
			return &b
		},
		submit: func(th uint64, bp *[]byte, n int) int {
			out--
			if th != 7 {
				t.Errorf("batch of thread %d", th)
			}
			if n == 0 {
				if len(*bp) != 0 {
					t.Errorf("a batch of %d bytes handed back as empty", len(*bp))
				}
				return 0
			}
			recs := decodeBatch(t, *bp)
			if len(recs) != n {
				t.Errorf("batch of %d records said to hold %d", len(recs), n)
			}
			for off := 0; off < len(*bp); off += host.RecordSize((*bp)[off:]) {
				// Markers of valid keys are wire-ready, names are checked.
				r := (*bp)[off:]
				if wire := r[1]&host.BatchFlagWire != 0; wire != (r[0] == host.BatchMarker) {
					t.Errorf("record of kind %d, flags %#x", r[0], r[1])
				}
			}
			got = append(got, submitted{recs: recs})
			return n
		},
	})
	if out != 0 {
		t.Errorf("%d batch buffers not handed back", out)
	}
	return got
}

func setJulKeys(keys ...string) {
	k := []*julLogger{nil}
	for _, s := range keys {
		var l *julLogger
		if s != "" {
			l = newJulLogger([]byte(s))
		}
		k = append(k, l)
	}
	julKeys.k.Store(&k)
}

// TestSubmitJul: JUL records split the words into runs handed over in
// order; each run of method events after a record starts with the time
// word in force; markers and names carry that time; an exception type
// word that looks like a JUL kind is not one; records whose logger has no
// key or whose chars are missing are left out.
func TestSubmitJul(t *testing.T) {
	setJulKeys("log:a", "", "log:c") // handle 2 has no key
	defer setJulKeys()
	const ms = 1e6
	ev := []int64{
		timeWord(5), eventWord(host.ProbeEntry, 1, 0),
		julWord(1, 3), julLevelWord(0, 800),
		eventWord(host.ProbeExit, 1, 9),
		julNameWord(3, 2), 0,
		julWord(1, 2), julLevelWord(5, 900),
		eventWord(host.ProbeThrown, 1, 4), probeJul, // exception type id 5
		timeWord(6),
		julWord(2, 1), julLevelWord(0, 800), // no key: left out
		julWord(3, 9), julLevelWord(6, 800), // chars missing: left out
		eventWord(host.ProbeEntry, 1, 0),
		julWord(3, 1), julLevelWord(7, 300),
	}
	got := runSubmitJul(t, ev, "abcxyhiz")
	want := []submitted{
		{probes: []int64{timeWord(5), eventWord(host.ProbeEntry, 1, 0)}},
		{recs: []batchRec{{host.BatchMarker, true, 5 * ms, "log:a", "INFO abc"}}},
		{probes: []int64{timeWord(5), eventWord(host.ProbeExit, 1, 9)}},
		{recs: []batchRec{{host.BatchName, true, 5 * ms, "xy", ""}, {host.BatchMarker, true, 5 * ms, "log:a", "WARNING hi"}}},
		{probes: []int64{timeWord(5), eventWord(host.ProbeThrown, 1, 4), probeJul, timeWord(6)}},
		{probes: []int64{timeWord(6), eventWord(host.ProbeEntry, 1, 0)}},
		{recs: []batchRec{{host.BatchMarker, true, 6 * ms, "log:c", "FINEST z"}}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("handed over:\n%v\nwant\n%v", got, want)
	}
}

// TestSubmitJulOnlyRecords: a buffer of JUL records only is one batch; a
// record cut from its second word is left out.
func TestSubmitJulOnlyRecords(t *testing.T) {
	setJulKeys("log:q")
	defer setJulKeys()
	ev := []int64{timeWord(1), julWord(1, 1), julLevelWord(0, 1000), timeWord(2), julWord(1, 1), julLevelWord(1, 700),
		julWord(1, 1)}
	got := runSubmitJul(t, ev, "ab")
	want := []submitted{{recs: []batchRec{{host.BatchMarker, true, 1e6, "log:q", "SEVERE a"},
		{host.BatchMarker, true, 2e6, "log:q", "CONFIG b"}}}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("handed over:\n%v\nwant\n%v", got, want)
	}
}

// TestJulLoggerWire: a logger whose key is valid modified UTF-8 gets
// wire-ready markers; one whose key is not (a C logger's bytes) has its
// markers checked by the drain.
func TestJulLoggerWire(t *testing.T) {
	for _, tc := range []struct {
		key  string
		wire bool
	}{{"log:a", true}, {"log:\xC0\x80é\xED\xA0\xBD", true}, {"log:\xFF", false}, {"log:\x00", false},
		{"log:\xE2\x82", false}} {
		l := newJulLogger([]byte(tc.key))
		for i, p := range l.pre {
			if wire := p[1]&host.BatchFlagWire != 0; wire != tc.wire || p[1]&host.BatchFlagMUTF8 == 0 {
				t.Errorf("key %q, level %d: flags %#x; want the wire flag %v", tc.key, i, p[1], tc.wire)
			}
		}
	}
}

// TestAppendMUTF8: the bytes GetStringUTFRegion writes: U+0000 as C0 80,
// a supplementary character as two 3-byte surrogates; cut at a unit.
func TestAppendMUTF8(t *testing.T) {
	s := utf16.Encode([]rune("a\x00é€\U0001F600"))
	want := []byte{'a', 0xC0, 0x80, 0xC3, 0xA9, 0xE2, 0x82, 0xAC, 0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80}
	if got := appendMUTF8(nil, s, 100); !bytes.Equal(got, want) {
		t.Errorf("appendMUTF8 = % x; want % x", got, want)
	}
	if got := appendMUTF8(nil, s, 7); !bytes.Equal(got, want[:5]) {
		t.Errorf("cut at 7 bytes = % x; want % x", got, want[:5])
	}
	if got := mutf8FromUTF8([]byte("log:\x00😀")); !bytes.Equal(got, append([]byte("log:\xC0\x80"), want[8:]...)) {
		t.Errorf("mutf8FromUTF8 = % x", got)
	}
}

// TestSubmitJulLimits: a thread name is cut at TADPOLE_MAX_THREAD_NAME
// bytes, a marker value at TADPOLE_MAX_STRING.
func TestSubmitJulLimits(t *testing.T) {
	setJulKeys("log:l")
	defer setJulKeys()
	name := strings.Repeat("é", 200) // 400 bytes
	msg := strings.Repeat("€", 2900) // 8700 bytes
	ev := []int64{timeWord(3), julNameWord(0, 200), 0, julWord(1, 2900), julLevelWord(200, 800)}
	got := runSubmitJul(t, ev, name+msg)
	if len(got) != 1 || len(got[0].recs) != 2 {
		t.Fatalf("handed over %v", got)
	}
	if n := got[0].recs[0].s1; n != strings.Repeat("é", 127) {
		t.Errorf("name of %d bytes", len(n))
	}
	if v := got[0].recs[1].s2; v != "INFO "+strings.Repeat("€", (maxString-5)/3) {
		t.Errorf("value of %d bytes", len(v))
	}
}

// cpuNanos is the process's user and system CPU time.
func cpuNanos() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkSubmitJul: the converter's cost per JUL record of JulBench's
// kind ("benchmark record" at INFO), a buffer of 4094 of them, without the
// agent's side of the hand-over.
func BenchmarkSubmitJul(b *testing.B) {
	setJulKeys("log:bench.jul")
	defer setJulKeys()
	msg := utf16.Encode([]rune("benchmark record"))
	var chars []uint16
	ev := []int64{timeWord(1)}
	for len(ev) < 8190 {
		ev = append(ev, julWord(1, len(msg)), julLevelWord(len(chars), 800))
		chars = append(chars, msg...)
	}
	work := make([]int64, len(ev))
	var buf []byte
	n := 0
	to := &julSink{probes: func(uint64, []int64) (int, error) { return 0, nil },
		batch:  func() *[]byte { buf = buf[:0]; return &buf },
		submit: func(_ uint64, bp *[]byte, _ int) int { n += len(*bp); return 0 }}
	c0 := cpuNanos()
	b.ResetTimer()
	for range b.N {
		copy(work, ev)
		submitJul(1, work, chars, to)
	}
	records := float64(b.N * (len(ev) - 1) / 2)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/records, "ns/record")
	b.ReportMetric(float64(cpuNanos()-c0)/records, "cpu-ns/record") // the machine may be shared

	if n == 0 {
		b.Fatal("no batch")
	}
}

// refMUTF8 is appendMUTF8 one unit at a time, the reference for its fast
// path.
func refMUTF8(dst []byte, s []uint16, max int) []byte {
	for _, c := range s {
		var e []byte
		switch {
		case c != 0 && c < 0x80:
			e = []byte{byte(c)}
		case c < 0x800:
			e = []byte{0xC0 | byte(c>>6), 0x80 | byte(c&0x3F)}
		default:
			e = []byte{0xE0 | byte(c>>12), 0x80 | byte(c>>6&0x3F), 0x80 | byte(c&0x3F)}
		}
		if len(dst)+len(e) > max {
			break
		}
		dst = append(dst, e...)
	}
	return dst
}

// TestAppendMUTF8Runs: ASCII runs of every length up to 40 with one unit
// that is not plain ASCII (NUL, 0x7F, 0x80, 0x100, 0xFF01, a surrogate) at
// every position, each cut at every byte limit, give the reference's
// bytes: eight units at a time stop at the right unit.
func TestAppendMUTF8Runs(t *testing.T) {
	oddRuns([]uint16{0, 0x7F, 0x80, 0xFF, 0x100, 0x7F7F, 0xFF01, 0xD83D, 0x0180}, func(name string, s []uint16) {
		n := len(s)
		for max := 0; max <= n*3+2; max += 1 + max/8 {
			pre := []byte("xy")
			got := appendMUTF8(slices.Clone(pre), s, max+len(pre))
			want := refMUTF8(slices.Clone(pre), s, max+len(pre))
			if !bytes.Equal(got, want) {
				t.Fatalf("%s, max %d: % x; want % x", name, max, got, want)
			}
		}
	})
}

// oddRuns calls f with ASCII runs of every length up to 40, each with one
// unit of odd at every position, and without.
func oddRuns(odd []uint16, f func(name string, s []uint16)) {
	for n := 0; n <= 40; n++ {
		for pos := -1; pos < n; pos++ {
			for _, o := range odd {
				s := make([]uint16, n)
				for i := range s {
					s[i] = uint16('a' + i%26)
				}
				if pos >= 0 {
					s[pos] = o
				}
				f(fmt.Sprintf("%d units, %#x at %d", n, o, pos), s)
			}
		}
	}
}

// TestAppendJulMarkerRuns: a record's marker, for messages of every length
// up to 40 with one unit that is not plain ASCII at every position, and
// at the length limit and over it, is the record built one unit at a time
// (the header, key and level, then refMUTF8 cut at TADPOLE_MAX_STRING),
// padded with zeros, after whatever the batch held.
func TestAppendJulMarkerRuns(t *testing.T) {
	lg := newJulLogger([]byte("log:runs"))
	lv := julLevel(900)
	want := func(s []uint16) []byte {
		b := host.BeginBatchRecord([]byte("prev"), host.BatchMarker, lg.pre[lv][1], 0xFFFF, 0, 0, 77e6)
		b = append(append(b, lg.key...), "WARNING "...)
		b = refMUTF8(b, s, len(b)+maxString-len("WARNING "))
		return host.EndBatchRecord(b, 4, len(lg.key))
	}
	check := func(name string, s []uint16) {
		t.Helper()
		ev := julWord(0, len(s))
		got := appendJulMarker(append(make([]byte, 0, 5), "prev"...), uint64(ev), uint64(julLevelWord(0, 900)), 77e6,
			s, lg)
		if w := want(s); !bytes.Equal(got, w) {
			t.Fatalf("%s: % x\nwant % x", name, got, w)
		}
	}
	oddRuns([]uint16{0, 0x7F, 0x80, 0x100, 0xFF01, 0xD83D, 0x0180}, check)
	for _, n := range []int{maxString - 9, maxString - 8, maxString - 7, maxString + 3} {
		s := make([]uint16, n)
		for i := range s {
			s[i] = 'x'
		}
		check(fmt.Sprintf("%d units", n), s)
		s[n-1] = 0xE9
		check(fmt.Sprintf("%d units, é last", n), s)
	}
}
