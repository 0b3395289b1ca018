package ctest

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/testpeers"
)

// TestFrozenHQ runs testdata/frozen.c against an HQ that stops reading:
// recording calls wait at most stall_timeout, the run then ends with one
// line on stderr, the program's calls go on untraced and tadpole_stop
// returns at once.
func TestFrozenHQ(t *testing.T) {
	lib := BuildLib(t)
	bin := filepath.Join(t.TempDir(), "frozen")
	lib.Compile(t, bin, "testdata/frozen.c")
	f := testpeers.NewFrozenHQ(t)
	const stall = 300 * time.Millisecond
	r := Run(t, Env("TADPOLE_HQ="+f.Addr(), "TADPOLE_LTTNG=off", fmt.Sprintf("TADPOLE_STALL_TIMEOUT=%v", stall),
		"TADPOLE_BUFFER_BUDGET=262144"), bin, "4")
	var runMS, longestMS, stopMS, rc int
	if _, err := fmt.Sscanf(r.Stdout, "run_ms %d longest_call_ms %d stop_ms %d stop_rc %d", &runMS, &longestMS, &stopMS, &rc); err != nil {
		t.Fatalf("stdout %q: %v\nstderr:\n%s", r.Stdout, err, r.Stderr)
	}
	t.Logf("run %d ms, longest call %d ms, tadpole_stop %d ms (rc %d)", runMS, longestMS, stopMS, rc)
	if time.Duration(longestMS)*time.Millisecond > stall+2*time.Second {
		t.Errorf("a recording call waited %d ms; want about stall_timeout (%v) at most", longestMS, stall)
	}
	if runMS > 20000 {
		t.Errorf("the run into a frozen HQ lasted %d ms", runMS)
	}
	if stopMS > 2000 {
		t.Errorf("tadpole_stop took %d ms after the run had ended", stopMS)
	}
	if n := strings.Count(r.Stderr, "HQ stopped taking data"); n != 1 {
		t.Errorf("stderr names the stall %d times; want once:\n%s", n, r.Stderr)
	}
}
