package lttngagent

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
)

// Registration is the first message of a protocol 2.0 connection, agent to
// sessiond.
type Registration struct {
	Domain Domain
	PID    uint32
	Major  uint32
	Minor  uint32
}

// AppendRegistration appends the 16-byte registration.
func AppendRegistration(b []byte, r Registration) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(r.Domain))
	b = binary.BigEndian.AppendUint32(b, r.PID)
	b = binary.BigEndian.AppendUint32(b, r.Major)
	return binary.BigEndian.AppendUint32(b, r.Minor)
}

// ParseRegistration decodes a registration from the start of b. It does not
// judge the version: the sessiond refuses anything but 2.0.
func ParseRegistration(b []byte) (Registration, error) {
	if len(b) < RegistrationSize {
		return Registration{}, ErrShort
	}
	return Registration{
		Domain: Domain(binary.BigEndian.Uint32(b[0:])),
		PID:    binary.BigEndian.Uint32(b[4:]),
		Major:  binary.BigEndian.Uint32(b[8:]),
		Minor:  binary.BigEndian.Uint32(b[12:]),
	}, nil
}

// Header is a command header, sessiond to agent. Version is cmd_version
// (2.0, u32) or version (RFC v0.1, u64): the sessiond sends 0 and the agent
// ignores it.
type Header struct {
	DataSize uint64
	Cmd      Command
	Version  uint64
}

// AppendHeader appends h in the layout of d. In Dialect20 only the low 32
// bits of Cmd and Version are sent.
func (d Dialect) AppendHeader(b []byte, h Header) []byte {
	b = binary.BigEndian.AppendUint64(b, h.DataSize)
	if d == DialectRFC01 {
		b = binary.BigEndian.AppendUint64(b, uint64(h.Cmd))
		return binary.BigEndian.AppendUint64(b, h.Version)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(h.Cmd))
	return binary.BigEndian.AppendUint32(b, uint32(h.Version))
}

// ParseHeader decodes a header from the start of b.
func (d Dialect) ParseHeader(b []byte) (Header, error) {
	if len(b) < d.HeaderSize() {
		return Header{}, ErrShort
	}
	h := Header{DataSize: binary.BigEndian.Uint64(b[0:])}
	if d == DialectRFC01 {
		h.Cmd = Command(binary.BigEndian.Uint64(b[8:]))
		h.Version = binary.BigEndian.Uint64(b[16:])
	} else {
		h.Cmd = Command(binary.BigEndian.Uint32(b[8:]))
		h.Version = uint64(binary.BigEndian.Uint32(b[12:]))
	}
	return h, nil
}

// Event is the payload of an ENABLE.
type Event struct {
	// Name is the logger name or pattern: a glob where only '*' is special
	// and '\' escapes the next character.
	Name string
	// LogLevel is loglevel_value; INT32_MIN with LogLevelAll when the user
	// gave no level (JUL, log4j).
	LogLevel     int32
	LogLevelType LogLevelType
	// Filter is the filter expression the lttng CLI built, without its NUL;
	// empty when filter_len was 0 (as for enable-event -a).
	Filter string
}

// MatchLevel applies the event's level rule to a record's level.
func (e Event) MatchLevel(level int32) bool { return e.LogLevelType.Match(e.LogLevel, level) }

func (e Event) String() string {
	return fmt.Sprintf("{%q %v %d filter %q}", e.Name, e.LogLevelType, e.LogLevel, e.Filter)
}

// Request is one decoded command. Only the fields of Cmd are set: Event for
// ENABLE, Name for DISABLE, Provider and Context for APP_CTX_ENABLE and
// APP_CTX_DISABLE.
type Request struct {
	Cmd      Command
	Event    Event
	Name     string
	Provider string
	Context  string
}

// ReplyKind is the shape of the reply a command expects.
type ReplyKind uint8

