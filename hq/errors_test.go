package hq_test

import (
	"context"
	"errors"
	"io"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// rawConn opens a plain connection to the server and writes b.
func rawConn(t *testing.T, srv *hq.Server, b []byte) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", srv.Addr())
	must(t, err)
	t.Cleanup(func() { c.Close() })
	if len(b) > 0 {
		_, err = c.Write(b)
		must(t, err)
	}
	return c
}

// readRejection reads what HQ answers a rejected connection: one Error,
// then EOF.
func readRejection(t *testing.T, c net.Conn) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	dec := bytefrog.NewDecoder(c, bytefrog.Dialect{Version: bytefrog.Version1})
	var m bytefrog.Msg
	if err := dec.Next(&m); err != nil {
		t.Fatalf("reading the rejection: %v", err)
	}
	if m.Type != bytefrog.MsgError {
		t.Fatalf("got %v; want Error", m.Type)
	}
	text := bytefrog.String(m.Text)
	if err := dec.Next(&m); err != io.EOF {
		t.Errorf("after the Error: %v; want EOF", err)
	}
	return text
}

func TestGreetingRejections(t *testing.T) {
	srv := start(t, func(c *hq.Config) {
		c.Versions = []uint8{bytefrog.Version1, bytefrog.Version2}
		c.DataHelloWait = 100 * time.Millisecond
	})
	for _, tc := range []struct {
		name  string
		bytes []byte
		want  string
	}{
		{"version 9", bytefrog.AppendHello(nil, 9), "Invalid Protocol Version"},
		{"version 0", bytefrog.AppendHello(nil, 0), "Invalid Protocol Version"},
		{"version 3 not accepted", bytefrog.AppendHello(nil, 3), "Invalid Protocol Version"},
		{"project hello v4", bytefrog.AppendProjectHello(nil, 4, 7), "Invalid Protocol Version"},
		{"http", []byte("GET / HTTP/1.1\r\n\r\n"), "Unexpected Input Format"},
		{"heartbeat first", bytefrog.AppendHeartbeat(nil, bytefrog.ModeTracing, 0), "Unexpected Input Format"},
		{"unknown run", bytefrog.AppendDataHello(nil, 9), "Data connection timed out waiting for a valid trace"},
		{"run id 255", bytefrog.AppendDataHello(nil, 255), "Data connection timed out waiting for a valid trace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			begin := time.Now()
			c := rawConn(t, srv, tc.bytes)
			if got := readRejection(t, c); got != tc.want {
				t.Errorf("error %q; want %q", got, tc.want)
			}
			if tc.name == "unknown run" && time.Since(begin) < 100*time.Millisecond {
				t.Errorf("rejected after %v; want a wait of DataHelloWait (100ms)", time.Since(begin))
			}
		})
	}
}

// TestDataHelloWaits: a DataHello that arrives just before its run's Hello
// is accepted.
func TestDataHelloWaits(t *testing.T) {
	srv := start(t, nil)
	c := rawConn(t, srv, bytefrog.AppendDataHello(nil, 0))
	time.Sleep(50 * time.Millisecond)
	a := dial(t, srv, bytefrog.Version1)
	expect(t, a, bytefrog.MsgStart)
	run := nextRun(t, srv)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var b [1]byte
	_, err := io.ReadFull(c, b[:])
	must(t, err)
	if b[0] != byte(bytefrog.MsgDataHelloReply) {
		t.Fatalf("reply %d; want DataHelloReply", b[0])
	}
	g := hqtest.NewGen(bytefrog.FlavorBytefrog)
	_, err = c.Write(pairs(g, 3))
	must(t, err)
	c.Close()
	must(t, a.Shutdown(false))
	checkOK(t, wait(t, run), 6)
}

