package classfile

import (
	"archive/zip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJarsRoundTrip round-trips every class of the jars in /usr/share/java
// (Debian's Java libraries: class files of versions 49 to 55 from several
// compilers). It skips when the directory holds no jar.
func TestJarsRoundTrip(t *testing.T) {
	jars, _ := filepath.Glob("/usr/share/java/*.jar")
	classes, methods, annos := 0, 0, 0
	versions := map[uint16]int{}
	for _, jar := range jars {
		if fi, err := os.Lstat(jar); err != nil || fi.Mode()&os.ModeSymlink != 0 {
			continue // Debian links unversioned names to versioned jars
		}
		z, err := zip.OpenReader(jar)
		if err != nil {
			continue // not every .jar there is a zip we need
		}
		for _, f := range z.File {
			if !strings.HasSuffix(f.Name, ".class") || f.UncompressedSize64 > 1<<24 {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatalf("%s!%s: %v", jar, f.Name, err)
			}
			if len(b) >= headerSize && (b[6] > 0 || b[7] > MaxMajor) {
				continue // multi-release jars may hold newer classes
			}
			n, a, err := roundTrip(b)
			if err != nil {
				t.Errorf("%s!%s: %v", jar, f.Name, err)
				continue
			}
			classes++
			methods += n
			annos += a
			versions[uint16(b[6])<<8|uint16(b[7])]++
		}
		z.Close()
	}
	if classes == 0 {
		t.Skip("no class files in /usr/share/java")
	}
	t.Logf("%d classes, %d methods, %d type annotation attributes from %d jars; by major version: %v",
		classes, methods, annos, len(jars), versions)
}
