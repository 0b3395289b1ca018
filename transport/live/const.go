package live

import "fmt"

// Protocol version the relay speaks. babeltrace 2.0 announces 2.4; both
// sides use min(minor).
const (
	ProtocolMajor uint32 = 2
	ProtocolMinor uint32 = 4
)

// Command is a viewer command (enum lttng_viewer_command).
type Command uint32

// Viewer commands.
const (
	CmdConnect       Command = 1
	CmdListSessions  Command = 2
	CmdAttachSession Command = 3
	CmdGetNextIndex  Command = 4
	CmdGetPacket     Command = 5
	CmdGetMetadata   Command = 6
	CmdGetNewStreams Command = 7
	CmdCreateSession Command = 8
	CmdDetachSession Command = 9
)

var cmdNames = [...]string{
	CmdConnect:       "CONNECT",
	CmdListSessions:  "LIST_SESSIONS",
	CmdAttachSession: "ATTACH_SESSION",
	CmdGetNextIndex:  "GET_NEXT_INDEX",
	CmdGetPacket:     "GET_PACKET",
	CmdGetMetadata:   "GET_METADATA",
	CmdGetNewStreams: "GET_NEW_STREAMS",
	CmdCreateSession: "CREATE_SESSION",
	CmdDetachSession: "DETACH_SESSION",
}

func (c Command) String() string {
	if int64(c) < int64(len(cmdNames)) && cmdNames[c] != "" {
		return cmdNames[c]
	}
	return fmt.Sprintf("UNKNOWN_CMD_%d", uint32(c))
}

// Field sizes.
const (
	u32Size = 4
	u64Size = 8

	HostNameMax = 64   // LTTNG_VIEWER_HOST_NAME_MAX, NUL included
	NameMax     = 255  // LTTNG_VIEWER_NAME_MAX, NUL included
	PathMax     = 4096 // LTTNG_VIEWER_PATH_MAX, NUL included
)

// Wire sizes, summed from the packed structs of lttng-viewer-abi.h.
const (
	HeaderSize        = u64Size + u32Size + u32Size                 // data_size, cmd, cmd_version
	ConnectSize       = u64Size + 3*u32Size                         // viewer_session_id, major, minor, type
	AttachRequestSize = 2*u64Size + u32Size                         // session_id, offset, seek
	StreamIDSize      = u64Size                                     // GET_NEXT_INDEX, GET_METADATA, GET_NEW_STREAMS, DETACH
	GetPacketSize     = 2*u64Size + u32Size                         // stream_id, offset, len
	SessionRecordSize = u64Size + 3*u32Size + HostNameMax + NameMax // 339
	StreamRecordSize  = 2*u64Size + u32Size + PathMax + NameMax     // 4371
	IndexReplySize    = 7*u64Size + 2*u32Size                       // 64
	StatusCountSize   = 2 * u32Size                                 // ATTACH, GET_NEW_STREAMS reply heads
	PacketReplySize   = 3 * u32Size                                 // status, len, flags
	MetadataReplySize = u64Size + u32Size                           // len, status
	StatusSize        = u32Size                                     // CREATE, DETACH, generic reply

	// MaxRequestPayload is the largest fixed payload of any command.
	MaxRequestPayload = ConnectSize
)

// payloadSize is the fixed payload size of each command.
var payloadSize = [...]int{
	CmdConnect:       ConnectSize,
	CmdListSessions:  0,
	CmdAttachSession: AttachRequestSize,
	CmdGetNextIndex:  StreamIDSize,
	CmdGetPacket:     GetPacketSize,
	CmdGetMetadata:   StreamIDSize,
	CmdGetNewStreams: StreamIDSize,
	CmdCreateSession: 0,
	CmdDetachSession: StreamIDSize,
}

// PayloadSize returns the fixed payload size of c, and false for an
// unknown command.
func (c Command) PayloadSize() (int, bool) {
	if c == 0 || int64(c) >= int64(len(payloadSize)) {
		return 0, false
	}
	return payloadSize[c], true
}

// ConnType is the connection type in CONNECT.
type ConnType uint32

// Connection types.
const (
	ConnCommand      ConnType = 1 // VIEWER_CLIENT_COMMAND
	ConnNotification ConnType = 2 // VIEWER_CLIENT_NOTIFICATION
)

