package bytefrog

import "fmt"

// MsgType is the one-byte type id that starts every message.
type MsgType uint8

// Message type ids.
const (
	MsgHello                MsgType = 0
	MsgConfiguration        MsgType = 1
	MsgStart                MsgType = 2
	MsgStop                 MsgType = 3
	MsgPause                MsgType = 4
	MsgUnpause              MsgType = 5
	MsgSuspend              MsgType = 6
	MsgUnsuspend            MsgType = 7
	MsgHeartbeat            MsgType = 8
	MsgDataBreak            MsgType = 9
	MsgMapThreadName        MsgType = 10
	MsgMapMethodSignature   MsgType = 11
	MsgMapException         MsgType = 12
	MsgMapSourceLocation    MsgType = 13
	MsgMethodVisit          MsgType = 14
	MsgSourceLocationCount  MsgType = 15
	MsgProjectHello         MsgType = 16
	MsgMethodEntry          MsgType = 20
	MsgMethodExit           MsgType = 21
	MsgException            MsgType = 22
	MsgExceptionBubble      MsgType = 23
	MsgDataHello            MsgType = 30
	MsgDataHelloReply       MsgType = 31
	MsgClassTransformed     MsgType = 40
	MsgClassIgnored         MsgType = 41
	MsgClassTransformFailed MsgType = 42
	MsgMarker               MsgType = 50
	MsgError                MsgType = 99
)

var msgNames = [...]string{
	MsgHello:                "Hello",
	MsgConfiguration:        "Configuration",
	MsgStart:                "Start",
	MsgStop:                 "Stop",
	MsgPause:                "Pause",
	MsgUnpause:              "Unpause",
	MsgSuspend:              "Suspend",
	MsgUnsuspend:            "Unsuspend",
	MsgHeartbeat:            "Heartbeat",
	MsgDataBreak:            "DataBreak",
	MsgMapThreadName:        "MapThreadName",
	MsgMapMethodSignature:   "MapMethodSignature",
	MsgMapException:         "MapException",
	MsgMapSourceLocation:    "MapSourceLocation",
	MsgMethodVisit:          "MethodVisit",
	MsgSourceLocationCount:  "SourceLocationCount",
	MsgProjectHello:         "ProjectHello",
	MsgMethodEntry:          "MethodEntry",
	MsgMethodExit:           "MethodExit",
	MsgException:            "Exception",
	MsgExceptionBubble:      "ExceptionBubble",
	MsgDataHello:            "DataHello",
	MsgDataHelloReply:       "DataHelloReply",
	MsgClassTransformed:     "ClassTransformed",
	MsgClassIgnored:         "ClassIgnored",
	MsgClassTransformFailed: "ClassTransformFailed",
	MsgMarker:               "Marker",
	MsgError:                "Error",
}

func (t MsgType) String() string {
	if int(t) < len(msgNames) && msgNames[t] != "" {
		return msgNames[t]
	}
	return fmt.Sprintf("UNKNOWN_MSG_%d", uint8(t))
}

// Sequenced reports whether messages of type t carry a sequence number that
// takes part in the global, gap-free ordering.
func (t MsgType) Sequenced() bool {
	switch t {
	case MsgMethodEntry, MsgMethodExit, MsgException, MsgExceptionBubble, MsgMarker, MsgMethodVisit:
		return true
	}
	return false
}

// Mode is the agent's mode of operation as reported in a Heartbeat.
type Mode uint8

// Heartbeat modes.
const (
	ModeInitializing Mode = 'I'
	ModeTracing      Mode = 'T'
	ModePaused       Mode = 'P'
	ModeSuspended    Mode = 'S'
	ModeShutdown     Mode = 'X'
)

// Valid reports whether m is one of the five modes the protocol defines.
func (m Mode) Valid() bool {
	switch m {
	case ModeInitializing, ModeTracing, ModePaused, ModeSuspended, ModeShutdown:
		return true
	}
	return false
}

func (m Mode) String() string {
	switch m {
	case ModeInitializing:
		return "Initializing"
	case ModeTracing:
		return "Tracing"
	case ModePaused:
		return "Paused"
	case ModeSuspended:
		return "Suspended"
	case ModeShutdown:
		return "ShuttingDown"
	}
	return fmt.Sprintf("UNKNOWN_MODE_%d", uint8(m))
}

