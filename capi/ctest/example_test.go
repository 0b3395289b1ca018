package ctest

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tadpole-trace/tadpole/internal/testhq"
	"github.com/tadpole-trace/tadpole/internal/testpeers"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// TestExampleC builds examples/c with its Makefile (plain and with
// pkg-config) and runs it against an HQ: a clean run with every order's
// calls under the four workers' names, and the program's markers and log
// records.
func TestExampleC(t *testing.T) {
	lib := BuildLib(t)
	testpeers.RequireTools(t, "make")
	variants := []string{"plain"}
	if _, err := exec.LookPath("pkg-config"); err == nil {
		variants = append(variants, "pkg-config")
	}
	for _, v := range variants {
		t.Run(v, func(t *testing.T) {
			build := t.TempDir()
			args := []string{"-C", filepath.Join(lib.Root, "examples", "c"), "TADPOLE_LIB=" + lib.Dir, "BUILD=" + build}
			if v == "pkg-config" {
				args = append(args, "PKG=1")
			}
			if out, err := exec.Command("make", args...).CombinedOutput(); err != nil {
				t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			h := startHQ(t, nil)
			res := Run(t, h.env(), filepath.Join(build, "example"))
			if res.Err != nil {
				t.Fatalf("example: %v\n%s", res.Err, res.Stderr)
			}
			t.Logf("example's stderr:\n%s", res.Stderr)
			reps, cols := h.WaitRuns(t, 1)
			testhq.CheckClean(t, reps[0], cols[0], -1)
			const orders, workers = 20000, 4
			entries := map[string]int{}
			for _, e := range cols[0].Events() {
				if e.Type == bytefrog.MsgMethodEntry {
					entries[cols[0].Methods()[e.Method]]++
				}
			}
			for _, sig := range []string{"shop/Orders.process;1;(I)V", "shop/Inventory.reserve;1;(I)V"} {
				if entries[sig] != orders {
					t.Errorf("%s: got %d entries; want %d", sig, entries[sig], orders)
				}
			}
			threads := cols[0].ByThread()
			for i := 1; i <= workers; i++ {
				if len(threads[fmt.Sprintf("worker-%d", i)]) == 0 {
					t.Errorf("no events of worker-%d; threads %q", i, keys(threads))
				}
			}
			shop := cols[0].Markers("shop")
			if len(shop) != 2 || shop[0] != "open" || !strings.HasPrefix(shop[1], "20000 orders") {
				t.Errorf("got shop markers %q; want open, then the summary", shop)
			}
			if n := len(cols[0].Markers("log:shop.orders")); n != orders/97+1 {
				t.Errorf("got %d shop.orders records; want %d", n, orders/97+1)
			}
			if n := len(cols[0].Markers("log:shop.payments")); n == 0 {
				t.Errorf("no shop.payments records")
			}
		})
	}
}
