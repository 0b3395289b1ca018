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

// markerLog is a processor that keeps every marker it is given, in order.
type markerLog struct{ got []hq.Marker }

func (l *markerLog) Message(m *bytefrog.Msg) {
	if m.Type == bytefrog.MsgMarker {
		l.got = append(l.got, hq.Marker{Seq: m.Seq, Key: string(m.Text), Value: string(m.Value)})
	}
}
func (l *markerLog) DataBreak(int32)   {}
func (l *markerLog) Finish(*hq.Report) {}

// TestMarkerRuns sends runs of markers of every length from 1 to 12 between
// method events, on one connection in one write, so that the core takes
// each run whole: without a processor and with one, the report counts
// every marker and keeps the last ones, and the processor gets each marker
// once, in order, with its key and value.
func TestMarkerRuns(t *testing.T) {
	for _, withProc := range []bool{false, true} {
		t.Run(fmt.Sprintf("processor=%v", withProc), func(t *testing.T) {
			g := hqtest.NewGen(bytefrog.FlavorBytefrog)
			var want []hq.Marker
			for run := 1; run <= 12; run++ {
				g.Entry(1, 1)
				for k := range run {
					seq := g.Seq
					key, val := fmt.Sprintf("log:run.%d", run), fmt.Sprintf("INFO record %d of %d", k, run)
					g.Marker(key, val)
					want = append(want, hq.Marker{Seq: seq, Key: key, Value: val})
				}
				g.Exit(1, 1, 7)
			}
			log := &markerLog{}
			srv := start(t, func(c *hq.Config) {
				if withProc {
					c.NewProcessor = func(*hq.Run) hq.Processor { return log }
				}
			})
			rep := sendAll(t, srv, bytefrog.Version1, [][]byte{g.Take()})
			if !rep.OK || rep.Markers != int64(len(want)) {
				t.Fatalf("run: %s, %d markers; want %d", rep.Result(), rep.Markers, len(want))
			}
			if last := want[len(want)-5:]; !reflect.DeepEqual(rep.LastMarkers, last) {
				t.Errorf("LastMarkers got %+v; want %+v", rep.LastMarkers, last)
			}
			if withProc && !reflect.DeepEqual(log.got, want) {
				t.Errorf("processor got %d markers %+v; want %d %+v", len(log.got), log.got, len(want), want)
			}
			checkReplay(t, rep)
		})
	}
}