func (t ConnType) String() string {
	switch t {
	case ConnCommand:
		return "COMMAND"
	case ConnNotification:
		return "NOTIFICATION"
	}
	return fmt.Sprintf("UNKNOWN_CONNTYPE_%d", uint32(t))
}

// Seek is where an attaching viewer starts.
type Seek uint32

// Seek positions.
const (
	SeekBeginning Seek = 1 // the oldest packet still held
	SeekLast      Seek = 2 // the next packet published
)

func (s Seek) String() string {
	switch s {
	case SeekBeginning:
		return "BEGINNING"
	case SeekLast:
		return "LAST"
	}
	return fmt.Sprintf("UNKNOWN_SEEK_%d", uint32(s))
}

// Status is a reply status; its meaning depends on the command.
type Status uint32

// ATTACH_SESSION statuses.
const (
	AttachOK        Status = 1
	AttachAlready   Status = 2
	AttachUnknown   Status = 3
	AttachNotLive   Status = 4
	AttachSeekErr   Status = 5
	AttachNoSession Status = 6
)

// GET_NEXT_INDEX statuses.
const (
	IndexOK       Status = 1
	IndexRetry    Status = 2
	IndexHup      Status = 3
	IndexErr      Status = 4
	IndexInactive Status = 5
	IndexEOF      Status = 6 // fatal in babeltrace 2.0.4: never sent
)

// GET_PACKET statuses.
const (
	PacketOK    Status = 1
	PacketRetry Status = 2
	PacketErr   Status = 3
	PacketEOF   Status = 4
)

// GET_METADATA statuses.
const (
	MetadataOK    Status = 1
	MetadataNoNew Status = 2
	MetadataErr   Status = 3
)

// GET_NEW_STREAMS statuses.
const (
	NewStreamsOK    Status = 1
	NewStreamsNoNew Status = 2
	NewStreamsErr   Status = 3
	NewStreamsHup   Status = 4
)

// CREATE_SESSION statuses.
const (
	CreateOK  Status = 1
	CreateErr Status = 2
)

// DETACH_SESSION statuses.
const (
	DetachOK      Status = 1
	DetachUnknown Status = 2
	DetachErr     Status = 3
)

// ErrUnknownCommandCode is the generic reply to an unknown command
// (LTTNG_ERR_UNK in lttng/lttng-error.h), after which the relay closes.
const ErrUnknownCommandCode uint32 = 11

var statusNames = map[Command][]string{
	CmdAttachSession: {"", "OK", "ALREADY", "UNK", "NOT_LIVE", "SEEK_ERR", "NO_SESSION"},
	CmdGetNextIndex:  {"", "OK", "RETRY", "HUP", "ERR", "INACTIVE", "EOF"},
	CmdGetPacket:     {"", "OK", "RETRY", "ERR", "EOF"},
	CmdGetMetadata:   {"", "OK", "NO_NEW", "ERR"},
	CmdGetNewStreams: {"", "OK", "NO_NEW", "ERR", "HUP"},
	CmdCreateSession: {"", "OK", "ERR"},
	CmdDetachSession: {"", "OK", "UNK", "ERR"},
}

// StatusName names status s as a reply to c.
func StatusName(c Command, s Status) string {
	if names := statusNames[c]; int64(s) < int64(len(names)) && names[s] != "" {
		return names[s]
	}
	return fmt.Sprintf("UNKNOWN_STATUS_%d", uint32(s))
}

// Flags of GET_NEXT_INDEX and GET_PACKET replies.
type Flags uint32

// Reply flags.
const (
	FlagNewMetadata Flags = 1 << 0
	FlagNewStream   Flags = 1 << 1
)

func (f Flags) String() string {
	s := ""
	if f&FlagNewMetadata != 0 {
		s += "|NEW_METADATA"
	}
	if f&FlagNewStream != 0 {
		s += "|NEW_STREAM"
	}
	if rest := f &^ (FlagNewMetadata | FlagNewStream); rest != 0 {
		s += fmt.Sprintf("|0x%x", uint32(rest))
	}
	if s == "" {
		return "0"
	}
	return s[1:]
}
