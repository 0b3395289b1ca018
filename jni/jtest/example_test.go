package jtest

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tadpole-trace/tadpole/internal/testhq"
)

// TestShopExample runs examples/java/Shop.java under the agent: every JUL
// record of its three loggers and its two markers reach HQ, gap-free.
func TestShopExample(t *testing.T) {
	e := Build(t)
	dir := t.TempDir()
	classes := filepath.Join(e.Root, "jni", "classes")
	if out, err := exec.Command("javac", "-nowarn", "-cp", classes, "-d", dir,
		filepath.Join(e.Root, "examples", "java", "Shop.java")).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	h := startHQ(t)
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", "-Xcheck:jni", "-agentpath:"+e.Lib, "-cp", dir+":"+classes, "Shop")
	cmd.Env = h.env()
	r := Run(cmd)
	if r.Err != nil || !strings.Contains(r.Stdout, "shop: 30 orders, tracing=true") {
		t.Fatalf("java Shop: %v\nstdout:\n%s\nstderr:\n%s", r.Err, r.Stdout, r.Stderr)
	}
	rep, c := h.waitRun(t)
	testhq.CheckClean(t, rep, c, -1)
	// 30 orders; 7, 14, 21, 28 out of stock; late payments for multiples
	// of 4 that were paid.
	for _, tc := range []struct {
		key  string
		want int
	}{
		{"shop", 2},
		{"log:shop.orders", 30},
		{"log:shop.pay", 26 + 6},
		{"log:shop.stock", 4},
	} {
		if got := len(c.Markers(tc.key)); got != tc.want {
			t.Errorf("markers %q: got %d; want %d", tc.key, got, tc.want)
		}
	}
	if got := c.Markers("log:shop.stock"); len(got) > 0 && !strings.HasPrefix(got[0], "SEVERE order ") {
		t.Errorf("got stock record %q; want SEVERE order …", got[0])
	}
	// The three cashier threads are named at HQ, each under its own id.
	cashiers := make(map[string]bool)
	for _, n := range c.Names() {
		if strings.HasPrefix(n, "cashier-") {
			cashiers[n] = true
		}
		if n == "tadpole-jul" {
			t.Errorf("the agent's own thread %q is in the trace", n)
		}
	}
	if len(cashiers) != 3 || len(rep.ThreadNames) < 3 {
		t.Errorf("got cashier threads %v (report: %d named); want cashier-0 … cashier-2", cashiers, len(rep.ThreadNames))
	}
}
