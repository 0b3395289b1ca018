package ctest

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

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
	hb, err := hub.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hb.Close(context.Background())
	addr, err := hb.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
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
	cmd.Env = h.env("TADPOLE_HCE=" + addr)
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
	var id uint32
	for deadline := time.Now().Add(20 * time.Second); id == 0; time.Sleep(10 * time.Millisecond) {
		for _, a := range hb.Agents() {
			if a.PID == uint64(cmd.Process.Pid) {
				id = a.AgentID
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the C program did not register; agents %+v", hb.Agents())
		}
	}
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
	for {
		select {
		case e := <-watch.Events():
			if e.ID == hce.EventAgentDeregistered {
				return
			}
		case <-time.After(20 * time.Second):
			t.Fatal("no EID_AGENT_DEREGISTERED after the program ended")
		}
	}
}
