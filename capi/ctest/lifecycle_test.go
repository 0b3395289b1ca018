package ctest

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/tadpole-trace/tadpole/internal/testhq"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// TestLifecycle runs testdata/lifecycle.c: calls before start, after stop and
// with bad arguments return their codes and record nothing (the program
// checks the codes); HQ sees exactly two clean runs with the events of
// trace("one") and trace("two").
func TestLifecycle(t *testing.T) {
	lib := BuildLib(t)
	bin := filepath.Join(t.TempDir(), "lifecycle")
	lib.Compile(t, bin, "testdata/lifecycle.c")
	h := startHQ(t, nil)
	res := Run(t, h.env("TADPOLE_LOGS=all"), bin)
	if res.Err != nil {
		t.Fatalf("lifecycle: %v\n%s", res.Err, res.Stderr)
	}
	reps, cols := h.WaitRuns(t, 2)
	for i, run := range []string{"one", "two"} {
		testhq.CheckClean(t, reps[i], cols[i], 4)
		var got []string
		for _, e := range cols[i].Events() {
			s := e.Type.String()
			if e.Type == bytefrog.MsgMarker {
				s += " " + e.Key + "=" + e.Value
			}
			got = append(got, s)
		}
		want := []string{
			bytefrog.MsgMethodEntry.String(),
			bytefrog.MsgMarker.String() + " run=" + run,
			bytefrog.MsgMethodExit.String(),
			bytefrog.MsgMarker.String() + " log:ctest.life=WARNING " + run,
		}
		if !slices.Equal(got, want) {
			t.Errorf("run %s: got events %q; want %q", run, got, want)
		}
		names := cols[i].ByThread()
		if _, ok := names["life-main"]; !ok || len(names) != 1 {
			t.Errorf("run %s: got threads %q; want [life-main]", run, keys(names))
		}
	}
}
