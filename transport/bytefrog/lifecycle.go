package bytefrog

import (
	"errors"
	"fmt"
)

// Errors of Lifecycle.Apply.
var (
	// ErrTransition: the command is not allowed in the current mode; an
	// agent that receives it ends the run with an Error message.
	ErrTransition = errors.New("bytefrog: command not allowed in this mode")
	// ErrNoChange: the command is allowed but changes nothing (Suspend
	// while suspended, anything after Stop); an agent ignores it, HQ does
	// not send it.
	ErrNoChange = errors.New("bytefrog: command changes nothing")
)

// Lifecycle is the agent's state machine, as both ends of the control
// connection see it: HQ to decide which command it may send, the agent to
// follow the ones it receives. Its zero value is not ready: use
// NewLifecycle.
//
// "if you don't want to collect from the start of the program, HQ shall
// send a suspend message before it sends a start message. Until/unless
// told otherwise by HQ (by means of suspend or pause messages), the
// default state of the agent upon receiving the start message shall be
// running as normal (not suspended, not paused)."
type Lifecycle struct {
	Mode Mode
	// StartSuspended is set by Suspend before Start (and cleared by
	// Unsuspend): Start then leads to Suspended instead of Tracing.
	StartSuspended bool
}

// NewLifecycle returns the state of an agent that has sent Hello.
func NewLifecycle() Lifecycle { return Lifecycle{Mode: ModeInitializing} }

// Apply takes command cmd and returns the mode it leads to. On an error
// the state is unchanged: ErrTransition when cmd is not allowed now,
// ErrNoChange when it is allowed but changes nothing.
func (l *Lifecycle) Apply(cmd MsgType) (Mode, error) {
	m := l.Mode
	refuse := func(err error) (Mode, error) { return m, fmt.Errorf("%w: %v while %v", err, cmd, m) }
	if m == ModeShutdown {
		switch cmd {
		case MsgStop, MsgPause, MsgUnpause, MsgSuspend, MsgUnsuspend:
			// After Stop the agent is ending: late orders are moot.
			return refuse(ErrNoChange)
		}
		return refuse(ErrTransition)
	}
	switch cmd {
	case MsgConfiguration:
		// "further Configuration messages before Start" only.
		if m != ModeInitializing {
			return refuse(ErrTransition)
		}
		return m, nil
	case MsgStart:
		if m != ModeInitializing {
			return refuse(ErrTransition)
		}
		l.Mode = ModeTracing
		if l.StartSuspended {
			l.Mode = ModeSuspended
		}
	case MsgStop:
		l.Mode = ModeShutdown
	case MsgPause:
		if m != ModeTracing {
			return refuse(ErrTransition)
		}
		l.Mode = ModePaused
	case MsgUnpause:
		if m != ModePaused {
			return refuse(ErrTransition)
		}
		l.Mode = ModeTracing
	case MsgSuspend:
		switch m {
		case ModeInitializing:
			if l.StartSuspended {
				return refuse(ErrNoChange)
			}
			l.StartSuspended = true
		case ModeTracing:
			l.Mode = ModeSuspended
		case ModeSuspended:
			return refuse(ErrNoChange)
		default:
			return refuse(ErrTransition)
		}
	case MsgUnsuspend:
		switch m {
		case ModeInitializing:
			if !l.StartSuspended {
				return refuse(ErrNoChange)
			}
			l.StartSuspended = false
		case ModeSuspended:
			l.Mode = ModeTracing
		case ModeTracing:
			return refuse(ErrNoChange)
		default:
			return refuse(ErrTransition)
		}
	default:
		return refuse(ErrTransition)
	}
	return l.Mode, nil
}
