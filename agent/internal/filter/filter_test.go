package filter

import (
	"bufio"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
)

// mapFields is a FieldSource over a map.
type mapFields map[string]Value

func (m mapFields) Field(name string) (Value, bool) {
	v, ok := m[name]
	return v, ok
}

// loadFilters reads testdata/filters.txt.
func loadFilters(t testing.TB) []string {
	t.Helper()
	f, err := os.Open("testdata/filters.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := sc.Text(); l != "" && l[0] != '#' {
			out = append(out, l)
		}
	}
	return out
}

func TestCorpusCompiles(t *testing.T) {
	for _, s := range loadFilters(t) {
		p, err := Compile(s)
		if err != nil {
			t.Errorf("Compile(%q): %v", s, err)
			continue
		}
		if p.Source() != s {
			t.Errorf("Source() = %q; want %q", p.Source(), s)
		}
	}
}

// TestCLIFilters: the filters the lttng CLI generates, on records around
// their edges.
func TestCLIFilters(t *testing.T) {
	const (
		filterA     = `logger_name == "org.example.A"`
		filterRange = `(logger_name == "org.*") && (int_loglevel >= 800)`
		filterB     = `((msg == "x") && (logger_name == "org.example.B")) && (int_loglevel == 1000)`
	)
	for _, tc := range []struct {
		filter string
		rec    Record
		want   bool
	}{
		{filterA, Record{LoggerName: "org.example.A"}, true},
		{filterA, Record{LoggerName: "org.example.AB"}, false},
		{filterA, Record{LoggerName: "org.example.a"}, false},
		{filterRange, Record{LoggerName: "org.x", Level: 800}, true},
		{filterRange, Record{LoggerName: "org.x", Level: 1000}, true},
		{filterRange, Record{LoggerName: "org.x", Level: 700}, false},
		{filterRange, Record{LoggerName: "com.x", Level: 1000}, false},
		{filterRange, Record{LoggerName: "org.", Level: math.MaxInt32}, true},
		{filterB, Record{LoggerName: "org.example.B", Level: 1000, Message: "x"}, true},
		{filterB, Record{LoggerName: "org.example.B", Level: 900, Message: "x"}, false},
		{filterB, Record{LoggerName: "org.example.B", Level: 1000, Message: "y"}, false},
		{filterB, Record{LoggerName: "org.example.C", Level: 1000, Message: "x"}, false},
	} {
		p, err := Compile(tc.filter)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tc.filter, err)
		}
		if got := p.Eval(&tc.rec); got != tc.want {
			t.Errorf("%s on %+v = %v; want %v", tc.filter, tc.rec, got, tc.want)
		}
		// The CLI's own form is the canonical one.
		if s := p.String(); s != tc.filter {
			t.Errorf("String() = %q; want %q", s, tc.filter)
		}
	}
}

