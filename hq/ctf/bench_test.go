package ctf_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/ctf"
	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
	"github.com/tadpole-trace/tadpole/transport/live"
)

const benchEvents = 1_000_000

var benchTraffic = sync.OnceValues(func() ([][]byte, int) {
	return hqtest.Generate(hqtest.Workload{Events: benchEvents, Methods: 300, Threads: 8, Chunk: 4096, Seed: 7})
})

// benchMsgs decodes the benchmark traffic into messages (strings copied).
var benchMsgs = sync.OnceValue(func() []bytefrog.Msg {
	chunks, _ := benchTraffic()
	dec := bytefrog.NewDecoder(bytes.NewReader(bytes.Join(chunks, nil)),
		bytefrog.Dialect{Version: bytefrog.Version1, Flavor: bytefrog.FlavorBytefrog})
	out := make([]bytefrog.Msg, 0, 200_000)
	for len(out) < cap(out) {
		var m bytefrog.Msg
		if err := dec.Next(&m); err != nil {
			break
		}
		m.Text = bytes.Clone(m.Text)
		m.Value = bytes.Clone(m.Value)
		m.Raw = nil
		out = append(out, m)
	}
	return out
})

// nullSink counts the packet bytes.
type nullSink struct{ n int64 }

func (s *nullSink) AppendMetadata([]byte)        {}
func (s *nullSink) AddStream(uint64, string) int { return 0 }
func (s *nullSink) Beacon(int, uint64)           {}
func (s *nullSink) End()                         {}
func (s *nullSink) Publish(_ int, _ live.Index, b []byte) error {
	s.n += int64(len(b))
	return nil
}

// BenchmarkCTFEncode measures the CTF writer alone: one op is one event
// (entry/exit pairs over 300 methods on 8 threads, 200 k events cycled);
// MB/s counts the CTF bytes written.
func BenchmarkCTFEncode(b *testing.B) {
	msgs := benchMsgs()
	sink := &nullSink{}
	w, err := ctf.NewWriter(sink, &ctf.Config{Start: time.Unix(1700000000, 0)})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.Message(&msgs[i%len(msgs)])
	}
	b.StopTimer()
	w.Close()
	b.SetBytes(sink.n / int64(b.N))
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// TestWriterAllocs: encoding an event allocates nothing but the packets.
func TestWriterAllocs(t *testing.T) {
	msgs := benchMsgs()[:20000]
	w, _ := ctf.NewWriter(&nullSink{}, nil)
	for i := range msgs {
		w.Message(&msgs[i]) // map every id first
	}
	i := 0
	allocs := testing.AllocsPerRun(5000, func() {
		w.Message(&msgs[i%len(msgs)])
		i++
	})
	// One 64 KiB packet per ~1500 events.
	if allocs > 0.01 {
		t.Fatalf("%.3f allocations per event", allocs)
	}
}

// BenchmarkIngestLive measures HQ's ingest over loopback (one run of 1 M
// events per op, no trace file) without the live relay (off), with it and
// no viewer, and with 1 or 4 viewers attached before the run and reading
// every packet: in-process Go viewers reading as fast as they can (go),
// and real babeltrace2 processes under nice -n 19 (bt; skipped without
// babeltrace2). events/s is the ingest rate (agent's first byte to the
// run's report); hq-cpu-ns/event is HQ's CPU for the op, viewers' reading
// included until they have read the run (the Go viewers' own threads and
// the babeltrace2 processes excluded); viewer-cpu-ns/event is the
// viewers'. It ends with the ingest ratios against viewers=0.
func BenchmarkIngestLive(b *testing.B) {
	rates := map[string]float64{}
	var names []string
	cases := []struct {
		name    string
		viewers int
		bt      bool
	}{{"off", -1, false}, {"viewers=0", 0, false}, {"go-viewers=1", 1, false}, {"go-viewers=4", 4, false},
		{"bt-viewers=1", 1, true}, {"bt-viewers=4", 4, true}}
	for _, c := range cases {
		ok := b.Run(c.name, func(b *testing.B) {
			rates[c.name] = benchIngestLive(b, c.viewers, c.bt)
		})
		if ok && rates[c.name] > 0 {
			names = append(names, c.name)
		}
	}
	if base := rates["viewers=0"]; base > 0 {
		for _, n := range names {
			fmt.Printf("ingest %-13s %5.1f M events/s  %.2f × viewers=0\n", n, rates[n]/1e6, rates[n]/base)
		}
	}
}

