package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// env is an HQ with the page, both on loopback, and a fake agent's run.
type env struct {
	t     *testing.T
	hq    *hq.Server
	web   *Server
	base  string
	agent *hqtest.Agent
	gen   *hqtest.Gen
	data  int
}

// newEnv starts HQ and the page (wcfg nil: a fast tick) and connects one
// fake agent, which opens a data connection.
func newEnv(t *testing.T, wcfg *Config) *env {
	t.Helper()
	if wcfg == nil {
		wcfg = &Config{Tick: 20 * time.Millisecond}
	}
	w, err := New(wcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	cfg := hq.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	w.Hook(cfg)
	srv, err := hq.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	if err := w.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, hq: srv, web: w, base: "http://" + w.Addr(), gen: hqtest.NewGen(bytefrog.FlavorBytefrog)}
	e.agent, err = hqtest.Dial(srv.Addr(), bytefrog.Version3, bytefrog.FlavorBytefrog)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.agent.Close)
	if _, err := e.agent.Expect(bytefrog.MsgStart); err != nil {
		t.Fatal(err)
	}
	if e.data, err = e.agent.OpenData(); err != nil {
		t.Fatal(err)
	}
	e.heartbeat(bytefrog.ModeTracing)
	return e
}

func (e *env) heartbeat(m bytefrog.Mode) {
	e.t.Helper()
	if err := e.agent.Heartbeat(m, 0); err != nil {
		e.t.Fatal(err)
	}
}

// send writes what the generator holds on the data connection, then a
// heartbeat (which makes the run hand its batch to the tree).
func (e *env) send() {
	e.t.Helper()
	if err := e.agent.Write(e.data, e.gen.Take()); err != nil {
		e.t.Fatal(err)
	}
	e.heartbeat(bytefrog.ModeTracing)
}

// get fetches path and decodes its JSON into v; it returns the status.
func (e *env) get(path string, v any) int {
	e.t.Helper()
	resp, err := http.Get(e.base + path)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK && v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			e.t.Fatalf("%s: %v\n%s", path, err, b)
		}
	}
	return resp.StatusCode
}

// request sends a request with extra headers and returns status and body.
func (e *env) request(method, path string, hdr map[string]string) (int, string) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.base+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

type runsJSON struct {
	Runs []RunInfo `json:"runs"`
}

// waitFor polls cond for up to 10 s.
func (e *env) waitFor(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitData is waitFor with a heartbeat every 50 ms: a run hands its
// events to the tree in batches, at the latest with the next message of
// another kind, and the events of a data connection may reach HQ after
// the heartbeat that followed them on the control connection.
func (e *env) waitData(what string, cond func() bool) {
	e.t.Helper()
	last := time.Now()
	e.waitFor(what, func() bool {
		if time.Since(last) > 50*time.Millisecond {
			e.heartbeat(bytefrog.ModeTracing)
			last = time.Now()
		}
		return cond()
	})
}

// run returns the page's only run.
func (e *env) run() RunInfo {
	e.t.Helper()
	var rs runsJSON
	e.waitFor("the run on the page", func() bool { return e.get("/api/runs", &rs) == 200 && len(rs.Runs) == 1 })
	return rs.Runs[0]
}

type flameJSON struct {
	Version uint64          `json:"version"`
	Paths   int             `json:"paths"`
	Shown   int             `json:"shown"`
	Now     int32           `json:"now"`
	Ended   bool            `json:"ended"`
	Names   [][2]any        `json:"names"`
	Nodes   [][8]int64      `json:"nodes"`
	More    bool            `json:"more"`
	Resume  int             `json:"resume"`
	Extra   json.RawMessage `json:"-"`
}

func (e *env) flame(key int, since uint64, after, names int) flameJSON {
	e.t.Helper()
	var f flameJSON
	if c := e.get(fmt.Sprintf("/api/runs/%d/flame?since=%d&after=%d&names=%d", key, since, after, names), &f); c != 200 {
		e.t.Fatalf("flame: status %d", c)
	}
	return f
}

// shutdown ends the agent's run and returns its report.
func (e *env) shutdown(stopSeen bool) *hq.Report {
	e.t.Helper()
	if err := e.agent.Shutdown(stopSeen); err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := e.hq.NextRun(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	rep, err := r.Wait(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return rep
}

func contains(list []Command, typ string) bool {
	for _, c := range list {
		if strings.EqualFold(c.Type, typ) {
			return true
		}
	}
	return false
}
