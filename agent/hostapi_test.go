package agent

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/tadpole-trace/tadpole/internal/host"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// TestHostCallsWithoutRun: the calls the agent registers in internal/host
// answer as hosts expect when no run is on: nothing taken, nothing blocks,
// a malformed batch still refused.
func TestHostCallsWithoutRun(t *testing.T) {
	if active.Load() != nil {
		t.Fatal("a run is on")
	}
	b := host.AppendBatchRecord(nil, host.BatchMarker, 0, 0, 0, 0, host.MonoNow(), "k", "v")
	if n, err := host.SubmitBatch(1, b); n != 0 || err != nil {
		t.Errorf("SubmitBatch: got %d, %v; want 0, nil", n, err)
	}
	if _, err := host.SubmitBatch(1, b[:host.BatchHeaderSize-1]); !errors.Is(err, host.ErrBadBatch) {
		t.Errorf("SubmitBatch of a cut record: got %v; want ErrBadBatch", err)
	}
	if n, err := host.SubmitProbes(1, []int64{host.ProbeTime | 5<<8}); n != 0 || err != nil {
		t.Errorf("SubmitProbes: got %d, %v; want 0, nil", n, err)
	}
	if host.Gate() {
		t.Error("Gate: true without a run")
	}
	if m := host.CurrentMode(); m != bytefrog.ModeShutdown {
		t.Errorf("CurrentMode: got %v; want %v", m, bytefrog.ModeShutdown)
	}
	if host.ReportClass(bytefrog.MsgClassTransformed, "a/B") {
		t.Error("ReportClass: queued without a run")
	}
	if _, _, ok := host.ClassFilters(); ok {
		t.Error("ClassFilters: ok without a run")
	}
	hooks := func() int {
		if p := modeHooks.list.Load(); p != nil {
			return len(*p)
		}
		return 0
	}
	before := hooks()
	remove := host.AddModeHook(func(bytefrog.Mode) {})
	if got := hooks(); got != before+1 {
		t.Errorf("AddModeHook: %d hooks; want %d", got, before+1)
	}
	remove()
	if got := hooks(); got != before {
		t.Errorf("after remove: %d hooks; want %d", got, before)
	}
}

// TestPublicAPINarrow: the host plumbing stays out of package agent's
// public API (it lives in internal/host).
func TestPublicAPINarrow(t *testing.T) {
	plumbing := map[string]bool{
		"SubmitBatch": true, "SubmitProbes": true, "AppendProbeBatch": true, "AppendBatchRecord": true,
		"BatchHeaderSize": true, "MonoNow": true, "Gate": true, "CurrentMode": true, "AddModeHook": true,
		"MethodByID": true, "ExceptionTypeByID": true, "ReportClass": true, "ClassFilters": true,
		"HostLog": true, "SetPlatformMBeans": true, "ErrBadBatch": true, "ErrBadProbe": true,
		"SetLTTngLoader": true, "LTTngLoader": true, "LTTngRecorder": true, "LTTngRecord": true,
	}
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			var names []*ast.Ident
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					names = append(names, d.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.ValueSpec:
						names = append(names, s.Names...)
					case *ast.TypeSpec:
						names = append(names, s.Name)
					}
				}
			}
			for _, n := range names {
				if n.IsExported() && (plumbing[n.Name] || strings.HasPrefix(n.Name, "Batch") ||
					strings.HasPrefix(n.Name, "Probe")) {
					t.Errorf("%s: agent exports %s, host plumbing (internal/host)", fset.Position(n.Pos()), n.Name)
				}
			}
		}
	}
}

// BenchmarkHostCall is what internal/host's function table adds to a call
// a host makes (one load of a function value, an indirect call): the same
// cheap call, Gate without a run, direct and through host. SubmitBatch and
// SubmitProbes pay it once per batch (hundreds to thousands of events).
func BenchmarkHostCall(b *testing.B) {
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if hostGate() {
				b.Fatal("a run is on")
			}
		}
	})
	b.Run("host", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if host.Gate() {
				b.Fatal("a run is on")
			}
		}
	})
}
