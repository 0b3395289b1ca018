package hce

// The tadpole agent interface (IfaceTadpole): commands a client sends to an
// attached tadpole agent. Every request is answered with the reply of the
// same number | ReplyBit, or TPFailed, or CmdRejected.
const (
	TPListLoggers   CommandID = 0x001 // no data → TPLoggers
	TPEnableLogger  CommandID = 0x002 // str name (glob) → TPDone
	TPDisableLogger CommandID = 0x003 // str name → TPDone
	TPStop          CommandID = 0x004 // → TPDone; ends the trace run
	TPPause         CommandID = 0x005 // → TPDone; instrumented threads wait
	TPResume        CommandID = 0x006 // → TPDone; after pause or suspend
	TPSuspend       CommandID = 0x007 // → TPDone; events are dropped as a break
	TPMark          CommandID = 0x008 // str key, str value → TPDone
	TPStatus        CommandID = 0x009 // no data → TPStatusReply
	TPStart         CommandID = 0x00A // → TPDone; an agent waiting for HQ tries to reach it now

	// TPLoggers: u32 n, then n × (str name, u32 enabled 0/1).
	TPLoggers CommandID = ReplyBit | 0x001
	// TPDone: u32 request command ID.
	TPDone CommandID = ReplyBit | 0x002
	// TPStatusReply: str name, u64 pid, str mode, u64 events, str hq,
	// u32 loggers, u32 enabled loggers.
	TPStatusReply CommandID = ReplyBit | 0x009
	// TPFailed: u32 reason, str message.
	TPFailed CommandID = ReplyBit | 0xFFE
)

var tadpoleCmdNames = [...]string{
	0x001: "TP_LIST_LOGGERS", 0x002: "TP_ENABLE_LOGGER", 0x003: "TP_DISABLE_LOGGER",
	0x004: "TP_STOP", 0x005: "TP_PAUSE", 0x006: "TP_RESUME", 0x007: "TP_SUSPEND",
	0x008: "TP_MARK", 0x009: "TP_STATUS", 0x00A: "TP_START",
}

var tadpoleReplyNames = [...]string{
	0x001: "TP_LOGGERS", 0x002: "TP_DONE", 0x009: "TP_STATUS_REPLY", 0xFFE: "TP_FAILED",
}

// LoggerState is one entry of TPLoggers.
type LoggerState struct {
	Name    string
	Enabled bool
}

// AppendLoggers encodes TPLoggers data.
func AppendLoggers(b []byte, ls []LoggerState) []byte {
	b = AppendU32(b, uint32(len(ls)))
	for _, l := range ls {
		b = AppendString(b, l.Name)
		e := uint32(0)
		if l.Enabled {
			e = 1
		}
		b = AppendU32(b, e)
	}
	return b
}

// ParseLoggers decodes TPLoggers data.
func ParseLoggers(data []byte) ([]LoggerState, error) {
	r := DataReader{b: data}
	n := r.Count(sizeU32 + sizeU32)
	var ls []LoggerState
	for i := uint32(0); i < n && r.err == nil; i++ {
		name := r.String()
		e := r.U32()
		ls = append(ls, LoggerState{Name: name, Enabled: e != 0})
	}
	return ls, r.End()
}

// Status is TPStatusReply's data.
type Status struct {
	Name           string
	PID            uint64
	Mode           string
	Events         uint64
	HQ             string
	Loggers        uint32
	EnabledLoggers uint32
}

// AppendStatus encodes TPStatusReply data.
func AppendStatus(b []byte, s *Status) []byte {
	b = AppendString(b, s.Name)
	b = AppendU64(b, s.PID)
	b = AppendString(b, s.Mode)
	b = AppendU64(b, s.Events)
	b = AppendString(b, s.HQ)
	b = AppendU32(b, s.Loggers)
	return AppendU32(b, s.EnabledLoggers)
}

// ParseStatus decodes TPStatusReply data.
func ParseStatus(data []byte) (Status, error) {
	r := DataReader{b: data}
	s := Status{Name: r.String(), PID: r.U64(), Mode: r.String(), Events: r.U64(), HQ: r.String(), Loggers: r.U32(), EnabledLoggers: r.U32()}
	return s, r.End()
}
