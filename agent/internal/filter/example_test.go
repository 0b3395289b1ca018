package filter_test

import (
	"fmt"

	"github.com/tadpole-trace/tadpole/agent/internal/filter"
)

func ExampleCompile() {
	// What `lttng enable-event -j 'org.*' --loglevel=INFO` sends.
	p, err := filter.Compile(`(logger_name == "org.*") && (int_loglevel >= 800)`)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range []filter.Record{
		{LoggerName: "org.example.A", Level: 1000},
		{LoggerName: "org.example.A", Level: 700},
		{LoggerName: "com.example.A", Level: 1000},
	} {
		fmt.Println(r.LoggerName, r.Level, p.Eval(&r))
	}
	_, err = filter.Compile(`logger_name = "x"`)
	fmt.Println(err)
	// Output:
	// org.example.A 1000 true
	// org.example.A 700 false
	// com.example.A 1000 false
	// filter: offset 12: unexpected character '='
}

func ExampleGlob() {
	g := filter.CompileGlob(`JTest*LTTng`)
	fmt.Println(g.Match("JTest.x.LTTng"), g.Match("JTestLTTngX"), filter.MatchGlob(`a\*`, "a*"))
	// Output:
	// true false true
}
