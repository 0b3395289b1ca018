package bytefrog

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// javaserDir holds streams written by real Java ObjectOutputStream (see
// testdata/javaser/Gen.java).
const javaserDir = "testdata/javaser"

// javaserVectorsFile is the copy of the reference vectors.
const javaserVectorsFile = "testdata/bytefrog-vectors.txt"

// javaserVector returns the bytes of the first vector in javaserVectorsFile
// whose heading starts with prefix.
func javaserVector(tb testing.TB, prefix string) []byte {
	tb.Helper()
	f, err := os.Open(javaserVectorsFile)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var data []byte
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "###"):
			if in {
				return data
			}
			in = strings.HasPrefix(line, "### "+prefix)
		case in && line != "":
			raw, err := hex.DecodeString(strings.ReplaceAll(line, " ", ""))
			if err != nil {
				tb.Fatal(err)
			}
			data = append(data, raw...)
		}
	}
	if !in {
		tb.Fatalf("no vector %q in %s", prefix, javaserVectorsFile)
	}
	return data
}

func javaserRead(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(javaserDir, name+".bin"))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// javaserVectorConfig is the configuration of the 331-byte vector.
func javaserVectorConfig() Config {
	return Config{
		RunID: 0, HeartbeatInterval: 1000,
		Exclusions: []string{".*"}, Inclusions: []string{"^com/example/[^/]+$"},
		BufferMemoryBudget: 25600, QueueRetryCount: 5, NumDataSenders: 1,
	}
}

func TestJavaConfigVector(t *testing.T) {
	want := javaserVector(t, "java-serialized RuntimeAgentConfigurationV1")
	if len(want) != 331 {
		t.Fatalf("vector: got %d bytes; want 331", len(want))
	}
	if java := javaserRead(t, "arraylist"); !bytes.Equal(java, want) {
		t.Errorf("arraylist.bin differs from the reference vector")
	}
	c := javaserVectorConfig()
	if got := AppendJavaConfig(nil, &c); !bytes.Equal(got, want) {
		t.Errorf("AppendJavaConfig: got\n% x\nwant\n% x", got, want)
	}
	prefix := []byte("prefix")
	if got := AppendJavaConfig(prefix, &c); !bytes.Equal(got[:len(prefix)], prefix) || !bytes.Equal(got[len(prefix):], want) {
		t.Errorf("AppendJavaConfig after a prefix: got % x", got)
	}
	got, info, err := ParseJavaConfigInfo(want)
	c.ClassName = JavaClassBytefrog
	if err != nil || !reflect.DeepEqual(got, c) {
		t.Fatalf("ParseJavaConfigInfo: got %+v, %v; want %+v", got, err, c)
	}
	wantInfo := JavaConfigInfo{ClassName: JavaClassBytefrog, SUID: JavaConfigSUID,
		ExclusionsClass: javaArrayList, InclusionsClass: javaArrayList}
	if info != wantInfo || info.SUIDMismatch() {
		t.Errorf("info: got %+v; want %+v", info, wantInfo)
	}

	// The Code Pulse class name: 7 bytes longer, everything else equal.
	c.ClassName = JavaClassCodePulse
	cp := AppendJavaConfig(nil, &c)
	if len(cp) != len(want)+7 || !bytes.Equal(cp[6:8], []byte{0x00, 0x44}) ||
		string(cp[8:8+len(JavaClassCodePulse)]) != JavaClassCodePulse ||
		!bytes.Equal(cp[8+len(JavaClassCodePulse):], want[8+len(JavaClassBytefrog):]) {
		t.Errorf("Code Pulse class name: got % x", cp)
	}
}

// javaserCase is a stream written by Java and what it must parse to.
type javaserCase struct {
	name  string
	want  Config
	exc   string // Java class of the exclusions list, "" for null
	inc   string
	exact bool   // AppendJavaConfig reproduces the stream byte for byte
	err   string // expected error text; the stream must be refused
}

