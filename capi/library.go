package capi

/*
#cgo CFLAGS: -I${SRCDIR}/../include -fvisibility=hidden -Wall
#include "tp.h"
*/
import "C"

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tadpole-trace/tadpole/agent"
	"github.com/tadpole-trace/tadpole/internal/host"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// Timing of the C side.
const (
	// clockPeriod is how often the event clock is refreshed: the
	// resolution of Bytefrog times.
	clockPeriod = time.Millisecond
	// flushPeriod is how often idle threads' buffers are handed over, so
	// that their events reach HQ within about flushPeriod + flush_interval.
	flushPeriod = 50 * time.Millisecond
	// stopTimeout bounds tadpole_stop's wait for HQ.
	stopTimeout = 10 * time.Second
)

// library is the process's one C-API agent. Start and stop hold mu.
type library struct {
	mu        sync.Mutex
	agent     *agent.Agent
	quit      chan struct{}
	timers    sync.WaitGroup
	drains    sync.WaitGroup // the drain goroutine
	wake      *cPipe         // the early-flush pipe
	drainPipe *cPipe         // the pipe that wakes the drain
}

// cPipe is a non-blocking pipe: the C side writes a byte to its write end
// (set gives the descriptor, -1 once closed), a goroutine waits on its
// read end in Go.
type cPipe struct {
	r   *os.File
	w   int
	set func(fd C.int)
}

func openPipe(name string, set func(fd C.int)) (*cPipe, error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return nil, err
	}
	cp := &cPipe{r: os.NewFile(uintptr(p[0]), name), w: p[1], set: set}
	set(C.int(cp.w))
	return cp, nil
}

// close takes the write end from the C side and closes both ends: a
// reader's Read then fails.
func (p *cPipe) close() {
	p.set(-1)
	unix.Close(p.w)
	p.r.Close()
}

var lib library

// hooks forwards the agent's mode to the C side while a C-API run is on.
// Under mu the published mode is always re-read from the agent, so the last
// store wins with the latest mode whatever order hooks run in.
var hooks struct {
	mu      sync.Mutex
	running bool
}

func init() {
	host.AddModeHook(modeChanged)
	agent.AddLoggerHook(loggerChanged)
}

func modeChanged(bytefrog.Mode) {
	hooks.mu.Lock()
	defer hooks.mu.Unlock()
	if hooks.running {
		C.tp_set_mode(C.uint8_t(host.CurrentMode()))
	}
}

// publishMode starts (on) or ends forwarding modes to the C side.
func publishMode(on bool) {
	hooks.mu.Lock()
	defer hooks.mu.Unlock()
	hooks.running = on
	m := C.uint8_t(C.TP_MODE_NONE)
	if on {
		m = C.uint8_t(host.CurrentMode())
	}
	C.tp_set_mode(m)
}

// runtimeProcs is the GOMAXPROCS the library's Go runtime chose itself.
var runtimeProcs = runtime.GOMAXPROCS(0)

// setProcs applies the procs option to the library's own Go runtime
// before the agent starts (its lanes are sized by GOMAXPROCS); 0 restores
// the runtime's choice.
func setProcs(n int) {
	if n == 0 {
		n = runtimeProcs
	}
	if runtime.GOMAXPROCS(0) != n {
		runtime.GOMAXPROCS(n)
	}
}

// start is tadpole_start.
func start(opts string) error {
	lib.mu.Lock()
	defer lib.mu.Unlock()
	if lib.agent != nil {
		select {
		case <-lib.agent.Done():
			// HQ ended the previous run: tidy it up first.
			lib.end(context.Background())
		default:
			return ErrAlreadyStarted
		}
	}
	cfg, err := agent.LoadConfig(opts)
	if err != nil {
		host.Log(opts, host.LevelError, "start:"+err.Error(), "running untraced: "+err.Error())
		return err
	}
	setQuiet(cfg)
	setProcs(cfg.Procs)
	startLTTng(cfg) // LTTng with or without HQ
	startServices(cfg, opts)
	a, err := agent.Start(context.Background(), cfg) // logs its own failure, once
	if err != nil {
		return err
	}
	up, err := openPipe("tadpole-drain", func(fd C.int) { C.tp_set_drain_fd(fd) })
	if err != nil {
		a.Shutdown(context.Background())
		err = fmt.Errorf("tadpole: the drain's pipe: %w", err)
		host.Log(opts, host.LevelError, "start:pipe", "running untraced: "+err.Error())
		return err
	}
	lib.agent = a
	lib.drainPipe = up
	C.tp_begin()
	C.tp_drain_quit(0)
	lib.drains.Add(1)
	go lib.drain(up.r)
	publishMode(true)
	lib.quit = make(chan struct{})
	lib.timers.Add(2)
	go lib.tickClock(a.Done(), lib.quit)
	go lib.flushIdle(a.Done(), lib.quit)
	lib.openWake()
	return nil
}

