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

// load sends n GET requests of url from clients concurrent keep-alive
// clients and returns their latencies. Every answer must be HTTP 200 with
// a JSON status 200.
func load(b *testing.B, url string, clients, n int) []time.Duration {
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients, DisableCompression: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	lat := make([][]time.Duration, clients)
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
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
	if f := failed.Load(); f != nil {
		b.Fatalf("%s: %v", url, f)
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	return all
}

// percentile of latencies (sorted in place).
func percentile(lat []time.Duration, p float64) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	slices.Sort(lat)
	return lat[min(len(lat)-1, int(float64(len(lat))*p))]
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
// clients (8; J4P_BENCH_CLIENTS) against tadpole's endpoint and the Jolokia
// 1.7.1 reference agent in the same JVM, which runs a small allocating
// workload. The reference agent serves with its JVM agent's default
// executor (one thread) and, on a second port ("pool"), with a fixed pool
// of N threads; "own" is tadpole's endpoint reading its own bean (no JVM
// call). The endpoints take turns in three rounds of b.N/3 requests each,
// so that a busy machine slows them alike. Reported per endpoint: req/s
// and p99 latency; and the throughput ratios tadpole/Jolokia
// ("x-jolokia") and tadpole/Jolokia-with-a-pool ("x-pool").
// J4P_BENCH_PROCS sets the agent's GOMAXPROCS in the JVM (default 1).
func BenchmarkJ4PHeapRead(b *testing.B) {
	clients := benchClients()
	var env []string
	if p := os.Getenv("J4P_BENCH_PROCS"); p != "" {
		env = append(env, "TADPOLE_PROCS="+p)
	}
	j := startJ4P(b, j4pOptions{jolokia: true, jolokiaPool: clients, args: []string{"work"}, env: env})
	eps := []struct{ name, url string }{
		{"tadpole", j.Tadpole + heapRead}, {"jolokia", j.Jolokia + heapRead}, {"pool", j.JolokiaPool + heapRead},
		{"own", j.Tadpole + "/read/io.tadpole:type=Agent/Mode"},
	}
	for _, ep := range eps {
		load(b, ep.url, clients, 300) // warm up: JIT, connections, workers
	}
	const rounds = 3
	per := max(b.N/rounds, clients)
	lat := make([][]time.Duration, len(eps))
	busy := make([]time.Duration, len(eps))
	b.ResetTimer()
	for range rounds {
		for i, ep := range eps {
			t0 := time.Now()
			lat[i] = append(lat[i], load(b, ep.url, clients, per)...)
			busy[i] += time.Since(t0)
		}
	}
	b.StopTimer()
	rate := make([]float64, len(eps))
	line := fmt.Sprintf("BenchmarkJ4PHeapRead: %d clients, %d requests per endpoint:", clients, per*rounds)
	for i, ep := range eps {
		rate[i] = float64(per*rounds) / busy[i].Seconds()
		p99 := percentile(lat[i], 0.99)
		b.ReportMetric(rate[i], ep.name+"-req/s")
		b.ReportMetric(float64(p99.Microseconds()), ep.name+"-p99-µs")
		line += fmt.Sprintf(" %s %.0f req/s p50 %v p99 %v;", ep.name, rate[i], percentile(lat[i], 0.5), p99)
	}
	b.ReportMetric(rate[0]/rate[1], "x-jolokia")
	b.ReportMetric(rate[0]/rate[2], "x-pool")
	if b.N < 100 {
		return // the framework's first, tiny run
	}
	fmt.Printf("%s throughput ratio tadpole/Jolokia %.2f, tadpole/Jolokia-pool %.2f\n", line, rate[0]/rate[1], rate[0]/rate[2])
}