func javaserCases() []javaserCase {
	bf := func(runID uint8, hb int32, exc, inc []string, budget, retry, senders int32) Config {
		return Config{RunID: runID, HeartbeatInterval: hb, Exclusions: exc, Inclusions: inc,
			BufferMemoryBudget: budget, QueueRetryCount: retry, NumDataSenders: senders,
			ClassName: JavaClassBytefrog}
	}
	al, ll, as := javaArrayList, javaLinkedList, javaArraysArrayList
	cp := bf(3, 2000, []string{".*"}, []string{"^com/example/[^/]+$", "^org/example/[^/]+$"}, 50<<20, 10, 2)
	cp.ClassName = JavaClassCodePulse
	return []javaserCase{
		{name: "arraylist", want: bf(0, 1000, []string{".*"}, []string{"^com/example/[^/]+$"}, 25600, 5, 1), exc: al, inc: al, exact: true},
		{name: "arraylist_empty", want: bf(254, 250, nil, nil, 1<<20, 0, 4), exc: al, inc: al, exact: true},
		{name: "arraylist_many", want: bf(127, -1,
			[]string{"^java/", "^javax/", "^sun/", "^com/sun/"},
			[]string{"^com/example/[^/]+$", "^org/acme/app/.*", "^jsp/", "", `[a-z]+\$[0-9]+`},
			math.MaxInt32, math.MinInt32, 3), exc: al, inc: al, exact: true},
		{name: "unicode", want: bf(5, 1000,
			[]string{"café", "日本語/クラス", "emoji😀end"},
			[]string{"nul\x00inside", "\u00a9\u07ff\u0800\uffff", "\U00010000\U0010FFFF"},
			25600, 5, 1), exc: al, inc: al, exact: true},
		{name: "lone_surrogate", want: bf(6, 1000, []string{"x\uFFFDy"}, []string{"\uFFFD"}, 25600, 5, 1), exc: al, inc: al},
		{name: "longstring", want: bf(7, 1000, []string{strings.Repeat("日", 21846)}, []string{"short"}, 25600, 5, 1),
			exc: al, inc: al, exact: true},
		{name: "codepulse", want: cp, exc: al, inc: al, exact: true},
		{name: "linkedlist", want: bf(8, 1000, []string{"^java/", "^sun/"}, []string{"^com/example/.*"}, 25600, 5, 1), exc: ll, inc: ll},
		{name: "linkedlist_empty", want: bf(8, 1000, nil, nil, 25600, 5, 1), exc: ll, inc: ll},
		{name: "aslist", want: bf(9, 1000, []string{"^java/", "^sun/"}, []string{"^com/example/.*"}, 25600, 5, 1), exc: as, inc: as},
		{name: "aslist_empty", want: bf(9, 1000, nil, nil, 25600, 5, 1), exc: as, inc: as},
		{name: "aslist_shared_array", want: bf(10, 1000, []string{"^a/", "^b/"}, []string{"^a/", "^b/"}, 25600, 5, 1), exc: as, inc: as},
		{name: "mixed", want: bf(11, 1000, []string{"^java/"}, []string{"^obj/"}, 25600, 5, 1), exc: ll, inc: as},
		{name: "null_lists", want: bf(12, 1000, nil, nil, 25600, 5, 1)},
		{name: "repeated_strings", want: bf(13, 1000,
			[]string{"^repeated/", "^other/", "^repeated/"}, []string{"^repeated/", "lit", "lit"},
			25600, 5, 1), exc: al, inc: al},
		{name: "same_list", want: bf(14, 1000, []string{"^same/"}, []string{"^same/"}, 25600, 5, 1), exc: al, inc: al},
		{name: "bad_listof", err: "java.util.CollSer"},
		{name: "bad_emptylist", err: "java.util.Collections$EmptyList"},
		{name: "bad_null_element", err: "element of java.util.ArrayList is null"},
	}
}

func TestParseJavaConfigJavaStreams(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(javaserDir, "*.bin"))
	if err != nil {
		t.Fatal(err)
	}
	cases := javaserCases()
	if len(files) != len(cases) {
		t.Errorf("%s: got %d .bin files; want %d (one per case)", javaserDir, len(files), len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := javaserRead(t, tc.name)
			got, info, err := ParseJavaConfigInfo(data)
			if tc.err != "" {
				if !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %+v, %v; want an ErrBadConfig containing %q", got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v; want nil", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v; want %+v", got, tc.want)
			}
			wantInfo := JavaConfigInfo{ClassName: tc.want.ClassName, SUID: JavaConfigSUID, ExclusionsClass: tc.exc, InclusionsClass: tc.inc}
			if info != wantInfo {
				t.Errorf("info: got %+v; want %+v", info, wantInfo)
			}
			enc := AppendJavaConfig(nil, &got)
			if tc.exact && !bytes.Equal(enc, data) {
				t.Errorf("AppendJavaConfig: got\n% x\nwant\n% x", enc, data)
			}
			again, err := ParseJavaConfig(enc)
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Errorf("re-parse: got %+v, %v; want %+v", again, err, got)
			}
		})
	}
}

