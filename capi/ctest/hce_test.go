package ctest

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/internal/testhq"
	"github.com/tadpole-trace/tadpole/internal/testpeers"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
	"github.com/tadpole-trace/tadpole/transport/hce"
	"github.com/tadpole-trace/tadpole/transport/hce/hub"
)

// TestHCERegister: a C program with hce= registers with a hub; a client
// finds it by pid, attaches, reads its status, drops a marker that reaches
// HQ and pauses and resumes its tracing; when the program ends the hub
// tells listeners it is gone.
func TestHCERegister(t *testing.T) {
	lib := BuildLib(t)
	bin := filepath.Join(t.TempDir(), "modes")
	lib.Compile(t, bin, "testdata/modes.c")
	for _, over := range []string{"tcp", "pipe"} {
		t.Run(over, func(t *testing.T) {
			hb, addr, agentAddr := testpeers.StartHub(t, over)
			hceRegister(t, bin, hb, addr, agentAddr)
		})
	}
}

func hceRegister(t *testing.T, bin string, hb *hub.Hub, addr, agentAddr string) {
	h := startHQ(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	watch, err := hce.NewClient(ctx, addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(hce.ReasonNone)
	if err := watch.AddListener(ctx, 7); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin, "2")
	cmd.Env = h.env("TADPOLE_HCE="+agentAddr, "TADPOLE_LOGS=lttng") // records of enabled loggers only
	stdin, _ := cmd.StdinPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
		if t.Failed() {
			t.Logf("modes stderr:\n%s", stderr.String())
		}
	}()
	run, err := h.Srv.NextRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id := testpeers.AgentID(t, hb, cmd.Process.Pid)
	awaitMode(t, run, bytefrog.ModeTracing) // registered may come before tracing
	c, err := hce.NewClient(ctx, addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(hce.ReasonNone)
	if err := c.GetSpecific(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := c.Attach(ctx, id, false); err != nil {
		t.Fatal(err)
	}
	st, err := c.Status(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if st.PID != uint64(cmd.Process.Pid) || st.HQ == "" {
		t.Errorf("status %+v; want the program's pid and HQ", st)
	}
	if err := c.Mark(ctx, id, "from", "hce"); err != nil {
		t.Fatal(err)
	}
	col := h.Collector(0)
	if n := len(col.Markers("log:ctest.modes")); n != 0 {
		t.Fatalf("%d records of a logger nobody enabled", n)
	}
	if err := c.EnableLogger(ctx, id, "ctest.*"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); len(col.Markers("log:ctest.modes")) < 3; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no ctest.modes records at HQ after the hub enabled the logger")
		}
	}
	if err := c.Control(ctx, id, hce.TPPause); err != nil {
		t.Fatal(err)
	}
	awaitMode(t, run, bytefrog.ModePaused)
	if err := c.Control(ctx, id, hce.TPResume); err != nil {
		t.Fatal(err)
	}
	awaitMode(t, run, bytefrog.ModeTracing)
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("modes: %v", err)
	}
	rep, err := run.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK {
		t.Errorf("run: %s", rep.Reason)
	}
	if got := h.Collector(0).Markers("from"); fmt.Sprint(got) != "[hce]" {
		t.Errorf("markers from the hub %q; want [hce]", got)
	}
	testpeers.AwaitDeregistered(t, watch)
}

// TestHCEStart: a C program whose HQ was unreachable at start waits
// (hq_retry an hour); once HQ listens, TP_START through the hub makes it
// reach HQ at once, and it traces.
func TestHCEStart(t *testing.T) {
	lib := BuildLib(t)
	bin := filepath.Join(t.TempDir(), "late")
	lib.Compile(t, bin, "testdata/late.c")
	hb, addr, _ := testpeers.StartHub(t, "tcp")
	hqAddr := testpeers.FreeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	const calls = 100
	cmd := exec.CommandContext(ctx, bin, fmt.Sprint(calls))
	cmd.Env = Env("TADPOLE_HQ="+hqAddr, "TADPOLE_HQ_RETRY=1h", "TADPOLE_HCE="+addr, "TADPOLE_LTTNG=off",
		"TADPOLE_FLUSH_INTERVAL=5ms")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	id := testpeers.AgentID(t, hb, cmd.Process.Pid)
	c, err := hce.NewClient(ctx, addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(hce.ReasonNone)
	if err := c.GetSpecific(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := c.Attach(ctx, id, false); err != nil {
		t.Fatal(err)
	}
	h := testhq.Start(t, func(cfg *hq.Config) { cfg.Listen = hqAddr })
	if err := c.Control(ctx, id, hce.TPStart); err != nil {
		t.Fatal(err)
	}
	run, err := h.Srv.NextRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("late: %v\nstderr:\n%s", err, stderr.String())
	}
	rep, err := run.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	testhq.CheckClean(t, rep, h.Collector(0), 2*calls)
	if err := c.Control(ctx, id, hce.TPStart); err == nil {
		t.Error("TP_START to an agent that has gone succeeded")
	}
}