func TestEval(t *testing.T) {
	fields := mapFields{
		"class_name":        StringValue("com.example.Foo"),
		"lineno":            IntValue(42),
		"long_millis":       IntValue(1500),
		"ratio":             FloatValue(0.25),
		"$ctx.vpid":         IntValue(1234),
		"$ctx.procname":     StringValue("java"),
		"$app.myprov:myctx": IntValue(1),
		"a.b[3]":            StringValue("x\tzAA"),
		"star":              StringValue("a*b"),
		"none":              {},
	}
	rec := Record{LoggerName: "org.example.A", Level: 800, Message: `hello "world"`, Fields: fields}
	for _, tc := range []struct {
		expr string
		want bool
	}{
		// Strings and globs.
		{`logger_name == "org.*"`, true},
		{`"org.*" == logger_name`, true},
		{`logger_name != "org.*"`, false},
		{`logger_name == "*.A"`, true},
		{`logger_name == "*.B"`, false},
		{`logger_name == "org*A"`, true},
		{`logger_name == "org\*"`, false},
		{`star == "a\*b"`, true},
		{`star == "a*"`, true},
		{`star != "a\*c"`, true},
		{`msg == "hello \"world\""`, true},
		{`msg == "hello*"`, true},
		{`class_name == "com.example.Foo"`, true},
		{`"com.example.Foo" == class_name`, true},
		{`class_name == "com.*"`, true},
		{`"com.*" != class_name`, false},
		{`a.b[3] == "x\tz\x41\101"`, true},
		{`logger_name < "org.example.B"`, true},
		{`logger_name > "org"`, true},
		{`logger_name <= "org.example.A" && logger_name >= "org.example.A"`, true},
		{`msg == logger_name`, false},
		{`class_name != logger_name`, true},
		// Integers, floats and mixed comparisons.
		{`int_loglevel == 800`, true},
		{`800 == int_loglevel`, true},
		{`800 <= int_loglevel`, true},
		{`800 < int_loglevel`, false},
		{`int_loglevel > 799 && int_loglevel < 801`, true},
		{`int_loglevel != 800`, false},
		{`int_loglevel >= 0x320`, true},
		{`int_loglevel == 01440`, true},
		{`int_loglevel == 800u`, true},
		{`int_loglevel == 800.0`, true},
		{`int_loglevel > 799.5`, true},
		{`lineno == 42`, true},
		{`long_millis > 1.4e3`, true},
		{`ratio < .5`, true},
		{`ratio == 0.25`, true},
		{`-lineno == -42`, true},
		{`+lineno == 42`, true},
		{`-ratio < 0`, true},
		{`-int_loglevel < 0`, true},
		// Logic, bitwise, shifts.
		{`!(int_loglevel < 800)`, true},
		{`!int_loglevel`, false},
		{`!!int_loglevel`, true},
		{`int_loglevel`, true},
		{`0`, false},
		{`1`, true},
		{`0.0`, false},
		{`0.5`, true},
		{`-1`, true},
		{`(int_loglevel & 0xff) == 32`, true},
		{`(int_loglevel | 1) == 801`, true},
		{`(int_loglevel ^ 800) == 0`, true},
		{`~int_loglevel == -801`, true},
		{`int_loglevel >> 2 == 200`, true},
		{`int_loglevel << 1 == 1600`, true},
		{`1 << 63 < 0`, true},
		{`lineno == 42 || missing == 1`, true}, // short circuit: missing never read
		{`lineno == 41 && missing == 1`, false},
		// Contexts.
		{`$ctx.vpid == 1234`, true},
		{`$ctx.procname == "ja*"`, true},
		{`$app.myprov:myctx == 1`, true},
		{`($app.myprov:myctx == 1) && (logger_name == "org.example.A")`, true},
		// Evaluation errors make the whole filter false, even under !.
		{`missing == 1`, false},
		{`missing != 1`, false},
		{`!(missing == 1)`, false},
		{`missing == 1 || lineno == 42`, false},
		{`none == 1`, false},
		{`class_name == 1`, false},
		{`lineno == "42"`, false},
		{`class_name`, false},
		{`!class_name`, false},
		{`(class_name & 1) == 0`, false},
		{`-class_name == 1`, false},
		{`~ratio == 1`, false},
		{`(ratio | 1) == 1`, false},
		{`lineno << 64 == 0`, false},
		{`lineno >> -1 == 0`, false},
		{`class_name == "x" || 1`, true},
	} {
		p, err := Compile(tc.expr)
		if err != nil {
			t.Errorf("Compile(%q): %v", tc.expr, err)
			continue
		}
		if got := p.Eval(&rec); got != tc.want {
			t.Errorf("%s = %v; want %v", tc.expr, got, tc.want)
		}
		// The canonical form means the same.
		p2, err := Compile(p.String())
		if err != nil {
			t.Errorf("Compile(String() = %q): %v", p.String(), err)
			continue
		}
		if got := p2.Eval(&rec); got != tc.want {
			t.Errorf("%s (as %s) = %v; want %v", tc.expr, p.String(), got, tc.want)
		}
	}
}