// Lists that are one Java object, or share one array, must not share
// elements once parsed.
func TestParseJavaConfigSharedListsAreCopies(t *testing.T) {
	for _, name := range []string{"same_list", "aslist_shared_array"} {
		c, err := ParseJavaConfig(javaserRead(t, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := c.Inclusions[0]
		c.Exclusions[0] = "changed"
		if c.Inclusions[0] != want {
			t.Errorf("%s: inclusions[0]: got %q; want %q", name, c.Inclusions[0], want)
		}
	}
}

// TestJavaStringForm checks where TC_STRING gives way to TC_LONGSTRING:
// at 65536 encoded bytes, not characters.
func TestJavaStringForm(t *testing.T) {
	for _, tc := range []struct {
		s    string
		long bool
	}{
		{"", false},
		{strings.Repeat("a", MaxStringLen), false},
		{strings.Repeat("a", MaxStringLen+1), true},
		{strings.Repeat("日", MaxStringLen/3), false},
		{strings.Repeat("日", MaxStringLen/3+1), true},
		{strings.Repeat("\x00", MaxStringLen/2) + "a", false},
		{strings.Repeat("\x00", MaxStringLen/2+1), true},
		{strings.Repeat("😀", MaxStringLen/6) + "abc", false},
		{strings.Repeat("😀", MaxStringLen/6) + "abcd", true},
	} {
		enc := appendJavaString(nil, tc.s)
		n := cfgMUTFLen(tc.s)
		var want []byte
		if tc.long {
			want = binary.BigEndian.AppendUint64([]byte{byte(tcLongString)}, uint64(n))
		} else {
			want = binary.BigEndian.AppendUint16([]byte{byte(tcString)}, uint16(n))
		}
		if !bytes.HasPrefix(enc, want) || len(enc) != len(want)+n {
			t.Errorf("%d-byte string: got header % x, %d bytes; want % x, %d", n, enc[:min(len(enc), 9)], len(enc), want, len(want)+n)
		}
		c := Config{Exclusions: []string{tc.s}}
		got, err := ParseJavaConfig(AppendJavaConfig(nil, &c))
		if err != nil || len(got.Exclusions) != 1 || got.Exclusions[0] != tc.s {
			t.Errorf("%d-byte string: round trip failed: %v", n, err)
		}
	}
}

func TestAppendJavaConfigStrings(t *testing.T) {
	for _, tc := range []struct {
		in, out string // Go string written; Go string read back
		mutf    string // modified UTF-8 on the wire
	}{
		{"plain", "plain", "plain"},
		{"a\x00b", "a\x00b", "a\xc0\x80b"},
		{"é", "é", "\xc3\xa9"},
		{"😀", "😀", "\xed\xa0\xbd\xed\xb8\x80"},
		{"\U0010FFFF", "\U0010FFFF", "\xed\xaf\xbf\xed\xbf\xbf"},
		{"bad\xffbyte", "bad\uFFFDbyte", "bad\xef\xbf\xbdbyte"},
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
	} {
		c := Config{Inclusions: []string{tc.in}}
		enc := AppendJavaConfig(nil, &c)
		wire := append([]byte{byte(tcString), 0, byte(len(tc.mutf))}, tc.mutf...)
		if !bytes.Contains(enc, wire) {
			t.Errorf("%q: stream lacks % x", tc.in, wire)
		}
		got, err := ParseJavaConfig(enc)
		if err != nil || got.Inclusions[0] != tc.out {
			t.Errorf("%q: got %q, %v; want %q", tc.in, got.Inclusions, err, tc.out)
		}
	}
	// Only the Code Pulse name is kept; anything else writes the Bytefrog one.
	for _, name := range []string{"", JavaClassBytefrog, "com.example.Other"} {
		c := Config{ClassName: name}
		got, err := ParseJavaConfig(AppendJavaConfig(nil, &c))
		if err != nil || got.ClassName != JavaClassBytefrog {
			t.Errorf("ClassName %q: got %q, %v; want %q", name, got.ClassName, err, JavaClassBytefrog)
		}
	}
}

func TestAppendJavaConfigNoAlloc(t *testing.T) {
	c := javaserVectorConfig()
	c.Inclusions = append(c.Inclusions, "日本", "a\x00😀")
	buf := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() { buf = AppendJavaConfig(buf[:0], &c) }); n != 0 {
		t.Errorf("AppendJavaConfig: got %v allocs; want 0", n)
	}
}

// javaserW builds serialization streams for the tests.
type javaserW struct{ b []byte }

func (w *javaserW) raw(p ...byte) *javaserW { w.b = append(w.b, p...); return w }
func (w *javaserW) tc(t javaTC) *javaserW   { return w.raw(byte(t)) }
func (w *javaserW) u16(v uint16) *javaserW  { w.b = binary.BigEndian.AppendUint16(w.b, v); return w }
func (w *javaserW) i32(v int32) *javaserW {
	w.b = binary.BigEndian.AppendUint32(w.b, uint32(v))
	return w
}
func (w *javaserW) i64(v int64) *javaserW {
	w.b = binary.BigEndian.AppendUint64(w.b, uint64(v))
	return w
}
func (w *javaserW) text(s string) *javaserW { w.b = append(w.b, s...); return w }
func (w *javaserW) utf(s string) *javaserW  { return w.u16(uint16(len(s))).text(s) }
func (w *javaserW) ref(h int) *javaserW     { return w.tc(tcReference).i32(int32(javaBaseHandle + h)) }
func (w *javaserW) str(s string) *javaserW  { return w.tc(tcString).utf(s) }

// javaserField is a field of a crafted class descriptor; typ is the type
// string of an object field, written as a new TC_STRING.
type javaserField struct {
	code      byte
	name, typ string
}

// javaserStdFields are RuntimeAgentConfigurationV1's fields in Java's order.
var javaserStdFields = []javaserField{
	{'I', "bufferMemoryBudget", ""}, {'I', "heartbeatInterval", ""}, {'I', "numDataSenders", ""},
	{'I', "queueRetryCount", ""}, {'B', "runId", ""},
	{'L', "exclusions", javaListType}, {'L', "inclusions", javaListType},
}

// head writes the stream header, TC_OBJECT and a configuration class
// descriptor with fields. Handles: 0 the descriptor, then one per object
// field type string, then the object.
func (w *javaserW) head(name string, suid int64, flags byte, fields []javaserField) *javaserW {
	w.u16(javaStreamMagic).u16(javaStreamVersion).tc(tcObject).tc(tcClassDesc).utf(name).i64(suid).raw(flags)
	w.u16(uint16(len(fields)))
	for _, f := range fields {
		w.raw(f.code).utf(f.name)
		if f.typ != "" {
			w.str(f.typ)
		}
	}
	return w.tc(tcEndBlockData).tc(tcNull)
}

// std writes the standard head and primitive values 1..4 and run id 9.
func (w *javaserW) std() *javaserW {
	return w.head(JavaClassBytefrog, JavaConfigSUID, scSerializable, javaserStdFields).i32(1).i32(2).i32(3).i32(4).raw(9)
}

// arrayList writes a new ArrayList descriptor and object with elements.
func (w *javaserW) arrayList(elems ...string) *javaserW {
	w.tc(tcObject).tc(tcClassDesc).utf(javaArrayList).i64(javaArrayListSUID).raw(scSerializable | scWriteMethod).u16(1)
	w.raw('I').utf("size").tc(tcEndBlockData).tc(tcNull)
	w.i32(int32(len(elems))).tc(tcBlockData).raw(4).i32(int32(len(elems)))
	for _, e := range elems {
		w.str(e)
	}
	return w.tc(tcEndBlockData)
}

// javaserStd is the Config std() and two null lists decode to.
var javaserStd = Config{BufferMemoryBudget: 1, HeartbeatInterval: 2, NumDataSenders: 3, QueueRetryCount: 4, RunID: 9, ClassName: JavaClassBytefrog}

func TestParseJavaConfigCrafted(t *testing.T) {
	w := func() *javaserW { return &javaserW{} }
	withLists := func(exc, inc []string) Config {
		c := javaserStd
		c.Exclusions, c.Inclusions = exc, inc
		return c
	}
	// Descriptor handles in std(): 0 config, 1 and 2 the type strings,
	// 3 the object; the first ArrayList descriptor is then 4, its object 5.
	for _, tc := range []struct {
		name string
		in   []byte
		want Config
		err  string // "" for success
	}{
		{"null lists", w().std().tc(tcNull).tc(tcNull).b, javaserStd, ""},
		{"descriptor order decides value order", w().head(JavaClassBytefrog, JavaConfigSUID, scSerializable, []javaserField{
			{'B', "runId", ""}, {'I', "queueRetryCount", ""}, {'I', "numDataSenders", ""}, {'I', "heartbeatInterval", ""},
			{'I', "bufferMemoryBudget", ""}, {'L', "inclusions", javaListType}, {'L', "exclusions", javaListType},
		}).raw(9).i32(4).i32(3).i32(2).i32(1).arrayList("inc").tc(tcNull).b, withLists(nil, []string{"inc"}), ""},
		{"extra fields ignored", w().head(JavaClassBytefrog, JavaConfigSUID, scSerializable, append([]javaserField{
			{'Z', "aFlag", ""}, {'J', "aLong", ""}, {'D', "aDouble", ""}, {'C', "aChar", ""}, {'S', "aShort", ""}, {'F', "aFloat", ""},
		}, append(javaserStdFields, javaserField{'L', "zName", "Ljava/lang/String;"}, javaserField{'[', "zArr", "[Ljava/lang/String;"})...)).
			raw(1).i64(2).i64(3).u16(4).u16(5).i32(6).i32(1).i32(2).i32(3).i32(4).raw(9).
			tc(tcNull).tc(tcNull).str("ignored").tc(tcNull).b, javaserStd, ""},
		{"capacity split over block segments", w().std().tc(tcNull).
			tc(tcObject).tc(tcClassDesc).utf(javaArrayList).i64(javaArrayListSUID).raw(3).u16(1).raw('I').utf("size").tc(tcEndBlockData).tc(tcNull).
			i32(1).tc(tcBlockData).raw(1, 0).tc(tcBlockDataLong).i32(3).raw(0, 0, 7).str("x").tc(tcEndBlockData).b,
			withLists(nil, []string{"x"}), ""},
		{"long string element", w().std().tc(tcNull).
			tc(tcObject).tc(tcClassDesc).utf(javaArrayList).i64(javaArrayListSUID).raw(3).u16(1).raw('I').utf("size").tc(tcEndBlockData).tc(tcNull).
			i32(1).tc(tcBlockData).raw(4).i32(1).tc(tcLongString).i64(3).text("abc").tc(tcEndBlockData).b,
			withLists(nil, []string{"abc"}), ""},
		{"back-reference to a type string", w().std().arrayList("a", "b").
			tc(tcObject).ref(4).i32(2).tc(tcBlockData).raw(4).i32(2).ref(1).ref(6).tc(tcEndBlockData).b,
			withLists([]string{"a", "b"}, []string{javaListType, "a"}), ""},
		{"class annotation block data skipped", w().u16(javaStreamMagic).u16(javaStreamVersion).tc(tcObject).tc(tcClassDesc).
			utf(JavaClassCodePulse).i64(1).raw(scSerializable|scWriteMethod).u16(0).tc(tcBlockData).raw(2, 1, 2).tc(tcEndBlockData).tc(tcNull).
			tc(tcBlockData).raw(1, 0).tc(tcEndBlockData).b,
			Config{}, "field bufferMemoryBudget missing"},

		{"empty", nil, Config{}, "stream ends early"},
		{"bad magic", w().u16(0xACEE).u16(5).b, Config{}, "stream header"},
		{"bad version", w().u16(javaStreamMagic).u16(4).b, Config{}, "stream header"},
		{"not an object", w().u16(javaStreamMagic).u16(javaStreamVersion).str("x").b, Config{}, "stream starts with TC_STRING"},
		{"null descriptor", w().u16(javaStreamMagic).u16(javaStreamVersion).tc(tcObject).tc(tcNull).b, Config{}, "TC_NULL where a class descriptor"},
		{"proxy descriptor", w().u16(javaStreamMagic).u16(javaStreamVersion).tc(tcObject).tc(tcProxyClassDesc).b, Config{}, "TC_PROXYCLASSDESC where"},
		{"other class", w().head("com.example.Config", JavaConfigSUID, scSerializable, javaserStdFields).b, Config{}, "object of class com.example.Config"},
		{"externalizable", w().head(JavaClassBytefrog, JavaConfigSUID, 0x0C, javaserStdFields).b, Config{}, "flags 0x0c"},
		{"missing field", w().head(JavaClassBytefrog, JavaConfigSUID, scSerializable, javaserStdFields[1:]).
			i32(2).i32(3).i32(4).raw(9).tc(tcNull).tc(tcNull).b, Config{}, "field bufferMemoryBudget missing"},
		{"wrong field type", w().head(JavaClassBytefrog, JavaConfigSUID, scSerializable, append([]javaserField{{'J', "bufferMemoryBudget", ""}}, javaserStdFields[1:]...)).b,
			Config{}, "field bufferMemoryBudget has type J, want I"},
		{"list field as primitive", w().head(JavaClassBytefrog, JavaConfigSUID, scSerializable, append(javaserStdFields[:5:5], javaserField{'I', "exclusions", ""}, javaserStdFields[6])).
			i32(1).i32(2).i32(3).i32(4).raw(9).b,
			Config{}, "field exclusions has type I, want L"},
		{"duplicate field", w().head(JavaClassBytefrog, JavaConfigSUID, scSerializable, append(javaserStdFields[:1:1], javaserStdFields...)).
			i32(1).i32(1).b, Config{}, "field bufferMemoryBudget declared twice"},
		{"primitive after object", w().head(JavaClassBytefrog, JavaConfigSUID, scSerializable, append(javaserStdFields[5:6:6], javaserStdFields[0])).b,
			Config{}, "primitive field bufferMemoryBudget follows an object field"},
		{"unknown type code", w().head(JavaClassBytefrog, JavaConfigSUID, scSerializable, []javaserField{{'X', "x", ""}}).b,
			Config{}, "unknown type code 0x58"},
		{"superclass", w().u16(javaStreamMagic).u16(javaStreamVersion).tc(tcObject).tc(tcClassDesc).utf(JavaClassBytefrog).i64(JavaConfigSUID).
			raw(scSerializable).u16(0).tc(tcEndBlockData).tc(tcClassDesc).b, Config{}, "serializable superclass (TC_CLASSDESC)"},
		{"object in class annotation", w().u16(javaStreamMagic).u16(javaStreamVersion).tc(tcObject).tc(tcClassDesc).utf(JavaClassBytefrog).i64(JavaConfigSUID).
			raw(scSerializable).u16(0).str("x").b, Config{}, "TC_STRING in class annotation"},
		{"too many fields", w().u16(javaStreamMagic).u16(javaStreamVersion).tc(tcObject).tc(tcClassDesc).utf(JavaClassBytefrog).i64(JavaConfigSUID).
			raw(scSerializable).u16(0xFFFF).raw('I').utf("x").b, Config{}, "field count 65535 does not fit"},
		{"trailing byte", append(w().std().tc(tcNull).tc(tcNull).b, 0), Config{}, "1 bytes after the configuration object"},
		{"reset", w().std().tc(tcReset).b, Config{}, "field value is TC_RESET"},
		{"list holds a string", w().std().str("x").tc(tcNull).b, Config{}, "field exclusions holds a String, want a List"},
		{"list is an array", w().std().tc(tcArray).tc(tcClassDesc).utf(javaStringArray).i64(1).raw(scSerializable).u16(0).tc(tcEndBlockData).tc(tcNull).i32(0).b,
			Config{}, "field exclusions holds an array, want a List"},
		{"list refers to the config", w().std().ref(3).b, Config{}, "field value refers to the configuration object"},
		{"list refers to a descriptor", w().std().ref(0).b, Config{}, "field value refers to a class descriptor"},
		{"unknown handle", w().std().ref(99).b, Config{}, "reference to unknown handle 0x7e0063"},
		{"handle below base", w().std().tc(tcReference).i32(5).b, Config{}, "reference to unknown handle 0x5"},
		{"unsupported list class", w().std().tc(tcObject).tc(tcClassDesc).utf("java.util.Vector").i64(1).raw(3).u16(0).tc(tcEndBlockData).tc(tcNull).b,
			Config{}, "object of class java.util.Vector: only"},
		{"ArrayList with wrong fields", w().std().tc(tcObject).tc(tcClassDesc).utf(javaArrayList).i64(1).raw(3).u16(0).tc(tcEndBlockData).tc(tcNull).b,
			Config{}, "class java.util.ArrayList: 0 fields, want 1"},
		{"ArrayList with wrong flags", w().std().tc(tcObject).tc(tcClassDesc).utf(javaArrayList).i64(1).raw(2).u16(0).tc(tcEndBlockData).tc(tcNull).b,
			Config{}, "class java.util.ArrayList: flags 0x02, want 0x03"},
		{"ArrayList field renamed", w().std().tc(tcObject).tc(tcClassDesc).utf(javaArrayList).i64(1).raw(3).u16(1).raw('I').utf("count").tc(tcEndBlockData).tc(tcNull).b,
			Config{}, "field I count, want I size"},
		{"negative size", w().std().tc(tcObject).tc(tcClassDesc).utf(javaArrayList).i64(1).raw(3).u16(1).raw('I').utf("size").tc(tcEndBlockData).tc(tcNull).
			i32(-1).tc(tcBlockData).raw(4).i32(0).b, Config{}, "negative ArrayList size -1"},
		{"size beyond input", w().std().tc(tcObject).tc(tcClassDesc).utf(javaArrayList).i64(1).raw(3).u16(1).raw('I').utf("size").tc(tcEndBlockData).tc(tcNull).
			i32(math.MaxInt32).tc(tcBlockData).raw(4).i32(0).b, Config{}, "ArrayList size 2147483647 does not fit"},
		{"no capacity", w().std().tc(tcObject).tc(tcClassDesc).utf(javaArrayList).i64(1).raw(3).u16(1).raw('I').utf("size").tc(tcEndBlockData).tc(tcNull).
			i32(1).str("x").b, Config{}, "TC_STRING where block data with the ArrayList capacity is needed"},
		{"negative block length", w().std().tc(tcObject).tc(tcClassDesc).utf(javaArrayList).i64(1).raw(3).u16(1).raw('I').utf("size").tc(tcEndBlockData).tc(tcNull).
			i32(1).tc(tcBlockDataLong).i32(-4).b, Config{}, "negative block data length -4"},
		{"block data left before element", w().std().tc(tcObject).tc(tcClassDesc).utf(javaArrayList).i64(1).raw(3).u16(1).raw('I').utf("size").tc(tcEndBlockData).tc(tcNull).
			i32(1).tc(tcBlockData).raw(5).i32(1).raw(0).str("x").b, Config{}, "1 bytes of block data left unread before element"},
		{"too few elements", w().std().tc(tcObject).tc(tcClassDesc).utf(javaArrayList).i64(1).raw(3).u16(1).raw('I').utf("size").tc(tcEndBlockData).tc(tcNull).
			i32(2).tc(tcBlockData).raw(4).i32(2).str("x").tc(tcEndBlockData).tc(tcNull).b, Config{}, "element of java.util.ArrayList is TC_ENDBLOCKDATA"},
		{"too many elements", w().std().tc(tcObject).tc(tcClassDesc).utf(javaArrayList).i64(1).raw(3).u16(1).raw('I').utf("size").tc(tcEndBlockData).tc(tcNull).
			i32(1).tc(tcBlockData).raw(4).i32(1).str("x").str("y").tc(tcEndBlockData).tc(tcNull).b, Config{}, "TC_STRING in custom data of java.util.ArrayList"},
		{"element refers to its list", w().std().tc(tcObject).tc(tcClassDesc).utf(javaArrayList).i64(1).raw(3).u16(1).raw('I').utf("size").tc(tcEndBlockData).tc(tcNull).
			i32(1).tc(tcBlockData).raw(4).i32(1).ref(5).b, Config{}, "element of java.util.ArrayList refers to a List, want a String"},
		{"element is an object", w().std().tc(tcObject).tc(tcClassDesc).utf(javaArrayList).i64(1).raw(3).u16(1).raw('I').utf("size").tc(tcEndBlockData).tc(tcNull).
			i32(1).tc(tcBlockData).raw(4).i32(1).tc(tcObject).tc(tcNull).tc(tcNull).b, Config{}, "element of java.util.ArrayList is TC_OBJECT, want a String"},
		{"long string beyond input", w().std().tc(tcNull).tc(tcObject).tc(tcClassDesc).utf(javaArrayList).i64(1).raw(3).u16(1).raw('I').utf("size").tc(tcEndBlockData).tc(tcNull).
			i32(1).tc(tcBlockData).raw(4).i32(1).tc(tcLongString).i64(math.MaxInt64).b, Config{}, "long string of 9223372036854775807 bytes"},
		{"negative long string", w().std().tc(tcNull).tc(tcObject).tc(tcClassDesc).utf(javaArrayList).i64(1).raw(3).u16(1).raw('I').utf("size").tc(tcEndBlockData).tc(tcNull).
			i32(1).tc(tcBlockData).raw(4).i32(1).tc(tcLongString).i64(-1).b, Config{}, "long string of -1 bytes"},
		{"raw NUL in a string", w().std().tc(tcNull).arrayList("a\x00b").b, Config{}, "invalid modified UTF-8"},
		{"4-byte form in a string", w().std().tc(tcNull).arrayList("\xf0\x9f\x98\x80").b, Config{}, "invalid modified UTF-8"},
		{"Arrays$ArrayList over a null array", w().std().tc(tcObject).tc(tcClassDesc).utf(javaArraysArrayList).i64(1).raw(2).u16(1).
			raw('[').utf("a").str(javaObjectArrayType).tc(tcEndBlockData).tc(tcNull).tc(tcNull).b, Config{}, "java.util.Arrays$ArrayList.a is TC_NULL, want an array"},
		{"Arrays$ArrayList field of another type", w().std().tc(tcObject).tc(tcClassDesc).utf(javaArraysArrayList).i64(1).raw(2).u16(1).
			raw('[').utf("a").str("[I").tc(tcEndBlockData).tc(tcNull).b, Config{}, "field a has type [I"},
		{"int array", w().std().tc(tcObject).tc(tcClassDesc).utf(javaArraysArrayList).i64(1).raw(2).u16(1).
			raw('[').utf("a").str(javaObjectArrayType).tc(tcEndBlockData).tc(tcNull).tc(tcArray).tc(tcClassDesc).utf("[I").i64(1).raw(2).u16(0).tc(tcEndBlockData).tc(tcNull).b,
			Config{}, "array of class [I"},
		{"array refers to a string", w().std().tc(tcObject).tc(tcClassDesc).utf(javaArraysArrayList).i64(1).raw(2).u16(1).
			raw('[').utf("a").str(javaObjectArrayType).tc(tcEndBlockData).tc(tcNull).ref(1).b, Config{}, "java.util.Arrays$ArrayList.a refers to a String"},
		{"negative array length", w().std().tc(tcObject).tc(tcClassDesc).utf(javaArraysArrayList).i64(1).raw(2).u16(1).
			raw('[').utf("a").str(javaObjectArrayType).tc(tcEndBlockData).tc(tcNull).tc(tcArray).tc(tcClassDesc).utf(javaObjectArray).i64(1).raw(2).u16(0).tc(tcEndBlockData).tc(tcNull).i32(-2).b,
			Config{}, "negative array length -2"},
		{"type string refers to a descriptor", w().u16(javaStreamMagic).u16(javaStreamVersion).tc(tcObject).tc(tcClassDesc).utf(JavaClassBytefrog).i64(JavaConfigSUID).
			raw(scSerializable).u16(1).raw('L').utf("exclusions").ref(0).b, Config{}, "the type of field exclusions refers to a class descriptor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseJavaConfig(tc.in)
			if tc.err == "" {
				if err != nil || !reflect.DeepEqual(got, tc.want) {
					t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
				}
				return
			}
			if !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("got %+v, %v; want an ErrBadConfig containing %q", got, err, tc.err)
			}
		})
	}
}

