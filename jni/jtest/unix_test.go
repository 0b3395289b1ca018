//go:build linux

package jtest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/internal/testhq"
)

// TestTraceUnix: a JVM named HQ's Unix socket in its -agentpath options
// (hq=unix:/path) traces package jt through it, control and two data
// connections: every call arrives, as over TCP (TestTraceMethods).
func TestTraceUnix(t *testing.T) {
	e := Build(t)
	dir, err := os.MkdirTemp("", "jtest") // short: sun_path has 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := "unix:" + filepath.Join(dir, "hq.sock")
	h := &testHQ{testhq.Start(t, func(c *hq.Config) {
		c.Listen = sock
		c.Agent.NumDataSenders = 2
	})}
	var env []string
	for _, kv := range h.env() {
		if !strings.HasPrefix(kv, "TADPOLE_HQ=") { // the options name HQ
			env = append(env, kv)
		}
	}
	const threads = 3
	want := runTrace(t, e, env, "hq="+sock+",trace=jt/**,!jt/Skip", strconv.Itoa(threads))
	rep, c := h.waitRun(t)
	checkTrace(t, e, rep, c, want, threads)
	if pid, ok := hq.AgentPID(rep.Agent); !ok || pid <= 0 || rep.DataConns != 2 {
		t.Errorf("agent %q over %d data connections; want a pid on %s over 2", rep.Agent, rep.DataConns, sock)
	}
}