// TestSilentConnections: peers that say nothing neither block other
// greetings nor stay open past GreetTimeout. The greeting's bound is well
// under GreetTimeout, not a latency target: a busy host may take a while.
func TestSilentConnections(t *testing.T) {
	const greet = time.Second
	srv := start(t, func(c *hq.Config) { c.GreetTimeout = greet })
	var silent []net.Conn
	for range 5 {
		silent = append(silent, rawConn(t, srv, nil))
	}
	begin := time.Now()
	a := dial(t, srv, bytefrog.Version1)
	if d := time.Since(begin); d > greet*3/4 {
		t.Errorf("greeting took %v behind silent connections", d)
	}
	expect(t, a, bytefrog.MsgStart)
	for _, c := range silent {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("silent connection: %v; want EOF once GreetTimeout passed", err)
		}
	}
	if d := time.Since(begin); d < greet*3/4 {
		t.Errorf("silent connections closed after %v; want about %v", d, greet)
	}
	a.Close()
}

// failCase runs one agent through script and checks that the run fails
// with a reason containing want, that the agent was told, and that replay
// agrees.
func failCase(t *testing.T, mod func(*hq.Config), script func(a *hqtest.Agent, run *hq.Run), want string) *hq.Report {
	t.Helper()
	srv := start(t, mod)
	a := dial(t, srv, bytefrog.Version1)
	expect(t, a, bytefrog.MsgStart)
	run := nextRun(t, srv)
	script(a, run)
	rep := wait(t, run)
	if rep.OK || !strings.Contains(rep.Reason, want) {
		t.Fatalf("result %q; want failed: …%s…", rep.Result(), want)
	}
	if got, err := a.ExpectClosed(); err != nil || !strings.Contains(got, want) && !strings.Contains(want, "closed") {
		t.Errorf("agent told %q (%v); want an Error with %q", got, err, want)
	}
	checkReplay(t, rep)
	return rep
}

func TestUnknownMode(t *testing.T) {
	failCase(t, nil, func(a *hqtest.Agent, _ *hq.Run) {
		must(t, a.Heartbeat('Q', 0))
	}, "unknown heartbeat mode 0x51")
}

func TestBadControlMessage(t *testing.T) {
	for _, tc := range []struct {
		name  string
		bytes []byte
		want  string
	}{
		{"event", bytefrog.AppendMethodEntry(nil, 1, 0, 1, 1), "Bad control message: MethodEntry"},
		{"unknown", []byte{200, 1, 2}, "Bad control message: UNKNOWN_MSG_200"},
		{"hello again", bytefrog.AppendHello(nil, 1), "Bad control message: Hello"},
		{"data hello", bytefrog.AppendDataHello(nil, 0), "Bad control message: DataHello"},
		{"bad utf", []byte{byte(bytefrog.MsgClassIgnored), 0, 2, 0xC0, 0x41}, "Bad control message: bytefrog: invalid modified UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			failCase(t, nil, func(a *hqtest.Agent, _ *hq.Run) {
				must(t, a.Heartbeat(bytefrog.ModeTracing, 0))
				must(t, a.WriteControl(tc.bytes))
			}, tc.want)
		})
	}
}

func TestControlEOFWithoutX(t *testing.T) {
	failCase(t, nil, func(a *hqtest.Agent, _ *hq.Run) {
		i, err := a.OpenData()
		must(t, err)
		must(t, a.Write(i, pairs(hqtest.NewGen(bytefrog.FlavorBytefrog), 5)))
		a.Data[i].Close()
		a.Ctl.(*net.TCPConn).CloseWrite()
	}, "control connection closed before the shutdown heartbeat ('X')")
}

func TestAgentError(t *testing.T) {
	failCase(t, nil, func(a *hqtest.Agent, _ *hq.Run) {
		must(t, a.SendError("out of buffers"))
	}, "agent error: out of buffers")
}

func TestAgentErrorOnData(t *testing.T) {
	failCase(t, nil, func(a *hqtest.Agent, _ *hq.Run) {
		i, err := a.OpenData()
		must(t, err)
		must(t, a.Write(i, bytefrog.AppendError(nil, "sender died")))
	}, "agent error on data connection 1: sender died")
}

