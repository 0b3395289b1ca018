package agent

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/testhq"
	"github.com/tadpole-trace/tadpole/internal/testpeers"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
	"github.com/tadpole-trace/tadpole/transport/hce"
	"github.com/tadpole-trace/tadpole/transport/hce/hub"
)

func TestHCEOptions(t *testing.T) {
	good := []struct {
		opts  string
		hce   string
		retry time.Duration
	}{
		{"", "", 3 * time.Second},
		{"hce=127.0.0.1:10006", "127.0.0.1:10006", 3 * time.Second},
		{"hce=[::1]:10006,hce_retry=200ms", "[::1]:10006", 200 * time.Millisecond},
		{"hce=pipe:/tmp/tadpole-hce", "pipe:/tmp/tadpole-hce", 3 * time.Second},
		{"hce-retry=2", "", 2 * time.Second},
	}
	for _, tt := range good {
		c := DefaultConfig()
		if err := c.ParseOptions(tt.opts); err != nil {
			t.Errorf("ParseOptions(%q): %v", tt.opts, err)
			continue
		}
		if c.HCE != tt.hce || c.HCERetry != tt.retry {
			t.Errorf("ParseOptions(%q): hce %q retry %v; want %q %v", tt.opts, c.HCE, c.HCERetry, tt.hce, tt.retry)
		}
	}
	for _, opts := range []string{"hce=10006", "hce=localhost", "hce=h:0", "hce=h:99999", "hce=pipe:", "hce_retry=soon"} {
		c := DefaultConfig()
		if err := c.ParseOptions(opts); !errors.Is(err, ErrBadOption) {
			t.Errorf("ParseOptions(%q): %v; want ErrBadOption", opts, err)
		}
	}
	c := DefaultConfig()
	if err := c.ApplyEnv(func(k string) (string, bool) {
		return map[string]string{"TADPOLE_HCE": "pipe:/x"}[k], k == "TADPOLE_HCE"
	}); err != nil || c.HCE != "pipe:/x" {
		t.Errorf("TADPOLE_HCE: %q %v", c.HCE, err)
	}
}

// TestStartHCENoHub: an absent hub neither blocks nor fails the host, and
// stop returns at once.
func TestStartHCENoHub(t *testing.T) {
	c := DefaultConfig()
	c.HCE = "pipe:" + filepath.Join(t.TempDir(), "none")
	c.Log = "none"
	start := time.Now()
	stop := StartHCE(c)
	stop()
	stop()
	if d := time.Since(start); d > time.Second {
		t.Errorf("StartHCE and stop took %v", d)
	}
	StartHCE(DefaultConfig())() // no hub configured: nothing
}

// hceApp is a running testdata/hceapp.
type hceApp struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	exit  chan error
}

func buildHCEApp(t *testing.T) string {
	t.Helper()
	gobin := testpeers.GoCommand()
	if _, err := os.Stat(gobin); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no go command to build testdata/hceapp: %v", err)
		}
		t.Skipf("no go command to build testdata/hceapp: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "hceapp")
	out, err := exec.Command(gobin, "build", "-o", bin, "./testdata/hceapp").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./testdata/hceapp: %v\n%s", err, out)
	}
	return bin
}

func startHCEApp(t *testing.T, bin string, env ...string) *hceApp {
	t.Helper()
	var base []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TADPOLE_") && !strings.HasPrefix(kv, "LTTNG_") {
			base = append(base, kv)
		}
	}
	cmd := exec.Command(bin)
	cmd.Env = append(append(base, "TADPOLE_LTTNG=off", "TADPOLE_LOGS=lttng", "TADPOLE_HCE_RETRY=100ms",
		"TADPOLE_FLUSH_INTERVAL=5ms", "TADPOLE_LOG_LEVEL=debug"), env...)
	stdin, _ := cmd.StdinPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a := &hceApp{cmd: cmd, stdin: stdin, exit: make(chan error, 1)}
	var log strings.Builder
	logDone := make(chan struct{})
	ready := make(chan struct{})
	go func() {
		defer close(logDone)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if sc.Text() == "hceapp: ready" {
				close(ready)
			}
			log.WriteString(sc.Text() + "\n")
		}
	}()
	go func() { <-logDone; a.exit <- cmd.Wait() }()
	t.Cleanup(func() {
		a.stdin.Close()
		select {
		case <-a.exit:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-a.exit
		}
		if t.Failed() {
			t.Logf("hceapp %d stderr:\n%s", cmd.Process.Pid, log.String())
		}
	})
	select {
	case <-ready:
	case <-time.After(20 * time.Second):
		t.Fatal("hceapp not ready")
	}
	return a
}

