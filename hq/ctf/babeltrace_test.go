package ctf_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/ctf"
	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
	"github.com/tadpole-trace/tadpole/transport/live"
)

// needBabeltrace returns babeltrace2's path; without it the test fails
// under CI=true and is skipped otherwise.
func needBabeltrace(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("babeltrace2")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("babeltrace2 not found (CI=true): install the babeltrace2 package")
		}
		t.Skip("babeltrace2 not found")
	}
	return p
}

// decoded is HQ's own decoding of a run: each sequenced event formatted as
// babeltrace2's text output shows it, in the order HQ released them.
type decoded struct {
	mu      sync.Mutex
	methods map[int32]string
	excs    map[int32]string
	lines   []string
}

func (d *decoded) Message(m *bytefrog.Msg) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.methods == nil {
		d.methods, d.excs = map[int32]string{}, map[int32]string{}
	}
	head := func(name string) string {
		return fmt.Sprintf("tadpole:%s: { seq = %d, tid = %d, method_id = %d, method = %q", name, m.Seq, m.ThreadID,
			m.MethodID, d.methods[m.MethodID])
	}
	line := func(l uint16) int {
		if l == bytefrog.NoLine {
			return -1
		}
		return int(l)
	}
	var s string
	switch m.Type {
	case bytefrog.MsgMapMethodSignature:
		d.methods[m.MethodID] = string(m.Text)
	case bytefrog.MsgMapException:
		d.excs[m.ExceptionID] = string(m.Text)
	case bytefrog.MsgMethodEntry:
		s = head("method_entry") + " }"
	case bytefrog.MsgMethodExit:
		s = head("method_exit") + fmt.Sprintf(", line = %d, exception_thrown = 0 }", line(m.Line))
	case bytefrog.MsgException:
		s = head("exception") + fmt.Sprintf(", exception_id = %d, exception = %q, line = %d }", m.ExceptionID,
			d.excs[m.ExceptionID], line(m.Line))
	case bytefrog.MsgExceptionBubble:
		s = head("exception_bubble") + fmt.Sprintf(", exception_id = %d, exception = %q }", m.ExceptionID,
			d.excs[m.ExceptionID])
	case bytefrog.MsgMarker:
		s = fmt.Sprintf("tadpole:marker: { seq = %d, key = %q, value = %q }", m.Seq, m.Text, m.Value)
	}
	if s != "" {
		d.lines = append(d.lines, s)
	}
}

func (d *decoded) DataBreak(int32)   {}
func (d *decoded) Finish(*hq.Report) {}
func (d *decoded) snapshot() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.lines...)
}

// events keeps the event lines of babeltrace2's output (the part from the
// event name on), dropping mappings and thread names.
func events(out []string) []string {
	var ev []string
	for _, l := range out {
		i := strings.Index(l, "tadpole:")
		if i < 0 {
			continue
		}
		l = l[i:]
		switch {
		case strings.HasPrefix(l, "tadpole:method_signature:"), strings.HasPrefix(l, "tadpole:exception_class:"),
			strings.HasPrefix(l, "tadpole:thread_name:"):
			continue
		}
		ev = append(ev, l)
	}
	return ev
}

func diff(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d events; want %d", what, len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Fatalf("%s: event %d:\n got %s\nwant %s", what, i, got[i], want[i])
		}
	}
}

// viewer is a babeltrace2 process reading a live session.
type viewer struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  []string
	done chan error
	errb strings.Builder
}

func startViewer(t *testing.T, bt, url string) *viewer {
	t.Helper()
	v := &viewer{cmd: exec.Command(bt, "-i", "lttng-live", url), done: make(chan error, 1)}
	stdout, err := v.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	v.cmd.Stderr = &lockedWriter{b: &v.errb, mu: &v.mu}
	if err := v.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.cmd.Process.Kill(); <-v.done })
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			v.mu.Lock()
			v.out = append(v.out, sc.Text())
			v.mu.Unlock()
		}
		err := v.cmd.Wait()
		v.done <- err
		v.done <- err
	}()
	return v
}

type lockedWriter struct {
	b  *strings.Builder
	mu *sync.Mutex
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (v *viewer) events() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return events(v.out)
}

func (v *viewer) stderr() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.errb.String()
}

