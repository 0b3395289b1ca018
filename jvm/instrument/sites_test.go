package instrument

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tadpole-trace/tadpole/jvm/classfile"
)

// logSites are the java.util.logging.Logger methods whose callers name
// the record's source (not logp, logrb, entering, exiting, throwing, nor
// log(LogRecord): those may carry their source already).
var logSites = []SiteTarget{{Owner: "java/util/logging/Logger",
	Names: []string{"severe", "warning", "info", "config", "fine", "finer", "finest", "log"}}}

type site struct {
	class, method string
	line          int32
}

// TestSitesVerify instruments a program that logs from call sites of every
// shape (a branch target, a call before a return, two calls in a row, a
// disabled level, a Supplier, a handler that throws, an explicit source)
// and runs it under -Xverify:all: each record's handler sees the id of the
// call that made it, whose method and line are those of the call in the
// source, and records of calls that are not sites see none.
//
// With SitesOnly the same holds (a handler that throws out of a method
// clears its site through the method's catch-all), only the methods that
// call a site are rewritten, and no method probe is added.
func TestSitesVerify(t *testing.T) {
	javac := requireTool(t, "javac")
	java := requireTool(t, "java")
	dir := t.TempDir()
	classes := filepath.Join(dir, "classes")
	srcs, _ := filepath.Glob("testdata/java/sites/tadpole/sites/*.java")
	run(t, javac, append([]string{"-g", "-d", classes}, srcs...)...)
	want, _ := run(t, java, "-cp", classes, "tadpole.sites.Main")
	for _, sitesOnly := range []bool{false, true} {
		name := "full"
		if sitesOnly {
			name = "sitesonly"
		}
		t.Run(name, func(t *testing.T) {
			checkSites(t, java, classes, filepath.Join(dir, name), want, sitesOnly)
		})
	}
}

// sitesOnlyMethods are the methods of the test program that call a site.
var sitesOnlyMethods = []string{"plain", "loop", "twice", "disabledThenExplicit", "supplier", "throwing", "ternary"}

func checkSites(t *testing.T, java, classes, out, want string, sitesOnly bool) {
	var sites []site
	cfg := DefaultConfig()
	cfg.Helper = "tadpole/sites/Probe"
	cfg.Sites = logSites
	cfg.SitesOnly = sitesOnly
	cfg.SiteID = func(class, method, desc string, line int32, owner, name string) (int32, bool) {
		sites = append(sites, site{class, method, line})
		return int32(len(sites)), true
	}
	x, err := New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range instrumentDir(t, x, classes, out) {
		var names []string
		for _, m := range r.Methods {
			if m.Err != nil {
				t.Errorf("%s.%s%s not instrumented: %v", r.Class, m.Name, m.Desc, m.Err)
			}
			names = append(names, m.Name)
		}
		if !sitesOnly {
			continue
		}
		if r.Class != "tadpole/sites/Main" {
			names = nil // no site anywhere else
		}
		if len(r.Methods) > 0 && r.Class != "tadpole/sites/Main" || !slices.Equal(names, nil) &&
			!slices.Equal(names, sitesOnlyMethods) {
			t.Errorf("sites only: %s rewrote %v; want only %v of Main", r.Class, names, sitesOnlyMethods)
		}
	}
	if sitesOnly {
		// Not a single method probe: the helper's enter, exit, thrown and
		// bubble are never referenced.
		filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".class") {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			c, err := classfile.Parse(b)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			for i := 1; i < c.Pool.Count(); i++ {
				if c.Pool.Tag(uint16(i)) != classfile.TagMethodref {
					continue
				}
				owner, name, _ := c.Pool.MemberRef(uint16(i))
				if owner == cfg.Helper && slices.Contains([]string{cfg.Enter, cfg.Exit, cfg.Thrown, cfg.Bubble}, name) {
					t.Errorf("sites only: %s calls the method probe %s", p, name)
				}
			}
			return nil
		})
		for _, m := range sitesOnlyMethods {
			if !slices.ContainsFunc(sites, func(s site) bool { return s.method == m }) {
				t.Errorf("sites only: no site in %s: %+v", m, sites)
			}
		}
	}
	got, _ := run(t, java, "-Xverify:all", "-cp", out, "tadpole.sites.Main")
	siteRE := regexp.MustCompile(`site=\d+ `)
	if strip := siteRE.ReplaceAllString(got, "site= "); strip != siteRE.ReplaceAllString(want, "site= ") {
		t.Fatalf("instrumented output\n%s\nwant (sites aside)\n%s", got, want)
	}
	src, err := os.ReadFile("testdata/java/sites/tadpole/sites/Main.java")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	methodOf := map[string]string{"plain": "plain", "loop": "loop", "first": "twice", "second": "twice",
		"supplier": "supplier", "ternary": "ternary"}
	seen := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
		idText, msg, ok := strings.Cut(strings.TrimPrefix(l, "site="), " msg=")
		if !ok {
			continue
		}
		tag := strings.TrimPrefix(msg, "TAG-")
		seen[tag]++
		id, _ := strconv.Atoi(idText)
		if tag == "explicit" || tag == "afterthrow" {
			if id != 0 {
				t.Errorf("%s: site %d (%+v); want none, the call is not a site", msg, id, sites[id-1])
			}
			continue
		}
		if id <= 0 || id > len(sites) {
			t.Errorf("%s: site %d; want one of the %d sites", msg, id, len(sites))
			continue
		}
		s := sites[id-1]
		if s.class != "tadpole/sites/Main" || s.method != methodOf[tag] || s.line <= 0 || int(s.line) > len(lines) {
			t.Errorf("%s: site %+v; want a call in Main.%s", msg, s, methodOf[tag])
			continue
		}
		code := lines[s.line-1]
		if !strings.Contains(code, "LOG.") || tag != "supplier" && !strings.Contains(code, msg) {
			t.Errorf("%s: site line %d is %q; want the call's line", msg, s.line, strings.TrimSpace(code))
		}
	}
	for _, tag := range []string{"plain", "loop", "first", "second", "supplier", "ternary", "explicit", "afterthrow"} {
		if seen[tag] == 0 {
			t.Errorf("no record tagged %s:\n%s", tag, got)
		}
	}
	if seen["loop"] != 3 || seen["disabled"] != 0 {
		t.Errorf("records: %v; want 3 of the loop and none disabled", seen)
	}
	if !slices.ContainsFunc(sites, func(s site) bool { return s.method == "disabledThenExplicit" }) {
		t.Errorf("the disabled call is no site: %+v", sites)
	}
}
