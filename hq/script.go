package hq

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// Step is one step of a lifecycle script.
type Step struct {
	Op   string        // wait, await, or a command: start stop pause unpause suspend unsuspend
	Wait time.Duration // wait
	Mode bytefrog.Mode // await
}

func (s Step) String() string {
	switch s.Op {
	case "wait":
		return "wait " + s.Wait.String()
	case "await":
		return "await " + s.Mode.String()
	}
	return s.Op
}

var scriptCommands = map[string]bytefrog.MsgType{
	"start": bytefrog.MsgStart, "stop": bytefrog.MsgStop, "pause": bytefrog.MsgPause,
	"unpause": bytefrog.MsgUnpause, "suspend": bytefrog.MsgSuspend, "unsuspend": bytefrog.MsgUnsuspend,
}

var scriptModes = map[string]bytefrog.Mode{
	"i": bytefrog.ModeInitializing, "initializing": bytefrog.ModeInitializing,
	"t": bytefrog.ModeTracing, "tracing": bytefrog.ModeTracing,
	"p": bytefrog.ModePaused, "paused": bytefrog.ModePaused,
	"s": bytefrog.ModeSuspended, "suspended": bytefrog.ModeSuspended,
	"x": bytefrog.ModeShutdown, "shutdown": bytefrog.ModeShutdown,
}

// ParseScript parses a lifecycle script: steps separated by ';' or new
// lines, each one of
//
//	wait DURATION   pause the script (Go duration: 200ms, 1s, 1m)
//	await MODE      wait for a heartbeat in MODE (I T P S X, or its name)
//	start stop pause unpause suspend unsuspend
//
// A command that is not valid when its turn comes is skipped and noted in
// the run's report; the script ends with the run.
func ParseScript(src string) ([]Step, error) {
	var steps []Step
	for _, line := range strings.FieldsFunc(src, func(r rune) bool { return r == ';' || r == '\n' }) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		op := strings.ToLower(f[0])
		switch {
		case op == "wait" && len(f) == 2:
			d, err := time.ParseDuration(f[1])
			if err != nil || d < 0 {
				return nil, fmt.Errorf("%w: %q: bad duration", ErrScript, line)
			}
			steps = append(steps, Step{Op: op, Wait: d})
		case op == "await" && len(f) == 2:
			m, ok := scriptModes[strings.ToLower(f[1])]
			if !ok {
				return nil, fmt.Errorf("%w: %q: unknown mode (want I, T, P, S or X)", ErrScript, line)
			}
			steps = append(steps, Step{Op: op, Mode: m})
		case len(f) == 1 && scriptCommands[op] != 0:
			steps = append(steps, Step{Op: op})
		default:
			return nil, fmt.Errorf("%w: %q (want wait DURATION, await MODE, start, stop, pause, unpause, suspend or unsuspend)", ErrScript, line)
		}
	}
	return steps, nil
}

// apply runs the step against r.
func (s Step) apply(ctx context.Context, r *Run) error {
	switch s.Op {
	case "wait":
		t := time.NewTimer(s.Wait)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	case "await":
		return r.WaitMode(ctx, s.Mode)
	}
	return r.command(scriptCommands[s.Op])
}
