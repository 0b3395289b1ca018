package jni

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tadpole-trace/tadpole/internal/testpeers"
	"github.com/tadpole-trace/tadpole/jvm/classfile"
)

// probeCalls returns the io.tadpole.Probe methods class file b calls.
func probeCalls(t *testing.T, b []byte) []string {
	t.Helper()
	c, err := classfile.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := 1; i < c.Pool.Count(); i++ {
		if c.Pool.Tag(uint16(i)) == classfile.TagMethodref {
			if owner, name, _ := c.Pool.MemberRef(uint16(i)); owner == "io/tadpole/Probe" && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return names
}

// TestSitesOnlyThenTraced: a class that calls java.util.logging gets
// call-site probes only while no run traces it, is then retransformed
// with its method probes, and keeps the same sites (ids per calling
// method); the JDK's classes get none.
func TestSitesOnlyThenTraced(t *testing.T) {
	testpeers.RequireTools(t, "javac")
	dir := t.TempDir()
	src, err := filepath.Abs("../jvm/instrument/testdata/java/sites/tadpole/sites/Main.java")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("javac", "-g", "-d", dir, src, filepath.Join(filepath.Dir(src), "Probe.java")).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	in, err := os.ReadFile(filepath.Join(dir, "tadpole/sites/Main.class"))
	if err != nil {
		t.Fatal(err)
	}
	defer sitesOn.Store(sitesOn.Load())
	sitesOn.Store(true)
	if !sitesWanted("tadpole/sites/Main", false) || sitesWanted("java/util/logging/Logger", false) ||
		sitesWanted("tadpole/sites/Main", true) || sitesWanted("io/tadpole/JulHandler", false) {
		t.Fatal("sitesWanted: want the application's classes only")
	}

	only, _, err := transformWith(&siteInstrumenters, in)
	if err != nil || only == nil {
		t.Fatalf("sites only: %v (rewritten: %v)", err, only != nil)
	}
	if got := probeCalls(t, only); !slices.Equal(got, []string{"site", "siteEnd"}) {
		t.Fatalf("sites only: the class calls Probe.%v; want site and siteEnd alone", got)
	}
	sites.mu.Lock()
	ids := maps.Clone(sites.ids)
	sites.mu.Unlock()
	var methods []string
	for k := range ids {
		if k[0] == "tadpole/sites/Main" {
			methods = append(methods, k[1])
		}
	}
	slices.Sort(methods)
	want := []string{"disabledThenExplicit", "loop", "plain", "supplier", "ternary", "throwing", "twice"}
	if !slices.Equal(methods, want) {
		t.Fatalf("sites only: sites in %v; want %v", methods, want)
	}

	full, _, err := transform(in)
	if err != nil || full == nil {
		t.Fatalf("with method probes: %v", err)
	}
	if got := probeCalls(t, full); !slices.Contains(got, "enter") || !slices.Contains(got, "exit") ||
		!slices.Contains(got, "site") || !slices.Contains(got, "siteEnd") {
		t.Fatalf("with method probes: the class calls Probe.%v; want the method probes and the sites", got)
	}
	sites.mu.Lock()
	after := maps.Clone(sites.ids)
	sites.mu.Unlock()
	if !maps.Equal(ids, after) {
		t.Fatalf("site ids changed with the method probes: %v, then %v", ids, after)
	}
	for _, k := range []string{"plain", "twice"} {
		id := ids[[2]string{"tadpole/sites/Main", k}]
		var cls, m string
		if !siteNames(id, &cls, &m) || cls != "tadpole.sites.Main" || m != k {
			t.Fatalf("site %d names %s.%s; want tadpole.sites.Main.%s", id, cls, m, k)
		}
	}
}
