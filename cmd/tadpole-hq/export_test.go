package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/calltree"
	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// traceOf runs the fake agent under tadpole-hq -exec (with flags) and
// returns its trace file.
func traceOf(t *testing.T, events string, flags ...string) string {
	t.Helper()
	dir := t.TempDir()
	args := append(append([]string{"-dir", dir, "-senders", "2"}, flags...), "-exec", agentBin, "ok", events)
	stdout, stderr, code := hqRun(t, args...)
	if code != 0 {
		t.Fatalf("exit status %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"+hq.TraceExt+"*"))
	if len(files) != 1 {
		t.Fatalf("trace files %v", files)
	}
	return files[0]
}

func TestExport(t *testing.T) {
	trace := traceOf(t, "20000")
	rep, err := hq.ReplayFile(trace, nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := rep.Events[bytefrog.MsgMethodEntry]
	method0 := calltree.DisplayName(hqtest.MethodName(0))
	dir := t.TempDir()

	out := filepath.Join(dir, "run.speedscope.json")
	if _, stderr, code := hqRun(t, "export", "-format", "speedscope", "-o", out, trace); code != 0 {
		t.Fatalf("speedscope: exit status %d: %s", code, stderr)
	}
	var ss struct {
		Schema string `json:"$schema"`
		Shared struct {
			Frames []struct{ Name string } `json:"frames"`
		} `json:"shared"`
		Profiles []struct {
			Type   string `json:"type"`
			Events []struct{ Type string }
		} `json:"profiles"`
	}
	readJSON(t, out, &ss)
	var opens int64
	for _, p := range ss.Profiles {
		for _, e := range p.Events {
			if e.Type == "O" {
				opens++
			}
		}
	}
	if ss.Schema != calltree.SpeedscopeSchema || len(ss.Profiles) == 0 || ss.Profiles[0].Type != "evented" || opens != calls {
		t.Errorf("speedscope: schema %q, %d profiles, %d calls; want %d calls", ss.Schema, len(ss.Profiles), opens, calls)
	}
	if !strings.Contains(readFile(t, out), method0) {
		t.Errorf("speedscope: no frame %q", method0)
	}

	out = filepath.Join(dir, "run.trace.json")
	_, stderr, code := hqRun(t, "export", "-format", "chrome", "-o", out, trace)
	if code != 0 {
		t.Fatalf("chrome: exit status %d: %s", code, stderr)
	}
	var ch struct {
		TraceEvents []struct{ Ph, Name string } `json:"traceEvents"`
	}
	readJSON(t, out, &ch)
	var begins, ends int64
	for _, e := range ch.TraceEvents {
		switch e.Ph {
		case "B":
			begins++
		case "E":
			ends++
		}
	}
	if begins != calls || ends != calls {
		t.Errorf("chrome: %d B and %d E events; want %d each", begins, ends, calls)
	}
	if want := "completed; chrome written to " + out; !strings.Contains(stderr, want) {
		t.Errorf("stderr %q lacks %q", stderr, want)
	}

	for _, c := range []struct{ format, name string }{{"flame", "run.svg"}, {"flame", "run.html"}, {"flame-html", "page"}} {
		out = filepath.Join(dir, c.name)
		if _, stderr, code := hqRun(t, "export", "-format", c.format, "-title", "run <0>", "-o", out, trace); code != 0 {
			t.Fatalf("%s: exit status %d: %s", c.format, code, stderr)
		}
		text := readFile(t, out)
		html := strings.HasPrefix(text, "<!DOCTYPE html>")
		if html != (c.format == "flame-html" || strings.HasSuffix(c.name, ".html")) {
			t.Errorf("%s -o %s: HTML %v", c.format, c.name, html)
		}
		d := xml.NewDecoder(strings.NewReader(text))
		d.Strict = !html
		for {
			if _, err := d.Token(); err != nil {
				if err.Error() != "EOF" {
					t.Errorf("%s: %v", c.name, err)
				}
				break
			}
		}
		for _, want := range []string{method0, "run &lt;0&gt;", ": total ", "self "} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: no %q", c.name, want)
			}
		}
	}

	// To stdout.
	stdout, _, code := hqRun(t, "export", "-format", "chrome", trace)
	if code != 0 || !strings.HasPrefix(stdout, `{"displayTimeUnit"`) {
		t.Errorf("chrome to stdout: status %d, %.40q", code, stdout)
	}
}

