package classfile

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"testing"
)

// codeTypeAnnos returns the type annotations of method name's Code in
// testdata TypeAnnos.class, visible and invisible together.
func codeTypeAnnos(t *testing.T, method string) ([]TypeAnnotation, *Code, *Class) {
	t.Helper()
	b, err := os.ReadFile("testdata/classes/TypeAnnos.class")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Methods {
		m := &c.Methods[i]
		if c.MemberName(m) != method {
			continue
		}
		code, err := m.Code(c.Pool)
		if err != nil {
			t.Fatal(err)
		}
		var all []TypeAnnotation
		for _, ca := range code.Attrs {
			if c.Pool.IsUtf8(ca.Name, "RuntimeVisibleTypeAnnotations") || c.Pool.IsUtf8(ca.Name, "RuntimeInvisibleTypeAnnotations") {
				as, err := DecodeTypeAnnotations(ca.Data, ca.Offset)
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, as...)
			}
		}
		return all, code, c
	}
	t.Fatalf("no method %s", method)
	return nil, nil, nil
}

func TestCodeTypeAnnotations(t *testing.T) {
	as, code, _ := codeTypeAnnos(t, "m")
	seen := map[TargetType]bool{}
	for _, a := range as {
		seen[a.Target] = true
		if a.Target.HasOffset() && int(a.Offset) >= len(code.Code) {
			t.Errorf("%v offset %d beyond code length %d", a.Target, a.Offset, len(code.Code))
		}
		for _, v := range a.LocalVars {
			if int(v.StartPC)+int(v.Length) > len(code.Code) {
				t.Errorf("%v range %d+%d beyond code length %d", a.Target, v.StartPC, v.Length, len(code.Code))
			}
		}
		if a.Target == TargetNew && a.Offset != 0 {
			t.Errorf("new ArrayList annotated at offset %d; want 0 (the first instruction)", a.Offset)
		}
	}
	for _, want := range []TargetType{TargetLocalVariable, TargetResourceVariable, TargetExceptionParameter,
		TargetInstanceof, TargetNew, TargetCast, TargetMethodInvocationTypeArgument} {
		if !seen[want] {
			t.Errorf("no %v (0x%02x) annotation decoded; saw %v", want, uint8(want), seen)
		}
	}
}

func TestTypeAnnotationsEncode(t *testing.T) {
	as := []TypeAnnotation{
		{Target: TargetLocalVariable, LocalVars: []LocalVarTarget{{1, 2, 3}}, Rest: []byte{0, 0, 9, 0, 0}},
		{Target: TargetCast, Offset: 0x102, Index: 1, Rest: []byte{1, 3, 0, 0, 9, 0, 0}},
		{Target: TargetMethodTypeParamBound, Index: 1, Bound: 2, Rest: []byte{0, 0, 9, 0, 0}},
		{Target: TargetThrows, Index: 4, Rest: []byte{0, 0, 9, 0, 0}},
		{Target: TargetMethodReturn, Rest: []byte{0, 0, 9, 0, 1, 0, 7, '[', 0, 2, 'I', 0, 5, '@', 0, 9, 0, 0}},
	}
	want := []byte{0, 5,
		0x40, 0, 1, 0, 1, 0, 2, 0, 3, 0, 0, 9, 0, 0,
		0x47, 1, 2, 1, 1, 3, 0, 0, 9, 0, 0,
		0x12, 1, 2, 0, 0, 9, 0, 0,
		0x17, 0, 4, 0, 0, 9, 0, 0,
		0x14, 0, 0, 9, 0, 1, 0, 7, '[', 0, 2, 'I', 0, 5, '@', 0, 9, 0, 0}
	got, err := EncodeTypeAnnotations(nil, as)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("got  % x\nwant % x", got, want)
	}
	back, err := DecodeTypeAnnotations(got, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, as) {
		t.Errorf("decoded %+v\nwant %+v", back, as)
	}
	if _, err := EncodeTypeAnnotations(nil, []TypeAnnotation{{Target: 0x30}}); !errors.Is(err, ErrBadAttribute) {
		t.Errorf("unknown target: %v; want ErrBadAttribute", err)
	}
}

func TestMalformedTypeAnnotations(t *testing.T) {
	deep := []byte{0, 1, 0x13, 0, 0, 1, 0, 1, 0, 1}
	for i := 0; i < 100; i++ {
		deep = append(deep, '@', 0, 1, 0, 1, 0, 1)
	}
	tests := []struct {
		name string
		in   []byte
		err  error
		off  int
	}{
		{"empty", nil, ErrTruncated, 100},
		{"count beyond input", []byte{0, 2, 0x13, 0, 0, 1, 0, 0}, ErrTruncated, 102},
		{"unknown target", []byte{0, 1, 0x30, 0, 0, 1, 0, 0}, ErrBadAttribute, 102},
		{"bad element tag", []byte{0, 1, 0x13, 0, 0, 1, 0, 1, 0, 2, 'X', 0, 0}, ErrBadAttribute, 110},
		{"path beyond input", []byte{0, 1, 0x13, 9, 0, 1, 0, 1, 0, 2}, ErrTruncated, 104},
		{"trailing byte", []byte{0, 1, 0x13, 0, 0, 1, 0, 0, 0}, ErrBadAttribute, 108},
		{"nested too deep", deep, ErrBadAttribute, 100 + 10 + 7*64 + 1}, // after the 65th nested '@'
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeTypeAnnotations(tt.in, 100)
			var fe *FormatError
			if !errors.As(err, &fe) || !errors.Is(err, tt.err) {
				t.Fatalf("error %v; want %v", err, tt.err)
			}
			if fe.Offset != tt.off {
				t.Errorf("offset %d; want %d (%v)", fe.Offset, tt.off, err)
			}
		})
	}
}
