package agent_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/tadpole-trace/tadpole/agent"
	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/internal/testhq"
)

// Handles are registered once, in package variables, and cost no lookup on
// the hot path.
var (
	cartAdd  = agent.NewMethod("shop.(*Cart).Add")
	cartSave = agent.NewMethod("shop.(*Cart).Save")
)

// save traces its call with Enter and ExitErr: an error result is recorded
// as an exception of the error's type bubbling out of the call.
func save() (err error) {
	defer cartSave.Enter().ExitErr(&err)
	return os.ErrNotExist
}

// Example traces a few calls and a marker into an HQ (here the reference
// HQ, in process; a program names its HQ with the option hq= or
// TADPOLE_HQ), then prints what the HQ received.
func Example() {
	addr, run, stopHQ := exampleHQ()
	defer stopHQ()

	cfg, err := agent.LoadConfig("hq=" + addr + ",log=none,lttng=off")
	if err != nil {
		fmt.Println("options:", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, err := agent.Start(ctx, cfg)
	if err != nil {
		fmt.Println("untraced:", err) // the program goes on
		return
	}

	func() {
		defer cartAdd.Enter().Exit()
		agent.Mark("order", "1234")
	}()
	if err := save(); errors.Is(err, os.ErrNotExist) {
		agent.Mark("save", "not found")
	}
	a.Shutdown(ctx) // sends what was recorded, ends the run

	c := run()
	methods := c.Methods()
	for _, e := range c.Events() {
		switch {
		case e.Key != "":
			fmt.Printf("%s %s=%s\n", e.Type, e.Key, e.Value)
		default:
			fmt.Printf("%s %s\n", e.Type, methods[e.Method])
		}
	}
	// Output:
	// MethodEntry shop.(*Cart).Add
	// Marker order=1234
	// MethodExit shop.(*Cart).Add
	// MethodEntry shop.(*Cart).Save
	// ExceptionBubble shop.(*Cart).Save
	// Marker save=not found
}

// exampleHQ starts the reference HQ on loopback; run waits for the first
// run to end and returns what HQ received.
func exampleHQ() (addr string, run func() *testhq.Collector, stop func()) {
	cols := make(chan *testhq.Collector, 1)
	cfg := hq.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.NewProcessor = func(*hq.Run) hq.Processor {
		c := testhq.NewCollector()
		select {
		case cols <- c:
		default:
		}
		return c
	}
	srv, err := hq.New(cfg)
	if err == nil {
		err = srv.Start()
	}
	if err != nil {
		panic(err)
	}
	run = func() *testhq.Collector {
		c := <-cols
		select {
		case <-c.Done():
		case <-time.After(10 * time.Second):
		}
		return c
	}
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}
	return srv.Addr(), run, stop
}
