package jtest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tadpole-trace/tadpole/internal/testhq"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// maxValue is the most bytes of a marker value the agent records
// (TADPOLE_MAX_STRING).
const maxValue = 8192

// recordID is how JApp's record i of thread t names itself.
func recordID(t, i int) string { return fmt.Sprintf("%d.%d", t, i) }

// recordValue is the value of JApp's record i of thread t (recordMsg) as
// HQ sees it: the level's name, a space, the message in UTF-8; a lone
// surrogate is what HQ makes of its modified UTF-8 (ED A0 80); a value
// longer than maxValue bytes is cut.
func recordValue(t, i int) string {
	id := recordID(t, i)
	level := "INFO "
	if i%37 == 5 {
		level = "NOTICE "
	}
	switch i % 50 {
	case 7:
		return level + "nul\x00" + id
	case 13:
		return level + "café " + id
	case 21:
		return level + "q? " + id
	case 29:
		return level + "big " + id + " " + strings.Repeat("x", 3000)
	case 33:
		return level + "pair \U0001F600 " + id
	case 41:
		return level + "lone " + bytefrog.String([]byte{0xED, 0xA0, 0x80}) + " " + id
	case 45:
		return (level + "huge " + id + " " + strings.Repeat("y", 9000))[:maxValue]
	}
	return level + "m " + id
}

// TestRecords: JUL records of several threads, through many buffers,
// reach HQ whole and each thread's in its order, among markers recorded
// by the natives. NULs, non-ASCII text, a custom level, long and too long
// messages among them keep their places too.
func TestRecords(t *testing.T) {
	e := Build(t)
	const threads, each = 4, 20000
	h := startHQ(t)
	runJava(t, e, h.env(), true, "", "records", strconv.Itoa(threads), strconv.Itoa(each))
	rep, c := h.waitRun(t)
	testhq.CheckClean(t, rep, c, -1)
	checkRecords(t, c.Markers("log:rec"), threads, each, 1, recordValue)
	checkRecords(t, c.Markers("rec-mark"), threads, each, 100, recordID)
}

// checkRecords checks that got holds value(t, i) for every thread t and
// every i below each that step divides, each thread's in the order of i.
func checkRecords(t *testing.T, got []string, threads, each, step int, value func(t, i int) string) {
	t.Helper()
	type rec struct{ t, i int }
	want := make(map[string]rec)
	for th := range threads {
		for i := 0; i < each; i += step {
			want[value(th, i)] = rec{th, i}
		}
	}
	next := make([]int, threads)
	var bad []string
	for _, v := range got {
		r, ok := want[v]
		if !ok || r.i != next[r.t] {
			if len(bad) < 5 {
				bad = append(bad, fmt.Sprintf("%.60q (thread %d expects record %d)", v, r.t, next[r.t]))
			}
			continue
		}
		next[r.t] += step
	}
	if len(bad) > 0 {
		t.Errorf("%d values, unexpected or out of order: %s", len(got), strings.Join(bad, "; "))
	}
	if done := slices.Repeat([]int{(each + step - 1) / step * step}, threads); !slices.Equal(next, done) {
		t.Errorf("records reached per thread: got %v; want %v", next, done)
	}
}