// waitEvents waits until the viewer printed n events.
func (v *viewer) waitEvents(t *testing.T, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for len(v.events()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("viewer printed %d events in %v; want %d\nstderr: %s", len(v.events()), within, n, v.stderr())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitExit waits for babeltrace2 to exit and checks its status.
func (v *viewer) waitExit(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case err := <-v.done:
		if err != nil {
			t.Fatalf("babeltrace2: %v\nstderr: %s", err, v.stderr())
		}
	case <-time.After(within):
		t.Fatalf("babeltrace2 still running %v after the run ended\nstderr: %s", within, v.stderr())
	}
}

// liveHQ is an HQ serving its runs to live viewers.
type liveHQ struct {
	hq      *hq.Server
	live    *live.Server
	cat     *ctf.Catalog
	addr    string // live address
	decoded *decoded
	dir     string
}

func startLiveHQ(t testing.TB, dir string) *liveHQ {
	return startLiveHQWith(t, dir, &ctf.CatalogConfig{Writer: ctf.Config{LiveTimer: 200 * time.Millisecond}, TraceDir: dir})
}

func startLiveHQWith(t testing.TB, dir string, ccfg *ctf.CatalogConfig) *liveHQ {
	t.Helper()
	cat, err := ctf.NewCatalog(ccfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &liveHQ{cat: cat, decoded: &decoded{}, dir: dir}
	cfg := hq.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.TraceDir = dir
	cfg.NewProcessor = func(r *hq.Run) hq.Processor { return hq.Processors{cat.Processor(r), h.decoded} }
	h.hq, err = hq.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.hq.Listen(cfg.Listen); err != nil {
		t.Fatal(err)
	}
	go h.hq.Serve()
	t.Cleanup(func() { h.hq.Close() })
	lcfg := live.DefaultConfig()
	lcfg.Pacer = cat.Pacer() // as tadpole-hq -live does
	h.live, err = live.NewServer(cat, lcfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.addr = ln.Addr().String()
	go h.live.Serve(ln)
	t.Cleanup(func() { h.live.Close() })
	return h
}

// session waits for the one session of a run and returns its net:// URL.
func (h *liveHQ) session(t testing.TB) (live.SessionInfo, string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if ss := h.cat.Sessions(); len(ss) > 0 {
			in := ss[0].Info()
			return in, fmt.Sprintf("net://%s/host/%s/%s", h.addr, in.Hostname, in.Name)
		}
	}
	t.Fatal("no session")
	return live.SessionInfo{}, ""
}

func (h *liveHQ) waitClients(t *testing.T, id uint64, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); h.live.Clients(id) != n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d viewers attached; want %d", h.live.Clients(id), n)
		}
	}
}

func dialAgent(t testing.TB, addr string) (*hqtest.Agent, int) {
	t.Helper()
	a, err := hqtest.Dial(addr, bytefrog.Version4, bytefrog.FlavorBytefrog)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	if _, err := a.Expect(bytefrog.MsgStart); err != nil {
		t.Fatal(err)
	}
	i, err := a.OpenData()
	if err != nil {
		t.Fatal(err)
	}
	return a, i
}

// batch appends calls on the given threads, with an exception, a bubble
// and a marker.
func batch(g *hqtest.Gen, tag string, threads ...uint16) []byte {
	for round := 0; round < 20; round++ {
		for _, tid := range threads {
			m := int32(tid)*10 + int32(round%3)
			g.Entry(tid, m)
			g.Entry(tid, m+1)
			if round%7 == 0 {
				g.Throw(tid, m+1, int32(round%2), uint16(40+round))
				g.Bubble(tid, m+1, int32(round%2)) // ends the call: m catches it
			} else {
				g.Exit(tid, m+1, uint16(12+round))
			}
			g.Exit(tid, m, uint16(20+round))
		}
		g.RelTime++
	}
	g.Marker("phase", tag)
	return g.Take()
}