func benchIngestLive(b *testing.B, viewers int, bt bool) float64 {
	btPath := ""
	if bt {
		p, err := exec.LookPath("babeltrace2")
		if err != nil {
			if os.Getenv("CI") == "true" {
				b.Fatal("babeltrace2 not found (CI=true)")
			}
			b.Skip("babeltrace2 not found")
		}
		btPath = p
	}
	chunks, n := benchTraffic()
	data := bytes.Join(chunks, nil)
	// Ended runs leave memory as with a trace directory, where they are
	// served from their files.
	cat, err := ctf.NewCatalog(&ctf.CatalogConfig{Hostname: "bench", MaxEnded: 1})
	if err != nil {
		b.Fatal(err)
	}
	cfg := hq.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	if viewers >= 0 {
		cfg.NewProcessor = cat.Processor
	}
	srv, err := hq.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := srv.Listen(cfg.Listen); err != nil {
		b.Fatal(err)
	}
	go srv.Serve()
	defer srv.Close()
	ls, _ := live.NewServer(cat, nil)
	ln, _ := net.Listen("tcp4", "127.0.0.1:0")
	go ls.Serve(ln)
	defer ls.Close()

	var read, viewerCPU atomic.Int64
	var ingest time.Duration
	var lastID uint64
	var dropped int64
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu0, flt0 := cpuTime(), minorFaults()
	for range b.N {
		b.StopTimer()
		a, err := hqtest.Dial(srv.Addr(), bytefrog.Version1, bytefrog.FlavorBytefrog)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := a.Expect(bytefrog.MsgStart); err != nil {
			b.Fatal(err)
		}
		run, err := srv.NextRun(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		var vg sync.WaitGroup
		var procs []*exec.Cmd
		if viewers > 0 {
			var in live.SessionInfo
			for in.ID <= lastID { // this op's run, once named
				for _, s := range cat.Sessions() {
					if i := s.Info(); i.ID > lastID {
						in = i
					}
				}
				time.Sleep(time.Millisecond)
			}
			lastID = in.ID
			if bt {
				url := fmt.Sprintf("net://%s/host/%s/%s", ln.Addr(), in.Hostname, in.Name)
				for range viewers {
					cmd := exec.Command("nice", "-n", "19", btPath, "-i", "lttng-live", url, "-o", "dummy")
					if err := cmd.Start(); err != nil {
						b.Fatal(err)
					}
					procs = append(procs, cmd)
				}
				for deadline := time.Now().Add(20 * time.Second); ls.Clients(in.ID) < viewers; time.Sleep(time.Millisecond) {
					if time.Now().After(deadline) {
						b.Fatalf("%d babeltrace2 viewers attached, want %d", ls.Clients(in.ID), viewers)
					}
				}
			} else {
				ready := make(chan struct{}, viewers)
				for range viewers {
					vg.Add(1)
					go func() {
						defer vg.Done()
						runtime.LockOSThread() // its CPU is its thread's
						defer runtime.UnlockOSThread()
						t0 := threadCPU()
						n, err := readSession(ln.Addr().String(), in.ID, ready)
						viewerCPU.Add(threadCPU() - t0)
						if err != nil {
							b.Error(err)
						}
						read.Add(n)
					}()
				}
				for range viewers {
					<-ready
				}
			}
		}
		b.StartTimer()
		t0 := time.Now()
		i, err := a.OpenData()
		if err != nil {
			b.Fatal(err)
		}
		if err := a.Write(i, data); err != nil {
			b.Fatal(err)
		}
		if err := a.Shutdown(false); err != nil {
			b.Fatal(err)
		}
		rep, _ := run.Wait(context.Background())
		ingest += time.Since(t0)
		if !rep.OK || rep.Sequenced != int64(n) {
			b.Fatalf("run: %s, %d events", rep.Result(), rep.Sequenced)
		}
		b.StopTimer()
		vg.Wait()
		for _, p := range procs {
			if err := p.Wait(); err != nil {
				b.Errorf("babeltrace2: %v", err)
			}
			viewerCPU.Add(int64(p.ProcessState.UserTime() + p.ProcessState.SystemTime()))
		}
		a.Close()
		if viewers > 0 {
			_, d := cat.FeedStats(lastID)
			dropped += d
		}
		b.StartTimer()
	}
	b.StopTimer()
	rate := float64(n) * float64(b.N) / ingest.Seconds()
	b.ReportMetric(rate, "events/s")
	hqCPU := cpuTime() - cpu0
	if !bt {
		hqCPU -= viewerCPU.Load()
	}
	b.ReportMetric(float64(hqCPU)/float64(n*b.N), "hq-cpu-ns/event")
	b.ReportMetric(float64(minorFaults()-flt0)*1000/float64(n*b.N), "page-faults/kevent")
	if viewers > 0 {
		b.ReportMetric(float64(viewerCPU.Load())/float64(n*b.N*viewers), "viewer-cpu-ns/event")
	}
	if viewers > 0 {
		b.ReportMetric(100*float64(dropped)/float64(n*b.N), "%dropped")
	}
	if viewers > 0 && !bt {
		b.ReportMetric(float64(read.Load())/float64(b.N*viewers), "CTF-B/viewer")
	}
	return rate
}

// minorFaults is the process's minor page faults so far.
func minorFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Minflt
}

