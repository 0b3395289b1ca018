package relay

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/ctf"
	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/internal/testpeers"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
	"github.com/tadpole-trace/tadpole/transport/live"
)

// events is the size of the trace each side serves.
const events = 200_000

// The events counted: LTTng's tracef events; tadpole's sequenced events
// (not the mappings).
var (
	lttngEvent   = regexp.MustCompile(` lttng_ust_tracef:event: `)
	tadpoleEvent = regexp.MustCompile(` tadpole:(method_entry|method_exit|exception|exception_bubble|method_visit|marker): `)
)

// liveTimer is both sides' live timer.
const liveTimer = time.Second

// result is one babeltrace2 read: the events it printed, its wall time
// from the first event produced to its exit, and its CPU time.
type result struct {
	events int64
	wall   time.Duration
	cpu    time.Duration
}

func (r result) report(b *testing.B) {
	b.ReportMetric(float64(r.events)/r.wall.Seconds(), "events/s")
	b.ReportMetric(float64(r.cpu.Nanoseconds())/float64(r.events), "bt-cpu-ns/event")
	b.ReportMetric(r.wall.Seconds(), "wall-s")
}

// BenchmarkLiveRead times babeltrace2 (text output, counted) reading a
// live session of 200 k events to its end, attached before the first
// event: from a real lttng-relayd 2.13 (a C program's tracef events, 29-
// byte messages, recorded by an isolated lttng-sessiond in a --live
// session) and from tadpole-hq's relay (a run of 200 k method events with
// their method names). events/s counts from the first event produced to
// babeltrace2's exit (the relays' live timer, 1 s, and the session's end
// included); bt-cpu-ns/event is babeltrace2's CPU. It ends with the
// ratios. Run it with -benchtime 1x.
func BenchmarkLiveRead(b *testing.B) {
	testpeers.RequireTools(b, "babeltrace2", "lttng-sessiond", "lttng-relayd", "lttng", "gcc")
	var lt, tp result
	b.Run("lttng-relayd", func(b *testing.B) { lt = readLTTng(b) })
	b.Run("tadpole-hq", func(b *testing.B) { tp = readTadpole(b) })
	if lt.events == 0 || tp.events == 0 {
		return
	}
	fmt.Printf("babeltrace2 reading ~%d events live: lttng-relayd %.0f events/s, %.2f µs CPU/event; tadpole-hq %.0f events/s, %.2f µs CPU/event\n",
		events, float64(lt.events)/lt.wall.Seconds(), float64(lt.cpu.Microseconds())/float64(lt.events),
		float64(tp.events)/tp.wall.Seconds(), float64(tp.cpu.Microseconds())/float64(tp.events))
	fmt.Printf("tadpole-hq / lttng-relayd: read rate %.2f×, babeltrace2 CPU per event %.2f×\n",
		(float64(tp.events)/tp.wall.Seconds())/(float64(lt.events)/lt.wall.Seconds()),
		(float64(tp.cpu)/float64(tp.events))/(float64(lt.cpu)/float64(lt.events)))
}

// viewer is a babeltrace2 reading one session, counting the lines that
// match.
type viewer struct {
	cmd   *exec.Cmd
	count chan int64
}

func startViewer(b *testing.B, url string, match *regexp.Regexp) *viewer {
	b.Helper()
	cmd := exec.Command("babeltrace2", "-i", "lttng-live", url)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	v := &viewer{cmd: cmd, count: make(chan int64, 1)}
	go func() {
		var n int64
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if match.Match(sc.Bytes()) {
				n++
			}
		}
		v.count <- n
	}()
	b.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return v
}

// wait waits for babeltrace2 to end and returns what it read.
func (v *viewer) wait(b *testing.B, t0 time.Time) result {
	b.Helper()
	n := <-v.count
	if err := v.cmd.Wait(); err != nil {
		b.Fatalf("babeltrace2: %v", err)
	}
	st := v.cmd.ProcessState
	return result{events: n, wall: time.Since(t0), cpu: st.UserTime() + st.SystemTime()}
}

