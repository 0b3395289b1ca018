// Command lttngapp is the Go program of the agent's LTTng integration
// tests: it uses the agent as an application would (configuration from
// TADPOLE_* variables, slog loggers) and logs in a loop until its standard
// input closes. Without TADPOLE_HQ it only registers with the LTTng
// session daemon (agent.RegisterLTTng).
//
// Every iteration logs "tick seq=N" at DEBUG, INFO, WARN and ERROR on the
// loggers app.orders, app.payments and app.orders.db, then records the
// marker "app.tick" = N, so a reader of the trace knows how far the program
// got even when no log record is recorded.
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

// Loop settings.
const (
	tickInterval    = 5 * time.Millisecond
	shutdownTimeout = 10 * time.Second
	tickMarker      = "app.tick"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "lttngapp:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, err := agent.LoadConfig("")
	if err != nil {
		return err
	}
	var a *agent.Agent
	if cfg.HQ == "" {
		// LTTng alone: listed by the session daemon and obeying it, no HQ.
		if err := agent.RegisterLTTng(cfg); err != nil {
			return err
		}
	} else if a, err = agent.Start(context.Background(), cfg); err != nil {
		return err
	}
	debug := &agent.SlogOptions{Level: slog.LevelDebug}
	ordersH := agent.NewSlogHandler("app.orders", debug)
	orders := slog.New(ordersH)
	payments := slog.New(agent.NewSlogHandler("app.payments", debug))
	db := slog.New(ordersH.WithGroup("db"))
	loggers := []*slog.Logger{orders, payments, db}
	levels := []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError}

	var closed atomic.Bool
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		closed.Store(true)
	}()
	ctx := context.Background()
	for seq := 0; !closed.Load(); seq++ {
		for _, l := range loggers {
			for _, lv := range levels {
				l.Log(ctx, lv, "tick", "seq", seq)
			}
		}
		agent.Mark(tickMarker, strconv.Itoa(seq))
		time.Sleep(tickInterval)
	}
	if a == nil {
		return nil
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	return a.Shutdown(sctx)
}
