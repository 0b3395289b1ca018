package jtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
	"github.com/tadpole-trace/tadpole/transport/hce"
	"github.com/tadpole-trace/tadpole/transport/hce/hub"
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
	hb, err := hub.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hb.Close(context.Background())
	addr, err := hb.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	agentAddr := addr
	if over == "pipe" {
		agentAddr = "pipe:" + filepath.Join(t.TempDir(), "hub.fifo")
		if _, err := hb.Listen(agentAddr); err != nil {
			t.Fatal(err)
		}
	}
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
	var id uint32
	for deadline := time.Now().Add(20 * time.Second); id == 0; time.Sleep(10 * time.Millisecond) {
		for _, a := range hb.Agents() {
			if a.PID == pid {
				id = a.AgentID
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the JVM did not register; agents %+v", hb.Agents())
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
	for {
		select {
		case e := <-watch.Events():
			if e.ID == hce.EventAgentDeregistered {
				return
			}
		case <-time.After(20 * time.Second):
			t.Fatal("no EID_AGENT_DEREGISTERED after the JVM exited")
		}
	}
}

// TestJ4P: a JVM with j4p= serves tadpole's MBeans over HTTP.
func TestJ4P(t *testing.T) {
	e := Build(t)
	h := startHQ(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	j := startReady(ctx, t, e.Java(ctx, h.env("TADPOLE_J4P="+addr), true, "", "await"), "JApp ready")
	defer j.wake(t)
	var resp struct {
		Status int
		Value  string
	}
	url := "http://" + addr + "/jolokia/read/io.tadpole:type=Agent/Mode"
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		r, err := http.Get(url)
		if err == nil {
			err = json.NewDecoder(r.Body).Decode(&resp)
			r.Body.Close()
			if err == nil && resp.Status == 200 && resp.Value == "Tracing" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %+v, %v", url, resp, err)
		}
	}
}
