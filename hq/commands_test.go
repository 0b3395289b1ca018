package hq_test

import (
	"slices"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// TestRunCommandsLive: Run.Commands is HQ's control log while the run goes
// on: the commands sent so far, in order, with their times; at the end it
// equals the report's.
func TestRunCommandsLive(t *testing.T) {
	srv := start(t, nil)
	a, run, _ := started(t, srv)
	types := func() []bytefrog.MsgType {
		var ts []bytefrog.MsgType
		for _, c := range run.Commands() {
			ts = append(ts, c.Type)
		}
		return ts
	}
	waitTypes := func(want ...bytefrog.MsgType) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !slices.Equal(types(), want); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("commands %v, want %v", types(), want)
			}
		}
	}
	waitTypes(bytefrog.MsgConfiguration, bytefrog.MsgStart)
	must(t, run.Pause())
	expect(t, a, bytefrog.MsgPause)
	waitTypes(bytefrog.MsgConfiguration, bytefrog.MsgStart, bytefrog.MsgPause)
	must(t, run.Unpause())
	expect(t, a, bytefrog.MsgUnpause)
	must(t, a.Shutdown(false))
	rep := wait(t, run)
	got := run.Commands()
	if !slices.Equal(got, rep.Commands) {
		t.Errorf("after the end: %v, report %v", got, rep.Commands)
	}
	checkCommands(t, rep, bytefrog.MsgConfiguration, bytefrog.MsgStart, bytefrog.MsgPause, bytefrog.MsgUnpause, bytefrog.MsgStop)
	got[0].Type = bytefrog.MsgError // a copy
	if run.Commands()[0].Type != bytefrog.MsgConfiguration {
		t.Error("Commands returned the run's own slice")
	}
}