func TestNoFieldSource(t *testing.T) {
	p := MustCompile(`class_name == "x" || logger_name == "a"`)
	if p.Eval(&Record{LoggerName: "a"}) {
		t.Errorf("a missing field before || must fail the whole filter")
	}
	if !MustCompile(`logger_name == "a" || class_name == "x"`).Eval(&Record{LoggerName: "a"}) {
		t.Errorf("short circuit must skip the missing field")
	}
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct {
		expr   string
		offset int
		msg    string
	}{
		{``, 0, "unexpected end"},
		{`   `, 3, "unexpected end"},
		{`logger_name ==`, 14, "unexpected end"},
		{`logger_name = "a"`, 12, "unexpected character '='"},
		{`(logger_name == "a"`, 19, "expected ')' to close the '(' at offset 0"},
		{`logger_name == "a")`, 18, "unexpected ')' after the expression"},
		{`logger_name == "a`, 15, "unterminated string"},
		{`msg == "a\q"`, 9, `unknown escape sequence \q`},
		{`msg == "a\0"`, 9, "NUL in string literal"},
		{"msg == \"a\x00\"", 9, "NUL in string literal"},
		{"msg == 1 \x00", 9, "unexpected character '\\x00'"},
		{`msg == "\x"`, 8, `\x without hexadecimal digits`},
		{`msg == 'a'`, 7, "character constants"},
		{`int_loglevel + 1 > 2`, 13, "binary operator '+' is not supported"},
		{`int_loglevel * 2 > 2`, 13, "binary operator '*' is not supported"},
		{`int_loglevel % 2 == 0`, 13, "binary operator '%' is not supported"},
		{`logger_name == 5`, 12, "cannot compare a string with a number"},
		{`5 != msg`, 2, "cannot compare a string with a number"},
		{`logger_name < "org.*"`, 12, "glob pattern can only be compared with == or !="},
		{`"a*" == "b*"`, 5, "cannot compare two glob patterns"},
		{`logger_name && 1`, 12, "needs numbers, not strings"},
		{`!msg`, 0, "needs a number, not a string"},
		{`-"x" == 1`, 0, "needs a number, not a string"},
		{`"just a string"`, 0, "is a string, not a condition"},
		{`logger_name`, 0, "is a string, not a condition"},
		{`99999999999999999999 == 1`, 0, "out-of-range integer"},
		{`9223372036854775808 == 1`, 0, "integer literal out of range"},
		{`1e999 == 1`, 0, "floating literal out of range"},
		{`08 == 1`, 0, "bad or out-of-range integer"},
		{`12ab == 1`, 2, "malformed number"},
		{`0x == 1`, 0, "hexadecimal literal without digits"},
		{`$foo == 1`, 0, "expected $ctx. or $app."},
		{`$ctx. == 1`, 5, "expected a context name"},
		{`$app.prov == 1`, 9, "expected ':'"},
		{`$app.prov: == 1`, 10, "expected a context name after ':'"},
		{`a. == 1`, 3, "expected a field name after '.'"},
		{`a[x] == 1`, 2, "expected an integer index"},
		{`a[1 == 1`, 4, "expected ']'"},
		{`a->b == 1`, 1, "'->' is not supported"},
		{`5.x == 1`, 2, "malformed number"},
		{`"a".b == 1`, 3, "a literal has no fields"},
		{`msg == "a" #`, 11, "unexpected character '#'"},
		{strings.Repeat("(", maxNesting+1) + "1" + strings.Repeat(")", maxNesting+1), maxNesting, "nested too deeply"},
		{strings.Repeat("!", MaxDepth+1) + "1", 1, "nested too deeply"},
		{strings.Repeat("!(", MaxDepth+1) + "1" + strings.Repeat(")", MaxDepth+1), maxNesting, "nested too deeply"},
	} {
		_, err := Compile(tc.expr)
		var se *SyntaxError
		if !errors.As(err, &se) || !errors.Is(err, ErrSyntax) {
			t.Errorf("Compile(%q) = %v; want a *SyntaxError", tc.expr, err)
			continue
		}
		if se.Offset != tc.offset || !strings.Contains(se.Msg, tc.msg) {
			t.Errorf("Compile(%q): offset %d %q; want offset %d containing %q", tc.expr, se.Offset, se.Msg, tc.offset, tc.msg)
		}
	}
	// The canonical form of the deepest accepted tree compiles again.
	deep := MustCompile(strings.Repeat("~", MaxDepth-1) + "lineno")
	if _, err := Compile(deep.String()); err != nil {
		t.Errorf("Compile(String() of a depth-%d tree): %v", MaxDepth, err)
	}
	// A left-deep chain deeper than MaxDepth is refused too.
	long := strings.Repeat("lineno == 1 || ", MaxDepth) + "lineno == 1"
	if _, err := Compile(long); !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "nested too deeply") {
		t.Errorf("Compile(chain of %d terms): %v; want nested too deeply", MaxDepth+1, err)
	}
	if _, err := Compile(strings.Repeat(" ", MaxLen+1)); !errors.Is(err, ErrTooLong) {
		t.Errorf("Compile(%d bytes): %v; want ErrTooLong", MaxLen+1, err)
	}
	if got := (&SyntaxError{Offset: 3, Msg: "x"}).Error(); got != "filter: offset 3: x" {
		t.Errorf("Error() = %q; want %q", got, "filter: offset 3: x")
	}
}

