// Command e2eagent is the agent process of BenchmarkIngestProcess: it
// records -events events (nested entry/exit pairs over a few methods) from
// -g goroutines as fast as it can into the HQ named by TADPOLE_HQ, then
// shuts the agent down. It prints nothing; errors go to stderr and the
// exit status.
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
)

func main() {
	events := flag.Int("events", 10_000_000, "events to record")
	g := flag.Int("g", 2, "recording goroutines")
	prof := flag.String("cpuprofile", "", "write a CPU profile of the process to this file")
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
