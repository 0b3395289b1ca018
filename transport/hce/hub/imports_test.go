package hub

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports: transport/hce and its hub import the standard library and
// each other only, and never cgo (STYLE 1, 2): agent code stays out of the
// hub.
func TestImports(t *testing.T) {
	for _, dir := range []string{".", ".."} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		if len(files) == 0 {
			t.Fatalf("no sources in %s", dir)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, im := range af.Imports {
				p, _ := strconv.Unquote(im.Path.Value)
				first, _, _ := strings.Cut(p, "/")
				switch {
				case p == "C":
					t.Errorf("%s imports C", f)
				case p == "github.com/tadpole-trace/tadpole/transport/hce":
				case strings.Contains(first, "."):
					t.Errorf("%s imports %s", f, p)
				}
			}
		}
	}
}
