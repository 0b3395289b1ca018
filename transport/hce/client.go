package hce

import (
	"context"
	"fmt"
	"sync/atomic"
)

// Event is an Agent Manager event a Client received.
type Event struct {
	Listener uint32 // the listener ID, 0 for a holder's notice
	ID       CommandID
	Agent    uint32
}

func (e Event) String() string {
	return fmt.Sprintf("%s agent %d (listener %d)", e.ID.Name(IfaceAgentEvents), e.Agent, e.Listener)
}

// eventQueue is the number of events a Client buffers; more are dropped
// and counted.
const eventQueue = 256

// Client is a connection that talks to the hub's Agent Manager and to
// attached agents. Its methods are safe for concurrent use.
type Client struct {
	*Conn
	events chan Event
	// DroppedEvents counts events lost because Events was not drained.
	DroppedEvents atomic.Uint64
}

// NewClient dials a hub (see Dial).
func NewClient(ctx context.Context, addr string, cfg *Config) (*Client, error) {
	cl := &Client{events: make(chan Event, eventQueue)}
	c, err := Dial(ctx, addr, cfg, func(_ *Conn, b *Block) {
		if b.Iface != IfaceAgentEvents {
			return
		}
		aid, err := ParseU32(b.Data)
		if err != nil {
			return
		}
		select {
		case cl.events <- Event{Listener: b.Context, ID: b.Cmd, Agent: aid}:
		default:
			cl.DroppedEvents.Add(1)
		}
	})
	if err != nil {
		return nil, err
	}
	cl.Conn = c
	return cl, nil
}

// Events delivers the events of listeners added with AddListener, and
// EID_AGENT_DEREGISTERED for agents this client held that vanished.
func (c *Client) Events() <-chan Event { return c.events }

// manager calls the Agent Manager and checks the reply is one of want.
func (c *Client) manager(ctx context.Context, cmd CommandID, data []byte, want ...CommandID) (Block, error) {
	r, err := c.Call(ctx, EngineID, IfaceAgentManager, cmd, data)
	if err != nil {
		return r, err
	}
	for _, w := range want {
		if r.Cmd == w {
			return r, nil
		}
	}
	op := cmd.Name(IfaceAgentManager)
	switch r.Cmd {
	case CmdAgentUnavailable, CmdAgentAttachDenied, CmdAgentRegistrationRefused, CmdListenerRejected:
		reason, _ := ParseU32(r.Data)
		return r, &ReasonError{Op: op + ": " + r.Cmd.Name(IfaceAgentManager), Reason: Reason(reason)}
	}
	return r, fmt.Errorf("hce: %s: unexpected reply %s", op, r.Cmd.Name(IfaceAgentManager))
}

// QueryAvailable lists the names of agents supporting every interface of
// filter (all agents when empty).
func (c *Client) QueryAvailable(ctx context.Context, filter ...InterfaceID) ([]string, error) {
	r, err := c.manager(ctx, CmdQueryAvailableAgents, AppendIDs(nil, filter), CmdAvailableAgents)
	if err != nil {
		return nil, err
	}
	return ParseStrings(r.Data)
}

// QueryRunning lists the IDs of running agents that support every
// interface of filter and can be attached to.
func (c *Client) QueryRunning(ctx context.Context, filter ...InterfaceID) ([]uint32, error) {
	r, err := c.manager(ctx, CmdQueryRunningAgents, AppendIDs(nil, filter), CmdRunningAgents)
	if err != nil {
		return nil, err
	}
	return ParseIDs[uint32](r.Data)
}

// Registry returns the hub's XML fragment describing every agent.
func (c *Client) Registry(ctx context.Context) (string, error) {
	r, err := c.manager(ctx, CmdGetAgentRegistry, nil, CmdAgentRegistry)
	if err != nil {
		return "", err
	}
	rd := NewDataReader(r.Data)
	s := rd.String()
	return s, rd.End()
}

// Metadata returns the XML metadata of the agents named name ("" if none).
func (c *Client) Metadata(ctx context.Context, name string) (string, error) {
	r, err := c.manager(ctx, CmdGetAgentMetadata, AppendString(nil, name), CmdAgentMetadata)
	if err != nil {
		return "", err
	}
	rd := NewDataReader(r.Data)
	s := rd.String()
	return s, rd.End()
}

// GetAgent takes a reference to a running agent named name.
func (c *Client) GetAgent(ctx context.Context, name string, flags uint32) (uint32, error) {
	r, err := c.manager(ctx, CmdGetAgent, AppendU32(AppendString(nil, name), flags), CmdAgentReference)
	if err != nil {
		return 0, err
	}
	return ParseU32(r.Data)
}