func TestParseJavaConfigInvalidUTFWrapsBoth(t *testing.T) {
	in := (&javaserW{}).std().tc(tcNull).arrayList("\xff").b
	_, err := ParseJavaConfig(in)
	if !errors.Is(err, ErrBadConfig) || !errors.Is(err, ErrInvalidUTF) {
		t.Errorf("got %v; want an error matching ErrBadConfig and ErrInvalidUTF", err)
	}
}

func TestParseJavaConfigSUIDMismatch(t *testing.T) {
	data := javaserRead(t, "arraylist")
	suidAt := 8 + len(JavaClassBytefrog)
	binary.BigEndian.PutUint64(data[suidAt:], 42)
	c, info, err := ParseJavaConfigInfo(data)
	want := javaserVectorConfig()
	want.ClassName = JavaClassBytefrog
	if err != nil || !reflect.DeepEqual(c, want) {
		t.Fatalf("got %+v, %v; want %+v", c, err, want)
	}
	if info.SUID != 42 || !info.SUIDMismatch() {
		t.Errorf("info: got SUID %d, mismatch %v; want 42, true", info.SUID, info.SUIDMismatch())
	}
}

// Every proper prefix of a valid stream, and every single-byte change of
// it, must come back as an error or a config; never a panic.
func TestParseJavaConfigPrefixesAndMutations(t *testing.T) {
	for _, name := range []string{"arraylist", "linkedlist", "aslist_shared_array", "mixed", "repeated_strings", "unicode"} {
		data := javaserRead(t, name)
		for n := range len(data) {
			if _, err := ParseJavaConfig(data[:n]); !errors.Is(err, ErrBadConfig) {
				t.Fatalf("%s[:%d]: got %v; want ErrBadConfig", name, n, err)
			}
		}
		mut := bytes.Clone(data)
		for i := range mut {
			for _, v := range []byte{0x00, 0x7F, 0x80, 0xFF, mut[i] ^ 1} {
				old := mut[i]
				mut[i] = v
				if _, err := ParseJavaConfig(mut); err != nil && !errors.Is(err, ErrBadConfig) {
					t.Fatalf("%s with byte %d = %#x: got %v; want nil or ErrBadConfig", name, i, v, err)
				}
				mut[i] = old
			}
		}
	}
}

