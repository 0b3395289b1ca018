package hce

// Data layouts of the Agent Manager interface (all u32 unless noted, "str"
// is u32 byte length + UTF-8).

// AppendIDs appends u32 n, then n u32s: the interface filter of the two
// queries, and CID_RUNNING_AGENTS's agent IDs.
func AppendIDs[T ~uint32](b []byte, ids []T) []byte {
	b = AppendU32(b, uint32(len(ids)))
	for _, id := range ids {
		b = AppendU32(b, uint32(id))
	}
	return b
}

// ParseIDs decodes what AppendIDs encodes; the count is checked against
// the data before allocating.
func ParseIDs[T ~uint32](data []byte) ([]T, error) {
	r := DataReader{b: data}
	n := r.Count(sizeU32)
	ids := make([]T, 0, n)
	for i := uint32(0); i < n; i++ {
		ids = append(ids, T(r.U32()))
	}
	return ids, r.End()
}

// AppendStrings appends u32 n, then n strings (CID_AVAILABLE_AGENTS).
func AppendStrings(b []byte, ss []string) []byte {
	b = AppendU32(b, uint32(len(ss)))
	for _, s := range ss {
		b = AppendString(b, s)
	}
	return b
}

// ParseStrings decodes what AppendStrings encodes.
func ParseStrings(data []byte) ([]string, error) {
	r := DataReader{b: data}
	n := r.Count(sizeU32)
	ss := make([]string, 0, n)
	for i := uint32(0); i < n && r.err == nil; i++ {
		ss = append(ss, r.String())
	}
	return ss, r.End()
}

// Registration is CID_REGISTER_AGENT's data: agent ID, u64 process ID, str
// name, then (a project extension the seed's layout leaves room for) u32 n
// and n interface IDs the agent supports. A registration without the
// extension supports no interface beyond the engine's.
type Registration struct {
	AgentID uint32
	PID     uint64
	Name    string
	Ifaces  []InterfaceID
}

// AppendRegistration encodes r.
func AppendRegistration(b []byte, r *Registration) []byte {
	b = AppendU32(b, r.AgentID)
	b = AppendU64(b, r.PID)
	b = AppendString(b, r.Name)
	return AppendIDs(b, r.Ifaces)
}

// ParseRegistration decodes CID_REGISTER_AGENT data.
func ParseRegistration(data []byte) (Registration, error) {
	r := DataReader{b: data}
	reg := Registration{AgentID: r.U32(), PID: r.U64(), Name: r.String()}
	if r.err != nil || len(r.b) == 0 {
		return reg, r.End()
	}
	ids, err := ParseIDs[InterfaceID](r.b)
	reg.Ifaces = ids
	return reg, err
}

// AppendRejected encodes CmdRejected data: u32 reason, the rejected
// interface and command.
func AppendRejected(b []byte, reason Reason, iface InterfaceID, cmd CommandID) []byte {
	b = AppendU32(b, uint32(reason))
	b = AppendU32(b, uint32(iface))
	return AppendU32(b, uint32(cmd))
}

// ParseRejected decodes CmdRejected data.
func ParseRejected(data []byte) (Reason, InterfaceID, CommandID, error) {
	r := DataReader{b: data}
	reason, iface, cmd := Reason(r.U32()), InterfaceID(r.U32()), CommandID(r.U32())
	return reason, iface, cmd, r.End()
}

// AppendPipeConnect encodes PIPE_CONNECT's payload: str return pipe name.
func AppendPipeConnect(b []byte, name string) []byte { return AppendString(b, name) }

// ParsePipeConnect decodes PIPE_CONNECT's payload.
func ParsePipeConnect(p []byte) (string, error) {
	r := DataReader{b: p}
	s := r.String()
	if r.err == nil && (len(s) == 0 || len(s) > MaxPipeName) {
		return "", ErrString
	}
	return s, r.End()
}

// ParseU32 decodes data holding exactly one u32 (connection ID, reason,
// agent ID).
func ParseU32(p []byte) (uint32, error) {
	r := DataReader{b: p}
	v := r.U32()
	return v, r.End()
}
