package bytefrog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// jsonVectorText is the reference v2+ configuration JSON.
const jsonVectorText = `{"bufferMemoryBudget":25600,"exclusions":[".*"],"heartbeatInterval":1000,"inclusions":["^com/example/[^/]+$"],"numDataSenders":1,"queueRetryCount":5,"runId":0}`

func TestJSONConfigVector(t *testing.T) {
	msg := javaserVector(t, "Configuration v2+")
	// 01, u16 length, then the JSON text.
	if len(msg) != 162 || msg[0] != byte(MsgConfiguration) || int(msg[1])<<8|int(msg[2]) != len(msg)-3 {
		t.Fatalf("vector: got % x", msg)
	}
	want := msg[3:]
	if string(want) != jsonVectorText {
		t.Fatalf("vector text: got %s; want %s", want, jsonVectorText)
	}
	c := javaserVectorConfig()
	got, err := AppendJSONConfig(nil, &c)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("AppendJSONConfig: got %s, %v; want %s", got, err, want)
	}
	parsed, err := ParseJSONConfig(want)
	if err != nil || !reflect.DeepEqual(parsed, c) {
		t.Errorf("ParseJSONConfig: got %+v, %v; want %+v", parsed, err, c)
	}
}

func TestAppendJSONConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Config
		want string
	}{
		{"zero", Config{}, `{"bufferMemoryBudget":0,"exclusions":[],"heartbeatInterval":0,"inclusions":[],"numDataSenders":0,"queueRetryCount":0,"runId":0}`},
		{"extremes and a high run id", Config{RunID: 200, HeartbeatInterval: math.MinInt32, BufferMemoryBudget: math.MaxInt32,
			QueueRetryCount: -1, NumDataSenders: 2, Exclusions: []string{"a", "b"}, Inclusions: []string{""}},
			`{"bufferMemoryBudget":2147483647,"exclusions":["a","b"],"heartbeatInterval":-2147483648,"inclusions":[""],"numDataSenders":2,"queueRetryCount":-1,"runId":-56}`},
		{"run id 255", Config{RunID: 255}, `{"bufferMemoryBudget":0,"exclusions":[],"heartbeatInterval":0,"inclusions":[],"numDataSenders":0,"queueRetryCount":0,"runId":-1}`},
		{"escapes", Config{Exclusions: []string{"q\"b\\s/</>&\b\f\n\r\t\x00\x01\x1f\x7f"}},
			`{"bufferMemoryBudget":0,"exclusions":["q\"b\\s/</>&\b\f\n\r\t\u0000\u0001\u001f` + "\x7f" + `"],"heartbeatInterval":0,"inclusions":[],"numDataSenders":0,"queueRetryCount":0,"runId":0}`},
		{"unicode", Config{Inclusions: []string{"é日\u2028😀\U0010FFFF", "bad\xff"}},
			`{"bufferMemoryBudget":0,"exclusions":[],"heartbeatInterval":0,"inclusions":["é日` + "\u2028" + `\ud83d\ude00\udbff\udfff","bad` + "\uFFFD" + `"],"numDataSenders":0,"queueRetryCount":0,"runId":0}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AppendJSONConfig([]byte("x"), &tc.c)
			if err != nil || string(got) != "x"+tc.want {
				t.Fatalf("got %s, %v; want x%s", got, err, tc.want)
			}
			if !json.Valid(got[1:]) {
				t.Errorf("not valid JSON: %s", got[1:])
			}
			if err := ValidUTF(got[1:]); err != nil {
				t.Errorf("not valid modified UTF-8: %v", err)
			}
		})
	}
}

// jsonLimitConfig returns a config whose JSON is exactly n bytes.
func jsonLimitConfig(tb testing.TB, n int) Config {
	var c Config
	base, err := AppendJSONConfig(nil, &c)
	if err != nil {
		tb.Fatal(err)
	}
	c.Inclusions = []string{strings.Repeat("a", n-len(base)-len(`""`))}
	return c
}

func TestAppendJSONConfigTooLarge(t *testing.T) {
	c := jsonLimitConfig(t, MaxStringLen)
	got, err := AppendJSONConfig(nil, &c)
	if err != nil || len(got) != MaxStringLen {
		t.Errorf("%d bytes: got %d bytes, %v; want %d, nil", MaxStringLen, len(got), err, MaxStringLen)
	}
	c = jsonLimitConfig(t, MaxStringLen+1)
	prefix := []byte("prefix")
	got, err = AppendJSONConfig(prefix, &c)
	if !errors.Is(err, ErrTooLarge) || !bytes.Equal(got, prefix) {
		t.Errorf("%d bytes: got %d bytes, %v; want the prefix and ErrTooLarge", MaxStringLen+1, len(got), err)
	}
	// Escapes count: 11000 control characters take 66000 bytes.
	c = Config{Exclusions: []string{strings.Repeat("\x01", 11000)}}
	if _, err := AppendJSONConfig(nil, &c); !errors.Is(err, ErrTooLarge) {
		t.Errorf("escaped: got %v; want ErrTooLarge", err)
	}
}

func TestAppendJSONConfigNoAlloc(t *testing.T) {
	c := javaserVectorConfig()
	c.Inclusions = append(c.Inclusions, "日本", "a\x00😀")
	buf := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() { buf, _ = AppendJSONConfig(buf[:0], &c) }); n != 0 {
		t.Errorf("AppendJSONConfig: got %v allocs; want 0", n)
	}
}

func TestParseJSONConfig(t *testing.T) {
	def := DefaultConfig()
	with := func(f func(c *Config)) Config {
		c := DefaultConfig()
		f(&c)
		return c
	}
	for _, tc := range []struct {
		name string
		in   string
		want Config
		err  string // "" for success
	}{
		{"empty object keeps defaults", `{}`, def, ""},
		{"C# client style keys", `{"RunId":1,"HeartbeatInterval":2,"Exclusions":["a"],"Inclusions":["b","c"],"BufferMemoryBudget":3,"NumDataSenders":4}`,
			Config{RunID: 1, HeartbeatInterval: 2, Exclusions: []string{"a"}, Inclusions: []string{"b", "c"}, BufferMemoryBudget: 3, NumDataSenders: 4, QueueRetryCount: 5}, ""},
		{"any case, spaces", " {\n\t\"RUNID\" : 7 , \"queueretrycount\":0 } \n", with(func(c *Config) { c.RunID = 7; c.QueueRetryCount = 0 }), ""},
		{"unknown keys ignored", `{"extra":{"a":[1,{"b":null}]},"runId":3,"runIdentifier":9,"rünId":8,"more":"x"}`, with(func(c *Config) { c.RunID = 3 }), ""},
		{"null and empty lists", `{"exclusions":null,"inclusions":[]}`, def, ""},
		{"signed run id", `{"runId":-56}`, with(func(c *Config) { c.RunID = 200 }), ""},
		{"run id bounds", `{"runId":255}`, with(func(c *Config) { c.RunID = 255 }), ""},
		{"run id low bound", `{"runId":-128}`, with(func(c *Config) { c.RunID = 128 }), ""},
		{"int32 bounds", `{"heartbeatInterval":-2147483648,"bufferMemoryBudget":2147483647}`,
			with(func(c *Config) { c.HeartbeatInterval = math.MinInt32; c.BufferMemoryBudget = math.MaxInt32 }), ""},
		{"escapes", `{"exclusions":["\u00e9\ud83d\ude00\n\"\\\/","\ud800"]}`, with(func(c *Config) { c.Exclusions = []string{"é😀\n\"\\/", "\uFFFD"} }), ""},
		{"modified UTF-8 text", "{\"exclusions\":[\"\xed\xa0\xbd\xed\xb8\x80\xc3\xa9\xed\xa0\x80\"]}", with(func(c *Config) { c.Exclusions = []string{"😀é\uFFFD"} }), ""},

		{"empty input", ``, Config{}, "unexpected EOF"},
		{"not an object", `[]`, Config{}, "the configuration is [, want {"},
		{"null", `null`, Config{}, "the configuration is null, want {"},
		{"truncated", `{"runId":1`, Config{}, "unexpected EOF"},
		{"trailing value", `{} {}`, Config{}, "{ after the configuration object"},
		{"trailing garbage", `{}x`, Config{}, "invalid character"},
		{"duplicate key", `{"runId":1,"RUNID":2}`, Config{}, `key "runId" given twice`},
		{"run id too large", `{"runId":256}`, Config{}, "runId 256 out of range [-128, 255]"},
		{"run id too small", `{"runId":-129}`, Config{}, "runId -129 out of range"},
		{"int32 overflow", `{"numDataSenders":2147483648}`, Config{}, "numDataSenders 2147483648 out of range"},
		{"int64 overflow", `{"numDataSenders":99999999999999999999}`, Config{}, "numDataSenders 99999999999999999999 out of range"},
		{"fraction", `{"queueRetryCount":1.5}`, Config{}, "queueRetryCount is 1.5, want an integer"},
		{"exponent", `{"queueRetryCount":1e3}`, Config{}, "queueRetryCount is 1e3, want an integer"},
		{"string number", `{"queueRetryCount":"5"}`, Config{}, `queueRetryCount is "5", want an integer`},
		{"null number", `{"heartbeatInterval":null}`, Config{}, "heartbeatInterval is null, want an integer"},
		{"bool number", `{"heartbeatInterval":true}`, Config{}, "heartbeatInterval is true, want an integer"},
		{"list is a string", `{"exclusions":".*"}`, Config{}, `exclusions is ".*", want an array of strings`},
		{"list is an object", `{"exclusions":{}}`, Config{}, "exclusions is {, want an array of strings"},
		{"number element", `{"inclusions":["a",1]}`, Config{}, "element 1 of inclusions is 1, want a string"},
		{"null element", `{"inclusions":[null]}`, Config{}, "element 0 of inclusions is null, want a string"},
		{"nested array element", `{"inclusions":[[]]}`, Config{}, "element 0 of inclusions is [, want a string"},
		{"raw NUL in text", "{\"exclusions\":[\"a\x00\"]}", Config{}, "invalid modified UTF-8"},
		{"C0 80 in a string", "{\"exclusions\":[\"a\xc0\x80\"]}", Config{}, "invalid character"},
		{"4-byte form", "{\"exclusions\":[\"\xf0\x9f\x98\x80\"]}", Config{}, "invalid modified UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseJSONConfig([]byte(tc.in))
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

func TestParseJSONConfigInvalidUTFWrapsBoth(t *testing.T) {
	_, err := ParseJSONConfig([]byte("{\"exclusions\":[\"\xff\"]}"))
	if !errors.Is(err, ErrBadConfig) || !errors.Is(err, ErrInvalidUTF) {
		t.Errorf("got %v; want an error matching ErrBadConfig and ErrInvalidUTF", err)
	}
}

// Every configuration the Java streams carry survives JSON both ways.
func TestJSONConfigRoundTripJavaCases(t *testing.T) {
	for _, tc := range javaserCases() {
		if tc.err != "" {
			continue
		}
		c := tc.want
		c.ClassName = ""
		js, err := AppendJSONConfig(nil, &c)
		if err != nil {
			if tc.name == "longstring" && errors.Is(err, ErrTooLarge) {
				continue
			}
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := ParseJSONConfig(js)
		if err != nil || !reflect.DeepEqual(got, c) {
			t.Errorf("%s: got %+v, %v; want %+v", tc.name, got, err, c)
		}
	}
}

func ExampleParseJSONConfig() {
	c, err := ParseJSONConfig([]byte(`{"RunId":3,"HeartbeatInterval":500,"Inclusions":["^com/example/"]}`))
	fmt.Println(c.RunID, c.HeartbeatInterval, c.Inclusions, c.Exclusions == nil, c.QueueRetryCount, err)
	js, _ := AppendJSONConfig(nil, &c)
	fmt.Println(string(js))
	// Output:
	// 3 500 [^com/example/] true 5 <nil>
	// {"bufferMemoryBudget":25600,"exclusions":[],"heartbeatInterval":500,"inclusions":["^com/example/"],"numDataSenders":1,"queueRetryCount":5,"runId":3}
}

func FuzzJSONConfig(f *testing.F) {
	f.Add([]byte(jsonVectorText))
	f.Add([]byte(`{"RunId":1,"HeartbeatInterval":2,"Exclusions":["a"],"Inclusions":null,"BufferMemoryBudget":3,"NumDataSenders":4}`))
	f.Add([]byte(`{"runId":-56,"exclusions":["\ud83d\ude00\u0000"],"x":{"y":[1.5,true]}}`))
	// The configurations of the Java streams, as JSON.
	files, _ := filepath.Glob(filepath.Join(javaserDir, "*.bin"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil || len(b) > 4096 {
			continue
		}
		if c, err := ParseJavaConfig(b); err == nil {
			if js, err := AppendJSONConfig(nil, &c); err == nil {
				f.Add(js)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseJSONConfig(data)
		if err != nil {
			if !errors.Is(err, ErrBadConfig) {
				t.Fatalf("error %v does not match ErrBadConfig", err)
			}
			return
		}
		js, err := AppendJSONConfig(nil, &c)
		if errors.Is(err, ErrTooLarge) && len(data) > (MaxStringLen-256)/2 {
			return // escaping can double a long text past what writeUTF allows
		}
		if err != nil {
			t.Fatalf("AppendJSONConfig(%+v): %v", c, err)
		}
		if !json.Valid(js) || ValidUTF(js) != nil {
			t.Fatalf("AppendJSONConfig wrote bad text %q", js)
		}
		c2, err := ParseJSONConfig(js)
		if err != nil || !reflect.DeepEqual(c, c2) {
			t.Fatalf("re-parse of %s: got %+v, %v; want %+v", js, c2, err, c)
		}
	})
}

func BenchmarkAppendJSONConfig(b *testing.B) {
	c := javaserVectorConfig()
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for range b.N {
		buf, _ = AppendJSONConfig(buf[:0], &c)
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkParseJSONConfig(b *testing.B) {
	data := []byte(jsonVectorText)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for range b.N {
		if _, err := ParseJSONConfig(data); err != nil {
			b.Fatal(err)
		}
	}
}