// Reply kinds.
const (
	// ReplyNone: nothing is sent back (REG_DONE). Sending anything would
	// become the "reply" to the next command.
	ReplyNone ReplyKind = iota
	// ReplyGeneric: a u32 ret_code.
	ReplyGeneric
	// ReplyList: the list reply of the dialect.
	ReplyList
)

var replyKindNames = [...]string{ReplyNone: "none", ReplyGeneric: "generic", ReplyList: "list"}

func (k ReplyKind) String() string {
	if int(k) < len(replyKindNames) {
		return replyKindNames[k]
	}
	return fmt.Sprintf("UNKNOWN_REPLY_KIND_%d", uint8(k))
}

// cmdSpec describes one command of a dialect.
type cmdSpec struct {
	reply ReplyKind
	parse func(r *Request, p []byte) error
}

var specs20 = [...]cmdSpec{
	CmdList:          {ReplyList, parseEmpty},
	CmdEnable:        {ReplyGeneric, parseEnable20},
	CmdDisable:       {ReplyGeneric, parseDisable20},
	CmdRegDone:       {ReplyNone, parseEmpty},
	CmdAppCtxEnable:  {ReplyGeneric, parseAppCtx},
	CmdAppCtxDisable: {ReplyGeneric, parseAppCtx},
}

var specsRFC01 = [...]cmdSpec{
	CmdList:    {ReplyList, parseEmpty},
	CmdEnable:  {ReplyGeneric, parseEnableRFC01},
	CmdDisable: {ReplyGeneric, parseDisableRFC01},
}

// spec returns the command's description, or nil when d has no such
// command.
func (d Dialect) spec(c Command) *cmdSpec {
	var t []cmdSpec
	switch d {
	case Dialect20:
		t = specs20[:]
	case DialectRFC01:
		t = specsRFC01[:]
	}
	if c >= Command(len(t)) || t[c].parse == nil {
		return nil
	}
	return &t[c]
}

// Known reports whether c is a command of d.
func (d Dialect) Known(c Command) bool { return d.spec(c) != nil }

// ReplyKind is the reply c expects in d. An unknown command gets a generic
// reply (INVALID).
func (d Dialect) ReplyKind(c Command) ReplyKind {
	if s := d.spec(c); s != nil {
		return s.reply
	}
	return ReplyGeneric
}

// ParseRequest decodes into r the payload of the command announced by h;
// r is reset first. payload must be exactly h.DataSize bytes. Strings are
// copied, so payload may be reused afterwards.
func (d Dialect) ParseRequest(r *Request, h Header, payload []byte) error {
	*r = Request{Cmd: h.Cmd}
	if uint64(len(payload)) != h.DataSize {
		return &CommandError{h.Cmd, h.DataSize, ErrShort}
	}
	s := d.spec(h.Cmd)
	if s == nil {
		return &CommandError{h.Cmd, h.DataSize, ErrUnknownCommand}
	}
	if err := s.parse(r, payload); err != nil {
		return &CommandError{h.Cmd, h.DataSize, err}
	}
	return nil
}

// parseEmpty: "LIST | 0 | —", "REG_DONE | 0 | —".
func parseEmpty(_ *Request, p []byte) error {
	if len(p) != 0 {
		return ErrBadSize
	}
	return nil
}

