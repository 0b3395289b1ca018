package ctest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tadpole-trace/tadpole/internal/testpeers"
)

// TestHeaderCompiles compiles testdata/header.c, which uses every
// declaration of tadpole.h, as strict C99 and as C++11, and links both.
func TestHeaderCompiles(t *testing.T) {
	lib := BuildLib(t)
	testpeers.RequireTools(t, "g++")
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		cc   string
		args []string
	}{
		{"c99", "gcc", []string{"-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror"}},
		{"c11", "gcc", []string{"-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror", "-Wconversion"}},
		{"c++11", "g++", []string{"-x", "c++", "-std=c++11", "-Wall", "-Wextra", "-pedantic", "-Werror", "-Wold-style-cast"}},
		{"c++17", "g++", []string{"-x", "c++", "-std=c++17", "-Wall", "-Wextra", "-pedantic", "-Werror"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, "header-"+c.name)
			args := append(append([]string{}, c.args...), "-I", lib.Include, "-o", out, "testdata/header.c",
				"-x", "none", "-L", lib.Dir, "-ltadpole")
			if b, err := exec.Command(c.cc, args...).CombinedOutput(); err != nil {
				t.Fatalf("%s %s: %v\n%s", c.cc, strings.Join(args, " "), err, b)
			}
		})
	}
}

// headerFunctions lists the functions tadpole.h declares.
func headerFunctions(t testing.TB, lib *Lib) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(lib.Include, "tadpole.h"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^TADPOLE_API [^(]*\b(tadpole_[a-z_]+)\(`).FindAllSubmatch(src, -1) {
		out = append(out, string(m[1]))
	}
	slices.Sort(out)
	return out
}

// jvmtiEntryPoints may be exported besides the C API (package jni).
var jvmtiEntryPoints = []string{"Agent_OnAttach", "Agent_OnLoad", "Agent_OnUnload"}

// TestExportedSymbols checks the library's dynamic symbols: exactly the
// functions of tadpole.h, and the JVMTI entry points when they exist.
func TestExportedSymbols(t *testing.T) {
	lib := BuildLib(t)
	testpeers.RequireTools(t, "nm")
	out, err := exec.Command("nm", "-D", "--defined-only", lib.Path).Output()
	if err != nil {
		t.Fatalf("nm: %v", err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		if slices.Contains(jvmtiEntryPoints, f[2]) {
			continue
		}
		got = append(got, f[2])
	}
	slices.Sort(got)
	want := headerFunctions(t, lib)
	if len(want) < 15 {
		t.Fatalf("found only %d functions in tadpole.h: %q", len(want), want)
	}
	if !slices.Equal(got, want) {
		t.Errorf("exported symbols:\n got %q\nwant %q", got, want)
	}
}
