// Command fakeagent is a scripted Bytefrog agent for the tadpole-hq tests:
// it connects to $TADPOLE_HQ and plays one scenario.
//
//	fakeagent ok [EVENTS]   a normal run: events on numDataSenders connections, 'X', close
//	fakeagent exit N        a normal run, then exit with status N
//	fakeagent error MSG     send Error(MSG) and exit
//	fakeagent noX           close without the shutdown heartbeat
//	fakeagent follow        obey HQ's commands until Stop
//	fakeagent none          do not connect
package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/tadpole-trace/tadpole/hq/hqtest"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

func main() {
	if err := play(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "fakeagent:", err)
		os.Exit(1)
	}
}

func play(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("no scenario")
	}
	if args[0] == "none" {
		fmt.Println("fakeagent: not connecting")
		return nil
	}
	a, err := hqtest.Dial(os.Getenv("TADPOLE_HQ"), bytefrog.Version1, bytefrog.FlavorBytefrog)
	if err != nil {
		return err
	}
	defer a.Close()
	fmt.Println("fakeagent: connected as run", a.Config.RunID)
	switch args[0] {
	case "ok", "exit":
		events := 10000
		if args[0] == "ok" && len(args) > 1 {
			if events, err = strconv.Atoi(args[1]); err != nil {
				return err
			}
		}
		if err := normal(a, events); err != nil {
			return err
		}
		if args[0] == "exit" && len(args) > 1 {
			code, _ := strconv.Atoi(args[1])
			a.Close()
			os.Exit(code)
		}
		return nil
	case "error":
		if _, err := a.Expect(bytefrog.MsgStart); err != nil {
			return err
		}
		return a.SendError(args[1])
	case "noX":
		if _, err := a.Expect(bytefrog.MsgStart); err != nil {
			return err
		}
		return a.Heartbeat(bytefrog.ModeTracing, 0)
	case "follow":
		return follow(a)
	}
	return fmt.Errorf("unknown scenario %q", args[0])
}

func normal(a *hqtest.Agent, events int) error {
	if _, err := a.Expect(bytefrog.MsgStart); err != nil {
		return err
	}
	if err := a.Heartbeat(bytefrog.ModeTracing, 0); err != nil {
		return err
	}
	chunks, _ := hqtest.Generate(hqtest.Workload{Events: events, Methods: 40, Threads: 3, Chunk: 2048, Seed: 3})
	per := hqtest.Spread(chunks, max(int(a.Config.NumDataSenders), 1))
	for i, b := range per {
		if _, err := a.OpenData(); err != nil {
			return err
		}
		if err := a.Write(i, b); err != nil {
			return err
		}
	}
	if err := a.Class(bytefrog.MsgClassTransformed, "com/example/C0"); err != nil {
		return err
	}
	return a.Shutdown(false)
}

// follow obeys HQ's commands, sending events while tracing, until Stop.
func follow(a *hqtest.Agent) error {
	g := hqtest.NewGen(bytefrog.FlavorBytefrog)
	data := -1
	burst := func() error {
		for i := range 10 {
			g.Entry(1, int32(i))
			g.Exit(1, int32(i), 5)
		}
		return a.Write(data, g.Take())
	}
	for {
		m, err := a.Next()
		if err != nil {
			return err
		}
		mode := bytefrog.Mode(0)
		switch m.Type {
		case bytefrog.MsgStart, bytefrog.MsgUnpause, bytefrog.MsgUnsuspend:
			mode = bytefrog.ModeTracing
			if data < 0 {
				if data, err = a.OpenData(); err != nil {
					return err
				}
			}
		case bytefrog.MsgPause:
			mode = bytefrog.ModePaused
		case bytefrog.MsgSuspend:
			if data >= 0 {
				if err := a.DataBreak(g.Seq); err != nil {
					return err
				}
			}
			mode = bytefrog.ModeSuspended
		case bytefrog.MsgStop:
			fmt.Println("fakeagent: stopped")
			return a.Shutdown(true)
		default:
			return fmt.Errorf("unexpected %v", m.Type)
		}
		if err := a.Heartbeat(mode, 0); err != nil {
			return err
		}
		if mode == bytefrog.ModeTracing && data >= 0 {
			if err := burst(); err != nil {
				return err
			}
		}
	}
}
