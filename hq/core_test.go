package hq

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

func testCoreConfig(d bytefrog.Dialect) coreConfig {
	return coreConfig{dialect: d, maxHeldEvents: DefaultMaxHeldEvents, maxHeldBytes: DefaultMaxHeldBytes,
		maxMappingBytes: DefaultMaxMappingBytes, topN: DefaultTopN, hbInterval: 1000}
}

// TestIngestNoAllocs: once warm, parsing a chunk of events and releasing
// them through the core allocates nothing.
func TestIngestNoAllocs(t *testing.T) {
	d := bytefrog.Dialect{Version: bytefrog.Version1}
	c := newCore(testCoreConfig(d), nil, nil)
	c.open(1)
	p := newChunkParser(d, 1)
	defer p.close()
	g := hqtest.NewGen(bytefrog.FlavorBytefrog)
	var chunks [][]byte
	for range 800 {
		for m := range int32(20) {
			g.Entry(uint16(m%3), m)
			g.Exit(uint16(m%3), m, 7)
		}
		g.Marker("k", "v")
		chunks = append(chunks, g.Take())
	}
	emit := func(u *unit) { u.conn = 1; c.handle(u) }
	i := 0
	for ; i < 400; i++ {
		p.feed(chunks[i], emit)
	}
	allocs := testing.AllocsPerRun(300, func() {
		p.feed(chunks[i], emit)
		i++
	})
	if allocs != 0 {
		t.Errorf("%v allocations per chunk; want 0", allocs)
	}
	if want := int64(i * 41); c.failed || c.held != 0 || c.st.sequenced != want {
		t.Errorf("failed %v (%s), %d held, %d released; want all %d released", c.failed, c.rep.Reason, c.held,
			c.st.sequenced, want)
	}
}

// units parses each connection's bytes in pieces and deals the units
// round-robin, as reads from k connections would arrive.
func units(d bytefrog.Dialect, per [][]byte, piece int) []unit {
	var out []unit
	ps := make([]*chunkParser, len(per))
	for i := range ps {
		ps[i] = newChunkParser(d, 1)
	}
	for off := 0; ; off += piece {
		more := false
		for i, b := range per {
			if off >= len(b) {
				continue
			}
			more = true
			ps[i].feed(b[off:min(off+piece, len(b))], func(u *unit) {
				u.conn = uint16(i + 1)
				out = append(out, *u)
			})
		}
		if !more {
			break
		}
	}
	for _, p := range ps {
		p.close()
	}
	return out
}

// BenchmarkReorder measures the core alone: units already parsed from k
// connections go through reorder, analysis and release.
func BenchmarkReorder(b *testing.B) {
	chunks, n := hqtest.Generate(hqtest.Workload{Events: 1_000_000, Methods: 300, Threads: 8, Chunk: 4096, Seed: 7})
	d := bytefrog.Dialect{Version: bytefrog.Version1}
	for _, k := range []int{1, 4, 8} {
		b.Run(fmt.Sprintf("conns=%d", k), func(b *testing.B) {
			per := hqtest.Spread(chunks, k)
			b.ReportAllocs()
			for range b.N {
				b.StopTimer()
				us := units(d, per, 64<<10)
				c := newCore(testCoreConfig(d), nil, nil)
				for i := range k {
					c.open(uint16(i + 1))
				}
				b.StartTimer()
				for i := range us {
					c.handle(&us[i])
				}
				rep := c.finish()
				if rep.Sequenced != int64(n) || rep.GapCount != 0 {
					b.Fatalf("%d events, %d gaps; want %d, 0", rep.Sequenced, rep.GapCount, n)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// TestNoCgo: package hq builds without cgo.
func TestNoCgo(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), `import "C"`) {
			t.Errorf("%s imports C", f)
		}
	}
}

// TestLastMarkersOutliveSlabs checks that the core copies its recent
// markers out of a read buffer when it lets go of it: the buffer is then
// overwritten (as a reused one would be) before the report is made.
func TestLastMarkersOutliveSlabs(t *testing.T) {
	d := bytefrog.Dialect{Version: bytefrog.Version1}
	c := newCore(coreConfig{dialect: d, maxHeldEvents: 1 << 20, maxHeldBytes: 1 << 30, maxMappingBytes: 1 << 20,
		topN: 10, hbInterval: 1000}, nil, nil)
	c.handle(&unit{kind: RecordOpen, conn: 1})
	p := newChunkParser(d, 1)
	defer p.close()
	var want []Marker
	for i := range 8 {
		key, value := fmt.Sprintf("log:l%d", i), fmt.Sprintf("INFO record %d", i)
		if i >= 8-lastMarkers {
			want = append(want, Marker{Seq: int32(i), Key: key, Value: value})
		}
		p.feed(bytefrog.AppendMarker(nil, 0, int32(i), key, value), func(u *unit) {
			u.conn = 1
			c.handle(u)
		})
	}
	for i := range p.s.raw[:p.w] {
		p.s.raw[i] = 'Z'
	}
	rep := c.finish()
	if !reflect.DeepEqual(rep.LastMarkers, want) {
		t.Errorf("LastMarkers got %+v; want %+v", rep.LastMarkers, want)
	}
}
