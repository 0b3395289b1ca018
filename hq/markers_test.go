package hq_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// TestLastMarkersAcrossSlabs sends more markers than one read buffer
// holds, on two data connections, in writes of uneven sizes: the report
// keeps the last markers' keys and values intact after their buffers are
// reused, live and replayed.
func TestLastMarkersAcrossSlabs(t *testing.T) {
	const n = 30000 // about 1.5 MiB: several read buffers
	g := hqtest.NewGen(bytefrog.FlavorBytefrog)
	var chunks [][]byte
	for i := range n {
		g.Marker(fmt.Sprintf("log:logger.%d", i%7), fmt.Sprintf("INFO record %d %s", i, strings.Repeat("x", i%40)))
		if g.Len() >= 1000+(i%5)*3000 {
			chunks = append(chunks, g.Take())
		}
	}
	chunks = append(chunks, g.Take())
	per := hqtest.Spread(chunks, 2)
	srv := start(t, func(c *hq.Config) { c.Agent.NumDataSenders = 2 })
	a := dial(t, srv, bytefrog.Version1)
	expect(t, a, bytefrog.MsgStart)
	run := nextRun(t, srv)
	for range 2 {
		if _, err := a.OpenData(); err != nil {
			t.Fatal(err)
		}
	}
	for i, b := range per {
		for len(b) > 0 {
			k := min(len(b), 7777+i*1000)
			must(t, a.Write(i, b[:k]))
			b = b[k:]
		}
	}
	must(t, a.Shutdown(false))
	rep := wait(t, run)
	if !rep.OK || rep.Markers != n {
		t.Fatalf("run: %s, %d markers; want %d", rep.Result(), rep.Markers, n)
	}
	var want []hq.Marker
	for i := n - 5; i < n; i++ {
		want = append(want, hq.Marker{Seq: int32(i), Key: fmt.Sprintf("log:logger.%d", i%7),
			Value: fmt.Sprintf("INFO record %d %s", i, strings.Repeat("x", i%40))})
	}
	if !reflect.DeepEqual(rep.LastMarkers, want) {
		t.Errorf("LastMarkers got %+v; want %+v", rep.LastMarkers, want)
	}
	checkReplay(t, rep)
}