func FuzzJavaConfig(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(javaserDir, "*.bin"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) <= 4096 {
			f.Add(b)
		}
	}
	f.Add(javaserVector(f, "java-serialized RuntimeAgentConfigurationV1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseJavaConfig(data)
		if err != nil {
			if !errors.Is(err, ErrBadConfig) {
				t.Fatalf("error %v does not match ErrBadConfig", err)
			}
			return
		}
		enc := AppendJavaConfig(nil, &c)
		c2, err := ParseJavaConfig(enc)
		if err != nil {
			t.Fatalf("re-parse: %v\n% x", err, enc)
		}
		if !reflect.DeepEqual(c, c2) {
			t.Fatalf("re-parse: got %+v; want %+v", c2, c)
		}
		if enc2 := AppendJavaConfig(nil, &c2); !bytes.Equal(enc, enc2) {
			t.Fatalf("re-encode differs:\n% x\n% x", enc2, enc)
		}
	})
}

func BenchmarkAppendJavaConfig(b *testing.B) {
	c := javaserVectorConfig()
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for range b.N {
		buf = AppendJavaConfig(buf[:0], &c)
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkParseJavaConfig(b *testing.B) {
	data := javaserRead(b, "arraylist")
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for range b.N {
		if _, err := ParseJavaConfig(data); err != nil {
			b.Fatal(err)
		}
	}
}
