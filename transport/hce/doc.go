// Package hce implements the Hyades Collector Engine (HCE) base protocol,
// seed 004 (the Eclipse Hyades design note later shipped as the TPTP Agent
// Controller's "new protocol"): the message envelope, the connection
// handshake over TCP sockets and named pipes, command blocks, the Agent
// Manager interface's data layouts and tadpole's own agent interface. The
// hub lives in package hub; clients and agents use Dial and Conn.
//
// No public source of the shipped TPTP constants exists, so every value
// the seed leaves open is project-defined (the table below, and the one
// const block in const.go). Nothing here is claimed to interoperate with a
// real Agent Controller.
//
// # Wire format
//
// All integers are big-endian; strings are a u32 byte length and UTF-8
// bytes with no NUL.
//
// Envelope (28-byte header, both directions):
//
//	0  u32  magic      Magic; a reader that lost its place scans for it
//	4  u32  flags      at most one message-type bit, plus FlagMD5
//	8  [16] MD5        MD5 of the payload when FlagMD5 is set, else ignored
//	24 u32  size       payload bytes that follow, at most Config.MaxPayload
//	28 ...  payload
//
// Handshake: the connector sends SOCKET_CONNECT (no payload) on a socket,
// or PIPE_CONNECT (str return pipe name) on the hub's well-known FIFO; the
// hub answers CONNECTION_COMPLETE (u32 connection ID) or
// CONNECTION_REFUSED (u32 reason). Nothing else is accepted first.
// DISCONNECT (u32 reason) may come from either side. An envelope with no
// flags and no payload is a keep-alive.
//
// Command payload: u32 n, then n command blocks, each a 32-byte header
// (header ID, destination, source, session, interface, command, context,
// data size) and its data. The source is the sender's connection ID; a
// reply swaps source and destination and echoes interface and context.
//
// # Project-defined values (seed §7)
//
//	#   item                       value
//	1   magic                      0xFEC04845 (0xFE, 0xC0 never occur in UTF-8)
//	2   flag bits                  "bit N of the first flag byte" = byte 4 = mask 1<<(24+N):
//	                               SOCKET_CONNECT 0x01000000, PIPE_CONNECT 0x02000000,
//	                               DISCONNECT 0x08000000, CONNECTION_COMPLETE 0x10000000,
//	                               CONNECTION_REFUSED 0x20000000
//	3   MD5 flag                   bit 2: 0x04000000
//	4   MD5 coverage, mismatch     the payload bytes only; on a mismatch the envelope
//	                               is dropped and counted (Stats.ChecksumDrops), the
//	                               connection goes on (framing is intact)
//	5   several flag bits          at most one message-type bit plus MD5; other bits
//	                               or two types: the header is skipped, counted
//	                               (Stats.BadFlagDrops) and the reader resyncs
//	6   payload cap                1 MiB (Config.MaxPayload), checked before allocating;
//	                               above it: DISCONNECT(TOO_LARGE) and close
//	7   header ID                  0x48430001: fixed upper 16 bits 0x4843 ("HC"),
//	                               lower 16 bits the format version 1; another version
//	                               with the fixed bits drops the message
//	8   HYADES_ENGINE_ID           1
//	9   connection IDs             from 2, +1 each, never reused while a hub runs;
//	                               an agent's ID is its connection ID
//	10  session ID                 always 0
//	11  interface IDs              prefix 0x807AD000 (top bit: unofficial group 0x807AD):
//	                               HII_AGENT_MANAGER 0x807AD001,
//	                               HII_AGENT_MGR_AGENT_EVENTS 0x807AD002,
//	                               HII_HYADES_AGENT 0x807AD003 (reserved),
//	                               HII_ENVINFO 0x807AD004 (reserved),
//	                               HII_TADPOLE_AGENT 0x807AD010
//	12  command and event IDs      requests 0x001-0x00C in the seed's order (QUERY_AVAILABLE,
//	                               QUERY_RUNNING, GET_METADATA, GET_REGISTRY, GET_AGENT,
//	                               GET_SPECIFIC, RELEASE, ATTACH, DETACH, REGISTER,
//	                               DEREGISTER, ADD_EVENT_LISTENER); each reply has its own
//	                               ID, 0x1000|n (UNAVAILABLE 0x1006, ATTACH_DENIED
//	                               0x1009, REGISTRATION_REFUSED 0x100B, LISTENER_ACCEPTED
//	                               0x100D, LISTENER_REJECTED 0x100E); events EID_AGENT_
//	                               REGISTERED 1, DEREGISTERED 2, AVAILABLE 3, UNAVAILABLE 4
//	13  reason codes               one enumeration, Reason (0 NONE ... 22)
//	14  GET_AGENT / ATTACH flags   bit 0: new instance (always UNAVAILABLE(CANNOT_LAUNCH):
//	                               the hub launches nothing) / bit 0: exclusive
//	15  strings                    u32 length in bytes, UTF-8, no NUL, at most 4096 bytes
//	16  context in replies         echoed from the request; events carry the listener ID
//	17  event delivery             a block from 1 (engine) to the listener, interface
//	                               HII_AGENT_MGR_AGENT_EVENTS, command EID_*, context
//	                               the listener ID, data u32 agent ID; holders of a
//	                               reference to a vanished agent that listen to nothing
//	                               get EID_AGENT_DEREGISTERED with context 0
//	18  unsupported interface/cmd  reply CID_COMMAND_REJECTED 0x1FFF on the request's
//	                               interface: u32 reason (UNKNOWN_INTERFACE, UNKNOWN_COMMAND,
//	                               BAD_DATA, NOT_ATTACHED, NO_SUCH_DESTINATION), u32
//	                               interface, u32 command
//	19  process ID                 u64, the OS pid zero-extended; REGISTER_AGENT may add
//	                               u32 n and n interface IDs after the name
//	20  HTTP, sessions, error log  out of scope
//	21  bulk byte order            always big-endian, no negotiation
//	22  port, bind address         TCP 127.0.0.1:10006 (loopback only by default)
//	23  timeouts                   handshake 5s; a peer silent 30s is dropped
//	                               (DISCONNECT(IDLE)); keep-alive after 10s of silence;
//	                               one write 5s
//
// Named pipes: the hub's FIFO carries only PIPE_CONNECT. The connector
// makes FIFOs R and R+".req" in the same directory, named after the hub's
// FIFO plus a dot; R carries hub→connector, R.req the reverse, with the
// same framing as TCP. The hub opens only FIFOs (no symbolic link) in its
// FIFO's directory whose names start with the FIFO's name and a dot.
//
// Routing (package hub): a command to a connection ID other than 1 is
// forwarded only from a client attached to that agent, or from an agent to
// a client attached to it; anything else is answered with
// CID_COMMAND_REJECTED(NOT_ATTACHED or NO_SUCH_DESTINATION).
package hce
