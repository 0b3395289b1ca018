package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/ctf"
	"github.com/tadpole-trace/tadpole/transport/live"
)

// liveFlags are the options of the live relay.
type liveFlags struct {
	addr      string
	timer     time.Duration
	fromStart bool
	share     float64
	rate      float64
	above     float64
}

func (l *liveFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&l.addr, "live", "", "serve every run to LTTng live viewers (babeltrace2 net://ADDR/host/HOST/SESSION) on ADDR, e.g. 127.0.0.1:5344")
	fs.DurationVar(&l.timer, "live-timer", ctf.DefaultLiveTimer, "live: period of packet cuts and beacons (how soon a quiet thread shows)")
	fs.BoolVar(&l.fromStart, "live-from-start", false, "live: every viewer starts at the run's beginning (babeltrace2 asks for the end)")
	fs.Float64Var(&l.share, "live-share", ctf.DefaultServeShare, "live: share of one core serving viewers may take while runs are ingested (0 or negative: no limit)")
	fs.Float64Var(&l.above, "live-pace-above", ctf.DefaultPaceAbove, "live: ingest rate, in events per second, above which -live-share and -live-rate hold serving back (0 or negative: whenever runs are ingested)")
	fs.Float64Var(&l.rate, "live-rate", ctf.DefaultServeRate, "live: packet bytes per second delivered to all viewers together while runs are ingested; a viewer behind skips ahead to the events still kept, the others counted as discarded (0 or negative: no limit)")
}

// liveDrainMax bounds the wait for viewers still reading ended runs.
const liveDrainMax = 2 * time.Minute

// liveService is HQ's relay for live viewers.
type liveService struct {
	srv  *live.Server
	cat  *ctf.Catalog
	addr string
	done chan struct{}
}

// startLive listens for viewers and makes every run of cfg a session.
func startLive(l *liveFlags, cfg *hq.Config, stderr io.Writer) (*liveService, error) {
	if l.addr == "" {
		return nil, nil
	}
	if l.timer <= 0 {
		return nil, fmt.Errorf("-live-timer %v", l.timer)
	}
	if l.share == 0 {
		l.share = -1 // 0 means the default in CatalogConfig
	}
	if l.rate == 0 {
		l.rate = -1
	}
	if l.above == 0 {
		l.above = -1
	}
	ccfg := &ctf.CatalogConfig{Writer: ctf.Config{LiveTimer: l.timer, Flavor: cfg.Flavor}, TraceDir: cfg.TraceDir,
		ServeShare: l.share, ServeRate: l.rate, PaceAbove: l.above}
	if l.fromStart {
		// Viewers start at the beginning: keep a run's start for the first
		// one (a quarter of the session cap: about 1 M events).
		ccfg.Backlog = live.DefaultTraceMaxBytes / 4
	}
	cat, err := ctf.NewCatalog(ccfg)
	if err != nil {
		return nil, err
	}
	lcfg := live.DefaultConfig()
	lcfg.ForceBeginning = l.fromStart
	lcfg.Logger = cfg.Logger
	lcfg.Pacer = cat.Pacer()
	srv, err := live.NewServer(cat, lcfg)
	if err != nil {
		return nil, err
	}
	// babeltrace2 2.0.4 connects over IPv4 only.
	ln, err := net.Listen("tcp4", l.addr)
	if err != nil {
		return nil, fmt.Errorf("-live: %w", err)
	}
	prev := cfg.NewProcessor
	cfg.NewProcessor = func(r *hq.Run) hq.Processor {
		p := cat.Processor(r)
		if prev != nil {
			if q := prev(r); q != nil {
				return hq.Processors{p, q} // the run's core calls each: p gets blocks
			}
		}
		return p
	}
	s := &liveService{srv: srv, cat: cat, addr: ln.Addr().String(), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		srv.Serve(ln)
	}()
	return s, nil
}

// hint is the line telling how to watch the runs.
func (s *liveService) hint() string {
	return fmt.Sprintf("tadpole-hq: live viewers: babeltrace2 -i lttng-live net://%s (lists the sessions; then net://%s/host/HOST/SESSION)\n",
		s.addr, s.addr)
}

// close waits for viewers to leave (a viewer reading a run that ended
// gets its end and detaches): as long as they keep reading, up to
// liveDrainMax, or wait after the last request, then closes the relay.
func (s *liveService) close(wait time.Duration) {
	if s == nil {
		return
	}
	start := time.Now()
	for s.srv.Viewers() > 0 && time.Since(start) < liveDrainMax {
		if time.Since(start) > wait && time.Since(s.srv.LastRequest()) > wait {
			break
		}
		time.Sleep(pollRuns)
	}
	s.srv.Close()
	<-s.done
}

// exportsCTF reports whether export's arguments ask for CTF (-ctf); the
// other formats are runExport's.
func exportsCTF(args []string) bool {
	for _, a := range args {
		if a == "-ctf" || a == "--ctf" || strings.HasPrefix(a, "-ctf=") || strings.HasPrefix(a, "--ctf=") {
			return true
		}
	}
	return false
}

// export writes the CTF trace of each trace file.
func export(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tadpole-hq export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		dir     string
		opt     ctf.ExportOptions
		packetK int
	)
	fs.StringVar(&dir, "ctf", "", "directory to write the CTF trace to (created; must be empty)")
	fs.BoolVar(&opt.Lenient, "lenient", false, "ids used before their mapping or mapped again do not fail the run")
	fs.IntVar(&packetK, "packet-kb", ctf.DefaultPacketSize>>10, "CTF packet size, KiB")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if dir == "" || fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: tadpole-hq export -ctf DIR TRACEFILE")
		return exitUsage
	}
	opt.PacketSize = packetK << 10
	rep, err := ctf.Export(dir, fs.Arg(0), &opt)
	if err != nil {
		fmt.Fprintf(stderr, "tadpole-hq: export %s: %v\n", fs.Arg(0), err)
		if rep == nil {
			return exitError
		}
	}
	fmt.Fprintf(stdout, "%s: run %d %s: %d events written to %s (babeltrace2 %s)\n", fs.Arg(0), rep.RunID,
		rep.Result(), rep.Sequenced, dir, dir)
	switch {
	case err != nil:
		return exitError
	case !rep.OK:
		return exitRunFailed
	}
	return exitOK
}
