// Command e2eagent is the agent process of BenchmarkIngestProcess: it
// records -events events (nested entry/exit pairs over a few methods) from
// -g goroutines as fast as it can into the HQ named by TADPOLE_HQ, then
// shuts the agent down. It prints nothing; errors go to stderr and the
// exit status.
//
// With TADPOLE_E2E_PRODUCER=probes (or -producer probes) it is a traced
// JVM instead: each goroutine is a Java thread handing full probe buffers
// (the JVM agent's words: a time word, then entries and exits) over as the
// JVM agent does: copied into a buffer of a shared pool of 32, which is
// lent to the agent (host.HandProbes) until its drain has encoded it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/tadpole-trace/tadpole/agent"
	"github.com/tadpole-trace/tadpole/internal/host"
)

func main() {
	events := flag.Int("events", 10_000_000, "events to record")
	g := flag.Int("g", 2, "recording goroutines")
	prof := flag.String("cpuprofile", "", "write a CPU profile of the process to this file")
	producer := flag.String("producer", os.Getenv("TADPOLE_E2E_PRODUCER"), "calls (Go calls) or probes (JVM probe buffers)")
	flag.Parse()
	if *prof != "" {
		f, err := os.Create(*prof)
		if err == nil {
			pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	cfg, err := agent.LoadConfig("")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2eagent:", err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	a, err := agent.Start(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2eagent:", err)
		os.Exit(1)
	}
	ms := []*agent.Method{
		agent.NewMethod("bench/Shop.serve;1;(I)V"),
		agent.NewMethod("bench/Shop.price;2;(I)J"),
		agent.NewMethod("bench/Stock.reserve;1;(II)Z"),
		agent.NewMethod("bench/Payments.charge;1;(J)V"),
	}
	// Each round is 8 events: serve → price, reserve → charge.
	rounds := *events / 8 / *g
	var wg sync.WaitGroup
	for w := range *g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if *producer == "probes" {
				jvmThread(uint64(20+w), fmt.Sprintf("worker-%d", w), ms, rounds)
				return
			}
			agent.SetThreadName(fmt.Sprintf("worker-%d", w))
			for range rounds {
				f := ms[0].Enter()
				ms[1].Enter().Exit()
				r := ms[2].Enter()
				ms[3].Enter().Exit()
				r.Exit()
				f.Exit()
			}
		}()
	}
	wg.Wait()
	if err := a.Shutdown(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "e2eagent: shutdown:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

// probeRounds is the rounds of a full probe buffer: 8 events each, after
// the buffer's time word, within the JVM agent's 8192 words.
const probeRounds = (8192 - 1) / 8

// jvmThread records rounds rounds as a traced Java thread with id tid
// does: named once (a host batch, as the JVM agent's ThreadStart), then
// its probe buffers, each stamped with the millisecond it is handed over.
func jvmThread(tid uint64, name string, ms []*agent.Method, rounds int) {
	b := host.AppendBatchRecord(nil, host.BatchName, 0, 0, 0, 0, host.MonoNow(), name, "")
	if _, err := host.SubmitBatch(tid, b); err != nil {
		fmt.Fprintln(os.Stderr, "e2eagent:", err)
	}
	entry := func(m *agent.Method) int64 { return int64(m.ID())<<8 | host.ProbeEntry }
	exit := func(m *agent.Method, line int64) int64 { return line<<48 | int64(m.ID())<<8 | host.ProbeExit }
	w := make([]int64, 1, 1+8*probeRounds)
	for range probeRounds {
		w = append(w, entry(ms[0]), entry(ms[1]), exit(ms[1], 12), entry(ms[2]), entry(ms[3]), exit(ms[3], 40),
			exit(ms[2], 31), exit(ms[0], 7))
	}
	for rounds > 0 {
		n := min(rounds, probeRounds)
		rounds -= n
		w[0] = host.MonoNow()/1e6<<8 | host.ProbeTime
		b := <-handOverPool
		b.w = append(b.w[:0], w[:1+8*n]...)
		if !host.HandProbes(tid, b.w, b) {
			fmt.Fprintln(os.Stderr, "e2eagent: the agent did not take a probe buffer")
			os.Exit(1)
		}
	}
}

// handOver is a buffer of the hand-over pool (the JVM agent's probe.c),
// lent to the agent.
type handOver struct{ w []int64 }

// Release gives the buffer back to the pool.
func (b *handOver) Release() { handOverPool <- b }

// handOverPool holds the free buffers: a thread finding none waits.
var handOverPool = func() chan *handOver {
	c := make(chan *handOver, 32)
	for range cap(c) {
		c <- &handOver{w: make([]int64, 0, 8192)}
	}
	return c
}()
