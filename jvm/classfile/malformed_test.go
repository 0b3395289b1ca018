package classfile

import (
	"bytes"
	"errors"
	"testing"
)

// minimalClass is "class A extends java/lang/Object", version 52.0, laid out
// as:
//
//	0 magic, 4 minor, 6 major, 8 constant_pool_count = 5,
//	10 #1 Utf8 "A", 14 #2 Class #1, 17 #3 Utf8 "java/lang/Object",
//	36 #4 Class #3, 39 access_flags, 41 this_class, 43 super_class,
//	45 interfaces_count, 47 fields_count, 49 methods_count,
//	51 attributes_count, 53 end.
func minimalClass() []byte {
	b := appendU4(nil, Magic)
	b = appendU2(b, 0)
	b = appendU2(b, 52)
	b = appendU2(b, 5)
	b = append(b, byte(TagUtf8), 0, 1, 'A')
	b = append(b, byte(TagClass), 0, 1)
	b = append(b, byte(TagUtf8), 0, 16)
	b = append(b, "java/lang/Object"...)
	b = append(b, byte(TagClass), 0, 3)
	b = appendU2(b, AccPublic|AccSuper)
	b = appendU2(b, 2)
	b = appendU2(b, 4)
	return append(b, 0, 0, 0, 0, 0, 0, 0, 0)
}

func TestMinimalClassParses(t *testing.T) {
	b := minimalClass()
	if len(b) != 53 {
		t.Fatalf("minimal class is %d bytes; want 53", len(b))
	}
	c, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Name(); got != "A" {
		t.Errorf("Name() = %q; want A", got)
	}
	if got := c.SuperName(); got != "java/lang/Object" {
		t.Errorf("SuperName() = %q; want java/lang/Object", got)
	}
}

func TestMalformed(t *testing.T) {
	edit := func(f func(b []byte) []byte) []byte { return f(minimalClass()) }
	set := func(off int, v ...byte) []byte {
		return edit(func(b []byte) []byte { copy(b[off:], v); return b })
	}
	tests := []struct {
		name string
		in   []byte
		err  error
		off  int
	}{
		{"empty", nil, ErrTruncated, 0},
		{"short header", minimalClass()[:7], ErrTruncated, 0},
		{"bad magic", set(0, 0xCA, 0xFE, 0xBA, 0xBF), ErrBadMagic, 0},
		{"version 70", set(6, 0, 70), ErrUnsupportedVersion, 6},
		{"version 44", set(6, 0, 44), ErrUnsupportedVersion, 6},
		{"no pool count", minimalClass()[:9], ErrTruncated, 8},
		{"pool count 0", set(8, 0, 0), ErrBadConstant, 8},
		{"pool count beyond input", set(8, 0xFF, 0xFF), ErrTruncated, 10},
		{"cut inside pool", minimalClass()[:30], ErrTruncated, 20},
		{"unknown tag 2", set(10, 2), ErrBadConstant, 10},
		{"unknown tag 13", set(14, 13), ErrBadConstant, 14},
		{"Class names a Class", set(16, 2), ErrBadConstant, 14},
		{"Class index out of range", set(37, 0, 9), ErrBadConstant, 36},
		{"Long in last slot", edit(func(b []byte) []byte {
			// turn #4 (Class, 3 bytes) into a Long (9 bytes) in the last slot
			return append(append(b[:36:36], byte(TagLong), 0, 0, 0, 0, 0, 0, 0, 1), minimalClass()[39:]...)
		}), ErrBadConstant, 36},
		{"this_class is a Utf8", set(41, 0, 1), ErrBadConstant, 41},
		{"super_class out of range", set(43, 0, 5), ErrBadConstant, 43},
		{"interfaces beyond input", set(45, 0, 5), ErrTruncated, 47},
		{"fields beyond input", set(47, 0, 1), ErrTruncated, 49},
		{"cut before attributes_count", minimalClass()[:52], ErrTruncated, 51},
		{"trailing byte", append(minimalClass(), 0), ErrTrailingBytes, 53},
		{"attribute length beyond input", edit(func(b []byte) []byte {
			b[52] = 1
			return append(b, 0, 1, 0, 0, 0, 100, 1, 2)
		}), ErrTruncated, 59},
		{"attribute name not Utf8", edit(func(b []byte) []byte {
			b[52] = 1
			return append(b, 0, 2, 0, 0, 0, 0)
		}), ErrBadConstant, 53},
		{"field name not Utf8", edit(func(b []byte) []byte {
			b[48] = 1 // one field: access, name #2 (a Class), descriptor #1
			return append(b[:49:49], 0, 0, 0, 2, 0, 1, 0, 0, 0, 0, 0, 0)
		}), ErrBadConstant, 51},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse = %v, nil; want error %v", c, tt.err)
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T %v; want *FormatError", err, err)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("error %v; want %v", err, tt.err)
			}
			if fe.Offset != tt.off {
				t.Errorf("offset %d; want %d (%v)", fe.Offset, tt.off, err)
			}
		})
	}
}

func TestVersionRange(t *testing.T) {
	for _, v := range []struct{ major, minor uint16 }{{45, 3}, {45, 0}, {49, 0}, {52, 0}, {61, 0}, {65, 0}, {69, 0}, {69, 0xFFFF}} {
		b := minimalClass()
		b[4], b[5], b[6], b[7] = byte(v.minor>>8), byte(v.minor), byte(v.major>>8), byte(v.major)
		c, err := Parse(b)
		if err != nil {
			t.Errorf("%d.%d: %v", v.major, v.minor, err)
			continue
		}
		if c.Major != v.major || c.Minor != v.minor {
			t.Errorf("%d.%d parsed as %d.%d", v.major, v.minor, c.Major, c.Minor)
		}
		if out, err := c.Bytes(); err != nil || !bytes.Equal(out, b) {
			t.Errorf("%d.%d: round trip differs (%v)", v.major, v.minor, err)
		}
	}
}
