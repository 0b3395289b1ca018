package bytefrog

import (
	"bytes"
	"fmt"
	"io"
	"syscall"
	"testing"
)

var (
	benchSink []byte
	benchErr  error
)

// BenchmarkAppend encodes each message type (see codecTests).
func BenchmarkAppend(b *testing.B) {
	for _, tt := range codecTests {
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 256)
			for range b.N {
				buf = tt.enc(buf[:0])
			}
			benchSink = buf
		})
	}
}

// BenchmarkAppendDirect calls the hot-path encoders directly, without the
// table's function values.
func BenchmarkAppendDirect(b *testing.B) {
	buf := make([]byte, 0, 64)
	b.Run("MethodEntry", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			buf = AppendMethodEntry(buf[:0], int32(i), int32(i), 785932, 13)
		}
	})
	b.Run("MethodExit", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			buf = AppendMethodExit(buf[:0], int32(i), int32(i), 785932, 34, 13)
		}
	})
	b.Run("MethodExitCodePulse", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			buf = AppendMethodExitCodePulse(buf[:0], int32(i), int32(i), 785932, true, 13)
		}
	})
	b.Run("Exception", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			buf = AppendException(buf[:0], int32(i), int32(i), 785932, 356, 34, 13)
		}
	})
	b.Run("ExceptionBubble", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			buf = AppendExceptionBubble(buf[:0], int32(i), int32(i), 785932, 356, 13)
		}
	})
	b.Run("MethodVisit", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			buf = AppendMethodVisit(buf[:0], int32(i), int32(i), 785932, 4, 13)
		}
	})
	b.Run("MarkerMUTF8", func(b *testing.B) {
		b.ReportAllocs()
		key, value := []byte("log:bench.jul"), []byte("INFO benchmark record")
		for i := range b.N {
			buf = AppendMarkerMUTF8(buf[:0], int32(i), int32(i), key, value)
		}
	})
	b.Run("MapMethodSignature", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			buf = AppendMapMethodSignature(buf[:0], int32(i), "com/example/Foo.bar;1;()V")
		}
	})
	benchSink = buf
}

// BenchmarkParse decodes each message type (see codecTests).
func BenchmarkParse(b *testing.B) {
	for _, tt := range codecTests {
		wire := hx(tt.wire)
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			var m Msg
			d := tt.d
			for range b.N {
				_, benchErr = d.Parse(&m, wire)
			}
		})
	}
}

// benchStream is about 1 MiB of data-connection traffic: mostly entries
// and exits, with mappings, exceptions and markers mixed in.
func benchStream(d Dialect) (stream []byte, events int) {
	for seq := int32(0); len(stream) < 1<<20; seq += 2 {
		m := seq % 4096
		if seq%256 == 0 {
			stream = AppendMapMethodSignature(stream, m, "com/example/app/Service.handle;1;(Ljava/lang/String;I)V")
			stream = AppendMapThreadName(stream, uint16(m), seq, "worker-7")
			events += 2
		}
		stream = AppendMethodEntry(stream, seq/4, seq, m, 7)
		if seq%64 == 1 {
			stream = AppendException(stream, seq/4, seq+1, m, 3, 42, 7)
			stream = AppendExceptionBubble(stream, seq/4, seq+1, m, 3, 7)
			events += 2
		} else if d.Flavor == FlavorCodePulse {
			stream = AppendMethodExitCodePulse(stream, seq/4, seq+1, m, false, 7)
		} else {
			stream = AppendMethodExit(stream, seq/4, seq+1, m, 42, 7)
		}
		if seq%1024 == 0 {
			stream = AppendMarker(stream, seq/4, seq+1, "phase", "warm-up")
			events++
		}
		events += 2
	}
	return stream, events
}

// BenchmarkDecoder decodes a 1 MiB stream of mixed events per iteration.
func BenchmarkDecoder(b *testing.B) {
	for _, d := range []Dialect{dialectV1, dialectCP} {
		b.Run(d.Flavor.String(), func(b *testing.B) {
			stream, events := benchStream(d)
			b.ReportAllocs()
			b.SetBytes(int64(len(stream)))
			r := bytes.NewReader(stream)
			dec := NewDecoder(r, d)
			var m Msg
			b.ResetTimer()
			for range b.N {
				r.Reset(stream)
				dec.Reset(r)
				n := 0
				for {
					err := dec.Next(&m)
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != events {
					b.Fatalf("%d events; want %d", n, events)
				}
			}
			b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

func BenchmarkUTF(b *testing.B) {
	const ascii = "com/example/app/Service.handle;1;(Ljava/lang/String;I)V"
	const mixed = "com/exämple/Sérvice.hándle;1;()V \x00 😀"
	enc := AppendUTF(nil, mixed)[u16Size:]
	buf := make([]byte, 0, 128)
	b.Run("AppendUTF/ascii", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			buf = AppendUTF(buf[:0], ascii)
		}
	})
	b.Run("AppendUTF/mixed", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			buf = AppendUTF(buf[:0], mixed)
		}
	})
	b.Run("ValidUTF/ascii", func(b *testing.B) {
		b.ReportAllocs()
		in := []byte(ascii)
		for range b.N {
			benchErr = ValidUTF(in)
		}
	})
	b.Run("ValidUTF/mixed", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			benchErr = ValidUTF(enc)
		}
	})
	b.Run("String/ascii", func(b *testing.B) {
		b.ReportAllocs()
		in := []byte(ascii)
		for range b.N {
			benchString = String(in)
		}
	})
	b.Run("String/mixed", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			benchString = String(enc)
		}
	})
	benchSink = buf
}

var benchString string

// BenchmarkAppendSequenced indexes 256 KiB of entries and exits, as a data
// connection's reader does with each read: "nested" is the ingest
// benchmark's agent (calls two deep, a fixed pattern), "random" mixes
// entries and exits at random, which no branch predictor learns.
func BenchmarkAppendSequenced(b *testing.B) {
	for _, d := range []Dialect{{Version: Version1}, {Version: Version1, Flavor: FlavorCodePulse}} {
		for _, traffic := range []string{"nested", "random"} {
			b.Run(fmt.Sprintf("%v/%s", d.Flavor, traffic), func(b *testing.B) {
				var buf []byte
				pattern := []bool{true, true, false, true, true, false, false, false} // entry?
				rnd := uint64(7)
				n := 0
				for seq := int32(0); len(buf) < 256<<10; seq++ {
					entry := pattern[seq%8]
					if traffic == "random" {
						rnd = rnd*6364136223846793005 + 1442695040888963407
						entry = rnd>>63 == 0
					}
					switch {
					case entry:
						buf = AppendMethodEntry(buf, seq, seq, int32(seq%300), 20)
					case d.Flavor == FlavorCodePulse:
						buf = AppendMethodExitCodePulse(buf, seq, seq, int32(seq%300), false, 20)
					default:
						buf = AppendMethodExit(buf, seq, seq, int32(seq%300), 0, 20)
					}
					n++
				}
				v := NewEventView(buf, d)
				idx := make([]SeqOff, 0, n+1) // AppendSequenced grows a full index
				b.SetBytes(int64(len(buf)))
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := cpuTime()
				for range b.N {
					v.Reset(buf)
					var ok bool
					if idx, ok = v.AppendSequenced(idx[:0], 0); ok || len(idx) != n {
						b.Fatalf("indexed %d of %d events", len(idx), n)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N*n), "cpu-ns/event")
			})
		}
	}
}

// cpuTime is the process's user and system CPU time in nanoseconds: on a
// busy machine it moves far less than the wall time.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
