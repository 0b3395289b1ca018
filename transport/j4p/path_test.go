package j4p

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestSplitPath(t *testing.T) {
	// Jolokia's conformance vectors (reference §3).
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"path/", []string{"path"}},
		{"hello/world", []string{"hello", "world"}},
		{"hello!/world/yeah", []string{"hello/world", "yeah"}},
		{"hello!!/world/yeah", []string{"hello!", "world", "yeah"}},
		{"hello!!!/world/yeah", []string{"hello!/world", "yeah"}},
		{"!!!!", []string{"!!"}},
		{"hello!!", []string{"hello!"}},
		{"hello!,!!/wor,ld/yeah", []string{"hello,!", "wor,ld", "yeah"}},
		{"/read/java.lang:type=Memory/HeapMemoryUsage/used", []string{"read", "java.lang:type=Memory", "HeapMemoryUsage", "used"}},
		{"a//b", []string{"a", "", "b"}},
		{`exec/x:y=z/op/a!"b`, []string{"exec", "x:y=z", "op", `a"b`}},
	}
	for _, tt := range tests {
		got, err := SplitPath(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("SplitPath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestSplitPathHostile(t *testing.T) {
	long := strings.Repeat("!!", 30000)
	got, err := SplitPath(long)
	if err != nil || len(got) != 1 || got[0] != strings.Repeat("!", 30000) {
		t.Fatalf("30000×!!: %d parts, %v", len(got), err)
	}
	for _, in := range []string{"a!", "read/x:y=z/!", "!"} {
		if _, err := SplitPath(in); !errors.Is(err, ErrBadEscape) {
			t.Errorf("SplitPath(%q) err = %v; want ErrBadEscape", in, err)
		}
	}
	if _, err := SplitPath(strings.Repeat("a/", maxPathParts+2)); !errors.Is(err, ErrBadRequest) {
		t.Errorf("too many parts: err = %v", err)
	}
}

func TestEscapePartRoundTrip(t *testing.T) {
	for _, s := range []string{"plain", "a/b", "a!b", "!/!/", "//", "x!", "/lead", "trail/"} {
		got, err := SplitPath("read/" + EscapePart(s) + "/end")
		if err != nil || len(got) != 3 || got[1] != s {
			t.Errorf("round trip of %q: got %q, %v", s, got, err)
		}
	}
}

func TestSplitPath030(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"read/jboss.jmx:alias=jmx/-/rmi/-/RMIAdaptor/State", []string{"read", "jboss.jmx:alias=jmx/rmi/RMIAdaptor", "State"}},
		{"read/a/--/b/c", []string{"read", "a//b", "c"}},
		{"read/a/+/b", []string{"read", "a/", "b"}},
		{"read/a/-+/b", []string{"read", "a//", "b"}},
		{"read//x:y=z//A/", []string{"read", "x:y=z", "A"}},
		{"", nil},
		{"list", []string{"list"}},
	}
	for _, tt := range tests {
		got, err := SplitPath030(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("SplitPath030(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, s := range []string{"jmx/rmi/RMIAdaptor", "a//b", "ends/", "ends//", "x"} {
		got, err := SplitPath030("read/" + EscapePart030(s) + "/State")
		if err != nil || len(got) != 3 || got[1] != s {
			t.Errorf("0.30 round trip of %q (%q): got %q, %v", s, EscapePart030(s), got, err)
		}
	}
}

func TestSplitList(t *testing.T) {
	got := splitList(`A,B\,C,D`)
	if want := []string{"A", "B,C", "D"}; !slices.Equal(got, want) {
		t.Errorf("splitList = %q; want %q", got, want)
	}
}