func TestMinInt64Literal(t *testing.T) {
	p := MustCompile(`lineno == -9223372036854775808`)
	rec := Record{Fields: mapFields{"lineno": IntValue(math.MinInt64)}}
	if !p.Eval(&rec) {
		t.Errorf("MinInt64 literal did not match")
	}
	if s := p.String(); s != "lineno == -9223372036854775808" {
		t.Errorf("String() = %q", s)
	}
	if !MustCompile(`int_loglevel >= -2147483648`).Eval(&Record{Level: math.MinInt32}) {
		t.Errorf("INT32_MIN level did not match")
	}
}

func TestString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`800 <= int_loglevel`, `int_loglevel >= 800`},
		{`"org.*" == logger_name`, `logger_name == "org.*"`},
		{`a==1&&b!=2||!c`, `((a == 1) && (b != 2)) || (!c)`},
		{`- - 5 == x`, `5 == x`},
		{`-(x) == 1`, `(-x) == 1`},
		{`~x`, `~x`},
		{`msg == "q\"\\\*\t"`, `msg == "q\"\\\*\x09"`},
		{`msg == "g*\\\*"`, `msg == "g*\\\*"`},
		{`x == 1.0`, `x == 1.0`},
		{`x == 1e300`, `x == 1e+300`},
		{`x == 0x10`, `x == 16`},
		{`$app.p:c == 1`, `$app.p:c == 1`},
		{`a . b [ 2 ] == 1`, `a.b[2] == 1`},
		{`(x << 2) >> 1`, `(x << 2) >> 1`},
		{`x & 1 | 2 ^ 3`, `(x & 1) | (2 ^ 3)`},
	} {
		p, err := Compile(tc.in)
		if err != nil {
			t.Errorf("Compile(%q): %v", tc.in, err)
			continue
		}
		if got := p.String(); got != tc.want {
			t.Errorf("String(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

func TestFields(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want FieldSet
	}{
		{`logger_name == "a"`, UsesLoggerName},
		{`(logger_name == "org.*") && (int_loglevel >= 800)`, UsesLoggerName | UsesLevel},
		{`((msg == "x") && (logger_name == "b")) && (int_loglevel == 1000)`, UsesLoggerName | UsesLevel | UsesMessage},
		{`$ctx.vpid == 1`, UsesOther},
		{`1`, 0},
	} {
		if got := MustCompile(tc.expr).Fields(); got != tc.want {
			t.Errorf("Fields(%q) = %b; want %b", tc.expr, got, tc.want)
		}
	}
}

func TestEvalAllocs(t *testing.T) {
	fields := mapFields{"class_name": StringValue("c"), "$app.p:c": IntValue(1)}
	rec := &Record{LoggerName: "org.example.B", Level: 1000, Message: "x", Fields: fields}
	for _, s := range append(loadFilters(t), `class_name == "c*" && $app.p:c == 1`) {
		p := MustCompile(s)
		if n := testing.AllocsPerRun(100, func() { p.Eval(rec) }); n != 0 {
			t.Errorf("Eval(%q) allocates %v times; want 0", s, n)
		}
	}
}

func TestMustCompilePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Errorf("MustCompile of a bad expression did not panic")
		}
	}()
	MustCompile("(")
}

