package hq_test

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// msgLog is a Processor that keeps what it is given, in order: every
// message's fields and every data break.
type msgLog struct{ lines []string }

func (l *msgLog) Message(m *bytefrog.Msg) {
	text, value := m.Text, m.Value
	switch m.Type {
	case bytefrog.MsgMethodEntry, bytefrog.MsgMethodExit, bytefrog.MsgException, bytefrog.MsgExceptionBubble,
		bytefrog.MsgMethodVisit, bytefrog.MsgHeartbeat, bytefrog.MsgDataBreak, bytefrog.MsgMapSourceLocation,
		bytefrog.MsgSourceLocationCount:
		text, value = nil, nil // not fields of these
	}
	l.lines = append(l.lines, fmt.Sprintf("%v seq=%d t=%d tid=%d m=%d x=%d sl=%d line=%d thrown=%v text=%q value=%q",
		m.Type, m.Seq, m.RelTime, m.ThreadID, m.MethodID, m.ExceptionID, m.SourceLocationID, m.Line, m.ExceptionThrown,
		text, value))
}

func (l *msgLog) DataBreak(seq int32) { l.lines = append(l.lines, fmt.Sprintf("break %d", seq)) }
func (l *msgLog) Finish(*hq.Report)   {}

func sameReport(t *testing.T, want, got *hq.Report) {
	t.Helper()
	gv, wv := reflect.ValueOf(got).Elem(), reflect.ValueOf(want).Elem()
	for i := range gv.NumField() {
		if g, w := gv.Field(i).Interface(), wv.Field(i).Interface(); !reflect.DeepEqual(g, w) {
			t.Errorf("%s = %v; want %v", gv.Type().Field(i).Name, g, w)
		}
	}
}

// TestColumnsLive records live runs over several data connections in
// every format, with a processor, and replays each file: the report and
// every message match the live run's, in order; the columnar file is at
// least 10 times smaller than the Bytefrog bytes received.
func TestColumnsLive(t *testing.T) {
	for _, flavor := range []bytefrog.Flavor{bytefrog.FlavorBytefrog, bytefrog.FlavorCodePulse} {
		chunks, n := hqtest.Generate(hqtest.Workload{Events: 300_000, Methods: 200, Threads: 6, Chunk: 16 << 10, Seed: 5,
			Flavor: flavor})
		// Markers and exceptions among the calls.
		g := hqtest.NewGen(flavor)
		g.Seq = int32(n)
		g.Marker("phase", "end")
		g.Entry(1, 7)
		g.Throw(1, 7, 3, 42)
		g.Throw(1, 7, 3, bytefrog.NoLine) // unknown line
		g.Bubble(1, 7, 3)
		g.Entry(2, 8)
		g.Exit(2, 8, bytefrog.NoLine)
		g.Entry(2, 1<<20) // an id of three varint bytes
		g.Exit(2, 1<<20, 0)
		chunks = append(chunks, g.Take())
		n = int(g.Seq)
		per := hqtest.Spread(chunks, 3)
		t.Run(flavor.String(), func(t *testing.T) {
			var live *msgLog
			srv := start(t, func(c *hq.Config) {
				c.Flavor = flavor
				c.Compression = hq.CompressColumns
				c.Agent.NumDataSenders = 3
				c.NewProcessor = func(*hq.Run) hq.Processor { live = &msgLog{}; return live }
			})
			rep := sendAll(t, srv, bytefrog.Version2, per)
			if !rep.OK || rep.Sequenced != int64(n) {
				t.Fatalf("live run: %s, %d events; want %d", rep.Result(), rep.Sequenced, n)
			}
			var got msgLog
			rrep, err := hq.ReplayFile(rep.TraceFile, &hq.ReplayOptions{Processors: []hq.Processor{&got}})
			if err != nil {
				t.Fatal(err)
			}
			sameReport(t, rep, rrep)
			// The live log also has the control connection's messages
			// as they came; compare the data messages.
			data := func(l []string) []string {
				var out []string
				for _, s := range l {
					if !strings.HasPrefix(s, "Heartbeat") && !strings.HasPrefix(s, "Class") {
						out = append(out, s)
					}
				}
				return out
			}
			lw, lg := data(live.lines), data(got.lines)
			if len(lw) != len(lg) {
				t.Fatalf("%d messages replayed; want %d", len(lg), len(lw))
			}
			for i := range lw {
				if lw[i] != lg[i] {
					t.Fatalf("message %d: %s\nwant %s", i, lg[i], lw[i])
				}
			}
			fi, err := os.Stat(rep.TraceFile)
			if err != nil {
				t.Fatal(err)
			}
			ratio := float64(rep.Bytes) / float64(fi.Size())
			t.Logf("%d Bytefrog bytes, file %d bytes: %.1f× smaller, %.2f B/event", rep.Bytes, fi.Size(), ratio,
				float64(fi.Size())/float64(n))
			if ratio < 10 {
				t.Errorf("columnar file %.1f× smaller than the Bytefrog bytes; want ≥ 10×", ratio)
			}
		})
	}
}
