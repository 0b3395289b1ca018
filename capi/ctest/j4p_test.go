package ctest

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestJ4P: a C program with j4p= serves tadpole's MBeans over HTTP.
func TestJ4P(t *testing.T) {
	lib := BuildLib(t)
	bin := filepath.Join(t.TempDir(), "modes")
	lib.Compile(t, bin, "testdata/modes.c")
	h := startHQ(t, nil)
	addr := freeAddr(t)
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