// seqs encodes events with the given numbers (method 1, thread 1, mapped
// first).
func seqs(nums ...int32) []byte {
	b := bytefrog.AppendMapThreadName(nil, 1, 0, "main")
	b = bytefrog.AppendMapMethodSignature(b, 1, "a/B.c;1;()V")
	for _, s := range nums {
		b = bytefrog.AppendMethodEntry(b, 0, s, 1, 1)
	}
	return b
}

func span(from, to int32) []int32 {
	var v []int32
	for s := from; s <= to; s++ {
		v = append(v, s)
	}
	return v
}

func TestGapCapReached(t *testing.T) {
	rep := failCase(t, func(c *hq.Config) { c.MaxHeldEvents = 1000 }, func(a *hqtest.Agent, _ *hq.Run) {
		i, err := a.OpenData()
		must(t, err)
		must(t, a.Write(i, seqs(span(0, 9)...)))
		must(t, a.Write(i, seqs(span(11, 1100)...)))
	}, "gap at seq 10: waited for it while holding 1090 events")
	if rep.Sequenced != 10+1090 || rep.GapCount != 1 {
		t.Errorf("%d events, %d gaps; want the 1100 received released after the gap", rep.Sequenced, rep.GapCount)
	}
}

// okCase runs an agent that ends normally and returns the report.
func okCase(t *testing.T, mod func(*hq.Config), script func(a *hqtest.Agent, run *hq.Run), procs ...hq.Processor) *hq.Report {
	t.Helper()
	srv := start(t, mod)
	a := dial(t, srv, bytefrog.Version1)
	expect(t, a, bytefrog.MsgStart)
	run := nextRun(t, srv)
	script(a, run)
	must(t, a.Shutdown(false))
	rep := wait(t, run)
	checkReplay(t, rep, procs...)
	return rep
}

func TestGapAtEnd(t *testing.T) {
	rep := okCase(t, nil, func(a *hqtest.Agent, _ *hq.Run) {
		i, err := a.OpenData()
		must(t, err)
		must(t, a.Write(i, seqs(append(span(0, 9), span(20, 29)...)...)))
	})
	if rep.OK || !strings.Contains(rep.Reason, "incomplete data: 1 gap(s), 10 events missing") {
		t.Errorf("result %q; want failed: incomplete data", rep.Result())
	}
	if !reflect.DeepEqual(rep.Gaps, []hq.SeqRange{{From: 10, To: 19}}) || rep.Sequenced != 20 {
		t.Errorf("gaps %v, %d events; want [10..19], 20", rep.Gaps, rep.Sequenced)
	}
}

func TestDuplicate(t *testing.T) {
	rep := okCase(t, nil, func(a *hqtest.Agent, run *hq.Run) {
		i, err := a.OpenData()
		must(t, err)
		j, err := a.OpenData()
		must(t, err)
		must(t, a.Write(i, seqs(span(0, 9)...)))
		waitEvents(t, run, 10)
		must(t, a.Write(j, seqs(5, 10, 11)))
	})
	if rep.OK || rep.DuplicateCount != 1 || !reflect.DeepEqual(rep.Duplicates, []int32{5}) || rep.Sequenced != 12 {
		t.Errorf("result %q, duplicates %v (%d), %d events; want failed, [5], 12", rep.Result(), rep.Duplicates,
			rep.DuplicateCount, rep.Sequenced)
	}
}

// unmappedWant is what unmappedScript leaves unmapped.
var unmappedWant = []hq.UnmappedID{
	{Kind: hq.IDMethod, ID: 999, Count: 2, FirstSeq: 1},
	{Kind: hq.IDException, ID: 5, Count: 1, FirstSeq: 2},
	{Kind: hq.IDThread, ID: 77, Count: 1, FirstSeq: 2},
}

