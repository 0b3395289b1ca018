package filter

import (
	"strings"
	"testing"
)

var globCases = []struct {
	pattern, s string
	want       bool
}{
	{"", "", true},
	{"", "a", false},
	{"*", "", true},
	{"*", "anything", true},
	{"**", "", true},
	{"a**", "a", true},
	{"org.example.A", "org.example.A", true},
	{"org.example.A", "org.example.AB", false},
	{"org.example.A", "org.example.", false},
	{"org.*", "org.", true},
	{"org.*", "org.example.A", true},
	{"org.*", "org", false},
	{"org.*", "com.org.x", false},
	// The wildcard forms of the upstream java-jul tests.
	{"JTest*", "JTestLTTng", true},
	{"JTest*", "JTes", false},
	{"*TestLTTng", "JTestLTTng", true},
	{"*TestLTTng", "JTestLTTngX", false},
	{"JTest*LTTng", "JTestLTTng", true},
	{"JTest*LTTng", "JTest.middle.LTTng", true},
	{"JTest*LTTng", "JTestLTTn", false},
	{"JTest*LTTng", "XJTestLTTng", false},
	// lttng-ust's own example: backtracking over a partial match.
	{"hi*every*one", "hi ev every onyx one", true},
	{"hi*every*one", "hi ev every onyx on", false},
	{"a*b*c", "abbbc", true},
	{"a*b*c", "acb", false},
	{"*a*", "bab", true},
	{"*a*", "bbb", false},
	// Escapes: \* is a star, \\ a backslash, \x is x.
	{`a\*`, "a*", true},
	{`a\*`, "ab", false},
	{`a\**`, "a*bc", true},
	{`a\**`, "abc", false},
	{`a\\*`, `a\bc`, true},
	{`a\\`, `a\`, true},
	{`a\b`, "ab", true},
	{`\*`, "*", true},
	{`*\*`, "xx*", true},
	{`*\*`, "xx", false},
	// A trailing lone backslash never matches.
	{`a\`, `a\`, false},
	{`a\`, "a", false},
	{`*\`, `x\`, false},
	// Bytes, not runes: UTF-8 passes through.
	{"é*", "été", true},
	{"*é", "café", true},
}

func TestMatchGlob(t *testing.T) {
	for _, tc := range globCases {
		if got := MatchGlob(tc.pattern, tc.s); got != tc.want {
			t.Errorf("MatchGlob(%q, %q) = %v; want %v", tc.pattern, tc.s, got, tc.want)
		}
		if got := CompileGlob(tc.pattern).Match(tc.s); got != tc.want {
			t.Errorf("CompileGlob(%q).Match(%q) = %v; want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

func TestCompileGlobKinds(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		kind    globKind
		lit     string
	}{
		{"org.example.A", globExact, "org.example.A"},
		{`a\*b`, globExact, "a*b"},
		{"org.*", globPrefix, "org."},
		{`a\*\\*`, globPrefix, `a*\`},
		{"*Suffix", globSuffix, "Suffix"},
		{"*", globAny, ""},
		{"***", globAny, ""},
		{"a*b", globGeneral, ""},
		{"*a*", globGeneral, ""},
		{`a\`, globGeneral, ""},
	} {
		g := CompileGlob(tc.pattern)
		if g.kind != tc.kind || g.lit != tc.lit {
			t.Errorf("CompileGlob(%q): kind %d lit %q; want %d %q", tc.pattern, g.kind, g.lit, tc.kind, tc.lit)
		}
		if g.Pattern() != tc.pattern {
			t.Errorf("Pattern() = %q; want %q", g.Pattern(), tc.pattern)
		}
		if lit, ok := g.Literal(); ok != (tc.kind == globExact) || (ok && lit != tc.lit) {
			t.Errorf("Literal() = %q, %v", lit, ok)
		}
	}
}

// TestMatchGlobAgainstReference cross-checks the matcher with a plain
// recursive definition over generated patterns.
func TestMatchGlobAgainstReference(t *testing.T) {
	var ref func(p, s string) bool
	ref = func(p, s string) bool {
		if p == "" {
			return s == ""
		}
		switch p[0] {
		case '*':
			for i := 0; i <= len(s); i++ {
				if ref(p[1:], s[i:]) {
					return true
				}
			}
			return false
		case '\\':
			if len(p) == 1 {
				return false
			}
			return s != "" && s[0] == p[1] && ref(p[2:], s[1:])
		}
		return s != "" && s[0] == p[0] && ref(p[1:], s[1:])
	}
	alphabet := []string{"a", "b", "*", `\`}
	var patterns []string
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		patterns = append(patterns, prefix)
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			gen(prefix+c, n-1)
		}
	}
	gen("", 5)
	subjects := []string{"", "a", "b", "ab", "ba", "aab", "abab", "*", "a*", `\`, `a\b`, "bbbba"}
	for _, p := range patterns {
		g := CompileGlob(p)
		for _, s := range subjects {
			want := ref(p, s)
			if got := MatchGlob(p, s); got != want {
				t.Fatalf("MatchGlob(%q, %q) = %v; want %v", p, s, got, want)
			}
			if got := g.Match(s); got != want {
				t.Fatalf("CompileGlob(%q).Match(%q) = %v; want %v", p, s, got, want)
			}
		}
	}
}

func TestGlobAllocs(t *testing.T) {
	g := CompileGlob("JTest*LTTng")
	s := "JTest.some.long.name.LTTng"
	if n := testing.AllocsPerRun(100, func() {
		if !g.Match(s) || !MatchGlob("*some*LTTng", s) {
			t.Fatal("no match")
		}
	}); n != 0 {
		t.Errorf("glob match allocates %v times; want 0", n)
	}
}

func BenchmarkGlob(b *testing.B) {
	name := "org.example.service.impl.OrderProcessor"
	for _, bc := range []struct{ name, pattern string }{
		{"exact", name},
		{"prefix", "org.example.*"},
		{"suffix", "*Processor"},
		{"general", "org.*.impl.*Processor"},
		{"worst", "*a*a*a*b"},
	} {
		g := CompileGlob(bc.pattern)
		subject := name
		if bc.name == "worst" {
			subject = strings.Repeat("a", 64)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				g.Match(subject)
			}
		})
	}
}
