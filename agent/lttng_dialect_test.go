package agent

import (
	"os"
	"slices"
	"testing"

	"github.com/tadpole-trace/tadpole/internal/testpeers/fakedaemon"
	"github.com/tadpole-trace/tadpole/transport/lttngagent"
)

// TestLTTngDialectOption: with lttng_dialect set, a Go host speaks that
// dialect to its daemon: LIST, ENABLE and DISABLE work, and a daemon that
// sends garbage costs only its connection, after which the agent comes back.
func TestLTTngDialectOption(t *testing.T) {
	for _, opt := range []string{"2.13", "rfc01"} {
		t.Run(opt, func(t *testing.T) {
			resetLogControl(t)
			dl, err := lttngagent.ParseDialect(opt)
			if err != nil {
				t.Fatal(err)
			}
			d := fakedaemon.New(t, dl)
			h := startHQ(t, nil)
			cfg := testConfig(h.Addr())
			if err := cfg.ParseOptions("lttng=on,logs=lttng,lttng_retry=50ms,lttng_dialect=" + opt); err != nil {
				t.Fatal(err)
			}
			cfg.LTTngPort = d.Port()
			l := RegisterLogger("dialect." + opt)
			startAgent(t, h, cfg)

			nc := d.Accept(os.Getpid())
			if names := d.List(nc); !slices.Contains(names, l.name) {
				t.Fatalf("LIST = %q; want %q among them", names, l.name)
			}
			if rc := d.Enable(nc, l.name); rc != lttngagent.ReplySuccess || !l.enabled.Load() {
				t.Fatalf("ENABLE: reply %v, enabled %v; want success, true", rc, l.enabled.Load())
			}
			// Garbage where a header belongs: the agent drops this daemon's
			// connection (and what it enabled), then registers again.
			d.Garbage(nc)
			nc = d.Accept(os.Getpid())
			if l.enabled.Load() {
				t.Error("logger still enabled by a dropped connection")
			}
			if rc := d.Enable(nc, l.name); rc != lttngagent.ReplySuccess || !l.enabled.Load() {
				t.Fatalf("ENABLE after reconnect: reply %v, enabled %v", rc, l.enabled.Load())
			}
			if rc := d.Disable(nc, l.name); rc != lttngagent.ReplySuccess || l.enabled.Load() {
				t.Fatalf("DISABLE: reply %v, enabled %v; want success, false", rc, l.enabled.Load())
			}
		})
	}
}