// parseEnable20 decodes "s32 loglevel_value, u32 loglevel_type,
// char name[256], u32 filter_len, filter".
func parseEnable20(r *Request, p []byte) error {
	// "data_size ≥ 268 for ENABLE"
	if len(p) < enableFixedSize {
		return ErrBadSize
	}
	ev := &r.Event
	ev.LogLevel = int32(binary.BigEndian.Uint32(p[0:]))
	ev.LogLevelType = LogLevelType(binary.BigEndian.Uint32(p[u32Size:]))
	if !ev.LogLevelType.Valid() {
		return fmt.Errorf("%w: loglevel type %d", ErrBadPayload, uint32(ev.LogLevelType))
	}
	const nameOff = 2 * u32Size
	name, err := cString(p[nameOff : nameOff+NameFieldSize])
	if err != nil {
		return err
	}
	ev.Name = name
	flen := uint64(binary.BigEndian.Uint32(p[nameOff+NameFieldSize:]))
	if flen > MaxFilterSize {
		return fmt.Errorf("%w: filter_len %d", ErrTooLarge, flen)
	}
	// "268 + filter_len == data_size"
	if enableFixedSize+flen != uint64(len(p)) {
		return ErrBadSize
	}
	if flen > 0 {
		// "filter_len = strlen(filter) + 1 (includes the NUL)"
		f := p[enableFixedSize:]
		if f[len(f)-1] != 0 {
			return fmt.Errorf("%w: filter not NUL-terminated", ErrBadPayload)
		}
		ev.Filter = string(f[:bytes.IndexByte(f, 0)])
	}
	return nil
}

// parseDisable20 decodes "char name[256]".
func parseDisable20(r *Request, p []byte) error {
	// "data_size == 256 for DISABLE"
	if len(p) != disableSize {
		return ErrBadSize
	}
	name, err := cString(p)
	r.Name = name
	return err
}

// parseAppCtx decodes "u32 len1 | provider_name (len1 bytes, including the
// NUL) | u32 len2 | ctx_name (len2 bytes, including the NUL)".
func parseAppCtx(r *Request, p []byte) error {
	if len(p) < appCtxFixedSize {
		return ErrBadSize
	}
	rest := p
	var strs [2]string
	for i := range strs {
		if len(rest) < u32Size {
			return ErrBadSize
		}
		n := uint64(binary.BigEndian.Uint32(rest))
		rest = rest[u32Size:]
		if n > uint64(len(rest)) {
			return ErrBadSize
		}
		s, err := cString(rest[:n])
		if err != nil {
			return err
		}
		if rest[n-1] != 0 {
			return fmt.Errorf("%w: context string not NUL-terminated", ErrBadPayload)
		}
		strs[i] = s
		rest = rest[n:]
	}
	if len(rest) != 0 {
		return ErrBadSize
	}
	r.Provider, r.Context = strs[0], strs[1]
	return nil
}

// parseEnableRFC01 decodes "struct enable_logger { char name[MAX_SIZE] }";
// MAX_SIZE is taken as the name field size, so data_size is 1 to 256 bytes
// holding a NUL-terminated name.
func parseEnableRFC01(r *Request, p []byte) error {
	name, err := parseNameRFC01(p)
	r.Event = Event{Name: name, LogLevel: math.MinInt32, LogLevelType: LogLevelAll}
	return err
}

// parseDisableRFC01 decodes "struct disable_logger { char name[MAX_SIZE] }".
func parseDisableRFC01(r *Request, p []byte) error {
	name, err := parseNameRFC01(p)
	r.Name = name
	return err
}

func parseNameRFC01(p []byte) (string, error) {
	if len(p) == 0 || len(p) > NameFieldSize {
		return "", ErrBadSize
	}
	return cString(p)
}

// cString returns the C string at the start of field: "cut at the first NUL
// and don't rely on trimming". The NUL must be inside the field and the name
// must not be empty.
func cString(field []byte) (string, error) {
	i := bytes.IndexByte(field, 0)
	if i < 0 {
		return "", fmt.Errorf("%w: not NUL-terminated within %d bytes", ErrBadName, len(field))
	}
	if i == 0 {
		return "", fmt.Errorf("%w: empty", ErrBadName)
	}
	return string(field[:i]), nil
}

// ValidName reports whether name can be sent in a name field or a LIST
// reply: 1 to MaxNameLen bytes without a NUL. "A name of 256 bytes or more
// makes the whole lttng list fail"; "never send empty names".
func ValidName(name string) bool {
	return len(name) > 0 && len(name) <= MaxNameLen && strings.IndexByte(name, 0) < 0
}

