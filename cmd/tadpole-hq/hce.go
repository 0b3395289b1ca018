package main

import (
	"context"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tadpole-trace/tadpole/transport/hce"
	"github.com/tadpole-trace/tadpole/transport/hce/hub"
)

// startHub serves the HCE control plane on each address of spec
// ("127.0.0.1:10006", "pipe:/path", comma-separated).
func startHub(spec string, log *slog.Logger, stderr io.Writer) (*hub.Hub, error) {
	cfg := hub.DefaultConfig()
	cfg.Logger = log
	h, err := hub.New(&cfg)
	if err != nil {
		return nil, err
	}
	for _, a := range strings.Split(spec, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		bound, err := h.Listen(a)
		if err != nil {
			h.Close(context.Background())
			return nil, fmt.Errorf("-hce %s: %w", a, err)
		}
		fmt.Fprintf(stderr, "tadpole-hq: HCE hub on %s\n", bound)
	}
	return h, nil
}

func closeHub(h *hub.Hub) {
	if h == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	h.Close(ctx)
}

const ctlUsage = `Usage: tadpole-hq ctl [-hce ADDR] [-pid PID] [-timeout D] COMMAND [ARGS]

Commands (sent through the HCE hub to a registered tadpole agent):
  agents            list the registered agents: id, pid, name, interfaces
  attach PID        attach to the agent of process PID (-x: exclusively) and
                    print its status and agent events until interrupted
  loggers           list the agent's loggers and whether each is enabled
  enable LOGGER     enable the loggers matching LOGGER (a glob)
  disable LOGGER    undo enable LOGGER
  start             an agent waiting for HQ (hq= unreachable so far) tries now
  pause | resume | suspend | stop
                    control tracing
  mark KEY VALUE    record a marker in the trace
  status            print the agent's status

Without -pid the command goes to the only registered tadpole agent.
`

// registryAgent is one <agent> of CID_AGENT_REGISTRY's XML.
type registryAgent struct {
	Name   string `xml:"name,attr"`
	ID     uint32 `xml:"id,attr"`
	PID    uint64 `xml:"pid,attr"`
	Ifaces []struct {
		Name string `xml:"name,attr"`
	} `xml:"interface"`
}

func ctl(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tadpole-hq ctl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, ctlUsage, "\nFlags:\n"); fs.PrintDefaults() }
	addr := fs.String("hce", envOr("TADPOLE_HCE", hce.DefaultAddr), "HCE hub: host:port or pipe:/path (env TADPOLE_HCE)")
	pid := fs.Uint64("pid", 0, "process ID of the agent (0: the only one)")
	timeout := fs.Duration("timeout", 5*time.Second, "bound on each request")
	exclusive := fs.Bool("x", false, "attach: exclusively")
	md5 := fs.Bool("md5", false, "send MD5 digests")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		return exitUsage
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fs.Usage()
		return exitUsage
	}
	cmd, rest := rest[0], rest[1:]
	want := map[string]int{"agents": 0, "attach": 1, "loggers": 0, "enable": 1, "disable": 1, "pause": 0,
		"start": 0, "resume": 0, "suspend": 0, "stop": 0, "mark": 2, "status": 0}
	n, ok := want[cmd]
	if !ok || len(rest) != n {
		fmt.Fprintf(stderr, "tadpole-hq ctl: %q: want one of the commands below with its arguments\n\n", strings.Join(append([]string{cmd}, rest...), " "))
		fs.Usage()
		return exitUsage
	}
	if cmd == "attach" {
		p, err := strconv.ParseUint(rest[0], 10, 64)
		if err != nil {
			fmt.Fprintf(stderr, "tadpole-hq ctl: attach %q: want a process ID\n", rest[0])
			return exitUsage
		}
		*pid = p
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	c, err := hce.NewClient(ctx, *addr, &hce.Config{MD5: *md5})
	if err != nil {
		fmt.Fprintf(stderr, "tadpole-hq ctl: %s: %v\n", *addr, err)
		return exitError
	}
	defer c.Close(hce.ReasonNone)
	if err := runCtl(ctx, c, cmd, rest, *pid, *exclusive, *timeout, stdout); err != nil {
		fmt.Fprintf(stderr, "tadpole-hq ctl %s: %v\n", cmd, err)
		return exitError
	}
	return exitOK
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func registry(ctx context.Context, c *hce.Client) ([]registryAgent, error) {
	x, err := c.Registry(ctx)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Agents []registryAgent `xml:"agent"`
	}
	if err := xml.Unmarshal([]byte(x), &doc); err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	return doc.Agents, nil
}