func TestLevel(t *testing.T) {
	for _, tc := range []struct {
		l     Level
		level int32
		want  bool
	}{
		{Level{LevelAll, NoLevel}, math.MinInt32, true},
		{Level{LevelAll, 1000}, 0, true},
		{Level{LevelRange, 800}, 800, true},      // JUL INFO enables INFO
		{Level{LevelRange, 800}, 1000, true},     // and SEVERE
		{Level{LevelRange, 800}, 700, false},     // but not CONFIG
		{Level{LevelRange, 20}, 50, true},        // Python INFO enables CRITICAL
		{Level{LevelRange, 30000}, 20000, false}, // log4j WARN excludes INFO
		{Level{LevelSingle, 1000}, 1000, true},
		{Level{LevelSingle, 1000}, 900, false},
		{Level{LevelType(3), 0}, 0, false},
	} {
		if got := tc.l.Match(tc.level); got != tc.want {
			t.Errorf("%v %d matching %d = %v; want %v", tc.l.Type, tc.l.Value, tc.level, got, tc.want)
		}
	}
	if s := LevelType(9).String(); s != "UNKNOWN_LEVEL_TYPE_9" {
		t.Errorf("String() = %q", s)
	}
	if s := LevelRange.String(); s != "RANGE" {
		t.Errorf("String() = %q", s)
	}
}

func TestRule(t *testing.T) {
	r, err := NewRule("org.*", Level{LevelRange, 800}, `(logger_name == "org.*") && (int_loglevel >= 800)`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rec  Record
		want bool
	}{
		{Record{LoggerName: "org.a", Level: 900}, true},
		{Record{LoggerName: "org.a", Level: 700}, false},
		{Record{LoggerName: "com.a", Level: 900}, false},
	} {
		if got := r.Match(&tc.rec); got != tc.want {
			t.Errorf("rule on %+v = %v; want %v", tc.rec, got, tc.want)
		}
	}
	all, err := NewRule("*", Level{LevelAll, NoLevel}, "")
	if err != nil || all.Filter != nil || !all.Match(&Record{LoggerName: "anything", Level: math.MinInt32}) {
		t.Errorf("enable -a rule: %v, %v", all, err)
	}
	if _, err := NewRule("x", Level{}, "(("); !errors.Is(err, ErrSyntax) {
		t.Errorf("NewRule with a bad filter: %v; want ErrSyntax", err)
	}
}

func TestKindValueStrings(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{KindString.String(), "string"},
		{Kind(9).String(), "UNKNOWN_KIND_9"},
		{IntValue(-3).String(), "-3"},
		{FloatValue(0.5).String(), "0.5"},
		{StringValue("a\"").String(), `"a\""`},
		{Value{}.String(), "<none>"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q; want %q", tc.got, tc.want)
		}
	}
}
