package testpeers

import (
	"bufio"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Emitter is a test program driven over its stdin and stdout: it prints
// "ready", logs a batch of records for each "emit PHASE" line and answers
// "emitted PHASE", and exits when its stdin closes. The C and JVM
// recording tests both drive one.
type Emitter struct {
	name   string
	wait   time.Duration
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *strings.Builder
	exited chan struct{} // closed once the program exited; then err is its Wait's
	err    error
}

// StartEmitter starts cmd, waits for its "ready" line (at most wait) and
// ends it at cleanup, logging its stderr when t failed; name is what the
// messages call it.
func StartEmitter(t testing.TB, name string, cmd *exec.Cmd, wait time.Duration) *Emitter {
	t.Helper()
	p := &Emitter{name: name, wait: wait, cmd: cmd, lines: make(chan string, 16), stderr: &strings.Builder{},
		exited: make(chan struct{})}
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			p.lines <- s.Text()
		}
		close(p.lines)
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(wait):
			cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("%s stderr:\n%s", name, p.stderr.String())
		}
	})
	p.Expect(t, "ready")
	return p
}

// Expect waits for a line starting with want.
func (p *Emitter) Expect(t testing.TB, want string) {
	t.Helper()
	timeout := time.After(p.wait)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("%s ended before %q", p.name, want)
			}
			if strings.HasPrefix(l, want) {
				return
			}
		case <-timeout:
			t.Fatalf("%s did not print %q within %v", p.name, want, p.wait)
		}
	}
}

// Emit has the program log one batch of records, phase.
func (p *Emitter) Emit(t testing.TB, phase string) {
	t.Helper()
	if _, err := io.WriteString(p.stdin, "emit "+phase+"\n"); err != nil {
		t.Fatal(err)
	}
	p.Expect(t, "emitted "+phase)
}

// End closes the program's stdin and checks that it exits cleanly.
func (p *Emitter) End(t testing.TB) {
	t.Helper()
	p.stdin.Close()
	select {
	case <-p.exited:
		if p.err != nil {
			t.Fatalf("%s: %v\n%s", p.name, p.err, p.stderr.String())
		}
	case <-time.After(p.wait):
		t.Fatalf("%s did not exit", p.name)
	}
}

// Stderr is what the program wrote to its stderr so far.
func (p *Emitter) Stderr() string { return p.stderr.String() }

// PID is the program's process id.
func (p *Emitter) PID() int { return p.cmd.Process.Pid }
