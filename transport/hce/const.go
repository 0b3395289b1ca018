package hce

import (
	"fmt"
	"time"
)

// Project-defined values: everything the seed (Hyades Collector Engine base
// protocol) leaves open, chosen once here and tabled in doc.go. None of them
// is known to interoperate with a real TPTP Agent Controller.
const (
	// Magic starts every envelope (open item 1). 0xFE and 0xC0 never occur
	// in UTF-8 text, so string data cannot fake a header.
	Magic uint32 = 0xFEC04845

	// Envelope flag masks (items 2, 3, 5): "bit N of the first flag byte"
	// is bit N of byte 4 of the envelope, the most significant byte of the
	// big-endian u32, so bit N is the mask 1<<(24+N).
	FlagSocketConnect      Flags = 1 << (24 + 0)
	FlagPipeConnect        Flags = 1 << (24 + 1)
	FlagMD5                Flags = 1 << (24 + 2)
	FlagDisconnect         Flags = 1 << (24 + 3)
	FlagConnectionComplete Flags = 1 << (24 + 4)
	FlagConnectionRefused  Flags = 1 << (24 + 5)

	// DefaultMaxPayload caps an envelope's payload (item 6); a larger
	// declared size ends the connection with DISCONNECT(ReasonTooLarge).
	DefaultMaxPayload = 1 << 20

	// HeaderIDFixed is the fixed upper 16 bits of every command block's
	// header ID, HeaderVersion1 the lower 16 bits of the one format (item 7).
	HeaderIDFixed  uint32 = 0x4843 << 16 // "HC"
	HeaderVersion1 uint32 = 0x0001
	HeaderID       uint32 = HeaderIDFixed | HeaderVersion1

	// EngineID is HYADES_ENGINE_ID, the destination of commands for the hub
	// itself (item 8). Connection IDs start at FirstConnID, grow by one and
	// are never reused while the hub runs (item 9); an agent's ID is its
	// connection ID.
	EngineID    uint32 = 1
	FirstConnID uint32 = 2
	// SessionNone is the only session ID until sessions exist (item 10).
	SessionNone uint32 = 0

	// Interface IDs (item 11): the development prefix (top bit set) with the
	// 20-bit group 0x807AD ("tadpole").
	TadpolePrefix          InterfaceID = 0x807AD000
	IfaceAgentManager      InterfaceID = TadpolePrefix | 0x001 // HII_AGENT_MANAGER
	IfaceAgentEvents       InterfaceID = TadpolePrefix | 0x002 // HII_AGENT_MGR_AGENT_EVENTS
	IfaceHyadesAgent       InterfaceID = TadpolePrefix | 0x003 // HII_HYADES_AGENT (reserved)
	IfaceEnvInfo           InterfaceID = TadpolePrefix | 0x004 // HII_ENVINFO (reserved)
	IfaceTadpole           InterfaceID = TadpolePrefix | 0x010 // a tadpole tracing agent
	IfaceGroupMask         InterfaceID = 0xFFFFF000
	IfaceGroupSpecificMask InterfaceID = 0x00000FFF

	// Agent Manager requests (item 12). Replies have their own IDs, request
	// | ReplyBit; CmdRejected answers any unsupported interface or command
	// (item 18) on every interface.
	CmdQueryAvailableAgents CommandID = 0x001
	CmdQueryRunningAgents   CommandID = 0x002
	CmdGetAgentMetadata     CommandID = 0x003
	CmdGetAgentRegistry     CommandID = 0x004
	CmdGetAgent             CommandID = 0x005
	CmdGetSpecificAgent     CommandID = 0x006
	CmdReleaseAgent         CommandID = 0x007
	CmdAttachToAgent        CommandID = 0x008
	CmdDetachFromAgent      CommandID = 0x009
	CmdRegisterAgent        CommandID = 0x00A
	CmdDeregisterAgent      CommandID = 0x00B
	CmdAddEventListener     CommandID = 0x00C

	ReplyBit                    CommandID = 0x1000
	CmdAvailableAgents          CommandID = ReplyBit | 0x001
	CmdRunningAgents            CommandID = ReplyBit | 0x002
	CmdAgentMetadata            CommandID = ReplyBit | 0x003
	CmdAgentRegistry            CommandID = ReplyBit | 0x004
	CmdAgentReference           CommandID = ReplyBit | 0x005
	CmdAgentUnavailable         CommandID = ReplyBit | 0x006
	CmdAgentAttachedSuccessful  CommandID = ReplyBit | 0x008
	CmdAgentAttachDenied        CommandID = ReplyBit | 0x009
	CmdAgentRegistered          CommandID = ReplyBit | 0x00A
	CmdAgentRegistrationRefused CommandID = ReplyBit | 0x00B
	CmdAgentDeregistered        CommandID = ReplyBit | 0x00C
	CmdListenerAccepted         CommandID = ReplyBit | 0x00D
	CmdListenerRejected         CommandID = ReplyBit | 0x00E
	CmdRejected                 CommandID = ReplyBit | 0xFFF

	// Events of IfaceAgentEvents (item 17): a command block from EngineID to
	// the listener, context = its listener ID, data = u32 agent ID.
	EventAgentRegistered   CommandID = 0x001
	EventAgentDeregistered CommandID = 0x002
	EventAgentAvailable    CommandID = 0x003
	EventAgentUnavailable  CommandID = 0x004

	// Request flags (item 14).
	GetAgentNewInstance uint32 = 1 << 0 // CID_GET_AGENT: demand a new instance
	AttachExclusive     uint32 = 1 << 0 // CID_ATTACH_TO_AGENT: exclusive lock

	// Strings (item 15): u32 length in bytes, then UTF-8 bytes, no NUL.
	MaxString = 4096
	// MaxPipeName bounds PIPE_CONNECT's name so the whole envelope fits in
	// one atomic FIFO write (PIPE_BUF is 4096 on Linux).
	MaxPipeName = 1024
	// PipeRequestSuffix names the connector→hub FIFO of a pipe pair: the
	// return pipe R carries hub→connector, R+PipeRequestSuffix the reverse.
	PipeRequestSuffix = ".req"

	// Transports (items 22, 23).
	DefaultAddr             = "127.0.0.1:10006"
	DefaultHandshakeTimeout = 5 * time.Second
	// DefaultIdleTimeout drops a peer that sent nothing for that long;
	// peers send a keep-alive (an envelope with no flags and no payload)
	// after DefaultKeepAlive of silence.
	DefaultIdleTimeout  = 30 * time.Second
	DefaultKeepAlive    = 10 * time.Second
	DefaultWriteTimeout = 5 * time.Second
)

