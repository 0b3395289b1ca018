// Package jdkcorpus gives tests the class files of the installed JDK's
// runtime image: it extracts $JAVA_HOME/lib/modules with `jimage extract`
// once into a cache directory under os.TempDir (keyed by the modules
// file's size and modification time, shared by every test process) and
// lists every .class in it, module-info.class included.
package jdkcorpus

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// ErrNoJDK: java or jimage is not installed, or the JDK has no lib/modules.
var ErrNoJDK = errors.New("jdkcorpus: no JDK with jimage and lib/modules found")

// JavaHome returns the JDK home: the parent of the bin directory of
// `readlink -f $(which java)`.
func JavaHome() (string, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoJDK, err)
	}
	real, err := filepath.EvalSymlinks(java)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoJDK, err)
	}
	return filepath.Dir(filepath.Dir(real)), nil
}

var (
	once     sync.Once
	onceDir  string
	onceList []string
	onceErr  error
)

// Dir returns the directory holding the extracted image (one directory
// per module), extracting it on first use.
func Dir() (string, error) {
	once.Do(func() { onceDir, onceList, onceErr = load() })
	return onceDir, onceErr
}

// Classes returns the paths of every .class file of the image, sorted.
// The slice is shared: do not modify it.
func Classes() ([]string, error) {
	once.Do(func() { onceDir, onceList, onceErr = load() })
	return onceList, onceErr
}

func load() (string, []string, error) {
	dir, err := extract()
	if err != nil {
		return "", nil, err
	}
	var list []string
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".class") {
			list = append(list, path)
		}
		return nil
	})
	if err != nil {
		return "", nil, fmt.Errorf("jdkcorpus: walk %s: %w", dir, err)
	}
	if len(list) == 0 {
		return "", nil, fmt.Errorf("jdkcorpus: no class files in %s", dir)
	}
	sort.Strings(list)
	return dir, list, nil
}

func extract() (string, error) {
	home, err := JavaHome()
	if err != nil {
		return "", err
	}
	modules := filepath.Join(home, "lib", "modules")
	st, err := os.Stat(modules)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoJDK, err)
	}
	jimage := filepath.Join(home, "bin", "jimage")
	if _, err := os.Stat(jimage); err != nil {
		if jimage, err = exec.LookPath("jimage"); err != nil {
			return "", fmt.Errorf("%w: %v", ErrNoJDK, err)
		}
	}
	dir := filepath.Join(os.TempDir(), "tadpole-jdkcorpus-"+strconv.FormatInt(st.Size(), 10)+"-"+
		strconv.FormatInt(st.ModTime().UnixNano(), 10))
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	removeStalePartials()
	// Extract next to the final name and rename: the rename is atomic, so
	// a directory under the final name is always complete, and concurrent
	// test processes at worst extract twice.
	tmp, err := os.MkdirTemp(os.TempDir(), partialPrefix)
	if err != nil {
		return "", fmt.Errorf("jdkcorpus: %w", err)
	}
	out, err := exec.Command(jimage, "extract", "--dir", tmp, modules).CombinedOutput()
	if err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("jdkcorpus: jimage extract: %v: %s", err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if _, serr := os.Stat(dir); serr != nil {
			return "", fmt.Errorf("jdkcorpus: %w", err)
		}
	}
	return dir, nil
}

const partialPrefix = "tadpole-jdkcorpus-partial-"

// staleAfter: a partial extraction older than this was interrupted (a
// full extraction takes seconds).
const staleAfter = time.Hour

// removeStalePartials deletes extractions left behind by killed test
// processes.
func removeStalePartials() {
	old, _ := filepath.Glob(filepath.Join(os.TempDir(), partialPrefix+"*"))
	for _, dir := range old {
		if st, err := os.Stat(dir); err == nil && time.Since(st.ModTime()) > staleAfter {
			os.RemoveAll(dir)
		}
	}
}

// Walk calls fn with the path and bytes of every class file, in order,
// stopping at the first error fn returns.
func Walk(fn func(path string, data []byte) error) error {
	list, err := Classes()
	if err != nil {
		return err
	}
	for _, p := range list {
		b, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("jdkcorpus: %w", err)
		}
		if err := fn(p, b); err != nil {
			return err
		}
	}
	return nil
}

// Sample returns the bytes of n class files spread evenly over the
// corpus (all of them when n exceeds its size).
func Sample(n int) ([][]byte, error) {
	list, err := Classes()
	if err != nil {
		return nil, err
	}
	if n <= 0 || n > len(list) {
		n = len(list)
	}
	out := make([][]byte, 0, n)
	for i := 0; i < n; i++ {
		b, err := os.ReadFile(list[i*len(list)/n])
		if err != nil {
			return nil, fmt.Errorf("jdkcorpus: %w", err)
		}
		out = append(out, b)
	}
	return out, nil
}

// Require returns the corpus directory for a test or benchmark. When the
// JDK is missing it skips, or fails when the environment sets CI=true; any
// other failure (extraction, reading) fails.
func Require(tb testing.TB) string {
	tb.Helper()
	dir, err := Dir()
	if err != nil {
		if !errors.Is(err, ErrNoJDK) {
			tb.Fatalf("JDK corpus: %v", err)
		}
		if os.Getenv("CI") == "true" {
			tb.Fatalf("JDK corpus needed under CI=true: %v", err)
		}
		tb.Skipf("JDK corpus unavailable: %v", err)
	}
	return dir
}
