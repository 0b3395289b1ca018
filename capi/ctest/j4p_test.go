package ctest

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tadpole-trace/tadpole/internal/testpeers"
)

// TestJ4P: a C program with j4p= serves tadpole's MBeans over HTTP.
func TestJ4P(t *testing.T) {
	lib := BuildLib(t)
	bin := filepath.Join(t.TempDir(), "modes")
	lib.Compile(t, bin, "testdata/modes.c")
	h := startHQ(t, nil)
	addr := testpeers.FreeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "1")
	cmd.Env = h.env("TADPOLE_J4P=" + addr)
	stdin, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	testpeers.AwaitJ4PRead(t, addr, "io.tadpole:type=Agent/Mode", "Tracing")
}
