// Command hceapp is the Go program of the agent's HCE tests: it traces to
// HQ when TADPOLE_HQ is set, registers with the HCE hub of TADPOLE_HCE,
// and logs "tick seq=N" at INFO on the loggers app.orders and app.payments
// every few milliseconds, recording the marker "app.tick" = N, until its
// standard input closes.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/tadpole-trace/tadpole/agent"
)

const tickInterval = 5 * time.Millisecond

func main() {
	cfg, err := agent.LoadConfig("")
	if err != nil {
		fmt.Fprintln(os.Stderr, "hceapp:", err)
		os.Exit(2)
	}
	var a *agent.Agent
	if cfg.HQ != "" {
		if a, err = agent.Start(context.Background(), cfg); err != nil {
			fmt.Fprintln(os.Stderr, "hceapp:", err)
			os.Exit(1)
		}
	}
	stopHCE := agent.StartHCE(cfg)
	orders := slog.New(agent.NewSlogHandler("app.orders", nil))
	payments := slog.New(agent.NewSlogHandler("app.payments", nil))
	fmt.Fprintln(os.Stderr, "hceapp: ready")

	var closed atomic.Bool
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		closed.Store(true)
	}()
	for seq := 0; !closed.Load(); seq++ {
		orders.Info("tick", "seq", seq)
		payments.Info("tick", "seq", seq)
		agent.Mark("app.tick", strconv.Itoa(seq))
		time.Sleep(tickInterval)
	}
	stopHCE()
	if a != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		a.Shutdown(ctx)
	}
}
