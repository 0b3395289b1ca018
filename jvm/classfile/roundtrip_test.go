package classfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tadpole-trace/tadpole/jvm/internal/jdkcorpus"
)

// roundTrip parses b, checks that writing it back gives b, and that every
// Code attribute decodes and re-encodes to its original bytes. It returns
// the number of methods.
func roundTrip(b []byte) (methods int, err error) {
	c, err := Parse(b)
	if err != nil {
		return 0, err
	}
	out, err := c.Bytes()
	if err != nil {
		return 0, err
	}
	if !bytes.Equal(out, b) {
		return 0, errors.New("class written back differs from its input")
	}
	for i := range c.Methods {
		m := &c.Methods[i]
		ci := m.CodeIndex(c.Pool)
		if ci < 0 {
			continue
		}
		code, err := m.Code(c.Pool)
		if err != nil {
			return 0, err
		}
		enc, err := code.Encode()
		if err != nil {
			return 0, err
		}
		if len(enc) != code.Size() {
			return 0, errors.New("Code.Size disagrees with its encoding of " + c.MemberName(m))
		}
		if !bytes.Equal(enc, m.Attrs[ci].Data) {
			return 0, errors.New("Code attribute of " + c.MemberName(m) + c.MemberDesc(m) + " re-encodes differently")
		}
	}
	return len(c.Methods), nil
}

// readClasses reads every .class file of dir, keyed by file name.
func readClasses(dir string) (map[string][]byte, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.class"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, errors.New("no class files in " + dir)
	}
	m := make(map[string][]byte)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		m[filepath.Base(f)] = b
	}
	return m, nil
}

func testdataClasses(t *testing.T) map[string][]byte {
	t.Helper()
	m, err := readClasses("testdata/classes")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRoundTripTestdata(t *testing.T) {
	for name, b := range testdataClasses(t) {
		if _, err := roundTrip(b); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestJDKRoundTrip(t *testing.T) {
	jdkcorpus.Require(t)
	classes, methods, failures := 0, 0, 0
	err := jdkcorpus.Walk(func(path string, b []byte) error {
		classes++
		n, err := roundTrip(b)
		methods += n
		if err != nil {
			failures++
			if failures <= 20 {
				t.Errorf("%s: %v", path, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("JDK corpus: %d classes, %d methods round-tripped, %d failures", classes, methods, failures)
	if failures > 0 {
		t.Fatalf("%d of %d classes failed", failures, classes)
	}
}