// Reason codes (item 13): one enumeration for CONNECTION_REFUSED,
// DISCONNECT, CID_AGENT_UNAVAILABLE, CID_AGENT_ATTACH_DENIED,
// CID_AGENT_REGISTRATION_REFUSED, CID_LISTENER_REJECTED and CmdRejected.
const (
	ReasonNone               Reason = 0
	ReasonShutdown           Reason = 1  // the hub is shutting down
	ReasonHandshakeRequired  Reason = 2  // a message came before the handshake
	ReasonHandshakeTimeout   Reason = 3  // no handshake in time
	ReasonTooLarge           Reason = 4  // payload size above the cap
	ReasonBadEnvelope        Reason = 5  // flags or framing not understood
	ReasonIdle               Reason = 6  // silent longer than the idle timeout
	ReasonPipeUnavailable    Reason = 7  // the return pipe could not be opened
	ReasonUnknownInterface   Reason = 8  // the interface is not supported
	ReasonUnknownCommand     Reason = 9  // the command is not in the interface
	ReasonBadData            Reason = 10 // the command data is malformed
	ReasonNoSuchAgent        Reason = 11 // no registered agent has that ID or name
	ReasonCannotLaunch       Reason = 12 // the hub launches no agents
	ReasonNoReference        Reason = 13 // attach without a reference
	ReasonExclusivelyLocked  Reason = 14 // another client holds the agent exclusively
	ReasonInUse              Reason = 15 // exclusive attach while others are attached
	ReasonIDMismatch         Reason = 16 // register: agent ID is not the sender's ID
	ReasonNotAttached        Reason = 17 // command to an agent without attaching first
	ReasonNoSuchDestination  Reason = 18 // destination ID is not connected
	ReasonFailed             Reason = 19 // the agent could not carry the command out
	ReasonAlreadyConnected   Reason = 20 // a second CONNECT on one connection
	ReasonUnsupportedVersion Reason = 21 // header ID with the fixed part but another version
	ReasonTooManyConnections Reason = 22 // the hub's connection limit is reached
)

// Flags is the envelope's flags word.
type Flags uint32

// typeMask holds every message-type bit; at most one may be set.
const typeMask = FlagSocketConnect | FlagPipeConnect | FlagDisconnect | FlagConnectionComplete | FlagConnectionRefused

var flagNames = [...]struct {
	f    Flags
	name string
}{
	{FlagSocketConnect, "SOCKET_CONNECT"},
	{FlagPipeConnect, "PIPE_CONNECT"},
	{FlagMD5, "MD5"},
	{FlagDisconnect, "DISCONNECT"},
	{FlagConnectionComplete, "CONNECTION_COMPLETE"},
	{FlagConnectionRefused, "CONNECTION_REFUSED"},
}

func (f Flags) String() string {
	if f == 0 {
		return "DATA"
	}
	s := ""
	rest := f
	for _, n := range flagNames {
		if f&n.f != 0 {
			if s != "" {
				s += "|"
			}
			s += n.name
			rest &^= n.f
		}
	}
	if rest != 0 {
		if s != "" {
			s += "|"
		}
		s += fmt.Sprintf("UNKNOWN_FLAGS_%#x", uint32(rest))
	}
	return s
}

// Type is the message-type bit of f (0 for command payloads).
func (f Flags) Type() Flags { return f & typeMask }