// unmappedScript uses method 999, exception 5 and thread 77 before their
// mappings; method 999 is mapped at last.
func unmappedScript(t *testing.T) func(a *hqtest.Agent, run *hq.Run) {
	return func(a *hqtest.Agent, run *hq.Run) {
		i, err := a.OpenData()
		must(t, err)
		b := seqs(0)
		b = bytefrog.AppendMethodEntry(b, 0, 1, 999, 1)    // method 999 unmapped
		b = bytefrog.AppendException(b, 0, 2, 1, 5, 3, 77) // exception 5, thread 77 unmapped
		b = bytefrog.AppendMethodExit(b, 0, 3, 999, 10, 1) // method 999 again
		must(t, a.Write(i, b))
		waitEvents(t, run, 4)
		b = bytefrog.AppendMapMethodSignature(nil, 999, "late/M.m;1;()V")
		b = bytefrog.AppendMethodExit(b, 0, 4, 999, 10, 1) // mapped now
		must(t, a.Write(i, b))
	}
}

// TestUnmappedIDs: an id used before its mapping fails the run by default,
// and every such id is listed; TestUnmappedIDsLenient: Lenient keeps the
// run OK and lists them the same.
func TestUnmappedIDs(t *testing.T) {
	rep := okCase(t, nil, unmappedScript(t))
	if rep.OK || rep.Reason != "3 id(s) used before their mapping" {
		t.Errorf("strict: %s; want failed: 3 id(s) used before their mapping", rep.Result())
	}
	if !reflect.DeepEqual(rep.Unmapped, unmappedWant) {
		t.Errorf("strict: unmapped %+v; want %+v", rep.Unmapped, unmappedWant)
	}
}

func TestUnmappedIDsLenient(t *testing.T) {
	srv := start(t, func(c *hq.Config) { c.Lenient = true })
	a := dial(t, srv, bytefrog.Version1)
	expect(t, a, bytefrog.MsgStart)
	run := nextRun(t, srv)
	unmappedScript(t)(a, run)
	must(t, a.Shutdown(false))
	rep := wait(t, run)
	if !rep.OK || !reflect.DeepEqual(rep.Unmapped, unmappedWant) {
		t.Errorf("lenient: %s, unmapped %+v; want completed, %+v", rep.Result(), rep.Unmapped, unmappedWant)
	}
}

// TestRemappedIDs: an id mapped again to a different name fails the run;
// the same name again is harmless.
func TestRemappedIDs(t *testing.T) {
	rep := okCase(t, nil, func(a *hqtest.Agent, run *hq.Run) {
		i, err := a.OpenData()
		must(t, err)
		b := bytefrog.AppendMapMethodSignature(nil, 7, "a/A.m;1;()V")
		b = bytefrog.AppendMapMethodSignature(b, 7, "a/A.m;1;()V") // the same again
		b = append(b, seqs(0)...)
		b = bytefrog.AppendMapMethodSignature(b, 7, "b/B.other;1;()V") // renamed
		b = bytefrog.AppendMapException(b, 3, "java/lang/Error")
		b = bytefrog.AppendMapException(b, 3, "java/lang/RuntimeException") // renamed
		must(t, a.Write(i, b))
	})
	if rep.OK || rep.Remapped != 2 || rep.Reason != "2 id(s) mapped again to a different name" {
		t.Errorf("%s, %d re-mapped; want failed: 2 id(s) mapped again to a different name", rep.Result(), rep.Remapped)
	}
	if !strings.Contains(rep.String(), "2 id(s) mapped again to a different name") {
		t.Errorf("summary does not show the re-maps:\n%s", rep)
	}
}

