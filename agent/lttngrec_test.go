package agent

import (
	"testing"

	"github.com/tadpole-trace/tadpole/internal/host"
)

func TestSplitFunc(t *testing.T) {
	for _, c := range []struct{ fn, class, method string }{
		{"main.main", "main", "main"},
		{"main.emit", "main", "emit"},
		{"main.main.func1", "main", "main.func1"},
		{"example.com/shop.(*Cart).Add", "example.com/shop.(*Cart)", "Add"},
		{"example.com/shop.(*Cart).Add.func2", "example.com/shop.(*Cart)", "Add.func2"},
		{"example.com/shop.Cart.Total", "example.com/shop", "Cart.Total"},
		{"example.com/a.b/shop.Run", "example.com/a.b/shop", "Run"},
		{"nodot", "", "nodot"},
	} {
		if class, method := splitFunc(c.fn); class != c.class || method != c.method {
			t.Errorf("splitFunc(%q) = %q, %q; want %q, %q", c.fn, class, method, c.class, c.method)
		}
	}
}

// countRecorder keeps the last record.
type countRecorder struct {
	n    int
	last host.LTTngRecord
}

func (c *countRecorder) Record(r host.LTTngRecord) { c.n++; c.last = r }

// withRecorder makes l enabled for LTTng at every level, records going to
// r, for the test's duration.
func withRecorder(t testing.TB, l *Logger, r host.LTTngRecorder, source bool) {
	old, oldSrc := lttngRec.recorder.Load(), lttngRec.source.Load()
	oldAcc := l.lttng.Load()
	lttngRec.recorder.Store(&recorderBox{r})
	lttngRec.source.Store(source)
	l.lttng.Store(packAccept(LogAccept{Kind: AcceptRange, Level: 800}))
	t.Cleanup(func() {
		lttngRec.recorder.Store(old)
		lttngRec.source.Store(oldSrc)
		l.lttng.Store(oldAcc)
	})
}

func TestLogLTTng(t *testing.T) {
	l := RegisterLogger("test.lttngrec")
	var r countRecorder
	withRecorder(t, l, &r, true)
	l.Log(500, "FINE", "below the session's level")
	if r.n != 0 {
		t.Fatalf("a FINE record reached the recorder of a session enabled from INFO: %+v", r.last)
	}
	l.Log(900, "WARNING", "disk full")
	if r.n != 1 || r.last.Logger != "test.lttngrec" || r.last.Level != 900 || r.last.Message != "disk full" ||
		r.last.Class != "github.com/tadpole-trace/tadpole/agent" || r.last.Method != "TestLogLTTng" ||
		r.last.Line == 0 || r.last.Thread == 0 || r.last.Millis == 0 {
		t.Fatalf("recorded %d, last %+v; want 1 record of test.lttngrec, level 900, from agent.TestLogLTTng", r.n, r.last)
	}
	lttngRec.source.Store(false)
	l.Log(1000, "SEVERE", "no source")
	if r.n != 2 || r.last.Class != "" || r.last.Method != "" {
		t.Fatalf("with lttng_source off: %+v; want no source", r.last)
	}
}

// BenchmarkLogLTTng is what a Go record costs on its way to lttng-ust,
// before the cgo call: the level test, the record and its cached source.
func BenchmarkLogLTTng(b *testing.B) {
	l := RegisterLogger("bench.lttngrec")
	var r countRecorder
	for _, source := range []bool{false, true} {
		name := "source=off"
		if source {
			name = "source=on"
		}
		b.Run(name, func(b *testing.B) {
			withRecorder(b, l, &r, source)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				l.Log(900, "WARNING", "disk full")
			}
		})
	}
}
