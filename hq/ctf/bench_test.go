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
	"sort"
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
// events, no trace file) in six setups, one run of each in turn per op so
// that the machine's load drifts over all alike: without the live relay
// (off), with it and no viewer (viewers=0), and with 1 or 4 viewers
// attached before the run and reading every packet: in-process Go viewers
// reading as fast as they can (go-N; go-4-unpaced without the catalog's
// Pacer, which holds serving to 5% of a core while a run is ingested),
// and real babeltrace2 processes under nice -n 19 (bt-N; left out without
// babeltrace2). Per setup it reports
// the median ingest rate (agent's first byte to the run's report) as
// <setup>-Mev/s, the median of its ratios to viewers=0 in the same round
// as <setup>-ratio, and HQ's CPU
// per event for the op, viewers' reading included until they have read
// the run (the Go viewers' own threads and the babeltrace2 processes
// excluded), as <setup>-hq-ns/ev; then prints the table, where "ingest
// ns/ev" is the process's CPU while the run was ingested (the in-process
// Go viewers' threads included).
func BenchmarkIngestLive(b *testing.B) {
	setups := []*ingestRig{{name: "off", viewers: -1}, {name: "viewers=0"}, {name: "go-1", viewers: 1},
		{name: "go-4", viewers: 4}, {name: "go-4-unpaced", viewers: 4, unpaced: true}}
	if p, err := exec.LookPath("babeltrace2"); err == nil {
		setups = append(setups, &ingestRig{name: "bt-1", viewers: 1, bt: p}, &ingestRig{name: "bt-4", viewers: 4, bt: p})
	} else if os.Getenv("CI") == "true" {
		b.Fatal("babeltrace2 not found (CI=true)")
	}
	for _, r := range setups {
		r.start(b)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for _, r := range setups {
			r.op(b)
		}
	}
	b.StopTimer()
	base := setups[1]
	for _, r := range setups {
		m := r.median()
		b.ReportMetric(m/1e6, r.name+"-Mev/s")
		b.ReportMetric(r.ratio(base), r.name+"-ratio")
		b.ReportMetric(float64(r.hqCPU)/float64(r.events), r.name+"-hq-ns/ev")
	}
	fmt.Printf("%-12s %9s %7s %12s %14s %16s %10s %14s\n", "setup", "M ev/s", "ratio", "HQ ns/event", "ingest ns/ev", "viewer ns/event", "%dropped", "faults/kevent")
	for _, r := range setups {
		m := r.median()
		vcpu := 0.0
		if r.viewers > 0 {
			vcpu = float64(r.viewerCPU) / float64(r.events*int64(r.viewers))
		}
		fmt.Printf("%-12s %9.2f %7.2f %12.1f %14.1f %16.1f %10.1f %14.2f\n", r.name, m/1e6, r.ratio(base),
			float64(r.hqCPU)/float64(r.events), float64(r.windowCPU)/float64(r.events), vcpu,
			100*float64(r.dropped)/float64(r.events),
			float64(r.faults)*1000/float64(r.events))
	}
}

// ingestRig is one setup of BenchmarkIngestLive: an HQ, its live relay
// and its viewers.
type ingestRig struct {
	name    string
	viewers int    // -1: no relay
	bt      string // babeltrace2's path: viewers are babeltrace2
	unpaced bool   // serving is not held to the catalog's share

	srv    *hq.Server
	cat    *ctf.Catalog
	ls     *live.Server
	addr   string
	lastID uint64

	rates                            []float64
	events, hqCPU, viewerCPU, faults int64
	dropped                          int64
	windowCPU                        int64 // process CPU while the runs were ingested
}

