package filter

import "testing"

// BenchmarkEval measures one evaluation of the filters the lttng CLI
// generates, on a record that passes them.
func BenchmarkEval(b *testing.B) {
	rec := &Record{LoggerName: "org.example.B", Level: 1000, Message: "x"}
	for _, bc := range []struct{ name, expr string }{
		{"name", `logger_name == "org.example.B"`},
		{"glob+range", `(logger_name == "org.*") && (int_loglevel >= 800)`},
		{"msg+name+single", `((msg == "x") && (logger_name == "org.example.B")) && (int_loglevel == 1000)`},
		{"generic", `(int_loglevel & 0xff) != 0 && msg != "y"`},
	} {
		p := MustCompile(bc.expr)
		if !p.Eval(rec) {
			b.Fatalf("%s does not pass", bc.expr)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				p.Eval(rec)
			}
		})
	}
}

func BenchmarkCompile(b *testing.B) {
	const expr = `((msg == "x") && (logger_name == "org.example.B")) && (int_loglevel == 1000)`
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Compile(expr); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRule(b *testing.B) {
	r, err := NewRule("org.*", Level{LevelRange, 800}, `(logger_name == "org.*") && (int_loglevel >= 800)`)
	if err != nil {
		b.Fatal(err)
	}
	rec := &Record{LoggerName: "org.example.B", Level: 1000}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r.Match(rec)
	}
}
