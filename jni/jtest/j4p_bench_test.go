package jtest

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// benchClients is the number of concurrent keep-alive HTTP clients
// (J4P_BENCH_CLIENTS overrides it).
func benchClients() int {
	if n, err := strconv.Atoi(os.Getenv("J4P_BENCH_CLIENTS")); err == nil && n > 0 {
		return n
	}
	return 8
}

// heapRead is the benchmark's request.
const heapRead = "/read/java.lang:type=Memory/HeapMemoryUsage"

// loadResult is one measured load.
type loadResult struct {
	reqPerSec float64
	p50, p99  time.Duration
}

// load sends n GET requests of url from clients concurrent keep-alive
// clients and measures the throughput and the latency percentiles. Every
// answer must be HTTP 200 with a JSON status 200.
func load(b *testing.B, url string, clients, n int) loadResult {
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients, DisableCompression: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	lat := make([][]time.Duration, clients)
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 4096)
			for next.Add(1) <= int64(n) {
				t0 := time.Now()
				r, err := c.Get(url)
				if err != nil {
					failed.Store(err.Error())
					return
				}
				k, _ := io.ReadFull(r.Body, buf)
				io.Copy(io.Discard, r.Body)
				r.Body.Close()
				lat[w] = append(lat[w], time.Since(t0))
				if r.StatusCode != 200 || !jsonStatus200(buf[:k]) {
					failed.Store(fmt.Sprintf("HTTP %d: %s", r.StatusCode, buf[:k]))
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if f := failed.Load(); f != nil {
		b.Fatalf("%s: %v", url, f)
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	pct := func(p float64) time.Duration { return all[min(len(all)-1, int(float64(len(all))*p))] }
	return loadResult{reqPerSec: float64(n) / elapsed.Seconds(), p50: pct(0.50), p99: pct(0.99)}
}

func jsonStatus200(b []byte) bool {
	for i := 0; i+12 <= len(b); i++ {
		if string(b[i:i+12]) == `"status":200` {
			return true
		}
	}
	return false
}

// BenchmarkJ4PHeapRead: read requests of
// java.lang:type=Memory/HeapMemoryUsage from N concurrent keep-alive
// clients against tadpole's endpoint and the Jolokia 1.7.1 reference
// agent in the same JVM, which runs a small allocating workload. The
// reference agent runs with its JVM agent's default executor (one thread)
// and, as "jolokia-pool", with a fixed pool of N threads. Each reports
// req/s, p50 and p99 latency; the run ends with the throughput ratios.
func BenchmarkJ4PHeapRead(b *testing.B) {
	clients := benchClients()
	var env []string
	if p := os.Getenv("J4P_BENCH_PROCS"); p != "" {
		env = append(env, "TADPOLE_PROCS="+p) // the agent's GOMAXPROCS in the JVM (default 1)
	}
	j := startJ4P(b, j4pOptions{jolokia: true, jolokiaPool: clients, args: []string{"work"}, env: env})
	results := map[string]loadResult{}
	for _, ep := range []struct{ name, url string }{
		{"tadpole", j.Tadpole + heapRead}, {"jolokia", j.Jolokia + heapRead}, {"jolokia-pool", j.JolokiaPool + heapRead},
		// tadpole's own bean, served in Go: the endpoint without the JVM's part.
		{"tadpole-own-bean", j.Tadpole + "/read/io.tadpole:type=Agent/Mode"},
	} {
		b.Run(ep.name, func(b *testing.B) {
			load(b, ep.url, clients, 200) // warm up: JIT, connections, workers
			b.ResetTimer()
			r := load(b, ep.url, clients, max(b.N, clients))
			b.StopTimer()
			b.ReportMetric(r.reqPerSec, "req/s")
			b.ReportMetric(float64(r.p50.Microseconds()), "p50-µs")
			b.ReportMetric(float64(r.p99.Microseconds()), "p99-µs")
			results[ep.name] = r
		})
	}
	t, jo, jp := results["tadpole"], results["jolokia"], results["jolokia-pool"]
	if jo.reqPerSec > 0 && jp.reqPerSec > 0 {
		fmt.Printf("BenchmarkJ4PHeapRead: %d clients: tadpole %.0f req/s (p99 %v), Jolokia %.0f req/s (p99 %v), Jolokia with %d threads %.0f req/s (p99 %v); "+
			"throughput ratio tadpole/Jolokia %.2f, tadpole/Jolokia-pool %.2f",
			clients, t.reqPerSec, t.p99, jo.reqPerSec, jo.p99, clients, jp.reqPerSec, jp.p99,
			t.reqPerSec/jo.reqPerSec, t.reqPerSec/jp.reqPerSec)
		fmt.Println()
	}
}
