package classfile

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"reflect"
	"slices"
	"testing"
)

// FuzzParse: no input panics; a parsed class writes back to its input,
// parses again to an equal Class, and every Code attribute that decodes
// re-encodes to its bytes. Seeds: testdata/classes and
// testdata/fuzz/FuzzParse (real classes, truncated and corrupted ones).
func FuzzParse(f *testing.F) {
	files, err := readClasses("testdata/classes")
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range slices.Sorted(maps.Keys(files)) { // stable seed numbering
		f.Add(files[name])
	}
	f.Add(minimalClass())
	f.Fuzz(checkClass)
}

// checkClass is the property FuzzParse checks on any input b.
func checkClass(t *testing.T, b []byte) {
	c, err := Parse(b)
	if err != nil {
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Offset < 0 || fe.Offset > len(b) {
			t.Fatalf("Parse error %T %v: want *FormatError with an offset in 0..%d", err, err, len(b))
		}
		return
	}
	out, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, b) {
		t.Fatal("written class differs from its input")
	}
	c2, err := Parse(out)
	if err != nil {
		t.Fatalf("reparse: %v", err)
	}
	if !reflect.DeepEqual(c, c2) {
		t.Fatal("reparsed class differs")
	}
	var arena CodeArena
	for i := range c.Methods {
		m := &c.Methods[i]
		code, err := m.Code(c.Pool)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Offset < 0 || fe.Offset > len(b) {
				t.Fatalf("Code error %T %v: want *FormatError in range", err, err)
			}
			continue
		}
		if code == nil {
			continue
		}
		if ac, err := arena.Code(c.Pool, m); err != nil || !reflect.DeepEqual(ac, code) {
			t.Fatalf("arena decode of method %d differs (%v)", i, err)
		}
		enc, err := code.Encode()
		if err != nil {
			t.Fatalf("encode decoded Code: %v", err)
		}
		if ci := m.CodeIndex(c.Pool); !bytes.Equal(enc, m.Attrs[ci].Data) {
			t.Fatalf("Code of method %d re-encodes differently", i)
		}
		if err := m.SetCode(c.Pool, code); err != nil {
			t.Fatal(err)
		}
	}
	again, err := c.Bytes()
	if err != nil || !bytes.Equal(again, b) {
		t.Fatalf("class with re-set Code differs (%v)", err)
	}
}

// FuzzDecodeCode fuzzes Code attribute bodies directly (FuzzParse rarely
// gets past the constant pool), against the pool of testdata Sample8:
// no panic; what decodes re-encodes to the same bytes and decodes equal.
// Seeds: every Code attribute of testdata/classes/Sample8.class.
func FuzzDecodeCode(f *testing.F) {
	b, err := os.ReadFile("testdata/classes/Sample8.class")
	if err != nil {
		f.Fatal(err)
	}
	c, err := Parse(b)
	if err != nil {
		f.Fatal(err)
	}
	for i := range c.Methods {
		if ci := c.Methods[i].CodeIndex(c.Pool); ci >= 0 {
			f.Add(c.Methods[i].Attrs[ci].Data)
		}
	}
	p := c.Pool
	f.Fuzz(func(t *testing.T, data []byte) {
		code, err := DecodeCode(p, &Attribute{Data: data, Offset: 0})
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Offset < 0 || fe.Offset > len(data) {
				t.Fatalf("error %T %v: want *FormatError with an offset in 0..%d", err, err, len(data))
			}
			return
		}
		enc, err := code.Encode()
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		if !bytes.Equal(enc, data) {
			t.Fatalf("re-encoded Code differs:\n% x\n% x", enc, data)
		}
		if len(enc) != code.Size() {
			t.Fatalf("Size %d; encoded %d", code.Size(), len(enc))
		}
		again, err := DecodeCode(p, &Attribute{Data: enc, Offset: 0})
		if err != nil || !reflect.DeepEqual(again, code) {
			t.Fatalf("re-decoded Code differs (%v)", err)
		}
	})
}

// FuzzTypeAnnotations: no panic; what decodes re-encodes to its input.
// Seeds: the type annotation attributes of testdata TypeAnnos.class.
func FuzzTypeAnnotations(f *testing.F) {
	b, err := os.ReadFile("testdata/classes/TypeAnnos.class")
	if err != nil {
		f.Fatal(err)
	}
	c, err := Parse(b)
	if err != nil {
		f.Fatal(err)
	}
	add := func(name uint16, data []byte) {
		if c.Pool.IsUtf8(name, "RuntimeVisibleTypeAnnotations") || c.Pool.IsUtf8(name, "RuntimeInvisibleTypeAnnotations") {
			f.Add(data)
		}
	}
	for _, ms := range [][]Member{c.Fields, c.Methods} {
		for i := range ms {
			for _, a := range ms[i].Attrs {
				add(a.Name, a.Data)
			}
			if code, err := ms[i].Code(c.Pool); err == nil && code != nil {
				for _, ca := range code.Attrs {
					add(ca.Name, ca.Data)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		as, err := DecodeTypeAnnotations(data, 0)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Offset < 0 || fe.Offset > len(data) {
				t.Fatalf("error %T %v: want *FormatError with an offset in 0..%d", err, err, len(data))
			}
			return
		}
		enc, err := EncodeTypeAnnotations(nil, as)
		if err != nil || !bytes.Equal(enc, data) {
			t.Fatalf("re-encoded type annotations differ (%v)", err)
		}
	})
}
