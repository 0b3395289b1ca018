package ctf_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
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

// The test binary re-executed in a role of BenchmarkIngestLive: the agent
// or a Go viewer, each its own process as in real life, so that HQ's
// process CPU is HQ's alone.
const (
	roleEnv    = "TADPOLE_LIVE_BENCH_ROLE" // "agent" or "viewer"
	hqEnv      = "TADPOLE_LIVE_BENCH_HQ"   // agent: HQ's address
	dataEnv    = "TADPOLE_LIVE_BENCH_DATA" // agent: file of the traffic to send
	relayEnv   = "TADPOLE_LIVE_BENCH_RELAY"
	sessionEnv = "TADPOLE_LIVE_BENCH_SESSION"
)

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "agent":
		os.Exit(agentMain())
	case "viewer":
		os.Exit(viewerMain())
	}
	os.Exit(m.Run())
}

// agentMain sends the traffic of the data file to HQ as one run: it
// connects, opens a data connection, says "ready" on stdout, waits for a
// line on stdin, then writes everything and shuts the run down.
func agentMain() int {
	data, err := os.ReadFile(os.Getenv(dataEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	a, err := hqtest.Dial(os.Getenv(hqEnv), bytefrog.Version1, bytefrog.FlavorBytefrog)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer a.Close()
	a.Timeout = time.Minute
	if _, err := a.Expect(bytefrog.MsgStart); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	i, err := a.OpenData()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := a.Write(i, data); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := a.Shutdown(false); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// viewerMain reads a session as fast as it can (readSession), says
// "attached" once attached and prints the packet bytes read at the end.
func viewerMain() int {
	id, _ := strconv.ParseUint(os.Getenv(sessionEnv), 10, 64)
	ready := make(chan struct{}, 1)
	go func() {
		<-ready
		fmt.Println("attached")
	}()
	n, err := readSession(os.Getenv(relayEnv), id, ready)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("bytes", n)
	return 0
}

// BenchmarkIngestLive measures what live viewers cost HQ's ingest. HQ
// runs in this process; the agent (the test binary re-executed: it sends
// a pre-generated run of nested calls on 8 threads over one data
// connection, as fast as the socket takes it) and every viewer are
// processes of their own, so that this process's CPU is HQ's alone. The
// setups, one run of each per round, their order rotated every round:
//
//	off         HQ without the live relay
//	viewers=0   the relay, no viewer (the baseline of the ratios)
//	go-N        N Go viewers (the test binary re-executed: readSession,
//	            which reads every packet as fast as it can, sleeping 1 ms
//	            only when nothing is new), attached from the beginning
//	bt-N        N babeltrace2 -i lttng-live … -o dummy (decodes every
//	            event, prints nothing); left out without babeltrace2
//	…-nice      the same viewers under nice -n 19
//
// Viewers run at the user's priority by default: someone watching a
// heavy run live starts babeltrace2 in a terminal, unniced; the -nice
// setups show what a niced viewer changes. One round per b.N; run with
// -benchtime=Nx. TADPOLE_LIVE_BENCH_SETUPS (comma-separated names)
// selects setups, TADPOLE_LIVE_BENCH_EVENTS sets the run size (default
// 8 M events).
//
// Per setup it reports the median ingest rate (HQ's go to the agent to
// the run's report) as <setup>-Mev/s and the median of its ratios to
// viewers=0 within the same round as <setup>-ratio, and prints a table:
// ratio range, HQ's process CPU per ingested event during the ingest and
// until every viewer has read the run's end (catch-up included), the
// agent's CPU per event, the viewers' delivered rate during the ingest
// and overall, their CPU during the ingest (share of one core, all
// viewers together) and per event delivered, and the events the feed
// dropped (counted as discarded to the viewers).
func BenchmarkIngestLive(b *testing.B) {
	events := 8_000_000
	if v, err := strconv.Atoi(os.Getenv("TADPOLE_LIVE_BENCH_EVENTS")); err == nil && v > 0 {
		events = v
	}
	setups := []*ingestRig{{name: "off", viewers: -1}, {name: "viewers=0"},
		{name: "go-1", viewers: 1}, {name: "go-4", viewers: 4}, {name: "go-4-nice", viewers: 4, nice: true}}
	if _, err := exec.LookPath("babeltrace2"); err == nil {
		setups = append(setups, &ingestRig{name: "bt-1", viewers: 1, bt: true}, &ingestRig{name: "bt-4", viewers: 4, bt: true},
			&ingestRig{name: "bt-4-nice", viewers: 4, bt: true, nice: true})
	} else if os.Getenv("CI") == "true" {
		b.Fatal("babeltrace2 not found (CI=true)")
	}
	if sel := os.Getenv("TADPOLE_LIVE_BENCH_SETUPS"); sel != "" {
		want := strings.Split(sel, ",")
		setups = slices.DeleteFunc(setups, func(r *ingestRig) bool {
			return r.name != "viewers=0" && !slices.Contains(want, r.name)
		})
	}
	chunks, n := hqtest.Generate(hqtest.Workload{Events: events, Methods: 300, Threads: 8, Chunk: 4096, Seed: 7})
	data := filepath.Join(b.TempDir(), "run.bf")
	if err := os.WriteFile(data, bytes.Join(chunks, nil), 0o644); err != nil {
		b.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range setups {
		r.start(b)
		r.data, r.self, r.n = data, self, int64(n)
	}
	load0 := loadAvg()
	b.ResetTimer()
	for round := range b.N {
		for k := range setups {
			setups[(round+k)%len(setups)].op(b)
		}
	}
	b.StopTimer()
	base := setups[slices.IndexFunc(setups, func(r *ingestRig) bool { return r.name == "viewers=0" })]
	for _, r := range setups {
		b.ReportMetric(median(r.rates)/1e6, r.name+"-Mev/s")
		b.ReportMetric(r.ratio(base), r.name+"-ratio")
	}
	fmt.Printf("BenchmarkIngestLive: %d rounds of %d events; load average %s before, %s after\n",
		b.N, n, load0, loadAvg())
	fmt.Printf("%-10s %7s %6s %11s %8s %8s %6s %7s %6s %9s %9s %8s %8s %6s\n", "setup", "M ev/s", "ratio", "ratio range",
		"HQ ns/ev", "HQ+catch", "GC/run", "agentns", "serve%", "v kev/s", "v all k/s", "v %core", "v ns/ev", "%drop")
	for _, r := range setups {
		lo, hi := r.ratioRange(base)
		row := fmt.Sprintf("%-10s %7.2f %6.3f %5.2f–%5.2f %8.1f %8.1f %6.1f %7.1f", r.name, median(r.rates)/1e6, r.ratio(base),
			lo, hi, float64(r.hqIngestCPU)/float64(r.events), float64(r.hqCPU)/float64(r.events),
			float64(r.gcs)/float64(len(r.rates)),
			float64(r.agentCPU)/float64(r.events))
		if r.viewers > 0 {
			row += fmt.Sprintf(" %6.2f %9.1f %9.1f %8.1f %8.1f %6.1f",
				100*float64(r.serveBusy)/float64(r.ingestTime),
				float64(r.deliveredIngest)/r.ingestTime.Seconds()/1e3/float64(r.viewers),
				float64(r.delivered)/r.viewTime.Seconds()/1e3,
				100*float64(r.viewerIngestCPU)/float64(r.ingestTime),
				float64(r.viewerCPU)/float64(max(r.delivered, 1)),
				100*float64(r.dropped)/float64(r.events))
		}
		fmt.Println(row)
	}
	fmt.Printf("M ev/s, ratio: median over rounds (ratio: to viewers=0 in the same round); HQ ns/ev: HQ's process CPU " +
		"per event while the run was ingested; HQ+catch: until the viewers had read the run's end; GC/run: HQ's garbage collections while the run was ingested; agentns: the agent " +
		"process's CPU per event; serve%%: HQ's serving CPU time (handling and sending, encoding included) while the run was ingested, %% of the ingest time; v kev/s: events delivered to each viewer while the run was ingested; v all k/s: " +
		"per viewer, from the run's start to the viewer's exit; v %%core: all viewers' CPU while the run was ingested; " +
		"v ns/ev: viewer CPU per event delivered; %%drop: events the feed dropped before encoding (discarded)\n")
}

// ingestRig is one setup of BenchmarkIngestLive: an HQ, its live relay
// and how its viewers are run.
type ingestRig struct {
	name    string
	viewers int  // -1: no relay
	bt      bool // babeltrace2 viewers (else Go viewer processes)
	nice    bool // viewers under nice -n 19

	srv    *hq.Server
	cat    *ctf.Catalog
	ls     *live.Server
	addr   string
	lastID uint64
	data   string // the agent's traffic
	self   string // this test binary
	n      int64  // events per run

	rates           []float64
	events          int64
	hqIngestCPU     int64 // ns
	hqCPU           int64 // ns, catch-up included
	agentCPU        int64
	viewerIngestCPU int64
	viewerCPU       int64
	ingestTime      time.Duration
	viewTime        time.Duration // summed over viewers
	gcs             int64         // garbage collections while ingesting
	serveBusy       time.Duration // serving time the pacer was charged while ingesting
	deliveredIngest int64         // events delivered while ingested, summed over viewers
	delivered       int64         // events delivered, summed over viewers
	dropped         int64
}

func (r *ingestRig) start(b *testing.B) {
	// Ended runs leave memory as with a trace directory, where they are
	// served from their files.
	cat, err := ctf.NewCatalog(&ctf.CatalogConfig{Hostname: "bench", MaxEnded: 1})
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
	ls, addr := serveLive(b, cat)
	r.srv, r.cat, r.ls, r.addr = srv, cat, ls, addr
}

func (r *ingestRig) ratio(base *ingestRig) float64 { return median(r.ratios(base)) }

func (r *ingestRig) ratios(base *ingestRig) []float64 {
	var q []float64
	for i := range min(len(r.rates), len(base.rates)) {
		q = append(q, r.rates[i]/base.rates[i])
	}
	return q
}

func (r *ingestRig) ratioRange(base *ingestRig) (lo, hi float64) {
	q := r.ratios(base)
	if len(q) == 0 {
		return 0, 0
	}
	return slices.Min(q), slices.Max(q)
}

// proc is a child process of the benchmark with its stdout read by line.
type proc struct {
	cmd  *exec.Cmd
	errb bytes.Buffer
	out  *bufio.Reader
	in   io.WriteCloser
	exit time.Time
}

func startProc(b *testing.B, cmd *exec.Cmd, stdin bool) *proc {
	p := &proc{cmd: cmd}
	cmd.Stderr = &p.errb
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	p.out = bufio.NewReader(out)
	if stdin {
		if p.in, err = cmd.StdinPipe(); err != nil {
			b.Fatal(err)
		}
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return p
}

// expect reads stdout until a line starting with prefix and returns it.
func (p *proc) expect(b *testing.B, prefix string) string {
	for {
		l, err := p.out.ReadString('\n')
		if err != nil {
			b.Fatalf("%s: no %q line: %v", p.cmd.Path, prefix, err)
		}
		if strings.HasPrefix(l, prefix) {
			return strings.TrimSpace(l)
		}
	}
}

// cpu is the process's CPU time so far (all its threads), in ns.
func (p *proc) cpu() int64 { return taskCPU(p.cmd.Process.Pid) }

// wait waits for the process and returns its CPU time.
func (p *proc) wait(b *testing.B) int64 {
	io.Copy(io.Discard, p.out)
	if err := p.cmd.Wait(); err != nil {
		b.Errorf("%v: %v\n%s", p.cmd.Args, err, p.errb.Bytes())
	}
	p.exit = time.Now()
	ps := p.cmd.ProcessState
	return int64(ps.UserTime() + ps.SystemTime())
}

// op runs one run through r's HQ, with its viewers attached from the
// start, and waits for them to read it to its end.
func (r *ingestRig) op(b *testing.B) {
	agentCmd := exec.Command(r.self, "-test.run=^$")
	agentCmd.Env = append(os.Environ(), roleEnv+"=agent", hqEnv+"="+r.srv.Addr(), dataEnv+"="+r.data)
	agent := startProc(b, agentCmd, true)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := r.srv.NextRun(ctx)
	if err != nil {
		b.Fatal(err)
	}
	agent.expect(b, "ready")
	var viewers []*proc
	var id uint64
	if r.viewers > 0 {
		var in live.SessionInfo
		for deadline := time.Now().Add(10 * time.Second); in.ID <= r.lastID; time.Sleep(time.Millisecond) {
			for _, s := range r.cat.Sessions() {
				if i := s.Info(); i.ID > r.lastID {
					in = i
				}
			}
			if time.Now().After(deadline) {
				b.Fatal("the run's session was not listed")
			}
		}
		r.lastID, id = in.ID, in.ID
		url := fmt.Sprintf("net://%s/host/%s/%s", r.addr, in.Hostname, in.Name)
		for range r.viewers {
			var args []string
			if r.nice {
				args = []string{"nice", "-n", "19"}
			}
			if r.bt {
				args = append(args, "babeltrace2", "-i", "lttng-live", url, "-o", "dummy")
			} else {
				args = append(args, r.self, "-test.run=^$")
			}
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Env = append(os.Environ(), roleEnv+"=viewer", relayEnv+"="+r.addr, sessionEnv+"="+strconv.FormatUint(id, 10))
			viewers = append(viewers, startProc(b, cmd, false))
		}
		for deadline := time.Now().Add(20 * time.Second); r.ls.Clients(id) < r.viewers; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				b.Fatalf("%d viewers attached, want %d", r.ls.Clients(id), r.viewers)
			}
		}
	}
	v0 := make([]int64, len(viewers))
	for i, v := range viewers {
		v0[i] = v.cpu()
	}
	sent0 := r.ls.Sent()
	busy0, _ := r.cat.Pacer().Stats()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	gc0 := ms.NumGC
	cpu0 := cpuTime()
	t0 := time.Now()
	if _, err := io.WriteString(agent.in, "go\n"); err != nil {
		b.Fatal(err)
	}
	rep, err := run.Wait(ctx)
	took := time.Since(t0)
	cpu1 := cpuTime()
	sent1 := r.ls.Sent()
	runtime.ReadMemStats(&ms)
	r.gcs += int64(ms.NumGC - gc0)
	busy1, _ := r.cat.Pacer().Stats()
	r.serveBusy += busy1 - busy0
	for i, v := range viewers {
		r.viewerIngestCPU += v.cpu() - v0[i]
	}
	if err != nil || !rep.OK || rep.Sequenced != r.n {
		b.Fatalf("run: %v %s, %d events", err, rep.Result(), rep.Sequenced)
	}
	r.agentCPU += agent.wait(b) // the agent process's whole life: reading its data file, connecting, sending
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, v := range viewers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !r.bt {
				v.expect(b, "bytes ")
			}
			cpu := v.wait(b)
			mu.Lock()
			r.viewerCPU += cpu
			r.viewTime += v.exit.Sub(t0)
			mu.Unlock()
		}()
	}
	wg.Wait()
	r.hqIngestCPU += cpu1 - cpu0
	r.hqCPU += cpuTime() - cpu0
	r.rates = append(r.rates, float64(r.n)/took.Seconds())
	r.ingestTime += took
	r.events += r.n
	if r.viewers > 0 {
		enc, published := r.cat.ServeStats(id)
		_, d := r.cat.FeedStats(id)
		r.dropped += d
		// Events delivered: the packet bytes sent at the session's
		// bytes per event.
		perByte := float64(enc) / float64(max(published, 1))
		r.deliveredIngest += int64(float64(sent1-sent0) * perByte)
		r.delivered += int64(float64(r.ls.Sent()-sent0) * perByte)
	}
}

// serveLive serves cat's sessions on a loopback port as tadpole-hq -live
// does.
func serveLive(b *testing.B, cat *ctf.Catalog) (*live.Server, string) {
	lcfg := live.DefaultConfig()
	lcfg.Pacer = cat.Pacer()
	ls, err := live.NewServer(cat, lcfg)
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go ls.Serve(ln)
	b.Cleanup(func() { ls.Close() })
	return ls, ln.Addr().String()
}

// taskCPU is the CPU time of every thread of process pid so far, in ns,
// from /proc/PID/task/*/schedstat (Linux); 0 when unknown.
func taskCPU(pid int) int64 {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) > 0 {
			v, _ := strconv.ParseInt(f[0], 10, 64)
			sum += v
		}
	}
	return sum
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
