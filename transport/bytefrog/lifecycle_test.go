package bytefrog

import (
	"errors"
	"testing"
)

// TestLifecycle checks every command in every state. Each cell is the
// state the command leads to, "-" for ErrNoChange and "!" for
// ErrTransition; states are the mode letter, with "i" for Initializing set
// to start suspended.
func TestLifecycle(t *testing.T) {
	states := []Lifecycle{
		{Mode: ModeInitializing}, {Mode: ModeInitializing, StartSuspended: true},
		{Mode: ModeTracing}, {Mode: ModePaused}, {Mode: ModeSuspended}, {Mode: ModeShutdown},
	}
	names := []string{"I", "i", "T", "P", "S", "X"}
	cmds := []MsgType{MsgConfiguration, MsgStart, MsgStop, MsgPause, MsgUnpause, MsgSuspend, MsgUnsuspend, MsgHeartbeat}
	//              Config Start Stop Pause Unpause Suspend Unsuspend Heartbeat
	want := map[string][]string{
		"I": {"I", "T", "X", "!", "!", "i", "-", "!"},
		"i": {"i", "S", "X", "!", "!", "-", "I", "!"},
		"T": {"!", "!", "X", "P", "!", "S", "-", "!"},
		"P": {"!", "!", "X", "!", "T", "!", "!", "!"},
		"S": {"!", "!", "X", "!", "!", "-", "T", "!"},
		"X": {"!", "!", "-", "-", "-", "-", "-", "!"},
	}
	name := func(l Lifecycle) string {
		if l.Mode == ModeInitializing && l.StartSuspended {
			return "i"
		}
		if l.Mode == ModeInitializing {
			return "I"
		}
		return string(rune(l.Mode))
	}
	for i, st := range states {
		for j, cmd := range cmds {
			l := st
			mode, err := l.Apply(cmd)
			var got string
			switch {
			case errors.Is(err, ErrNoChange):
				got = "-"
			case errors.Is(err, ErrTransition):
				got = "!"
			case err != nil:
				t.Fatalf("%s + %v: unexpected error %v", names[i], cmd, err)
			default:
				got = name(l)
				if mode != l.Mode {
					t.Errorf("%s + %v returned mode %v, state %v", names[i], cmd, mode, l.Mode)
				}
			}
			if got != want[names[i]][j] {
				t.Errorf("%s + %v = %s; want %s", names[i], cmd, got, want[names[i]][j])
			}
			if err != nil && l != st {
				t.Errorf("%s + %v: refused but the state changed to %+v", names[i], cmd, l)
			}
		}
	}
}