func nextEvent(t *testing.T, c *hce.Client, want hce.CommandID) hce.Event {
	t.Helper()
	for {
		select {
		case e := <-c.Events():
			if e.ID == want {
				return e
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("no %s event", want.Name(hce.IfaceAgentEvents))
		}
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHCEProcesses: Go services traced by HQ register with a hub over TCP
// and over a named pipe; a client lists them, attaches exclusively,
// enables a logger and sees its records reach HQ, pauses and resumes
// tracing, marks; a second client is denied; killing an agent's process
// deregisters it and frees its references; the pipe agent reconnects to a
// restarted hub.
func TestHCEProcesses(t *testing.T) {
	bin := buildHCEApp(t)
	h, err := hub.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	tcp, err := h.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pipePath := filepath.Join(t.TempDir(), "hub.fifo")
	if _, err := h.Listen("pipe:" + pipePath); err != nil {
		t.Fatal(err)
	}
	hq := testhq.Start(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	watch, err := hce.NewClient(ctx, tcp, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(hce.ReasonNone)
	if err := watch.AddListener(ctx, 7); err != nil {
		t.Fatal(err)
	}

	appTCP := startHCEApp(t, bin, "TADPOLE_HQ="+hq.Addr(), "TADPOLE_HCE="+tcp)
	appPipe := startHCEApp(t, bin, "TADPOLE_HCE=pipe:"+pipePath)
	nextEvent(t, watch, hce.EventAgentRegistered)
	nextEvent(t, watch, hce.EventAgentRegistered)

	c1, err := hce.NewClient(ctx, tcp, &hce.Config{MD5: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close(hce.ReasonNone)
	ids, err := c1.QueryRunning(ctx, hce.IfaceTadpole)
	if err != nil || len(ids) != 2 {
		t.Fatalf("running agents %v %v", ids, err)
	}
	byPID := map[uint64]uint32{}
	for _, a := range h.Agents() {
		byPID[a.PID] = a.AgentID
		if a.Name != "tadpole:hceapp" || !slices.Contains(a.Ifaces, hce.IfaceTadpole) {
			t.Errorf("agent %+v", a)
		}
	}
	idTCP, idPipe := byPID[uint64(appTCP.cmd.Process.Pid)], byPID[uint64(appPipe.cmd.Process.Pid)]
	if idTCP == 0 || idPipe == 0 {
		t.Fatalf("agents by pid %v", byPID)
	}
	if err := c1.GetSpecific(ctx, idTCP); err != nil {
		t.Fatal(err)
	}
	if err := c1.Attach(ctx, idTCP, true); err != nil {
		t.Fatal(err)
	}
	ls, err := c1.Loggers(ctx, idTCP)
	if err != nil {
		t.Fatal(err)
	}
	want := []hce.LoggerState{{Name: "app.orders"}, {Name: "app.payments"}}
	if !slices.Equal(ls, want) {
		t.Fatalf("loggers %v; want %v", ls, want)
	}
	col := hq.Collector(0)
	if n := len(col.Markers("log:app.orders")); n != 0 {
		t.Fatalf("%d records of a disabled logger", n)
	}
	if err := c1.EnableLogger(ctx, idTCP, "app.orders"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "app.orders records at HQ", func() bool { return len(col.Markers("log:app.orders")) > 3 })
	if ls, _ := c1.Loggers(ctx, idTCP); !ls[0].Enabled || ls[1].Enabled {
		t.Errorf("loggers after enable %v", ls)
	}
	if n := len(col.Markers("log:app.payments")); n != 0 {
		t.Errorf("%d records of app.payments, never enabled", n)
	}

	// Pause and resume.
	if err := c1.Control(ctx, idTCP, hce.TPPause); err != nil {
		t.Fatal(err)
	}
	st, err := c1.Status(ctx, idTCP)
	if err != nil || st.Mode != bytefrog.ModePaused.String() || st.HQ != hq.Addr() || st.EnabledLoggers != 1 || st.Loggers != 2 {
		t.Fatalf("status while paused %+v %v", st, err)
	}
	if err := c1.Control(ctx, idTCP, hce.TPPause); err == nil {
		t.Error("pause while paused accepted")
	}
	time.Sleep(50 * time.Millisecond)
	ticks := len(col.Markers("app.tick"))
	time.Sleep(100 * time.Millisecond)
	if n := len(col.Markers("app.tick")); n != ticks {
		t.Errorf("%d ticks recorded while paused", n-ticks)
	}
	if err := c1.Control(ctx, idTCP, hce.TPResume); err != nil {
		t.Fatal(err)
	}
	eventually(t, "ticks after resume", func() bool { return len(col.Markers("app.tick")) > ticks+3 })
	// Suspend drops events as a data break; resume records again.
	if err := c1.Control(ctx, idTCP, hce.TPSuspend); err != nil {
		t.Fatal(err)
	}
	if st, err := c1.Status(ctx, idTCP); err != nil || st.Mode != bytefrog.ModeSuspended.String() {
		t.Fatalf("status while suspended %+v %v", st, err)
	}
	if err := c1.Control(ctx, idTCP, hce.TPResume); err != nil {
		t.Fatal(err)
	}
	ticks = len(col.Markers("app.tick"))
	eventually(t, "ticks after unsuspend", func() bool { return len(col.Markers("app.tick")) > ticks+3 })
	eventually(t, "the data break at HQ", func() bool { return len(col.Breaks()) == 1 })
	if err := c1.Mark(ctx, idTCP, "hce.mark", "from-ctl"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the marker at HQ", func() bool { return slices.Contains(col.Markers("hce.mark"), "from-ctl") })
	if err := c1.DisableLogger(ctx, idTCP, "app.orders"); err != nil {
		t.Fatal(err)
	}
	if err := c1.DisableLogger(ctx, idTCP, "app.orders"); err == nil {
		t.Error("second disable accepted")
	}
	// The untraced pipe agent refuses what needs tracing, clearly.
	if err := c1.GetSpecific(ctx, idPipe); err != nil {
		t.Fatal(err)
	}
	if err := c1.Attach(ctx, idPipe, false); err != nil {
		t.Fatal(err)
	}
	var re *hce.ReasonError
	if err := c1.Control(ctx, idPipe, hce.TPPause); !errors.As(err, &re) || re.Reason != hce.ReasonFailed {
		t.Errorf("pause untraced: %v", err)
	}
	if _, err := c1.Call(ctx, idPipe, hce.IfaceTadpole, 0x777, nil); !errors.As(err, &re) || re.Reason != hce.ReasonUnknownCommand {
		t.Errorf("unknown command: %v", err)
	}

	// A second client is denied the exclusively attached agent.
	c2, err := hce.NewClient(ctx, "pipe:"+pipePath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close(hce.ReasonNone)
	if err := c2.GetSpecific(ctx, idTCP); err != nil {
		t.Fatal(err)
	}
	if err := c2.Attach(ctx, idTCP, false); !errors.As(err, &re) || re.Reason != hce.ReasonExclusivelyLocked {
		t.Fatalf("second attach: %v", err)
	}

	// Killing the agent's process deregisters it and frees its references.
	if s := h.Stats(); s.References != 3 || s.Attachments != 2 {
		t.Errorf("before kill: %+v", s)
	}
	appTCP.cmd.Process.Signal(syscall.SIGKILL)
	if e := nextEvent(t, watch, hce.EventAgentDeregistered); e.Agent != idTCP || e.Listener != 7 {
		t.Errorf("event %v", e)
	}
	eventually(t, "references freed", func() bool { s := h.Stats(); return s.References == 1 && s.Attachments == 1 && s.Agents == 1 })

	// A restarted hub on the same pipe: the agent registers again.
	ctxc, cancelc := context.WithTimeout(ctx, 5*time.Second)
	defer cancelc()
	h.Close(ctxc)
	h2, err := hub.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close(context.Background())
	if _, err := h2.Listen("pipe:" + pipePath); err != nil {
		t.Fatal(err)
	}
	eventually(t, "re-registration", func() bool {
		as := h2.Agents()
		return len(as) == 1 && as[0].PID == uint64(appPipe.cmd.Process.Pid)
	})
}

// TestHCEHostileHub: a hub that sends garbage and a huge size, then one
// that never answers the handshake, then one that refuses the
// registration: the host's registration goroutine survives each, keeps
// reconnecting, and stops at once when asked.
func TestHCEHostileHub(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan int, 16)
	go func() {
		for n := 0; ; n++ {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- n
			go func() {
				defer nc.Close()
				nc.SetDeadline(time.Now().Add(10 * time.Second))
				codec, _ := hce.NewCodec(nc, nc, nil)
				if e, err := codec.Read(); err != nil || e.Flags.Type() != hce.FlagSocketConnect {
					return
				}
				switch n % 3 {
				case 0:
					codec.Write(hce.FlagConnectionComplete, hce.AppendU32(nil, 5))
					codec.Read() // the registration
					nc.Write([]byte("\x00garbage\xfe\xc0"))
					huge := hce.AppendEnvelope(nil, 0, false, nil)
					huge[24] = 0x40
					nc.Write(huge)
					codec.Read()
				case 1:
					codec.Read() // silent until the agent gives up
				case 2:
					codec.Write(hce.FlagConnectionComplete, hce.AppendU32(nil, 6))
					e, _ := codec.Read()
					bs, _ := hce.ParsePayload(nil, e.Payload)
					if len(bs) == 1 {
						codec.WriteBlocks(&hce.Block{Dest: 6, Src: hce.EngineID, Iface: hce.IfaceAgentManager,
							Cmd: hce.CmdAgentRegistrationRefused, Context: bs[0].Context, Data: hce.AppendU32(nil, uint32(hce.ReasonIDMismatch))})
					}
					codec.Read()
				}
			}()
		}
	}()
	c := DefaultConfig()
	c.HCE = l.Addr().String()
	c.HCERetry = 20 * time.Millisecond
	c.ConnectTimeout = 200 * time.Millisecond
	c.Log = "none"
	stop := StartHCE(c)
	for want := 0; want < 4; want++ {
		select {
		case n := <-accepted:
			if n != want {
				t.Fatalf("connection %d; want %d", n, want)
			}
		case <-time.After(10 * time.Second):
			stop()
			t.Fatalf("the agent stopped reconnecting after %d connections", want)
		}
	}
	start := time.Now()
	stop()
	if d := time.Since(start); d > time.Second {
		t.Errorf("stop took %v", d)
	}
}