// threadCPU is the calling thread's user and system CPU time in
// nanoseconds (Linux).
func threadCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// cpuTime is the process's user and system CPU time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkBabeltraceRead measures babeltrace2 (-o dummy: decoding, no
// printing) reading one run of 200 k events from tadpole-hq's relay
// (net://, the run recorded) and from the same CTF exported to a
// directory; events/s is babeltrace's rate, wall clock including its
// start-up.
func BenchmarkBabeltraceRead(b *testing.B) {
	bt := needBabeltrace(b)
	dir := b.TempDir()
	h := startLiveHQ(b, dir)
	chunks, n := hqtest.Generate(hqtest.Workload{Events: 200_000, Methods: 300, Threads: 8, Chunk: 4096, Seed: 5})
	a, data := dialAgent(b, h.hq.Addr())
	run, err := h.hq.NextRun(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range chunks {
		if err := a.Write(data, c); err != nil {
			b.Fatal(err)
		}
	}
	a.Shutdown(false)
	rep, _ := run.Wait(context.Background())
	in, url := h.session(b)
	for deadline := time.Now().Add(5 * time.Second); !h.cat.Session(in.ID).Info().Recorded; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("not recorded")
		}
	}
	out := b.TempDir() + "/ctf"
	if _, err := ctf.Export(out, rep.TraceFile, nil); err != nil {
		b.Fatal(err)
	}
	for _, src := range []struct{ name, arg string }{{"relay", url}, {"dir", out}} {
		b.Run(src.name, func(b *testing.B) {
			for range b.N {
				args := []string{src.arg, "-o", "dummy"}
				if src.name == "relay" {
					args = []string{"-i", "lttng-live", src.arg, "-o", "dummy"}
				}
				if out, err := exec.Command(bt, args...).CombinedOutput(); err != nil {
					b.Fatalf("babeltrace2 %v: %v\n%s", args, err, out)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

type noop struct{}

func (noop) Message(*bytefrog.Msg) {}
func (noop) DataBreak(int32)       {}
func (noop) Finish(*hq.Report)     {}

// readSession is a minimal viewer: it attaches to session id from the
// beginning and reads every packet of every stream until the session
// ends; it returns the packet bytes read.
func readSession(addr string, id uint64, ready chan<- struct{}) (int64, error) {
	c, err := net.Dial("tcp4", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	be := binary.BigEndian
	req := func(cmd live.Command, payload []byte) error {
		_, err := c.Write(live.AppendRequest(nil, cmd, payload))
		return err
	}
	read := func(n int) ([]byte, error) {
		buf := make([]byte, n)
		_, err := io.ReadFull(c, buf)
		return buf, err
	}
	streamsReply := func() ([]live.StreamRecord, uint32, error) {
		h, err := read(live.StatusCountSize)
		if err != nil {
			return nil, 0, err
		}
		var out []live.StreamRecord
		for range be.Uint32(h[4:]) {
			r, err := read(live.StreamRecordSize)
			if err != nil {
				return nil, 0, err
			}
			s, _ := live.ParseStreamRecord(r)
			out = append(out, s)
		}
		return out, be.Uint32(h), nil
	}
	req(live.CmdConnect, live.Connect{ViewerSessionID: ^uint64(0), Major: 2, Minor: 4, Type: live.ConnCommand}.Append(nil))
	read(live.ConnectSize)
	req(live.CmdCreateSession, nil)
	read(live.StatusSize)
	req(live.CmdAttachSession, live.AttachRequest{SessionID: id, Seek: live.SeekBeginning}.Append(nil))
	ss, st, err := streamsReply()
	if err != nil || live.Status(st) != live.AttachOK {
		return 0, fmt.Errorf("attach: %v %d", err, st)
	}
	ready <- struct{}{}
	var data []uint64
	for _, s := range ss {
		if !s.Metadata {
			data = append(data, s.ID)
		}
	}
	var total int64
	hup := map[uint64]bool{}
	for {
		progress := false
		for _, sid := range data {
			if hup[sid] {
				continue
			}
			req(live.CmdGetNextIndex, be.AppendUint64(nil, sid))
			r, err := read(live.IndexReplySize)
			if err != nil {
				return total, err
			}
			x, _ := live.ParseIndex(r)
			switch x.Status {
			case live.IndexHup:
				hup[sid] = true
			case live.IndexOK:
				progress = true
				req(live.CmdGetPacket, live.PacketRequest{StreamID: sid, Offset: x.Offset, Len: uint32(x.PacketSize / 8)}.Append(nil))
				h, err := read(live.PacketReplySize)
				if err != nil {
					return total, err
				}
				if _, err := read(int(be.Uint32(h[4:]))); err != nil {
					return total, err
				}
				total += int64(be.Uint32(h[4:]))
			}
			if x.Flags&live.FlagNewStream != 0 {
				req(live.CmdGetNewStreams, be.AppendUint64(nil, id))
				ns, _, err := streamsReply()
				if err != nil {
					return total, err
				}
				for _, s := range ns {
					data = append(data, s.ID)
				}
			}
		}
		if len(hup) == len(data) {
			req(live.CmdGetNewStreams, be.AppendUint64(nil, id))
			ns, st, err := streamsReply()
			if err != nil {
				return total, err
			}
			if live.Status(st) == live.NewStreamsHup {
				return total, nil
			}
			for _, s := range ns {
				data = append(data, s.ID)
			}
		}
		if !progress {
			time.Sleep(time.Millisecond)
		}
	}
}