// InterfaceID names an interface: a 20-bit group prefix, 12 bits within.
type InterfaceID uint32

var ifaceNames = [...]string{
	0x001: "HII_AGENT_MANAGER",
	0x002: "HII_AGENT_MGR_AGENT_EVENTS",
	0x003: "HII_HYADES_AGENT",
	0x004: "HII_ENVINFO",
	0x010: "HII_TADPOLE_AGENT",
}

func (i InterfaceID) String() string {
	if i&IfaceGroupMask == TadpolePrefix {
		if n := int(i & IfaceGroupSpecificMask); n < len(ifaceNames) && ifaceNames[n] != "" {
			return ifaceNames[n]
		}
	}
	return fmt.Sprintf("UNKNOWN_INTERFACE_%#08x", uint32(i))
}

// CommandID names a command within an interface.
type CommandID uint32

var managerCmdNames = [...]string{
	0x001: "CID_QUERY_AVAILABLE_AGENTS", 0x002: "CID_QUERY_RUNNING_AGENTS",
	0x003: "CID_GET_AGENT_METADATA", 0x004: "CID_GET_AGENT_REGISTRY",
	0x005: "CID_GET_AGENT", 0x006: "CID_GET_SPECIFIC_AGENT", 0x007: "CID_RELEASE_AGENT",
	0x008: "CID_ATTACH_TO_AGENT", 0x009: "CID_DETACH_FROM_AGENT",
	0x00A: "CID_REGISTER_AGENT", 0x00B: "CID_DEREGISTER_AGENT", 0x00C: "CID_ADD_EVENT_LISTENER",
}

var managerReplyNames = [...]string{
	0x001: "CID_AVAILABLE_AGENTS", 0x002: "CID_RUNNING_AGENTS", 0x003: "CID_AGENT_METADATA",
	0x004: "CID_AGENT_REGISTRY", 0x005: "CID_AGENT_REFERENCE", 0x006: "CID_AGENT_UNAVAILABLE",
	0x008: "CID_AGENT_ATTACHED_SUCCESSFUL", 0x009: "CID_AGENT_ATTACH_DENIED",
	0x00A: "CID_AGENT_REGISTERED", 0x00B: "CID_AGENT_REGISTRATION_REFUSED",
	0x00C: "CID_AGENT_DEREGISTERED", 0x00D: "CID_LISTENER_ACCEPTED", 0x00E: "CID_LISTENER_REJECTED",
}

var eventNames = [...]string{
	0x001: "EID_AGENT_REGISTERED", 0x002: "EID_AGENT_DEREGISTERED",
	0x003: "EID_AGENT_AVAILABLE", 0x004: "EID_AGENT_UNAVAILABLE",
}

// Name names c as a command of interface i.
func (c CommandID) Name(i InterfaceID) string {
	if c == CmdRejected {
		return "CID_COMMAND_REJECTED"
	}
	var table []string
	n := c
	switch i {
	case IfaceAgentManager:
		table = managerCmdNames[:]
		if c&ReplyBit != 0 {
			table, n = managerReplyNames[:], c&^ReplyBit
		}
	case IfaceAgentEvents:
		table = eventNames[:]
	case IfaceTadpole:
		table = tadpoleCmdNames[:]
		if c&ReplyBit != 0 {
			table, n = tadpoleReplyNames[:], c&^ReplyBit
		}
	}
	if int(n) < len(table) && table[n] != "" {
		return table[n]
	}
	return fmt.Sprintf("UNKNOWN_CMD_%#x", uint32(c))
}

func (c CommandID) String() string { return fmt.Sprintf("CMD_%#x", uint32(c)) }

// Reason is a reason code.
type Reason uint32

var reasonNames = [...]string{
	"NONE", "SHUTDOWN", "HANDSHAKE_REQUIRED", "HANDSHAKE_TIMEOUT", "TOO_LARGE",
	"BAD_ENVELOPE", "IDLE", "PIPE_UNAVAILABLE", "UNKNOWN_INTERFACE", "UNKNOWN_COMMAND",
	"BAD_DATA", "NO_SUCH_AGENT", "CANNOT_LAUNCH", "NO_REFERENCE", "EXCLUSIVELY_LOCKED",
	"IN_USE", "ID_MISMATCH", "NOT_ATTACHED", "NO_SUCH_DESTINATION", "FAILED",
	"ALREADY_CONNECTED", "UNSUPPORTED_VERSION", "TOO_MANY_CONNECTIONS",
}

func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("UNKNOWN_REASON_%d", uint32(r))
}

// Sizes, summed from the fields.
const (
	sizeU32        = 4
	sizeU64        = 8
	sizeMD5        = 16
	EnvelopeHeader = sizeU32 + sizeU32 + sizeMD5 + sizeU32 // magic, flags, MD5, size: 28
	BlockHeader    = 8 * sizeU32                           // 32
	offFlags       = sizeU32
	offMD5         = offFlags + sizeU32
	offSize        = offMD5 + sizeMD5
)
