package jtest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/testpeers"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
	"github.com/tadpole-trace/tadpole/transport/hce"
)

// TestHCERegister: a JVM with hce= registers with a hub; a client finds
// it by pid, attaches, reads its status, drops a marker that reaches HQ
// and pauses and resumes its tracing; when the JVM exits the hub tells
// listeners it is gone.
func TestHCERegister(t *testing.T) {
	e := Build(t)
	for _, over := range []string{"tcp", "pipe"} {
		t.Run(over, func(t *testing.T) { hceRegister(t, e, over) })
	}
}

func hceRegister(t *testing.T, e *Env, over string) {
	hb, addr, agentAddr := testpeers.StartHub(t, over)
	h := startHQ(t)
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
	j := startReady(ctx, t, e.Java(ctx, h.env("TADPOLE_HCE="+agentAddr), true, "", "await"), "JApp ready")
	run, err := h.Srv.NextRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pid := uint64(j.cmd.Process.Pid)
	id := testpeers.AgentID(t, hb, j.cmd.Process.Pid)
	if err := run.WaitMode(ctx, bytefrog.ModeTracing); err != nil {
		t.Fatal(err)
	}
	c, err := hce.NewClient(ctx, addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(hce.ReasonNone)
	if err := c.GetSpecific(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := c.Attach(ctx, id, true); err != nil {
		t.Fatal(err)
	}
	st, err := c.Status(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if st.PID != pid || st.HQ == "" {
		t.Errorf("status %+v; want the JVM's pid and HQ", st)
	}
	if err := c.Mark(ctx, id, "from", "hce"); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		cmd  hce.CommandID
		mode bytefrog.Mode
	}{{hce.TPPause, bytefrog.ModePaused}, {hce.TPResume, bytefrog.ModeTracing}} {
		if err := c.Control(ctx, id, step.cmd); err != nil {
			t.Fatal(err)
		}
		if err := run.WaitMode(ctx, step.mode); err != nil {
			t.Fatalf("after %v: %v", step.cmd.Name(hce.IfaceTadpole), err)
		}
	}
	j.wake(t)
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

// TestJ4P: a JVM with j4p= serves tadpole's MBeans over HTTP.
func TestJ4P(t *testing.T) {
	e := Build(t)
	h := startHQ(t)
	addr := testpeers.FreeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	j := startReady(ctx, t, e.Java(ctx, h.env("TADPOLE_J4P="+addr), true, "", "await"), "JApp ready")
	defer j.wake(t)
	testpeers.AwaitJ4PRead(t, addr, "io.tadpole:type=Agent/Mode", "Tracing")
}

// TestHCELogger: a JUL logger a client enables through the hub has its
// records reach HQ (logs=lttng: only the records of enabled loggers).
func TestHCELogger(t *testing.T) {
	e := Build(t)
	hb, addr, agentAddr := testpeers.StartHub(t, "tcp")
	h := startHQ(t)
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	env := h.env("TADPOLE_HCE="+agentAddr, "TADPOLE_LOGS=lttng")
	j := startReady(ctx, t, e.Java(ctx, env, true, "", "logloop", "4000"), "JApp looping tracing=true")
	run, err := h.Srv.NextRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id := testpeers.AgentID(t, hb, j.cmd.Process.Pid)
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
	ls, err := c.Loggers(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(ls, func(l hce.LoggerState) bool { return l.Name == "loop" && !l.Enabled }) {
		t.Fatalf("loggers %v; want loop, disabled", ls)
	}
	col := h.Collector(0)
	if n := len(col.Markers("log:loop")); n != 0 {
		t.Fatalf("%d records of a logger nobody enabled", n)
	}
	if err := c.EnableLogger(ctx, id, "loop"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); len(col.Markers("log:loop")) < 3; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no records of loop at HQ after the hub enabled it")
		}
	}
	j.wait(t)
	if rep, err := run.Wait(ctx); err != nil || !rep.OK {
		t.Fatalf("run: %v %v", rep, err)
	}
}
