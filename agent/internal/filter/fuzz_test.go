package filter

import (
	"errors"
	"testing"
)

// fuzzRecords are evaluated by FuzzCompile to compare a program with its
// canonical form.
var fuzzRecords = []Record{
	{},
	{LoggerName: "org.example.A", Level: 800, Message: "x"},
	{LoggerName: "a*b", Level: -1, Message: `q"\`, Fields: mapFields{
		"a": IntValue(3), "b": StringValue("org.x"), "c": FloatValue(-0.5),
		"$ctx.vpid": IntValue(7), "$app.p:c": StringValue("v"),
	}},
}

// FuzzCompile: Compile never panics; an accepted expression prints to a
// canonical form that compiles to the same form and evaluates the same on
// every record.
func FuzzCompile(f *testing.F) {
	for _, s := range loadFilters(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Compile(s)
		if err != nil {
			var se *SyntaxError
			if errors.As(err, &se) {
				if se.Offset < 0 || se.Offset > len(s) {
					t.Fatalf("Compile(%q): offset %d outside the expression", s, se.Offset)
				}
			} else if !errors.Is(err, ErrTooLong) {
				t.Fatalf("Compile(%q): unexpected error type %T %v", s, err, err)
			}
			return
		}
		canon := p.String()
		p2, err := Compile(canon)
		if err != nil {
			t.Fatalf("Compile(%q) ok but its form %q fails: %v", s, canon, err)
		}
		if c2 := p2.String(); c2 != canon {
			t.Fatalf("canonical form unstable: %q → %q → %q", s, canon, c2)
		}
		for i := range fuzzRecords {
			if a, b := p.Eval(&fuzzRecords[i]), p2.Eval(&fuzzRecords[i]); a != b {
				t.Fatalf("%q = %v but its form %q = %v on record %d", s, a, canon, b, i)
			}
		}
	})
}

// FuzzGlob: the compiled matcher agrees with the plain one.
func FuzzGlob(f *testing.F) {
	for _, tc := range globCases {
		f.Add(tc.pattern, tc.s)
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if a, b := MatchGlob(pattern, s), CompileGlob(pattern).Match(s); a != b {
			t.Fatalf("MatchGlob(%q, %q) = %v; CompileGlob.Match = %v", pattern, s, a, b)
		}
	})
}