// waitAttached waits until the live relay at addr lists session name with
// a viewer attached.
func waitAttached(b *testing.B, addr, name string) {
	b.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ss, _ := testpeers.ListLive(addr)
		for _, s := range ss {
			if s.Name == name && s.Clients > 0 {
				return
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("no viewer attached to %s on %s: %+v", name, addr, ss)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// buildTracef compiles csrc/tracef.c where the daemon's user can run it.
func buildTracef(b *testing.B) string {
	b.Helper()
	testpeers.RequireTools(b, "gcc")
	_, file, _, _ := runtime.Caller(0)
	dir, err := os.MkdirTemp("", "tadpole-relaybench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "tracef")
	src := filepath.Join(filepath.Dir(file), "csrc", "tracef.c")
	if out, err := exec.Command("gcc", "-O2", "-o", bin, src, "-llttng-ust", "-ldl").CombinedOutput(); err != nil {
		b.Fatalf("gcc: %v\n%s (needs liblttng-ust-dev)", err, out)
	}
	return bin
}

func readLTTng(b *testing.B) result {
	prog := buildTracef(b)
	sd := testpeers.StartSessiond(b)
	rd := sd.StartRelayd(b)
	host, err := os.Hostname()
	if err != nil {
		b.Fatal(err)
	}
	var sum result
	for i := range b.N {
		name := fmt.Sprintf("relaybench%d", i)
		sd.MustLttng("create", name, "--live="+strconv.Itoa(int(liveTimer/time.Microsecond)),
			"--ctrl-url="+rd.CtrlURL, "--data-url="+rd.DataURL)
		// Room for the whole run: the reader is not what is measured
		// losing events.
		sd.MustLttng("enable-channel", "-u", "-s", name, "ch", "--subbuf-size=8M", "--num-subbuf=4")
		sd.MustLttng("enable-event", "-u", "-s", name, "-c", "ch", "lttng_ust_tracef:*")
		sd.MustLttng("start", name)
		v := startViewer(b, fmt.Sprintf("net://%s/host/%s/%s", rd.LiveAddr, host, name), lttngEvent)
		waitAttached(b, rd.LiveAddr, name)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := sd.Command(ctx, prog, strconv.Itoa(events))
		t0 := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			cancel()
			b.Fatalf("tracef: %v\n%s", err, out)
		}
		cancel()
		stop := sd.MustLttng("stop", name)
		sd.MustLttng("destroy", name)
		r := v.wait(b, t0)
		if r.events != events {
			b.Fatalf("babeltrace2 read %d events from lttng-relayd, want %d (lttng stop: %s)", r.events, events, stop)
		}
		sum.events += r.events
		sum.wall += r.wall
		sum.cpu += r.cpu
	}
	sum.report(b)
	return sum
}

func readTadpole(b *testing.B) result {
	cat, err := ctf.NewCatalog(&ctf.CatalogConfig{Hostname: "bench", Writer: ctf.Config{LiveTimer: liveTimer}})
	if err != nil {
		b.Fatal(err)
	}
	cfg := hq.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.NewProcessor = cat.Processor
	srv, err := hq.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := srv.Listen(cfg.Listen); err != nil {
		b.Fatal(err)
	}
	go srv.Serve()
	defer srv.Close()
	lcfg := live.DefaultConfig()
	lcfg.Pacer = cat.Pacer() // as tadpole-hq -live does
	ls, err := live.NewServer(cat, lcfg)
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go ls.Serve(ln)
	defer ls.Close()
	chunks, n := hqtest.Generate(hqtest.Workload{Events: events, Methods: 300, Threads: 8, Chunk: 4096, Seed: 5})
	var sum result
	var last uint64
	for range b.N {
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
		var in live.SessionInfo
		for deadline := time.Now().Add(10 * time.Second); in.ID <= last; time.Sleep(5 * time.Millisecond) {
			for _, s := range cat.Sessions() {
				if i := s.Info(); i.ID > last {
					in = i
				}
			}
			if time.Now().After(deadline) {
				b.Fatal("the run is not listed")
			}
		}
		last = in.ID
		v := startViewer(b, fmt.Sprintf("net://%s/host/%s/%s", ln.Addr(), in.Hostname, in.Name), tadpoleEvent)
		waitAttached(b, ln.Addr().String(), in.Name)
		t0 := time.Now()
		d, err := a.OpenData()
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range chunks {
			if err := a.Write(d, c); err != nil {
				b.Fatal(err)
			}
		}
		if err := a.Shutdown(false); err != nil {
			b.Fatal(err)
		}
		rep, _ := run.Wait(context.Background())
		if !rep.OK || rep.Sequenced != int64(n) {
			b.Fatalf("run: %s, %d events", rep.Result(), rep.Sequenced)
		}
		r := v.wait(b, t0)
		a.Close()
		if r.events != int64(n) {
			b.Fatalf("babeltrace2 read %d events from tadpole-hq, want %d", r.events, n)
		}
		sum.events += r.events
		sum.wall += r.wall
		sum.cpu += r.cpu
	}
	sum.report(b)
	return sum
}
