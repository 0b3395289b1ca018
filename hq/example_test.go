package hq_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// An HQ on a free loopback port, driving one agent's run.
func Example() {
	cfg := hq.DefaultConfig()
	cfg.TraceDir = os.TempDir()
	srv, err := hq.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		log.Fatal(err)
	}
	go srv.Serve()
	defer srv.Close()
	// Start the traced program with TADPOLE_HQ=srv.Addr() here.
	ctx := context.Background()
	run, err := srv.NextRun(ctx)
	if err != nil {
		log.Fatal(err)
	}
	run.Pause()
	run.WaitMode(ctx, bytefrog.ModePaused)
	run.Unpause()
	rep, _ := run.Wait(ctx)
	rep.Write(os.Stdout)
}

func ExampleReplayFile() {
	rep, err := hq.ReplayFile("testdata/basic.tphq.zst", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rep.Result(), rep.Sequenced, rep.DataBreaks, rep.TopMethods[0].Signature)
	// Output: completed 9 [8] com/ex/Main.work;10;(I)I
}

func ExampleParseScript() {
	steps, err := hq.ParseScript("wait 200ms; pause; await P; unpause; stop")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(steps)
	// Output: [wait 200ms pause await Paused unpause stop]
}