// AppendRequest appends the header and payload of r in the layout of d: the
// daemon side of the protocol, for tests and tools.
func (d Dialect) AppendRequest(b []byte, r *Request) ([]byte, error) {
	if !d.Known(r.Cmd) {
		return b, fmt.Errorf("%w %v in dialect %v", ErrUnknownCommand, r.Cmd, d)
	}
	switch r.Cmd {
	case CmdList, CmdRegDone:
		return d.AppendHeader(b, Header{Cmd: r.Cmd}), nil
	case CmdEnable:
		if !ValidName(r.Event.Name) {
			return b, fmt.Errorf("%w %q", ErrBadName, r.Event.Name)
		}
		if d == DialectRFC01 {
			b = d.AppendHeader(b, Header{DataSize: NameFieldSize, Cmd: r.Cmd})
			return appendNameField(b, r.Event.Name), nil
		}
		var flen int
		if r.Event.Filter != "" {
			flen = len(r.Event.Filter) + 1
			if flen > MaxFilterSize || strings.IndexByte(r.Event.Filter, 0) >= 0 {
				return b, fmt.Errorf("%w: filter of %d bytes", ErrBadPayload, len(r.Event.Filter))
			}
		}
		b = d.AppendHeader(b, Header{DataSize: uint64(enableFixedSize + flen), Cmd: r.Cmd})
		b = binary.BigEndian.AppendUint32(b, uint32(r.Event.LogLevel))
		b = binary.BigEndian.AppendUint32(b, uint32(r.Event.LogLevelType))
		b = appendNameField(b, r.Event.Name)
		b = binary.BigEndian.AppendUint32(b, uint32(flen))
		if flen > 0 {
			b = append(b, r.Event.Filter...)
			b = append(b, 0)
		}
		return b, nil
	case CmdDisable:
		if !ValidName(r.Name) {
			return b, fmt.Errorf("%w %q", ErrBadName, r.Name)
		}
		b = d.AppendHeader(b, Header{DataSize: NameFieldSize, Cmd: r.Cmd})
		return appendNameField(b, r.Name), nil
	default: // CmdAppCtxEnable, CmdAppCtxDisable
		for _, s := range [...]string{r.Provider, r.Context} {
			if s == "" || len(s) >= MaxFilterSize || strings.IndexByte(s, 0) >= 0 {
				return b, fmt.Errorf("%w: context name %q", ErrBadName, s)
			}
		}
		size := appCtxFixedSize + len(r.Provider) + 1 + len(r.Context) + 1
		b = d.AppendHeader(b, Header{DataSize: uint64(size), Cmd: r.Cmd})
		for _, s := range [...]string{r.Provider, r.Context} {
			b = binary.BigEndian.AppendUint32(b, uint32(len(s)+1))
			b = append(b, s...)
			b = append(b, 0)
		}
		return b, nil
	}
}

// appendNameField appends name zero-padded to NameFieldSize bytes. name
// must satisfy ValidName.
func appendNameField(b []byte, name string) []byte {
	b = append(b, name...)
	var zeros [NameFieldSize]byte
	return append(b, zeros[:NameFieldSize-len(name)]...)
}

// AppendReply appends a generic reply.
func AppendReply(b []byte, code ReplyCode) []byte {
	return binary.BigEndian.AppendUint32(b, uint32(code))
}

// ParseReply decodes a generic reply.
func ParseReply(b []byte) (ReplyCode, error) {
	if len(b) < ReplySize {
		return 0, ErrShort
	}
	return ReplyCode(binary.BigEndian.Uint32(b)), nil
}

