package calltree_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/calltree"
	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// timedTraffic is agent traffic with time passing: nested calls on several
// threads, RelTime advancing 0–2 ms an event, and one call in ten ending
// by an exception (thrown, then bubbled out). It returns the buffers and
// the number of sequenced events.
func timedTraffic(seed uint64, events, methods, threads int) ([][]byte, int) {
	return timedGraphTraffic(seed, events, methods, threads, 0)
}

// timedGraphTraffic is timedTraffic where, with fanout > 0, each method
// calls only fanout others (as a program's call graph does), so that the
// call paths are few; with fanout 0 any method calls any, and nearly every
// deep call is a new path.
func timedGraphTraffic(seed uint64, events, methods, threads, fanout int) ([][]byte, int) {
	g := hqtest.NewGen(bytefrog.FlavorBytefrog)
	rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	stacks := make([][]int32, threads)
	var chunks [][]byte
	for int(g.Seq) < events {
		g.RelTime += int32(rng.IntN(3))
		tid := rng.IntN(threads)
		st := stacks[tid]
		switch {
		case len(st) == 0 || (len(st) < 10 && rng.IntN(2) == 0):
			m := int32(rng.IntN(1 + rng.IntN(methods)))
			if fanout > 0 && len(st) == 0 {
				m %= 8 // a few entry points
			}
			if fanout > 0 && len(st) > 0 {
				m = (st[len(st)-1]*7 + 1 + int32(rng.IntN(fanout))) % int32(methods)
			}
			g.Entry(uint16(tid), m)
			stacks[tid] = append(st, m)
		case rng.IntN(10) == 0:
			exc := int32(rng.IntN(3))
			g.Throw(uint16(tid), st[len(st)-1], exc, 7)
			g.Bubble(uint16(tid), st[len(st)-1], exc)
			stacks[tid] = st[:len(st)-1]
		default:
			g.Exit(uint16(tid), st[len(st)-1], uint16(10+len(st)))
			stacks[tid] = st[:len(st)-1]
		}
		if g.Len() >= 2048 {
			chunks = append(chunks, g.Take())
		}
	}
	for tid, st := range stacks {
		for i := len(st) - 1; i >= 0; i-- {
			g.RelTime++
			g.Exit(uint16(tid), st[i], 1)
		}
	}
	if g.Len() > 0 {
		chunks = append(chunks, g.Take())
	}
	return chunks, int(g.Seq)
}

// liveRun sends chunks through an in-process HQ, over two data
// connections, with a Tree as the run's processor. It returns the report
// (whose TraceFile is the run's trace file) and the live tree.
func liveRun(t testing.TB, chunks [][]byte) (*hq.Report, *calltree.Tree) {
	t.Helper()
	cfg := hq.DefaultConfig()
	cfg.Agent.HeartbeatInterval = 100
	cfg.TraceDir = t.TempDir()
	cfg.TopN = 1000
	var (
		mu   sync.Mutex
		live *calltree.Tree
	)
	cfg.NewProcessor = func(*hq.Run) hq.Processor {
		tr, err := calltree.New(nil)
		if err != nil {
			t.Error(err)
			return nil
		}
		mu.Lock()
		live = tr
		mu.Unlock()
		return tr
	}
	srv, err := hq.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve() }()
	defer func() {
		srv.Close()
		<-served
	}()
	a, err := hqtest.Dial(srv.Addr(), bytefrog.Version1, bytefrog.FlavorBytefrog)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Expect(bytefrog.MsgStart); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run, err := srv.NextRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	per := hqtest.Spread(chunks, 2)
	for range per {
		if _, err := a.OpenData(); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for i := range per {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := a.Write(i, per[i]); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if err := a.Shutdown(false); err != nil {
		t.Fatal(err)
	}
	rep, err := run.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK || rep.TraceFile == "" {
		t.Fatalf("run: %s (%s); trace file %q", rep.Result(), rep.Reason, rep.TraceFile)
	}
	mu.Lock()
	defer mu.Unlock()
	return rep, live
}

// replayTree builds a tree (cfg: nil for the defaults) from a trace file.
func replayTree(t testing.TB, path string, cfg *calltree.Config) (*hq.Report, *calltree.Tree) {
	t.Helper()
	tr, err := calltree.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := hq.ReplayFile(path, &hq.ReplayOptions{Processors: []hq.Processor{tr}, TopN: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return rep, tr
}

// msgs feeds events to a tree as HQ would.
type feeder struct {
	t  *calltree.Tree
	m  bytefrog.Msg
	sq int32
}

func (f *feeder) ev(typ bytefrog.MsgType, tid uint16, method int32, at int32) {
	f.m = bytefrog.Msg{Type: typ, ThreadID: tid, MethodID: method, RelTime: at, Seq: f.sq}
	f.sq++
	f.t.Message(&f.m)
}

func (f *feeder) entry(tid uint16, method, at int32) { f.ev(bytefrog.MsgMethodEntry, tid, method, at) }
func (f *feeder) exit(tid uint16, method, at int32)  { f.ev(bytefrog.MsgMethodExit, tid, method, at) }

func (f *feeder) bubble(tid uint16, method, exc, at int32) {
	f.m = bytefrog.Msg{Type: bytefrog.MsgExceptionBubble, ThreadID: tid, MethodID: method, ExceptionID: exc, RelTime: at}
	f.t.Message(&f.m)
}

func (f *feeder) throw(tid uint16, method, exc, at int32) {
	f.m = bytefrog.Msg{Type: bytefrog.MsgException, ThreadID: tid, MethodID: method, ExceptionID: exc, RelTime: at}
	f.t.Message(&f.m)
}

func (f *feeder) name(method int32, sig string) {
	f.m = bytefrog.Msg{Type: bytefrog.MsgMapMethodSignature, MethodID: method, Text: []byte(sig)}
	f.t.Message(&f.m)
}