// GetSpecific takes a reference to agent id.
func (c *Client) GetSpecific(ctx context.Context, id uint32) error {
	_, err := c.manager(ctx, CmdGetSpecificAgent, AppendU32(nil, id), CmdAgentReference)
	return err
}

// Release gives a reference back (no reply).
func (c *Client) Release(id uint32) error {
	return c.Send(&Block{Dest: EngineID, Src: c.ID(), Iface: IfaceAgentManager, Cmd: CmdReleaseAgent, Data: AppendU32(nil, id)})
}

// Attach attaches to agent id, which needs a reference first.
func (c *Client) Attach(ctx context.Context, id uint32, exclusive bool) error {
	flags := uint32(0)
	if exclusive {
		flags = AttachExclusive
	}
	_, err := c.manager(ctx, CmdAttachToAgent, AppendU32(AppendU32(nil, id), flags), CmdAgentAttachedSuccessful)
	return err
}

// Detach ends the attachment (no reply).
func (c *Client) Detach(id uint32) error {
	return c.Send(&Block{Dest: EngineID, Src: c.ID(), Iface: IfaceAgentManager, Cmd: CmdDetachFromAgent, Data: AppendU32(nil, id)})
}

// AddListener subscribes to the agent events with listener ID lid.
func (c *Client) AddListener(ctx context.Context, lid uint32) error {
	_, err := c.manager(ctx, CmdAddEventListener, AppendU32(AppendU32(nil, uint32(IfaceAgentEvents)), lid), CmdListenerAccepted)
	return err
}

// Tadpole sends a tadpole-interface command to an attached agent and
// returns the reply's data; TPFailed becomes a *ReasonError.
func (c *Client) Tadpole(ctx context.Context, agent uint32, cmd CommandID, data []byte) (Block, error) {
	r, err := c.Call(ctx, agent, IfaceTadpole, cmd, data)
	if err != nil {
		return r, err
	}
	if r.Cmd == TPFailed {
		rd := NewDataReader(r.Data)
		reason, text := Reason(rd.U32()), rd.String()
		return r, &ReasonError{Op: cmd.Name(IfaceTadpole), Reason: reason, Text: text}
	}
	return r, nil
}

// tpDone sends a command whose reply is TPDone.
func (c *Client) tpDone(ctx context.Context, agent uint32, cmd CommandID, data []byte) error {
	r, err := c.Tadpole(ctx, agent, cmd, data)
	if err == nil && r.Cmd != TPDone {
		err = fmt.Errorf("hce: %s: unexpected reply %s", cmd.Name(IfaceTadpole), r.Cmd.Name(IfaceTadpole))
	}
	return err
}

// Loggers lists an agent's loggers.
func (c *Client) Loggers(ctx context.Context, agent uint32) ([]LoggerState, error) {
	r, err := c.Tadpole(ctx, agent, TPListLoggers, nil)
	if err != nil {
		return nil, err
	}
	return ParseLoggers(r.Data)
}

// EnableLogger enables the loggers matching name (a glob) in an agent.
func (c *Client) EnableLogger(ctx context.Context, agent uint32, name string) error {
	return c.tpDone(ctx, agent, TPEnableLogger, AppendString(nil, name))
}

// DisableLogger undoes EnableLogger(name).
func (c *Client) DisableLogger(ctx context.Context, agent uint32, name string) error {
	return c.tpDone(ctx, agent, TPDisableLogger, AppendString(nil, name))
}

// Control sends TPStart, TPStop, TPPause, TPResume or TPSuspend.
func (c *Client) Control(ctx context.Context, agent uint32, cmd CommandID) error {
	return c.tpDone(ctx, agent, cmd, nil)
}

// Mark records a marker in the agent's trace.
func (c *Client) Mark(ctx context.Context, agent uint32, key, value string) error {
	return c.tpDone(ctx, agent, TPMark, AppendString(AppendString(nil, key), value))
}

// Status asks an agent for its status.
func (c *Client) Status(ctx context.Context, agent uint32) (Status, error) {
	r, err := c.Tadpole(ctx, agent, TPStatus, nil)
	if err != nil {
		return Status{}, err
	}
	return ParseStatus(r.Data)
}

// Register announces the connection as an agent; the agent ID is the
// connection ID.
func (c *Conn) Register(ctx context.Context, name string, pid uint64, ifaces []InterfaceID) error {
	reg := Registration{AgentID: c.ID(), PID: pid, Name: name, Ifaces: ifaces}
	r, err := c.Call(ctx, EngineID, IfaceAgentManager, CmdRegisterAgent, AppendRegistration(nil, &reg))
	if err != nil {
		return err
	}
	if r.Cmd != CmdAgentRegistered {
		reason, _ := ParseU32(r.Data)
		return &ReasonError{Op: "register", Reason: Reason(reason)}
	}
	return nil
}