// services are what the process serves for its whole life once a start
// names them, whatever becomes of its runs: the HCE registration (hce=)
// and the management endpoint (j4p=).
var services struct {
	hce, j4p sync.Once
}

// startServices starts the services cfg names that are not running yet;
// a failure is logged, once, and costs the host nothing.
func startServices(cfg agent.Config, opts string) {
	if cfg.HCE != "" {
		services.hce.Do(func() { agent.StartHCE(cfg) })
	}
	if cfg.J4P != "" {
		services.j4p.Do(func() {
			if _, err := agent.StartManagement(cfg); err != nil {
				host.Log(opts, host.LevelWarn, "j4p:"+err.Error(), "no management endpoint: "+err.Error())
			}
		})
	}
}

// openWake opens the pipe on which the C side asks for an early flush when
// exited threads' buffers pile up, and starts its reader. Without it (no
// pipe) the timer alone flushes.
func (l *library) openWake() {
	p, err := openPipe("tadpole-wake", func(fd C.int) { C.tp_set_wake_fd(fd) })
	if err != nil {
		warnOnce("pipe", "no early flushes: %v", err)
		return
	}
	l.wake = p
	l.timers.Add(1)
	go l.flushOnWake(p.r)
}

// closeWake closes the pipe; its reader then ends.
func (l *library) closeWake() {
	if l.wake != nil {
		l.wake.close()
		l.wake = nil
	}
}

// flushOnWake flushes each time the C side writes to the pipe.
func (l *library) flushOnWake(r *os.File) {
	defer l.timers.Done()
	defer survive("early flush")
	var buf [64]byte
	for {
		if _, err := r.Read(buf[:]); err != nil {
			return
		}
		C.tp_flush_all(1)
	}
}

// stop is tadpole_stop.
func stop() error {
	lib.mu.Lock()
	defer lib.mu.Unlock()
	if lib.agent == nil {
		return ErrNotStarted
	}
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	return lib.end(ctx)
}

// end stops recording, hands every buffer over, and shuts the agent down.
// While HQ keeps the run paused, the drain may be waiting in
// host.SubmitBatch for the pause to end: the agent's shutdown ends it, and
// what the threads buffered is not handed over. lib.mu is held.
func (l *library) end(ctx context.Context) error {
	publishMode(false)
	close(l.quit)
	C.tp_drain_quit(1)
	l.closeWake()
	l.timers.Wait()
	if host.CurrentMode() != bytefrog.ModePaused {
		l.drains.Wait()
		C.tp_flush_all(0)
	}
	err := l.agent.Shutdown(ctx)
	l.drains.Wait()
	l.drainPipe.close()
	l.drainPipe = nil
	C.tp_end()
	l.agent = nil
	return err
}

// drain hands the buffers threads filled to the agent: the C side queues
// a full buffer instead of calling into Go from the recording thread.
// While the queue is empty it waits on r, in Go (no C call is under way,
// so its P stays free), until end.
func (l *library) drain(r *os.File) {
	defer l.drains.Done()
	defer survive("drain")
	var buf [64]byte
	for C.tp_drain_stopped() == 0 {
		if C.tp_drain() > 0 || C.tp_drain_idle() != 0 {
			continue
		}
		if _, err := r.Read(buf[:]); err != nil {
			return
		}
	}
}

// tickClock refreshes the C event clock until the run ends.
func (l *library) tickClock(done <-chan struct{}, quit chan struct{}) {
	defer l.timers.Done()
	defer survive("event clock")
	t := time.NewTicker(clockPeriod)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			C.tp_clock_tick()
		case <-done:
			return
		case <-quit:
			return
		}
	}
}

// flushIdle hands buffered events over every flushPeriod, so that a thread
// that records rarely is not late. It also publishes the mode again: should
// another host in the process replace the agent's mode hook, the C side
// still follows the agent within a period.
func (l *library) flushIdle(done <-chan struct{}, quit chan struct{}) {
	defer l.timers.Done()
	defer survive("flush timer")
	t := time.NewTicker(flushPeriod)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			modeChanged(0)
			C.tp_flush_all(1)
		case <-done:
			return
		case <-quit:
			return
		}
	}
}

// Warnings with no caller to return them to (a background flush) go to
// stderr once each, unless the options silenced the agent's log.
var (
	quiet  atomic.Bool
	warned sync.Map
)

func setQuiet(cfg agent.Config) {
	quiet.Store(cfg.Log == "none" || cfg.LogLevel > agent.LevelWarn)
}

func warnOnce(key, format string, args ...any) {
	if quiet.Load() {
		return
	}
	if _, dup := warned.LoadOrStore(key, struct{}{}); dup {
		return
	}
	fmt.Fprintf(os.Stderr, "tadpole: [WARN] "+format+"\n", args...)
}