func TestLateDataBreak(t *testing.T) {
	rec := &recorder{}
	rep := okCase(t, withRecorder(rec), func(a *hqtest.Agent, run *hq.Run) {
		i, err := a.OpenData()
		must(t, err)
		must(t, a.Write(i, seqs(span(0, 9)...)))
		waitEvents(t, run, 10)
		must(t, a.DataBreak(3))  // already passed: reported
		must(t, a.DataBreak(10)) // next expected: accepted
		must(t, a.DataBreak(10)) // twice: noted once
		// The heartbeat follows the breaks on the control connection.
		must(t, a.Heartbeat(bytefrog.ModeSuspended, 0))
		must(t, run.WaitMode(ctxT(t), bytefrog.ModeSuspended))
		must(t, a.Write(i, seqs(span(10, 12)...)))
	}, &recorder{})
	if !rep.OK || !reflect.DeepEqual(rep.LateBreaks, []int32{3}) || !reflect.DeepEqual(rep.DataBreaks, []int32{10}) {
		t.Errorf("%s, late breaks %v, breaks %v; want completed, [3], [10]", rep.Result(), rep.LateBreaks, rep.DataBreaks)
	}
	if rec.breaks[10] != 10 || rec.breaks[3] != 10 {
		t.Errorf("breaks delivered after %v events; want 3 and 10 both after 10", rec.breaks)
	}
}

func TestOutOfOrderWithinConnection(t *testing.T) {
	rec := &recorder{}
	rep := okCase(t, withRecorder(rec), func(a *hqtest.Agent, _ *hq.Run) {
		i, err := a.OpenData()
		must(t, err)
		must(t, a.Write(i, seqs(append(span(0, 9), span(20, 29)...)...)))
		must(t, a.Write(i, seqs(append(span(10, 15), 17, 16, 18, 19)...)))
	}, &recorder{})
	if !rep.OK || rep.Sequenced != 30 || rep.OutOfOrder != 10 {
		t.Errorf("%s, %d events, %d out of order; want completed, 30, 10", rep.Result(), rep.Sequenced, rep.OutOfOrder)
	}
	if want := span(0, 29); !reflect.DeepEqual(rec.seqs, want) {
		t.Errorf("delivered %v; want %v", rec.seqs, want)
	}
}

func TestDataErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		bytes []byte
		want  string
	}{
		{"garbage", []byte("\xfe\xfe\xfe garbage"), "data connection 1: at stream offset 0: bytefrog: unknown message type id 254"},
		{"data break on data", bytefrog.AppendDataBreak(nil, 3), "unexpected DataBreak message on a data connection"},
		{"heartbeat on data", bytefrog.AppendHeartbeat(nil, 'T', 0), "unexpected Heartbeat message on a data connection"},
		{"v3 message on v1", bytefrog.AppendMethodVisit(nil, 0, 0, 1, 1, 1), "MethodVisit needs protocol version 3"},
		{"bad utf", append(seqs(0), byte(bytefrog.MsgMapException), 0, 0, 0, 1, 0, 1, 0), "invalid modified UTF-8"},
		{"huge length, then EOF", append(seqs(0), byte(bytefrog.MsgMapMethodSignature), 0, 0, 0, 9, 0xff, 0xff, 'a'),
			"data connection 1 ended inside a message (8 bytes)"},
		{"marker cut short", bytefrog.AppendMarker(nil, 0, 0, strings.Repeat("k", 65535), strings.Repeat("v", 9999))[:70000],
			"data connection 1 ended inside a message (70000 bytes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			failCase(t, nil, func(a *hqtest.Agent, _ *hq.Run) {
				i, err := a.OpenData()
				must(t, err)
				must(t, a.Write(i, tc.bytes))
				a.Data[i].Close()
			}, tc.want)
		})
	}
}

func TestMappingCap(t *testing.T) {
	failCase(t, func(c *hq.Config) { c.MaxMappingBytes = 1000 }, func(a *hqtest.Agent, _ *hq.Run) {
		i, err := a.OpenData()
		must(t, err)
		var b []byte
		for id := range int32(100) {
			b = bytefrog.AppendMapMethodSignature(b, id, strings.Repeat("x", 50))
		}
		must(t, a.Write(i, b))
	}, "mapped names exceed 1000 bytes")
}