func TestExportUsage(t *testing.T) {
	trace := traceOf(t, "100")
	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"export", trace}, exitUsage, "-format is required"},
		{[]string{"export", "-format", "pprof", trace}, exitUsage, `unknown export format: "pprof"`},
		{[]string{"export", "-format", "chrome"}, exitUsage, "want one trace file, got 0"},
		{[]string{"export", "-format", "chrome", "-max-paths", "-1", trace}, exitUsage, "MaxPaths -1"},
		{[]string{"export", "-format", "chrome", filepath.Join(t.TempDir(), "none")}, exitError, "no such file"},
		{[]string{"export", "-format", "chrome", "-o", filepath.Join(t.TempDir(), "no", "dir"), trace}, exitError, "no such file"},
	} {
		_, stderr, code := hqRun(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.err) {
			t.Errorf("%q: status %d, stderr %q; want %d, %q", c.args, code, stderr, c.code, c.err)
		}
	}

	// A damaged file: what could be read is exported, and the status says
	// it was damaged.
	whole := traceOf(t, "20000", "-compress", "none")
	b, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut"+filepath.Ext(whole))
	if err := os.WriteFile(cut, b[:len(b)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "cut.json")
	_, stderr, code := hqRun(t, "export", "-format", "chrome", "-o", out, cut)
	if code != exitError || !strings.Contains(stderr, "exporting what was read") {
		t.Errorf("truncated file: status %d, stderr %q; want %d and a note", code, stderr, exitError)
	}
	var ch struct {
		TraceEvents []struct{ Ph string } `json:"traceEvents"`
	}
	readJSON(t, out, &ch)
	begins := 0
	for _, e := range ch.TraceEvents {
		if e.Ph == "B" {
			begins++
		}
	}
	if begins == 0 || begins >= 10000 {
		t.Errorf("truncated file: %d calls exported; want some, fewer than the whole run's", begins)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(readFile(t, path)), v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestExportExample traces examples/go under tadpole-hq -exec and exports
// its trace file: the example's methods show in every format, with HQ's
// call counts.
func TestExportExample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs examples/go")
	}
	dir := t.TempDir()
	example := filepath.Join(dir, "example")
	if out, err := exec.Command("go", "build", "-o", example, "../../examples/go").CombinedOutput(); err != nil {
		t.Fatalf("go build examples/go: %v\n%s", err, out)
	}
	traces := filepath.Join(dir, "traces")
	if err := os.Mkdir(traces, 0o755); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := hqRun(t, "-dir", traces, "-exec", example, "-orders", "3000", "-workers", "3")
	if code != 0 {
		t.Fatalf("exit status %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(traces, "*"+hq.TraceExt+"*"))
	if len(files) != 1 {
		t.Fatalf("trace files %v", files)
	}
	rep, err := hq.ReplayFile(files[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]int64{}
	for _, m := range rep.TopMethods {
		names[calltree.DisplayName(m.Signature)] = m.Calls
	}
	for _, want := range []string{"example.Shop.serve(I)V", "example.Shop.price(I)J", "example.Stock.reserve(II)Z", "example.Payments.charge(J)V"} {
		if names[want] == 0 {
			t.Fatalf("HQ's report lacks %s: %v", want, names)
		}
	}

	// By time, calls under a millisecond may be too narrow to draw; by
	// calls, every method shows.
	for _, by := range []string{"time", "calls"} {
		out := filepath.Join(dir, "example-"+by+".svg")
		args := []string{"export", "-format", "flame", "-o", out, files[0]}
		if by == "calls" {
			args = append(args[:1], append([]string{"-by-calls"}, args[1:]...)...)
		}
		if _, stderr, code := hqRun(t, args...); code != 0 {
			t.Fatalf("flame: status %d: %s", code, stderr)
		}
		svg := readFile(t, out)
		if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
			t.Errorf("flame graph: %v", err)
		}
		for name := range names {
			if (by == "calls" || name == "example.Shop.serve(I)V") && !strings.Contains(svg, name+": total ") {
				t.Errorf("flame graph by %s lacks %s", by, name)
			}
		}
	}

	out := filepath.Join(dir, "example.json")
	if _, stderr, code := hqRun(t, "export", "-format", "chrome", "-o", out, files[0]); code != 0 {
		t.Fatalf("chrome: status %d: %s", code, stderr)
	}
	var ch struct {
		TraceEvents []struct{ Ph, Name string } `json:"traceEvents"`
	}
	readJSON(t, out, &ch)
	begins := map[string]int64{}
	for _, e := range ch.TraceEvents {
		if e.Ph == "B" {
			begins[e.Name]++
		}
	}
	for name, calls := range names {
		if begins[name] != calls {
			t.Errorf("chrome: %d B events of %s; HQ counted %d calls", begins[name], name, calls)
		}
	}
}