func (r *ingestRig) start(b *testing.B) {
	// Ended runs leave memory as with a trace directory, where they are
	// served from their files.
	ccfg := &ctf.CatalogConfig{Hostname: "bench", MaxEnded: 1}
	if r.unpaced {
		ccfg.ServeShare = -1
	}
	cat, err := ctf.NewCatalog(ccfg)
	if err != nil {
		b.Fatal(err)
	}
	cfg := hq.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	if r.viewers >= 0 {
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
	b.Cleanup(func() { srv.Close() })
	lcfg := live.DefaultConfig()
	lcfg.Pace = cat.Pacer().Pace // as tadpole-hq -live does
	ls, _ := live.NewServer(cat, lcfg)
	ln, _ := net.Listen("tcp4", "127.0.0.1:0")
	go ls.Serve(ln)
	b.Cleanup(func() { ls.Close() })
	r.srv, r.cat, r.ls, r.addr = srv, cat, ls, ln.Addr().String()
}

func (r *ingestRig) median() float64 { return median(r.rates) }

// ratio is the median over the rounds of r's rate to base's in the same
// round: the machine's load drifts less within a round than across.
func (r *ingestRig) ratio(base *ingestRig) float64 {
	var q []float64
	for i := range min(len(r.rates), len(base.rates)) {
		q = append(q, r.rates[i]/base.rates[i])
	}
	return median(q)
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// op runs one run through r's HQ and waits for its viewers to end.
func (r *ingestRig) op(b *testing.B) {
	_, n := benchTraffic()
	data := benchData()
	a, err := hqtest.Dial(r.srv.Addr(), bytefrog.Version1, bytefrog.FlavorBytefrog)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Expect(bytefrog.MsgStart); err != nil {
		b.Fatal(err)
	}
	run, err := r.srv.NextRun(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	var vg sync.WaitGroup
	var procs []*exec.Cmd
	var viewerCPU atomic.Int64
	if r.viewers > 0 {
		var in live.SessionInfo
		for in.ID <= r.lastID { // this op's run, once named
			for _, s := range r.cat.Sessions() {
				if i := s.Info(); i.ID > r.lastID {
					in = i
				}
			}
			time.Sleep(time.Millisecond)
		}
		r.lastID = in.ID
		if r.bt != "" {
			url := fmt.Sprintf("net://%s/host/%s/%s", r.addr, in.Hostname, in.Name)
			for range r.viewers {
				cmd := exec.Command("nice", "-n", "19", r.bt, "-i", "lttng-live", url, "-o", "dummy")
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				procs = append(procs, cmd)
			}
			for deadline := time.Now().Add(20 * time.Second); r.ls.Clients(in.ID) < r.viewers; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					b.Fatalf("%d babeltrace2 viewers attached, want %d", r.ls.Clients(in.ID), r.viewers)
				}
			}
		} else {
			ready := make(chan struct{}, r.viewers)
			for range r.viewers {
				vg.Add(1)
				go func() {
					defer vg.Done()
					runtime.LockOSThread() // its CPU is its thread's
					defer runtime.UnlockOSThread()
					t0 := threadCPU()
					_, err := readSession(r.addr, in.ID, ready)
					viewerCPU.Add(threadCPU() - t0)
					if err != nil {
						b.Error(err)
					}
				}()
			}
			for range r.viewers {
				<-ready
			}
		}
	}
	cpu0, flt0 := cpuTime(), minorFaults()
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
	r.rates = append(r.rates, float64(n)/time.Since(t0).Seconds())
	r.windowCPU += cpuTime() - cpu0
	if !rep.OK || rep.Sequenced != int64(n) {
		b.Fatalf("run: %s, %d events", rep.Result(), rep.Sequenced)
	}
	vg.Wait()
	for _, p := range procs {
		if err := p.Wait(); err != nil {
			b.Errorf("babeltrace2: %v", err)
		}
		viewerCPU.Add(int64(p.ProcessState.UserTime() + p.ProcessState.SystemTime()))
	}
	cpu := cpuTime() - cpu0
	if r.bt == "" {
		cpu -= viewerCPU.Load()
	}
	r.hqCPU += cpu
	r.viewerCPU += viewerCPU.Load()
	r.faults += minorFaults() - flt0
	r.events += int64(n)
	if r.viewers > 0 {
		_, d := r.cat.FeedStats(r.lastID)
		r.dropped += d
	}
}

var benchData = sync.OnceValue(func() []byte {
	chunks, _ := benchTraffic()
	return bytes.Join(chunks, nil)
})

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