// The Done-when tests of issue 14: two viewers watch a run in progress
// and print HQ's events in HQ's order, printing while the run goes on and
// exiting when it ends; a viewer attaching late gets what comes after; the
// recorded run and its exported trace print every event.
func TestBabeltraceLive(t *testing.T) {
	bt := needBabeltrace(t)
	dir := t.TempDir()
	h := startLiveHQ(t, dir)
	a, data := dialAgent(t, h.hq.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := h.hq.NextRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	in, url := h.session(t)

	// Two viewers at once, attached before any event.
	v1, v2 := startViewer(t, bt, url), startViewer(t, bt, url)
	h.waitClients(t, in.ID, 2)

	g := hqtest.NewGen(bytefrog.FlavorBytefrog)
	if err := a.Write(data, batch(g, "one", 1, 2)); err != nil {
		t.Fatal(err)
	}
	n1 := 0
	for deadline := time.Now().Add(5 * time.Second); n1 == 0 || len(h.decoded.snapshot()) != n1; time.Sleep(20 * time.Millisecond) {
		n1 = int(g.Seq)
		if time.Now().After(deadline) {
			t.Fatal("HQ did not decode the first batch")
		}
	}
	// The run goes on; the viewers print the first batch meanwhile.
	v1.waitEvents(t, n1, 10*time.Second)
	v2.waitEvents(t, n1, 10*time.Second)

	// A late viewer: babeltrace asks SeekLast, so it starts after the
	// packets already published.
	v3 := startViewer(t, bt, url)
	h.waitClients(t, in.ID, 3)

	if err := a.Write(data, batch(g, "two", 1, 3)); err != nil {
		t.Fatal(err)
	}
	if err := a.Shutdown(false); err != nil {
		t.Fatal(err)
	}
	rep, err := run.Wait(ctx)
	if err != nil || !rep.OK {
		t.Fatalf("run: %v %+v", err, rep)
	}
	for _, v := range []*viewer{v1, v2, v3} {
		v.waitExit(t, 10*time.Second)
	}
	want := h.decoded.snapshot()
	if len(want) != int(g.Seq) {
		t.Fatalf("HQ decoded %d events; %d sent", len(want), g.Seq)
	}
	t.Logf("%d events, %d in the first batch; viewers printed %d, %d, %d", len(want), n1, len(v1.events()), len(v2.events()), len(v3.events()))
	diff(t, "viewer 1", v1.events(), want)
	diff(t, "viewer 2", v2.events(), want)
	diff(t, "late viewer", v3.events(), want[n1:])

	// Recorded: the ended run is served from its trace file, from the
	// beginning.
	for deadline := time.Now().Add(5 * time.Second); !h.cat.Session(in.ID).Info().Recorded; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the ended run is not served as recorded")
		}
	}
	v4 := startViewer(t, bt, url)
	v4.waitExit(t, 10*time.Second)
	diff(t, "recorded", v4.events(), want)

	// Exported: babeltrace2 DIR prints every event of the trace file.
	out := t.TempDir() + "/ctf"
	if _, err := ctf.Export(out, rep.TraceFile, nil); err != nil {
		t.Fatal(err)
	}
	b, err := exec.Command(bt, out).CombinedOutput()
	if err != nil {
		t.Fatalf("babeltrace2 %s: %v\n%s", out, err, b)
	}
	diff(t, "exported", events(strings.Split(strings.TrimSpace(string(b)), "\n")), want)
}

// A recorded run far larger than the window its replay may run ahead
// prints every event: the replay waits for the viewer, it never drops.
func TestBabeltraceRecordedLarge(t *testing.T) {
	bt := needBabeltrace(t)
	dir := t.TempDir()
	h := startLiveHQWith(t, dir, &ctf.CatalogConfig{MaxTraceBytes: 1 << 20, TraceDir: dir})
	chunks, n := hqtest.Generate(hqtest.Workload{Events: 150_000, Methods: 200, Threads: 6, Chunk: 4096, Seed: 9})
	a, data := dialAgent(t, h.hq.Addr())
	run, err := h.hq.NextRun(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range chunks {
		if err := a.Write(data, c); err != nil {
			t.Fatal(err)
		}
	}
	a.Shutdown(false)
	rep, _ := run.Wait(context.Background())
	if !rep.OK {
		t.Fatal(rep.Result())
	}
	in, url := h.session(t)
	for deadline := time.Now().Add(5 * time.Second); !h.cat.Session(in.ID).Info().Recorded; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the ended run is not served as recorded")
		}
	}
	v := startViewer(t, bt, url)
	v.waitExit(t, 60*time.Second)
	diff(t, "recorded", v.events(), h.decoded.snapshot())
	if len(v.events()) != n {
		t.Fatalf("%d events; want %d", len(v.events()), n)
	}
}
