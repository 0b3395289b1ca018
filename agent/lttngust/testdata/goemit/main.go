// Command goemit is the Go program of the LTTng recording test: the Go
// twin of capi/ctest/testdata/lttngrec.c. It starts the agent from the
// TADPOLE_* environment (HQ or not), prints "ready", then for each line
// "emit P" on its standard input logs one batch and prints "emitted P";
// at EOF it stops and exits. Logger gapp.alpha logs through log/slog,
// gapp.beta through agent.Logger.Log.
package main

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/tadpole-trace/tadpole/agent"
	_ "github.com/tadpole-trace/tadpole/agent/lttngust"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "goemit:", err)
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
		if err := agent.RegisterLTTng(cfg); err != nil {
			return err
		}
	} else if a, err = agent.Start(context.Background(), cfg); err != nil {
		return err
	}
	alpha := slog.New(agent.NewSlogHandler("gapp.alpha", nil))
	beta := agent.RegisterLogger("gapp.beta")
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		p, ok := strings.CutPrefix(in.Text(), "emit ")
		if !ok {
			continue
		}
		emit(alpha, beta, p)
		fmt.Println("emitted", p)
	}
	if a == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return a.Shutdown(ctx)
}

// emit logs one batch; the records of alpha have emit as their source.
func emit(alpha *slog.Logger, beta *agent.Logger, p string) {
	for i := 0; i < 3; i++ {
		alpha.Info(fmt.Sprintf("%s info %d", p, i))
		alpha.Warn(fmt.Sprintf("%s warn %d", p, i))
		beta.Log(800, "INFO", fmt.Sprintf("%s binfo %d", p, i))
		beta.Log(1000, "SEVERE", fmt.Sprintf("%s severe %d", p, i))
	}
}