// pick finds the agent of pid, or the only tadpole agent.
func pick(ctx context.Context, c *hce.Client, pid uint64) (registryAgent, error) {
	as, err := registry(ctx, c)
	if err != nil {
		return registryAgent{}, err
	}
	var found []registryAgent
	for _, a := range as {
		tadpole := false
		for _, i := range a.Ifaces {
			tadpole = tadpole || i.Name == hce.IfaceTadpole.String()
		}
		if tadpole && (pid == 0 || a.PID == pid) {
			found = append(found, a)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) == 0 && pid != 0:
		return registryAgent{}, fmt.Errorf("no tadpole agent with pid %d", pid)
	case len(found) == 0:
		return registryAgent{}, errors.New("no tadpole agent registered")
	}
	return registryAgent{}, fmt.Errorf("%d tadpole agents registered: choose one with -pid", len(found))
}

func runCtl(ctx context.Context, c *hce.Client, cmd string, args []string, pid uint64, exclusive bool, timeout time.Duration, w io.Writer) error {
	if cmd == "agents" {
		as, err := registry(ctx, c)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%-6s %-8s %-24s %s\n", "ID", "PID", "NAME", "INTERFACES")
		for _, a := range as {
			var is []string
			for _, i := range a.Ifaces {
				is = append(is, i.Name)
			}
			fmt.Fprintf(w, "%-6d %-8d %-24s %s\n", a.ID, a.PID, a.Name, strings.Join(is, ","))
		}
		return nil
	}
	a, err := pick(ctx, c, pid)
	if err != nil {
		return err
	}
	if err := c.GetSpecific(ctx, a.ID); err != nil {
		return err
	}
	if cmd == "attach" {
		if err := c.AddListener(ctx, 1); err != nil {
			return err
		}
	}
	if err := c.Attach(ctx, a.ID, exclusive); err != nil {
		return err
	}
	switch cmd {
	case "attach":
		st, err := c.Status(ctx, a.ID)
		if err != nil {
			return err
		}
		printStatus(w, a.ID, st)
		fmt.Fprintf(w, "attached to agent %d; interrupt to detach\n", a.ID)
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(sig)
		for {
			select {
			case e := <-c.Events():
				fmt.Fprintln(w, e)
				if e.ID == hce.EventAgentDeregistered && e.Agent == a.ID {
					return nil
				}
			case <-sig:
				c.Detach(a.ID)
				c.Release(a.ID)
				return nil
			case <-c.Done():
				return c.Err()
			}
		}
	case "loggers":
		ls, err := c.Loggers(ctx, a.ID)
		if err != nil {
			return err
		}
		for _, l := range ls {
			state := "disabled"
			if l.Enabled {
				state = "enabled"
			}
			fmt.Fprintf(w, "%-40s %s\n", l.Name, state)
		}
	case "enable":
		err = c.EnableLogger(ctx, a.ID, args[0])
	case "disable":
		err = c.DisableLogger(ctx, a.ID, args[0])
	case "start":
		err = c.Control(ctx, a.ID, hce.TPStart)
	case "pause":
		err = c.Control(ctx, a.ID, hce.TPPause)
	case "resume":
		err = c.Control(ctx, a.ID, hce.TPResume)
	case "suspend":
		err = c.Control(ctx, a.ID, hce.TPSuspend)
	case "stop":
		err = c.Control(ctx, a.ID, hce.TPStop)
	case "mark":
		err = c.Mark(ctx, a.ID, args[0], args[1])
	case "status":
		st, err := c.Status(ctx, a.ID)
		if err != nil {
			return err
		}
		printStatus(w, a.ID, st)
	}
	if err == nil && cmd != "status" && cmd != "loggers" {
		fmt.Fprintf(w, "%s: done (agent %d, pid %d)\n", cmd, a.ID, a.PID)
	}
	c.Detach(a.ID)
	c.Release(a.ID)
	return err
}

func printStatus(w io.Writer, id uint32, st hce.Status) {
	hq := st.HQ
	if hq == "" {
		hq = "-"
	}
	fmt.Fprintf(w, "agent %d: %s pid %d mode %s events %d hq %s loggers %d (%d enabled)\n",
		id, st.Name, st.PID, st.Mode, st.Events, hq, st.Loggers, st.EnabledLoggers)
}
