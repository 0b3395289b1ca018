package j4p

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func BenchmarkParseGET(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := ParseGET("/read/java.lang:type=Memory/HeapMemoryUsage/used", Dialect2, DefaultParams()); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseGETEscaped(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := ParseGET("/read/jboss.jmx:alias=jmx!/rmi!/RMIAdaptor/State", Dialect2, DefaultParams()); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParsePOST(b *testing.B) {
	body := []byte(`{"type":"read","mbean":"java.lang:type=Memory","attribute":"HeapMemoryUsage","path":"used"}`)
	lim := Limits{MaxDepth: 32, MaxBulk: 256}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for i := 0; i < b.N; i++ {
		if _, _, _, err := ParsePOST(body, DefaultParams(), lim); err != nil {
			b.Fatal(err)
		}
	}
}

// nopWriter is a ResponseWriter that keeps nothing, so the benchmark
// measures the handler.
type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *nopWriter) WriteHeader(int)             {}

// BenchmarkHandlerRead is a read of java.lang:type=Memory/HeapMemoryUsage
// through the handler, end to end but for the network; requests/s is
// 1e9 / ns/op.
func BenchmarkHandlerRead(b *testing.B) {
	h, _ := newTestHandler(b, nil)
	r := httptest.NewRequest("GET", "/jolokia/read/java.lang:type=Memory/HeapMemoryUsage", nil)
	r.RemoteAddr = "127.0.0.1:1"
	w := &nopWriter{h: http.Header{}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		clear(w.h)
		h.ServeHTTP(w, r)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

func BenchmarkHandlerBulkPOST(b *testing.B) {
	h, _ := newTestHandler(b, nil)
	body := `[{"type":"read","mbean":"java.lang:type=Memory","attribute":"HeapMemoryUsage","path":"used"},{"type":"search","mbean":"*:type=Calc,*"}]`
	w := &nopWriter{h: http.Header{}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r := httptest.NewRequest("POST", "/jolokia/", strings.NewReader(body))
		r.RemoteAddr = "127.0.0.1:1"
		clear(w.h)
		h.ServeHTTP(w, r)
	}
}

// BenchmarkServerRead is the same read over loopback TCP with keep-alive:
// what a client sees, requests/s reported.
func BenchmarkServerRead(b *testing.B) {
	c := testConfig()
	c.Addr = "127.0.0.1:0"
	s, err := NewServer(c, newTestBeans())
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Start(); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	url := "http://" + s.Addr().String() + "/jolokia/read/java.lang:type=Memory/HeapMemoryUsage"
	client := &http.Client{}
	buf := make([]byte, 4096)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		resp, err := client.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := resp.Body.Read(buf); err != nil {
				break
			}
		}
		resp.Body.Close()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
