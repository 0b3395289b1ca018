package classfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tadpole-trace/tadpole/internal/jdkcorpus"
)

// roundTrip parses b, checks that writing it back gives b, that every
// Code attribute decodes and re-encodes to its original bytes, and that
// every type annotation attribute (class, field, method and Code) does
// too. It returns the number of methods and of type annotation
// attributes.
func roundTrip(b []byte) (methods, typeAnnos int, err error) {
	c, err := Parse(b)
	if err != nil {
		return 0, 0, err
	}
	out, err := c.Bytes()
	if err != nil {
		return 0, 0, err
	}
	if !bytes.Equal(out, b) {
		return 0, 0, errors.New("class written back differs from its input")
	}
	checkAnnos := func(name uint16, data []byte, off int) error {
		if !c.Pool.IsUtf8(name, "RuntimeVisibleTypeAnnotations") && !c.Pool.IsUtf8(name, "RuntimeInvisibleTypeAnnotations") {
			return nil
		}
		typeAnnos++
		as, err := DecodeTypeAnnotations(data, off)
		if err != nil {
			return err
		}
		enc, err := EncodeTypeAnnotations(nil, as)
		if err != nil {
			return err
		}
		if !bytes.Equal(enc, data) {
			return errors.New("type annotations re-encode differently")
		}
		return nil
	}
	for _, as := range [][]Attribute{c.Attrs} {
		for _, a := range as {
			if err := checkAnnos(a.Name, a.Data, a.Offset); err != nil {
				return 0, 0, err
			}
		}
	}
	for _, ms := range [][]Member{c.Fields, c.Methods} {
		for i := range ms {
			for _, a := range ms[i].Attrs {
				if err := checkAnnos(a.Name, a.Data, a.Offset); err != nil {
					return 0, 0, err
				}
			}
		}
	}
	for i := range c.Methods {
		m := &c.Methods[i]
		ci := m.CodeIndex(c.Pool)
		if ci < 0 {
			continue
		}
		code, err := m.Code(c.Pool)
		if err != nil {
			return 0, 0, err
		}
		enc, err := code.Encode()
		if err != nil {
			return 0, 0, err
		}
		if len(enc) != code.Size() {
			return 0, 0, errors.New("Code.Size disagrees with its encoding of " + c.MemberName(m))
		}
		if !bytes.Equal(enc, m.Attrs[ci].Data) {
			return 0, 0, errors.New("Code attribute of " + c.MemberName(m) + c.MemberDesc(m) + " re-encodes differently")
		}
		for _, ca := range code.Attrs {
			if ca.Kind == CodeAttrRaw {
				if err := checkAnnos(ca.Name, ca.Data, ca.Offset); err != nil {
					return 0, 0, err
				}
			}
		}
	}
	return len(c.Methods), typeAnnos, nil
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
	annos := 0
	for name, b := range testdataClasses(t) {
		_, a, err := roundTrip(b)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		annos += a
	}
	if annos == 0 {
		t.Error("no type annotation attribute checked in testdata (TypeAnnos.class has several)")
	}
}

func TestJDKRoundTrip(t *testing.T) {
	jdkcorpus.Require(t)
	classes, methods, annos, failures := 0, 0, 0, 0
	err := jdkcorpus.Walk(func(path string, b []byte) error {
		classes++
		n, a, err := roundTrip(b)
		methods += n
		annos += a
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
	t.Logf("JDK corpus: %d classes, %d methods, %d type annotation attributes round-tripped, %d failures",
		classes, methods, annos, failures)
	if failures > 0 {
		t.Fatalf("%d of %d classes failed", failures, classes)
	}
}
