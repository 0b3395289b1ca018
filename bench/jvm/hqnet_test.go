package jvm

import (
	"os"
	"path/filepath"
	"testing"
)

// benchListen is the address of the reference HQ the tadpole cases trace
// into: loopback TCP, or with TADPOLE_BENCH_NET=unix a Unix-domain socket
// (hq=unix:/path), which costs the JVM's data writers and HQ's readers
// less per byte.
func benchListen(tb testing.TB) string {
	switch net := os.Getenv("TADPOLE_BENCH_NET"); net {
	case "", "tcp":
		return "127.0.0.1:0"
	case "unix":
		dir, err := os.MkdirTemp("", "tadpole-bench") // short: sun_path has 108 bytes
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { os.RemoveAll(dir) })
		return "unix:" + filepath.Join(dir, "hq.sock")
	default:
		tb.Fatalf("TADPOLE_BENCH_NET=%q: want tcp or unix", net)
		return ""
	}
}