// AppendListReply appends a successful list reply in the layout of d. Names
// that fail ValidName are left out, so the counts always agree with the
// names sent. It returns b and the number of names written.
func (d Dialect) AppendListReply(b []byte, names []string) ([]byte, int) {
	var size, n int
	for _, s := range names {
		if ValidName(s) {
			size += len(s) + 1
			n++
		}
	}
	if d == DialectRFC01 {
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	} else {
		// "ret_code, must be 1"; "data_size = the total bytes of all names
		// including their NULs (nb_event is not counted)".
		b = binary.BigEndian.AppendUint32(b, uint32(ReplySuccess))
		b = binary.BigEndian.AppendUint32(b, uint32(size))
		b = binary.BigEndian.AppendUint32(b, uint32(n))
	}
	for _, s := range names {
		if ValidName(s) {
			b = append(b, s...)
			b = append(b, 0)
		}
	}
	if d == DialectRFC01 {
		b = binary.BigEndian.AppendUint32(b, uint32(ReplySuccess))
	}
	return b, n
}

// ParseListReply decodes a list reply from the start of b: the daemon side,
// for tests and tools. It returns the names and the bytes consumed. A reply
// whose ret_code is not SUCCESS, whose counts disagree or that holds an
// empty name is ErrBadReply.
func (d Dialect) ParseListReply(b []byte) (names []string, n int, err error) {
	if d == DialectRFC01 {
		return parseListReplyRFC01(b)
	}
	if len(b) < listHeaderSize20 {
		return nil, 0, ErrShort
	}
	code := ReplyCode(binary.BigEndian.Uint32(b[0:]))
	size := uint64(binary.BigEndian.Uint32(b[4:]))
	count := uint64(binary.BigEndian.Uint32(b[8:]))
	if code != ReplySuccess {
		return nil, 0, fmt.Errorf("%w: ret_code %v", ErrBadReply, code)
	}
	if uint64(len(b)-listHeaderSize20) < size {
		return nil, 0, ErrShort
	}
	data := b[listHeaderSize20 : listHeaderSize20+int(size)]
	// Every name takes at least two bytes, so count bounds nothing that
	// data does not already bound.
	if count > size/2 {
		return nil, 0, fmt.Errorf("%w: %d names in %d bytes", ErrBadReply, count, size)
	}
	names = make([]string, 0, count)
	for len(data) > 0 {
		s, rest, ok := nextCString(data)
		if !ok {
			return nil, 0, fmt.Errorf("%w: unterminated or empty name", ErrBadReply)
		}
		names = append(names, s)
		data = rest
	}
	if uint64(len(names)) != count {
		return nil, 0, fmt.Errorf("%w: nb_event %d but %d names", ErrBadReply, count, len(names))
	}
	return names, listHeaderSize20 + int(size), nil
}

func parseListReplyRFC01(b []byte) ([]string, int, error) {
	if len(b) < listHeaderSizeRFC01 {
		return nil, 0, ErrShort
	}
	count := binary.BigEndian.Uint64(b)
	data := b[listHeaderSizeRFC01:]
	var names []string
	for i := uint64(0); i < count; i++ {
		if bytes.IndexByte(data, 0) < 0 {
			return nil, 0, ErrShort
		}
		s, rest, ok := nextCString(data)
		if !ok {
			return nil, 0, fmt.Errorf("%w: empty name", ErrBadReply)
		}
		names = append(names, s)
		data = rest
	}
	if len(data) < listTrailerSizeRFC01 {
		return nil, 0, ErrShort
	}
	if code := ReplyCode(binary.BigEndian.Uint32(data)); code != ReplySuccess {
		return nil, 0, fmt.Errorf("%w: ret_code %v", ErrBadReply, code)
	}
	return names, len(b) - len(data) + listTrailerSizeRFC01, nil
}

// nextCString splits a non-empty NUL-terminated string off the front of b.
func nextCString(b []byte) (s string, rest []byte, ok bool) {
	i := bytes.IndexByte(b, 0)
	if i <= 0 {
		return "", nil, false
	}
	return string(b[:i]), b[i+1:], true
}
