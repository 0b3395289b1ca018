package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tadpole-trace/tadpole/hq"
	"golang.org/x/sys/unix"
)

// Status refresh periods: redrawn in place on a terminal, logged otherwise.
const (
	statusRedraw = 500 * time.Millisecond
	statusLog    = 10 * time.Second
)

// terminal serialises HQ's output: summaries on stdout, logs on stderr,
// and the status line, which is cleared before anything else is printed
// and drawn again after.
type terminal struct {
	mu     sync.Mutex
	stdout io.Writer
	stderr io.Writer
	fd     int  // stderr's descriptor, -1 if none
	live   bool // draw a status line
	line   string
	shown  bool
}

// isTerminal reports whether fd is a terminal.
func isTerminal(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	return err == nil
}

func newTerminal(stdout, stderr io.Writer, mode string) *terminal {
	t := &terminal{stdout: stdout, stderr: stderr, fd: -1}
	if f, ok := stderr.(*os.File); ok {
		t.fd = int(f.Fd())
	}
	t.live = mode == "on" || mode == "auto" && t.fd >= 0 && isTerminal(t.fd)
	return t
}

func (t *terminal) clearLocked() {
	if t.shown {
		io.WriteString(t.stderr, "\r\x1b[2K")
		t.shown = false
	}
}

func (t *terminal) drawLocked() {
	if t.live && t.line != "" {
		line := t.line
		if t.fd >= 0 {
			if ws, err := unix.IoctlGetWinsize(t.fd, unix.TIOCGWINSZ); err == nil && ws.Col > 1 && len(line) >= int(ws.Col) {
				line = line[:ws.Col-1]
			}
		}
		io.WriteString(t.stderr, line)
		t.shown = true
	}
}

func (t *terminal) print(w io.Writer, s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.clearLocked()
	io.WriteString(w, s)
	t.drawLocked()
}

func (t *terminal) printOut(s string) { t.print(t.stdout, s) }
func (t *terminal) printErr(s string) { t.print(t.stderr, s) }

type logWriter struct{ t *terminal }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.printErr(string(p))
	return len(p), nil
}

func (t *terminal) logWriter() io.Writer { return logWriter{t} }

func (t *terminal) setLine(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.clearLocked()
	t.line = s
	t.drawLocked()
}

// rateKey tells runs apart across reused run ids.
type rateKey struct {
	id    uint8
	start time.Time
}

// run starts the status display; stop ends it and clears the line.
func (t *terminal) run(srv *hq.Server, log *slog.Logger) (stop func()) {
	period := statusLog
	if t.live {
		period = statusRedraw
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(period)
		defer tick.Stop()
		last := map[rateKey]int64{}
		lastAt := time.Now()
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				secs := now.Sub(lastAt).Seconds()
				lastAt = now
				seen := map[rateKey]int64{}
				var parts []string
				for _, r := range srv.Runs() {
					st := r.Stats()
					k := rateKey{st.ID, st.Started}
					seen[k] = st.Events
					rate := float64(st.Events-last[k]) / secs
					if t.live {
						parts = append(parts, fmt.Sprintf("#%d %s %s ev/s buf %d %s", st.ID, modeText(st.Mode),
							human(rate), st.Buffers, st.Health))
					} else {
						log.Info("status", "run", st.ID, "mode", modeText(st.Mode), "events", st.Events,
							"events/s", int64(rate), "buffers", st.Buffers, "health", st.Health.String())
					}
				}
				last = seen
				if t.live {
					t.setLine(fmt.Sprintf("tadpole-hq %s | %d agent(s) | %s", srv.Addr(), len(parts),
						strings.Join(parts, " | ")))
				}
			}
		}
	}()
	return func() {
		select {
		case <-done:
		default:
			close(done)
		}
		<-finished
		t.mu.Lock()
		t.clearLocked()
		t.line = ""
		t.mu.Unlock()
	}
}

func modeText(m interface{ String() string }) string {
	s := m.String()
	if strings.HasPrefix(s, "UNKNOWN_MODE_0") {
		return "-"
	}
	return s
}

// human formats a rate: 950, 12.3k, 4.56M.
func human(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}
