package j4p

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// testBeans is a registry of a few beans shaped like the JVM's, with state
// the tests change.
type testBeans struct {
	*Registry
	mu      sync.Mutex
	verbose bool
	counter int64
	conf    map[string]any
	gcs     int
}

func newTestBeans() *testBeans {
	b := &testBeans{Registry: NewRegistry(), conf: map[string]any{"level": "info", "limits": map[string]any{"max": int64(10)}}}
	b.Register(MustObjectName("java.lang:type=Memory"), &StaticBean{
		Class: "sun.management.MemoryImpl", Desc: "Memory",
		Attrs: []Attr{
			{Name: "HeapMemoryUsage", Type: "javax.management.openmbean.CompositeData", Desc: "HeapMemoryUsage", Get: func() (any, error) {
				return map[string]any{"init": int64(134217728), "used": int64(15348352), "committed": int64(18292736), "max": int64(532742144)}, nil
			}},
			{Name: "Verbose", Type: "boolean", Desc: "Verbose", Get: func() (any, error) {
				b.mu.Lock()
				defer b.mu.Unlock()
				return b.verbose, nil
			}, Set: func(v any) error {
				b.mu.Lock()
				defer b.mu.Unlock()
				b.verbose = v.(bool)
				return nil
			}},
			{Name: "ObjectPendingFinalizationCount", Type: "int", Desc: "ObjectPendingFinalizationCount", Get: func() (any, error) { return int32(0), nil }},
		},
		Ops: []Op{{Name: "gc", Ret: "void", Desc: "gc", Call: func([]any) (any, error) {
			b.mu.Lock()
			b.gcs++
			b.mu.Unlock()
			return nil, nil
		}}},
	})
	type point struct {
		X, Y   int
		hidden int
		Label  string `json:"label"`
	}
	b.Register(MustObjectName("test:type=Calc,name=a"), &StaticBean{
		Class: "test.Calc",
		Attrs: []Attr{
			{Name: "Names", Type: "[Ljava.lang.String;", Get: func() (any, error) { return []string{"x", "y", "z"}, nil }},
			{Name: "Point", Type: "test.Point", Get: func() (any, error) { return &point{X: 1, Y: 2, hidden: 3, Label: "p"}, nil }},
			{Name: "Deep", Type: "java.util.Map", Get: func() (any, error) {
				return map[string]any{"a": map[string]any{"b": map[string]any{"c": map[string]any{"d": int64(1)}}}}, nil
			}},
			{Name: "Counter", Type: "long", Get: func() (any, error) {
				b.mu.Lock()
				defer b.mu.Unlock()
				return b.counter, nil
			}, Set: func(v any) error {
				b.mu.Lock()
				defer b.mu.Unlock()
				b.counter = v.(int64)
				return nil
			}},
			{Name: "Conf", Type: "java.util.Map", Get: func() (any, error) {
				b.mu.Lock()
				defer b.mu.Unlock()
				return b.conf, nil
			}, Set: func(v any) error {
				b.mu.Lock()
				defer b.mu.Unlock()
				b.conf = v.(map[string]any)
				return nil
			}},
			{Name: "Broken", Type: "int", Get: func() (any, error) { return nil, errors.New("sensor offline") }},
			{Name: "Self", Type: "javax.management.ObjectName", Get: func() (any, error) { return MustObjectName("test:type=Calc,name=a"), nil }},
		},
		Ops: []Op{
			{Name: "add", Ret: "int", Args: []ArgInfo{{Name: "a", Type: "int"}, {Name: "b", Type: "int"}}, Call: func(a []any) (any, error) {
				return a[0].(int64) + a[1].(int64), nil
			}},
			{Name: "add", Ret: "long", Args: []ArgInfo{{Name: "a", Type: "long"}, {Name: "b", Type: "long"}, {Name: "c", Type: "long"}}, Call: func(a []any) (any, error) {
				return a[0].(int64) + a[1].(int64) + a[2].(int64), nil
			}},
			{Name: "concat", Ret: "java.lang.String", Args: []ArgInfo{{Name: "a", Type: "java.lang.String"}, {Name: "b", Type: "java.lang.String"}}, Call: func(a []any) (any, error) {
				s := func(v any) string {
					if v == nil {
						return "(null)"
					}
					return v.(string)
				}
				return s(a[0]) + s(a[1]), nil
			}},
			{Name: "sum", Ret: "long", Args: []ArgInfo{{Name: "xs", Type: "[J"}}, Call: func(a []any) (any, error) {
				var t int64
				for _, x := range a[0].([]any) {
					t += x.(int64)
				}
				return t, nil
			}},
			{Name: "boom", Ret: "void", Call: func([]any) (any, error) { panic("boom") }},
		},
	})
	b.Register(MustObjectName("test:type=Calc,name=b"), &StaticBean{
		Attrs: []Attr{{Name: "Counter", Type: "long", Get: func() (any, error) { return int64(7), nil }}},
	})
	b.Register(MustObjectName("jboss.jmx:alias=jmx/rmi/RMIAdaptor"), &StaticBean{
		Attrs: []Attr{{Name: "State", Type: "java.lang.String", Get: func() (any, error) { return "Started", nil }}},
	})
	return b
}

func testConfig() *Config {
	c := DefaultConfig()
	c.Now = func() time.Time { return time.Unix(1700000000, 0) }
	return &c
}

func newTestHandler(t testing.TB, mod func(*Config)) (*Handler, *testBeans) {
	t.Helper()
	c := testConfig()
	if mod != nil {
		mod(c)
	}
	b := newTestBeans()
	h, err := NewHandler(c, b)
	if err != nil {
		t.Fatal(err)
	}
	return h, b
}

// do runs one request through h from a loopback client.
func do(h http.Handler, method, target, body string, hdr ...string) *httptest.ResponseRecorder {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r := httptest.NewRequest(method, target, rd)
	r.RemoteAddr = "127.0.0.1:40000"
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// decode parses a JSON response body.
func decode(t testing.TB, w *httptest.ResponseRecorder) any {
	t.Helper()
	var v any
	d := json.NewDecoder(w.Body)
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("response is not JSON (%v): HTTP %d", err, w.Code)
	}
	return v
}

// jsonText is v written with encoding/json: stable, comparable.
func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
