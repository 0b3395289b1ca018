package j4pwire

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"
)

// answer encodes v as J4P's success answer.
func answer(t testing.TB, v any) []byte {
	e := &Enc{}
	e.tag(TagOK)
	if err := e.value(v, 0); err != nil {
		t.Fatal(err)
	}
	return e.Bytes()
}

// same compares decoded values: NaN equals NaN, errors by content.
func same(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || math.IsNaN(x) && math.IsNaN(y))
	case *JavaError:
		y, ok := b.(*JavaError)
		return ok && *x == *y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !same(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !same(v, w) {
				return false
			}
		}
		return true
	}
	return fmt.Sprintf("%#v", a) == fmt.Sprintf("%#v", b)
}

func TestWireRoundTrip(t *testing.T) {
	vals := []any{
		nil, true, false, int64(-1), int64(math.MaxInt64), 0.25, "", "héllo ☃",
		json.Number("123456789012345678901234567890"),
		[]any{int64(1), "a", nil, []any{}},
		map[string]any{"init": int64(1), "used": int64(2), "nested": map[string]any{"objectName": "java.lang:type=Memory"}},
		map[string]any{"Ok": int64(1), "Bad": &JavaError{Kind: KindUnsupported, Class: "java.lang.UnsupportedOperationException", Message: "no"}},
	}
	for _, v := range vals {
		got, err := DecodeAnswer(answer(t, v))
		if err != nil {
			t.Fatalf("%#v: %v", v, err)
		}
		if !same(got, v) {
			t.Errorf("round trip of %#v gave %#v", v, got)
		}
	}
}

func TestWireError(t *testing.T) {
	e := &Enc{}
	e.tag(TagError)
	e.b = append(e.b, byte(KindAttribute))
	e.str("javax.management.AttributeNotFoundException")
	e.str("No such attribute: Nope")
	_, err := DecodeAnswer(e.Bytes())
	var je *JavaError
	if !errors.As(err, &je) || je.Kind != KindAttribute || je.Class != "javax.management.AttributeNotFoundException" || err.Error() != "No such attribute: Nope" {
		t.Fatalf("error answer decoded as %#v", err)
	}
}

func TestWireMalformed(t *testing.T) {
	for _, b := range [][]byte{
		nil, {'K'}, {'K', 'S', 5, 'a'}, {'K', 'L', 0xff, 0xff, 0xff, 0xff, 0x0f}, {'K', 'I', 1, 2}, {'K', 'Z'},
		{'K', 'N', 'N'}, {'X'}, {'E', 1, 3, 'a'},
	} {
		if _, err := DecodeAnswer(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: %v; want ErrMalformed", b, err)
		}
	}
	deep := []byte{'K'}
	for range MaxDepth + 2 {
		deep = append(deep, 'L', 1)
	}
	deep = append(deep, 'N')
	if _, err := DecodeAnswer(deep); !errors.Is(err, ErrMalformed) {
		t.Errorf("nesting over %d: %v; want ErrMalformed", MaxDepth, err)
	}
}

// FuzzDecodeAnswer: any bytes decode without panic, and a decoded value
// encodes and decodes to itself.
func FuzzDecodeAnswer(f *testing.F) {
	f.Add(answer(f, map[string]any{"committed": int64(406847488), "max": int64(-1), "tags": []any{"a", true, 0.5, nil}}))
	f.Add([]byte{'E', 2, 3, 'a', 'b', 'c', 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := DecodeAnswer(b)
		if err != nil {
			return
		}
		again, err := DecodeAnswer(answer(t, v))
		if err != nil {
			t.Fatalf("re-encoded %#v: %v", v, err)
		}
		if !same(again, v) {
			t.Fatalf("%#v became %#v", v, again)
		}
	})
}

func BenchmarkDecodeHeapUsage(b *testing.B) {
	a := answer(b, map[string]any{"committed": int64(406847488), "init": int64(398458880), "max": int64(6320816128), "used": int64(8310784)})
	b.ReportAllocs()
	for range b.N {
		if _, err := DecodeAnswer(a); err != nil {
			b.Fatal(err)
		}
	}
}
