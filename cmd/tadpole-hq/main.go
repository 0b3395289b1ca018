package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// Exit statuses.
const (
	exitOK        = 0
	exitError     = 1 // HQ could not run
	exitUsage     = 2
	exitRunFailed = 3
)

// Timings.
const (
	shutdownGrace = 5 * time.Second        // for runs to end after an interrupt
	execSettle    = 100 * time.Millisecond // for greetings in flight when the child exits
	pollRuns      = 20 * time.Millisecond
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// options are the parsed command line.
type options struct {
	cfg      *hq.Config
	listen   string
	runs     int
	runsSet  bool
	exec     bool
	wait     time.Duration
	status   string
	verbose  bool
	args     []string
	listenOn bool   // -listen given
	jsonPath string // -json: where each run's report is appended
	hce      string // -hce: HCE hub addresses
	live     liveFlags
	web      webFlags
}

func usage(fs *flag.FlagSet) func() {
	return func() {
		w := fs.Output()
		fmt.Fprint(w, `Usage:
  tadpole-hq [flags]                      serve agents until interrupted (or -runs N)
  tadpole-hq [flags] -exec CMD [ARGS...]  run CMD with TADPOLE_HQ=<addr> against a private HQ
  tadpole-hq replay [-lenient] FILE...    print the summaries of trace files
  tadpole-hq verify [-lenient] FILE...    check trace files: one line each, status 3 if a run fails
  tadpole-hq ctl [-hce ADDR] COMMAND      drive agents through the HCE hub (tadpole-hq ctl -h)
  tadpole-hq export -ctf DIR TRACEFILE    write a trace file's run as a CTF trace (babeltrace2 DIR)
  tadpole-hq export -format F [-o OUT] FILE  speedscope, Chrome trace or flame graph of a trace file

-http ADDR serves a live page of the runs (rates, modes, health, buttons to
pause, suspend and stop, flame graph, timeline, exceptions, markers and log
records; docs/web.md). It listens on loopback only (127.0.0.1, ::1,
localhost) unless -http-allow-remote is given: the page has no
authentication, and whoever reaches it can pause and stop runs.

-listen takes TCP and Unix-domain addresses, several at once:
  -listen 127.0.0.1:8765,unix:/run/tadpole/hq.sock
an agent on this host reaches HQ more cheaply through the socket
(hq=unix:/run/tadpole/hq.sock). A socket file left by an HQ that ended is
replaced; HQ removes its own when it exits.

-exec listens on 127.0.0.1:0 (unless -listen is given), adds TADPOLE_HQ
(the first -listen address) to CMD's environment, passes its stdin/stdout/stderr through, waits for CMD to
exit and its runs to end (at most -wait), prints each run's summary on
stdout and exits with CMD's status if it failed, 3 if a run failed or fewer
than -runs (default 1) runs came, else 0. A run fails on a protocol error,
a gap, a duplicate, an id used before its mapping or mapped again to
another name, an exit or bubble out of its thread's call nesting, or an
event stamped inside a suspend, pause or stop the agent had taken (the
last four only without -lenient).

Script steps (-script), separated by ';': wait DURATION, await MODE
(I T P S X), start, stop, pause, unpause, suspend, unsuspend. Example:
  -script 'wait 200ms; pause; wait 1s; unpause; suspend; wait 500ms; unsuspend; wait 2s; stop'

Flags:
`)
		fs.PrintDefaults()
	}
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("tadpole-hq", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usage(fs)
	cfg := hq.DefaultConfig()
	o := &options{cfg: cfg}
	var (
		flavor, versions      string
		include, exclude      listFlag
		noStart               bool
		heartbeat, senders    int
		budget, maxHeld, topN int
		maxHeldMB             int64
		greet                 time.Duration
		dir, script, compress string
	)
	fs.StringVar(&o.listen, "listen", hq.DefaultListen,
		"addresses agents connect to, comma-separated: host:port (TCP), unix:/path (a Unix socket file) or @name (Linux's abstract namespace)")
	fs.StringVar(&dir, "dir", "", "directory for trace files (none when empty)")
	fs.StringVar(&compress, "compress", cfg.Compression.String(),
		"trace file layout: columns (tadpole's own, 10x+ smaller than the Bytefrog bytes), or the Bytefrog bytes as received in s2 (fast), zstd or none")
	fs.StringVar(&flavor, "flavor", "bytefrog", "HQ flavour: bytefrog (17-byte MethodExit) or codepulse (16-byte)")
	fs.StringVar(&versions, "versions", "1,2,3,4", "protocol versions accepted")
	fs.BoolVar(&cfg.StartSuspended, "suspended", false, "start agents suspended (Suspend before Start)")
	fs.BoolVar(&noStart, "no-start", false, "do not send Start after the configuration (use -script)")
	fs.StringVar(&script, "script", "", "lifecycle script run against every run")
	fs.IntVar(&o.runs, "runs", 0, "serve: exit after N runs ended; -exec: runs expected (default 1)")
	fs.BoolVar(&o.exec, "exec", false, "run the command given after the flags (see above)")
	fs.DurationVar(&o.wait, "wait", 10*time.Second, "-exec: how long to wait for runs after the command exits")
	fs.IntVar(&heartbeat, "heartbeat", int(cfg.Agent.HeartbeatInterval), "agent heartbeat interval, ms")
	fs.IntVar(&senders, "senders", int(cfg.Agent.NumDataSenders), "agent data connections (numDataSenders)")
	fs.IntVar(&budget, "budget", int(cfg.Agent.BufferMemoryBudget), "agent send-buffer budget, bytes")
	fs.Var(&include, "include", "agent inclusion regex (repeatable)")
	fs.Var(&exclude, "exclude", "agent exclusion regex (repeatable)")
	fs.IntVar(&maxHeld, "max-held", cfg.MaxHeldEvents, "events held while waiting for a missing number")
	fs.Int64Var(&maxHeldMB, "max-held-mb", cfg.MaxHeldBytes>>20, "MiB of buffers held while waiting")
	fs.DurationVar(&greet, "greet-timeout", cfg.GreetTimeout, "time a new connection has to greet")
	fs.IntVar(&topN, "top", cfg.TopN, "methods listed in a summary")
	fs.StringVar(&o.status, "status", "auto", "live status line on stderr: auto (when a terminal), on, off")
	fs.BoolVar(&o.verbose, "v", false, "debug logging")
	fs.StringVar(&o.jsonPath, "json", "", "append each ended run's report to this file, one JSON object a line")
	fs.StringVar(&o.hce, "hce", "", "serve the HCE control plane on host:port and/or pipe:/path, comma-separated (e.g. 127.0.0.1:10006)")
	fs.BoolVar(&cfg.Lenient, "lenient", false, "a run that uses ids before their mapping, maps an id again, breaks call nesting or stamps events inside a mode window still completes")
	o.live.register(fs)
	o.web.register(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "listen":
			o.listenOn = true
		case "runs":
			o.runsSet = true
		}
	})
	o.args = fs.Args()
	switch {
	case o.exec && len(o.args) == 0:
		return nil, errors.New("-exec needs a command")
	case !o.exec && len(o.args) > 0:
		return nil, fmt.Errorf("unexpected arguments %q (use -exec CMD or replay FILE)", o.args)
	case o.status != "auto" && o.status != "on" && o.status != "off":
		return nil, fmt.Errorf("-status %q: want auto, on or off", o.status)
	case o.runs < 0:
		return nil, fmt.Errorf("-runs %d", o.runs)
	case o.exec && o.hce != "":
		return nil, errors.New("-hce serves beside a serving HQ, not with -exec")
	}
	f, err := bytefrog.ParseFlavor(flavor)
	if err != nil {
		return nil, err
	}
	cfg.Flavor = f
	if cfg.Compression, err = hq.ParseCompression(compress); err != nil {
		return nil, fmt.Errorf("-compress: %w", err)
	}
	cfg.Versions = nil
	for _, v := range strings.Split(versions, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 8)
		if err != nil {
			return nil, fmt.Errorf("-versions: %q is not a version", v)
		}
		cfg.Versions = append(cfg.Versions, uint8(n))
	}
	cfg.AutoStart = !noStart
	cfg.Script = script
	cfg.TraceDir = dir
	cfg.Agent.HeartbeatInterval = int32(heartbeat)
	cfg.Agent.NumDataSenders = int32(senders)
	cfg.Agent.BufferMemoryBudget = int32(budget)
	cfg.Agent.Inclusions = include
	cfg.Agent.Exclusions = exclude
	cfg.MaxHeldEvents = maxHeld
	cfg.MaxHeldBytes = maxHeldMB << 20
	cfg.GreetTimeout = greet
	cfg.TopN = topN
	if o.exec && !o.runsSet {
		o.runs = 1
	}
	return o, nil
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command; it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "replay" || args[0] == "verify") {
		return replay(args[0], args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "ctl" {
		return ctl(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "export" {
		if exportsCTF(args[1:]) {
			return export(args[1:], stdout, stderr)
		}
		return runExport(args[1:], stdout, stderr)
	}
	o, err := parseFlags(args, stderr)
	if err == flag.ErrHelp {
		return exitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, "tadpole-hq:", err)
		return exitUsage
	}
	term := newTerminal(stdout, stderr, o.status)
	reports, err := openJSONReports(o.jsonPath)
	if err != nil {
		fmt.Fprintln(stderr, "tadpole-hq:", err)
		return exitError
	}
	defer func() {
		if err := reports.close(); err != nil {
			fmt.Fprintln(stderr, "tadpole-hq: -json:", err)
		}
	}()
	// -exec shows warnings only: the command's own output matters more.
	level := slog.LevelInfo
	if o.exec {
		level = slog.LevelWarn
	}
	if o.verbose {
		level = slog.LevelDebug
	}
	o.cfg.Logger = slog.New(slog.NewTextHandler(term.logWriter(), &slog.HandlerOptions{Level: level}))
	if o.exec {
		return execMode(o, term, reports, stderr)
	}
	return serveMode(o, term, reports, stderr)
}

// replay prints the summary of each trace file (verb "replay") or one line
// of its checks (verb "verify"); a run that fails them makes the status 3.
func replay(verb string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tadpole-hq "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var opt hq.ReplayOptions
	fs.BoolVar(&opt.Lenient, "lenient", false, "ids used before their mapping or mapped again, call nesting and mode-window faults do not fail a run")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	files := fs.Args()
	if len(files) == 0 {
		fmt.Fprintf(stderr, "usage: tadpole-hq %s [-lenient] FILE...\n", verb)
		return exitUsage
	}
	status := exitOK
	for _, f := range files {
		rep, err := hq.ReplayFile(f, &opt)
		if rep != nil {
			if verb == "verify" {
				fmt.Fprintf(stdout, "%s: run %d %s; checks: %s\n", f, rep.RunID, rep.Result(), rep.Checks())
			} else {
				rep.Write(stdout)
			}
			if !rep.OK && status == exitOK {
				status = exitRunFailed
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "tadpole-hq: %s: %v\n", f, err)
			status = exitError
		}
	}
	return status
}

// collector follows the runs of a server.
type collector struct {
	mu      sync.Mutex
	runs    []*hq.Run
	ended   int
	failed  int
	endedCh chan struct{} // receives after each run ends
}

func (c *collector) follow(ctx context.Context, srv *hq.Server, onEnd func(*hq.Report)) {
	for {
		r, err := srv.NextRun(ctx)
		if err != nil {
			return
		}
		c.mu.Lock()
		c.runs = append(c.runs, r)
		c.mu.Unlock()
		go func() {
			<-r.Done()
			rep := r.Report()
			c.mu.Lock()
			c.ended++
			if !rep.OK {
				c.failed++
			}
			c.mu.Unlock()
			if onEnd != nil {
				onEnd(rep)
			}
			c.endedCh <- struct{}{}
		}()
	}
}

func (c *collector) counts() (runs, ended, failed int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.runs), c.ended, c.failed
}

func newServer(o *hq.Config, addr string, stderr io.Writer) (*hq.Server, bool) {
	srv, err := hq.New(o)
	if err != nil {
		fmt.Fprintln(stderr, "tadpole-hq:", err)
		return nil, false
	}
	for _, a := range strings.Split(addr, ",") {
		if err := srv.Listen(strings.TrimSpace(a)); err != nil {
			fmt.Fprintln(stderr, "tadpole-hq:", err)
			srv.Close() // and the sockets already open
			return nil, false
		}
	}
	go srv.Serve()
	return srv, true
}

func serveMode(o *options, term *terminal, reports *jsonReports, stderr io.Writer) int {
	lv, err := startLive(&o.live, o.cfg, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "tadpole-hq:", err)
		return exitError
	}
	defer lv.close(shutdownGrace) // viewers get the end of the runs, then leave
	ws, err := startWeb(&o.web, o.cfg, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "tadpole-hq:", err)
		return exitError
	}
	defer closeWeb(ws)
	srv, ok := newServer(o.cfg, o.listen, stderr)
	if !ok {
		return exitError
	}
	if o.hce != "" {
		h, err := startHub(o.hce, o.cfg.Logger, stderr)
		if err != nil {
			fmt.Fprintln(stderr, "tadpole-hq:", err)
			srv.Close()
			return exitError
		}
		defer closeHub(h)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	term.printErr(fmt.Sprintf("tadpole-hq: listening on %s\n", strings.Join(srv.Addrs(), ", ")))
	if lv != nil {
		term.printErr(lv.hint())
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	col := &collector{endedCh: make(chan struct{}, 1024)}
	go col.follow(ctx, srv, func(rep *hq.Report) {
		term.printOut(rep.String())
		reports.write(rep)
	})
	stopStatus := term.run(srv, o.cfg.Logger)
	defer stopStatus()

	for {
		select {
		case <-sig:
			sctx, scancel := context.WithTimeout(context.Background(), shutdownGrace)
			srv.Shutdown(sctx)
			scancel()
			srv.Close()
			return finalStatus(col, 0)
		case <-col.endedCh:
			if _, ended, _ := col.counts(); o.runs > 0 && ended >= o.runs {
				srv.Close()
				return finalStatus(col, 0)
			}
		}
	}
}

// finalStatus waits briefly for the summaries of runs that just ended.
func finalStatus(col *collector, want int) int {
	deadline := time.Now().Add(time.Second)
	for {
		runs, ended, failed := col.counts()
		if ended >= runs || time.Now().After(deadline) {
			if failed > 0 || runs < want {
				return exitRunFailed
			}
			return exitOK
		}
		time.Sleep(pollRuns)
	}
}

// busy reports whether a run of srv has not ended yet.
func busy(srv *hq.Server) bool {
	for _, r := range srv.Runs() {
		select {
		case <-r.Done():
		default:
			return true
		}
	}
	return false
}

func execMode(o *options, term *terminal, reports *jsonReports, stderr io.Writer) int {
	addr := "127.0.0.1:0"
	if o.listenOn {
		addr = o.listen
	}
	lv, err := startLive(&o.live, o.cfg, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "tadpole-hq:", err)
		return exitError
	}
	defer lv.close(0)
	ws, err := startWeb(&o.web, o.cfg, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "tadpole-hq:", err)
		return exitError
	}
	defer closeWeb(ws)
	srv, ok := newServer(o.cfg, addr, stderr)
	if !ok {
		return exitError
	}
	defer srv.Close()
	if lv != nil {
		term.printErr(lv.hint())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	col := &collector{endedCh: make(chan struct{}, 1024)}
	go col.follow(ctx, srv, nil)

	cmd := exec.Command(o.args[0], o.args[1:]...)
	cmd.Env = append(os.Environ(), "TADPOLE_HQ="+srv.Addr())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(stderr, "tadpole-hq:", err)
		return exitError
	}
	stopStatus := term.run(srv, o.cfg.Logger)
	// The terminal's interrupt reaches the child too; HQ waits for it, and
	// forwards what it gets itself.
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var werr error
	for done := false; !done; {
		select {
		case s := <-sig:
			cmd.Process.Signal(s)
		case werr = <-waited:
			done = true
		}
	}

	// The child's connections are closed now; its runs end shortly.
	time.Sleep(execSettle)
	for deadline := time.Now().Add(o.wait); time.Now().Before(deadline) && busy(srv); {
		time.Sleep(pollRuns)
	}
	sctx, scancel := context.WithTimeout(context.Background(), pollRuns)
	srv.Shutdown(sctx)
	scancel()
	srv.Close()
	stopStatus()
	cancel()
	lv.close(o.wait) // viewers get the end of the runs, then leave

	col.mu.Lock()
	runs := append([]*hq.Run(nil), col.runs...)
	col.mu.Unlock()
	sort.Slice(runs, func(i, j int) bool { return runs[i].StartedAt().Before(runs[j].StartedAt()) })
	failed := 0
	for _, r := range runs {
		rep := r.Report()
		if rep == nil { // cannot happen after Close; be safe
			continue
		}
		term.printOut(rep.String())
		reports.write(rep)
		if !rep.OK {
			failed++
		}
	}

	code := exitOK
	childStatus := "exit status 0"
	if werr != nil {
		childStatus = werr.Error()
		var ee *exec.ExitError
		switch {
		case errors.As(werr, &ee) && ee.ExitCode() > 0:
			code = ee.ExitCode()
		case errors.As(werr, &ee):
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				code = 128 + int(ws.Signal())
			} else {
				code = exitError
			}
		default:
			code = exitError
		}
	}
	if code == exitOK && (failed > 0 || len(runs) < o.runs) {
		code = exitRunFailed
	}
	msg := fmt.Sprintf("tadpole-hq: %d run(s): %d completed, %d failed; %s: %s\n",
		len(runs), len(runs)-failed, failed, o.args[0], childStatus)
	if len(runs) < o.runs {
		msg += fmt.Sprintf("tadpole-hq: expected at least %d run(s): did the agent connect (TADPOLE_HQ=%s)?\n", o.runs, srv.Addr())
	}
	term.printErr(msg)
	return code
}
