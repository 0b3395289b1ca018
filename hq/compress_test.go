package hq_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

func TestCompressionNames(t *testing.T) {
	for _, tc := range []struct {
		c         hq.Compression
		name, ext string
	}{
		{hq.CompressS2, "s2", ".tphq.s2"},
		{hq.CompressZstd, "zstd", ".tphq.zst"},
		{hq.CompressNone, "none", ".tphq"},
		{hq.CompressColumns, "columns", ".tphq.col"},
		{hq.Compression(9), "UNKNOWN_COMPRESSION_9", ".tphq"},
	} {
		if got := tc.c.String(); got != tc.name {
			t.Errorf("Compression(%d).String() = %q; want %q", tc.c, got, tc.name)
		}
		if got := tc.c.Ext(); got != tc.ext {
			t.Errorf("%v.Ext() = %q; want %q", tc.c, got, tc.ext)
		}
		got, err := hq.ParseCompression(tc.name)
		switch {
		case strings.HasPrefix(tc.name, "UNKNOWN"):
			if !errors.Is(err, hq.ErrConfig) {
				t.Errorf("ParseCompression(%q): %v, %v; want ErrConfig", tc.name, got, err)
			}
		case err != nil || got != tc.c:
			t.Errorf("ParseCompression(%q) = %v, %v; want %v", tc.name, got, err, tc.c)
		}
	}
	if c := hq.DefaultConfig().Compression; c != hq.CompressColumns {
		t.Errorf("default compression %v; want columns", c)
	}
	cfg := hq.DefaultConfig()
	cfg.Compression = 4
	if _, err := hq.New(cfg); !errors.Is(err, hq.ErrConfig) {
		t.Errorf("New with compression 4: %v; want ErrConfig", err)
	}
}

// TestTraceCompression runs the same traffic through HQ with each
// compression: the file has the compression's extension and first bytes,
// and replays to the live report, field for field.
func TestTraceCompression(t *testing.T) {
	heads := map[hq.Compression]string{
		hq.CompressS2:      "\xff\x06\x00\x00S2sTwO",
		hq.CompressZstd:    "\x28\xb5\x2f\xfd",
		hq.CompressNone:    hq.TraceMagic,
		hq.CompressColumns: hq.TraceMagic + "\x00\x02",
	}
	chunks, n := traffic(100_000, 80, 4)
	const k = 2
	per := hqtest.Spread(chunks, k)
	for c, head := range heads {
		t.Run(c.String(), func(t *testing.T) {
			srv := start(t, func(cfg *hq.Config) {
				cfg.Compression = c
				cfg.Agent.NumDataSenders = k
			})
			rep := sendAll(t, srv, bytefrog.Version2, per)
			checkOK(t, rep, n)
			if !strings.HasSuffix(rep.TraceFile, c.Ext()) {
				t.Errorf("trace file %s; want the extension %s", rep.TraceFile, c.Ext())
			}
			b, err := os.ReadFile(rep.TraceFile)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(b), head) {
				t.Errorf("file starts % x; want % x", b[:min(len(b), len(head))], head)
			}
			checkReplay(t, rep)
		})
	}
}