// Flavor selects the MethodExit layout. It is a setting of the HQ being
// talked to, never inferred from the protocol version.
type Flavor uint8

const (
	// FlavorBytefrog is the seed's 17-byte MethodExit with a u16 line number.
	FlavorBytefrog Flavor = iota
	// FlavorCodePulse is the 16-byte MethodExit with a u8 exceptionThrown.
	FlavorCodePulse
)

func (f Flavor) String() string {
	switch f {
	case FlavorBytefrog:
		return "bytefrog"
	case FlavorCodePulse:
		return "codepulse"
	}
	return fmt.Sprintf("UNKNOWN_FLAVOR_%d", uint8(f))
}

// ParseFlavor parses "bytefrog" or "codepulse".
func ParseFlavor(s string) (Flavor, error) {
	switch s {
	case "bytefrog":
		return FlavorBytefrog, nil
	case "codepulse":
		return FlavorCodePulse, nil
	}
	return 0, fmt.Errorf("bytefrog: unknown flavor %q (want bytefrog or codepulse)", s)
}

// Dialect is what a reader must know beyond the bytes: the negotiated
// protocol version (it decides the Configuration encoding) and the
// MethodExit flavour.
type Dialect struct {
	Version uint8
	Flavor  Flavor
	// MaxConfigSize caps a Configuration payload in bytes; 0 means
	// DefaultMaxConfigSize.
	MaxConfigSize int
}

// Protocol versions.
const (
	Version1   uint8 = 1 // Java-serialized configuration
	Version2   uint8 = 2 // JSON configuration
	Version3   uint8 = 3 // adds ids 13–15
	Version4   uint8 = 4 // adds ProjectHello
	MaxVersion       = Version4
)

// Field sizes.
const (
	typeSize = 1
	u8Size   = 1
	u16Size  = 2
	i32Size  = 4
	u64Size  = 8 // a wide store (PutMethodEntryPadded)

	// MaxStringLen is the largest encoded string writeUTF can carry.
	MaxStringLen = 1<<16 - 1
	// DefaultMaxConfigSize caps a Configuration payload unless configured.
	DefaultMaxConfigSize = 1 << 20
)

// Fixed message sizes, type byte included.
const (
	HelloSize               = typeSize + u8Size
	ProjectHelloSize        = typeSize + u8Size + i32Size
	CommandSize             = typeSize
	HeartbeatSize           = typeSize + u8Size + u16Size
	DataBreakSize           = typeSize + i32Size
	MapSourceLocationSize   = typeSize + 4*i32Size + 2*u16Size
	MethodVisitSize         = typeSize + 4*i32Size + u16Size
	SourceLocationCountSize = typeSize + 2*i32Size
	MethodEntrySize         = typeSize + 3*i32Size + u16Size
	MethodExitSize          = typeSize + 3*i32Size + u16Size + u16Size // Bytefrog flavour
	MethodExitCodePulseSize = typeSize + 3*i32Size + u8Size + u16Size
	ExceptionSize           = typeSize + 4*i32Size + u16Size + u16Size
	ExceptionBubbleSize     = typeSize + 4*i32Size + u16Size
	DataHelloSize           = typeSize + u8Size
	DataHelloReplySize      = typeSize

	// Minimum sizes of variable-length messages (empty strings).
	MapThreadNameMinSize      = typeSize + u16Size + i32Size + u16Size
	MapMethodSignatureMinSize = typeSize + i32Size + u16Size
	MapExceptionMinSize       = typeSize + i32Size + u16Size
	ClassMsgMinSize           = typeSize + u16Size
	MarkerMinSize             = typeSize + 2*i32Size + 2*u16Size
	ErrorMinSize              = typeSize + u16Size
	ConfigV1MinSize           = typeSize + i32Size
	ConfigJSONMinSize         = typeSize + u16Size
)

// NoLine is the line number sent when it is unknown (-1 as u16).
const NoLine uint16 = 0xFFFF
