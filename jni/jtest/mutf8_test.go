package jtest

import (
	"slices"
	"strings"
	"testing"

	"github.com/tadpole-trace/tadpole/internal/testhq"
)

// mutf8Text is JApp's S: U+0000 and U+1F600, which Java's modified UTF-8
// (GetStringUTFRegion) encodes as C0 80 and as two 3-byte surrogates.
const mutf8Text = "a\x00b\U0001F600"

// TestModifiedUTF8: a marker's key and value, a JUL logger's name and its
// records holding mutf8Text reach HQ as exactly that text. (Thread names
// take the same flagged path, but HQ sees a thread's name only with its
// method events, which the JVM agent does not record.)
func TestModifiedUTF8(t *testing.T) {
	e := Build(t)
	h := startHQ(t)
	r := runJava(t, e, h.env(), true, "", "mutf8")
	if !strings.Contains(r.Stdout, "JApp done mutf8 tracing=true") {
		t.Fatalf("got stdout %q; want tracing=true", r.Stdout)
	}
	rep, c := h.waitRun(t)
	testhq.CheckClean(t, rep, c, -1)
	for _, tc := range []struct {
		key  string
		want []string
	}{
		{"k" + mutf8Text, []string{mutf8Text}},
		{"log:shop." + mutf8Text, []string{"INFO " + mutf8Text, "WARNING " + mutf8Text + "!"}},
		{"named", []string{mutf8Text}},
	} {
		if got := c.Markers(tc.key); !slices.Equal(got, tc.want) {
			t.Errorf("markers %q: got %q; want %q", tc.key, got, tc.want)
		}
	}
}
