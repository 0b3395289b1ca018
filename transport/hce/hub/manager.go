package hub

import (
	"encoding/xml"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/tadpole-trace/tadpole/transport/hce"
)

// manage serves an Agent Manager command; h.mu is held.
func (h *Hub) manage(msgs []out, c *hce.Conn, p *peer, b *hce.Block) []out {
	if b.Iface != hce.IfaceAgentManager {
		// "If the interface is not supported by the object, the command
		// will be rejected."
		return h.reject(msgs, c, b, hce.ReasonUnknownInterface)
	}
	id := c.ID()
	r := hce.NewDataReader(b.Data)
	bad := func() []out { return h.reject(msgs, c, b, hce.ReasonBadData) }
	switch b.Cmd {
	case hce.CmdQueryAvailableAgents, hce.CmdQueryRunningAgents:
		filter, err := hce.ParseIDs[hce.InterfaceID](b.Data)
		if err != nil {
			return bad()
		}
		if b.Cmd == hce.CmdQueryAvailableAgents {
			var names []string
			for _, a := range h.matching(filter) {
				if !slices.Contains(names, a.reg.Name) {
					names = append(names, a.reg.Name)
				}
			}
			sort.Strings(names)
			return reply(msgs, c, b, hce.CmdAvailableAgents, hce.AppendStrings(nil, names))
		}
		var ids []uint32
		for _, a := range h.matching(filter) {
			// "if an instance of an agent cannot be attached to, it will not
			// be returned in this list."
			if a.exclusive == 0 || a.exclusive == id {
				ids = append(ids, a.reg.AgentID)
			}
		}
		return reply(msgs, c, b, hce.CmdRunningAgents, hce.AppendIDs(nil, ids))
	case hce.CmdGetAgentMetadata:
		name := r.String()
		if r.End() != nil {
			return bad()
		}
		// "If the agent has no such metadata, the response will return zero
		// as the string length, but a response will still be issued."
		var xs []string
		for _, a := range h.matching(nil) {
			if a.reg.Name == name {
				xs = append(xs, agentXML(a))
			}
		}
		return reply(msgs, c, b, hce.CmdAgentMetadata, hce.AppendString(nil, strings.Join(xs, "")))
	case hce.CmdGetAgentRegistry:
		var sb strings.Builder
		sb.WriteString("<agents>")
		for _, a := range h.matching(nil) {
			sb.WriteString(agentXML(a))
		}
		sb.WriteString("</agents>")
		return reply(msgs, c, b, hce.CmdAgentRegistry, hce.AppendString(nil, sb.String()))
	case hce.CmdGetAgent:
		name, flags := r.String(), r.U32()
		if r.End() != nil {
			return bad()
		}
		if flags&hce.GetAgentNewInstance != 0 {
			return reply(msgs, c, b, hce.CmdAgentUnavailable, hce.AppendU32(nil, uint32(hce.ReasonCannotLaunch)))
		}
		reason := hce.ReasonNoSuchAgent
		for _, a := range h.matching(nil) {
			if a.reg.Name != name {
				continue
			}
			if a.exclusive != 0 && a.exclusive != id {
				reason = hce.ReasonExclusivelyLocked
				continue
			}
			p.refs[a.reg.AgentID]++
			return reply(msgs, c, b, hce.CmdAgentReference, hce.AppendU32(nil, a.reg.AgentID))
		}
		return reply(msgs, c, b, hce.CmdAgentUnavailable, hce.AppendU32(nil, uint32(reason)))
	case hce.CmdGetSpecificAgent:
		aid := r.U32()
		if r.End() != nil {
			return bad()
		}
		if a := h.agents[aid]; a == nil || !a.registered {
			return reply(msgs, c, b, hce.CmdAgentUnavailable, hce.AppendU32(nil, uint32(hce.ReasonNoSuchAgent)))
		}
		p.refs[aid]++
		return reply(msgs, c, b, hce.CmdAgentReference, hce.AppendU32(nil, aid))
	case hce.CmdReleaseAgent:
		aid := r.U32()
		if r.End() != nil {
			return bad()
		}
		// No reply: "The client should assume that the release has taken
		// place immediately." The last reference also ends an attachment.
		if p.refs[aid] > 0 {
			p.refs[aid]--
			if p.refs[aid] == 0 {
				delete(p.refs, aid)
				msgs = h.detach(msgs, id, aid)
			}
		}
		return msgs
	case hce.CmdAttachToAgent:
		aid, flags := r.U32(), r.U32()
		if r.End() != nil {
			return bad()
		}
		deny := func(reason hce.Reason) []out {
			return reply(msgs, c, b, hce.CmdAgentAttachDenied, hce.AppendU32(nil, uint32(reason)))
		}
		a := h.agents[aid]
		switch {
		case a == nil || !a.registered:
			return deny(hce.ReasonNoSuchAgent)
		case p.refs[aid] == 0:
			return deny(hce.ReasonNoReference)
		case a.exclusive != 0 && a.exclusive != id:
			return deny(hce.ReasonExclusivelyLocked)
		}
		excl := flags&hce.AttachExclusive != 0
		if excl {
			for other := range a.attached {
				if other != id {
					return deny(hce.ReasonInUse)
				}
			}
		}
		a.attached[id] = excl
		p.attached[aid] = true
		msgs = reply(msgs, c, b, hce.CmdAgentAttachedSuccessful, nil)
		switch {
		case excl && a.exclusive == 0:
			a.exclusive = id
			msgs = h.emit(msgs, hce.EventAgentUnavailable, aid)
		case !excl && a.exclusive == id:
			a.exclusive = 0
			msgs = h.emit(msgs, hce.EventAgentAvailable, aid)
		}
		return msgs
	case hce.CmdDetachFromAgent:
		aid := r.U32()
		if r.End() != nil {
			return bad()
		}
		return h.detach(msgs, id, aid) // no reply
	case hce.CmdRegisterAgent:
		reg, err := hce.ParseRegistration(b.Data)
		if err != nil {
			return bad()
		}
		if reg.AgentID != id {
			return reply(msgs, c, b, hce.CmdAgentRegistrationRefused, hce.AppendU32(nil, uint32(hce.ReasonIDMismatch)))
		}
		a := h.agents[id]
		if a == nil {
			a = &agent{attached: map[uint32]bool{}}
			h.agents[id] = a
		}
		a.reg, a.registered = reg, true
		msgs = reply(msgs, c, b, hce.CmdAgentRegistered, nil)
		return h.emit(msgs, hce.EventAgentRegistered, id)
	case hce.CmdDeregisterAgent:
		aid := r.U32()
		if r.End() != nil {
			return bad()
		}
		a := h.agents[aid]
		if aid != id || a == nil {
			return h.reject(msgs, c, b, hce.ReasonIDMismatch)
		}
		msgs = reply(msgs, c, b, hce.CmdAgentDeregistered, nil)
		if a.registered {
			a.registered = false
			msgs = h.emit(msgs, hce.EventAgentDeregistered, id)
		}
		return msgs
	case hce.CmdAddEventListener:
		iface, lid := hce.InterfaceID(r.U32()), r.U32()
		if r.End() != nil {
			return bad()
		}
		if iface != hce.IfaceAgentEvents {
			return reply(msgs, c, b, hce.CmdListenerRejected, hce.AppendU32(nil, uint32(hce.ReasonUnknownInterface)))
		}
		if !slices.Contains(p.listeners, lid) {
			p.listeners = append(p.listeners, lid)
		}
		return reply(msgs, c, b, hce.CmdListenerAccepted, nil)
	}
	return h.reject(msgs, c, b, hce.ReasonUnknownCommand)
}

// matching lists the registered agents supporting every interface of
// filter ("the list returned will be only agents that support all of the
// specified IDs"), by ID.
func (h *Hub) matching(filter []hce.InterfaceID) []*agent {
	var as []*agent
	for _, a := range h.agents {
		if !a.registered {
			continue
		}
		ok := true
		for _, f := range filter {
			if !slices.Contains(a.reg.Ifaces, f) {
				ok = false
				break
			}
		}
		if ok {
			as = append(as, a)
		}
	}
	sort.Slice(as, func(i, j int) bool { return as[i].reg.AgentID < as[j].reg.AgentID })
	return as
}

func agentXML(a *agent) string {
	var sb strings.Builder
	sb.WriteString(`<agent name="`)
	xml.EscapeText(&sb, []byte(a.reg.Name))
	fmt.Fprintf(&sb, `" id="%d" pid="%d">`, a.reg.AgentID, a.reg.PID)
	for _, i := range a.reg.Ifaces {
		fmt.Fprintf(&sb, `<interface id="%#08x" name="%v"/>`, uint32(i), i)
	}
	sb.WriteString("</agent>")
	return sb.String()
}