func TestTooManyDataConnections(t *testing.T) {
	srv := start(t, func(c *hq.Config) { c.MaxDataConns = 2 })
	a := dial(t, srv, bytefrog.Version1)
	expect(t, a, bytefrog.MsgStart)
	run := nextRun(t, srv)
	for range 2 {
		_, err := a.OpenData()
		must(t, err)
	}
	if _, err := a.OpenData(); err == nil || !strings.Contains(err.Error(), "Failed to associate the data connection with the trace") {
		t.Errorf("third data connection: %v; want refused", err)
	}
	must(t, a.Shutdown(false))
	rep := wait(t, run)
	checkOK(t, rep, 0)
	if rep.DataConns != 2 {
		t.Errorf("%d data connections; want 2", rep.DataConns)
	}
}

// TestHostileAgent: an agent sending garbage costs only its own run; a
// concurrent run completes.
func TestHostileAgent(t *testing.T) {
	srv := start(t, nil)
	good := dial(t, srv, bytefrog.Version1)
	goodRun := nextRun(t, srv)
	bad := dial(t, srv, bytefrog.Version1)
	badRun := nextRun(t, srv)
	if goodRun.ID() != good.Config.RunID || badRun.ID() != bad.Config.RunID {
		t.Fatalf("runs %d, %d for agents with ids %d, %d", goodRun.ID(), badRun.ID(), good.Config.RunID, bad.Config.RunID)
	}
	expect(t, good, bytefrog.MsgStart)
	expect(t, bad, bytefrog.MsgStart)
	chunks, n := traffic(20000, 30, 2)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		i, err := good.OpenData()
		if err != nil {
			t.Error(err)
			return
		}
		for _, c := range chunks {
			if err := good.Write(i, c); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	i, err := bad.OpenData()
	must(t, err)
	garbage := make([]byte, 1<<16)
	for j := range garbage {
		garbage[j] = byte(j*7 + 3)
	}
	must(t, bad.Write(i, append(chunks[0], garbage...)))
	must(t, bad.Heartbeat(bytefrog.ModeShutdown, 0))
	if _, err := bad.ExpectClosed(); err != nil {
		t.Error(err)
	}
	badRep := wait(t, badRun)
	if badRep.OK {
		t.Errorf("hostile run: %s; want failed", badRep.Result())
	}
	wg.Wait()
	must(t, good.Shutdown(false))
	checkOK(t, wait(t, goodRun), n)
	checkReplay(t, badRep)
}

func TestShutdownAbortsRuns(t *testing.T) {
	srv := start(t, nil)
	a := dial(t, srv, bytefrog.Version1)
	expect(t, a, bytefrog.MsgStart)
	run := nextRun(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := srv.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown: %v; want DeadlineExceeded", err)
	}
	rep := wait(t, run)
	if rep.OK || rep.Reason != "aborted: HQ shut down" {
		t.Errorf("result %q; want failed: aborted: HQ shut down", rep.Result())
	}
	if got, _ := a.ExpectClosed(); got != "aborted: HQ shut down" {
		t.Errorf("agent told %q; want the abort", got)
	}
	if _, err := srv.NextRun(context.Background()); !errors.Is(err, hq.ErrClosed) {
		t.Errorf("NextRun after Shutdown: %v; want ErrClosed", err)
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Errorf("second Shutdown: %v; want nil", err)
	}
	checkReplay(t, rep)
}

func TestShutdownWaitsForRuns(t *testing.T) {
	srv := start(t, nil)
	a := dial(t, srv, bytefrog.Version1)
	expect(t, a, bytefrog.MsgStart)
	run := nextRun(t, srv)
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(ctxT(t)) }()
	time.Sleep(50 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned %v while a run was live", err)
	default:
	}
	if _, err := hqtest.Dial(srv.Addr(), bytefrog.Version1, bytefrog.FlavorBytefrog); err == nil {
		t.Errorf("a new agent was accepted during Shutdown")
	}
	must(t, a.Shutdown(false))
	if err := <-done; err != nil {
		t.Errorf("Shutdown: %v; want nil", err)
	}
	checkOK(t, wait(t, run), 0)
}
