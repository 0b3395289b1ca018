package ctf_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os/exec"
	"sync"
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
