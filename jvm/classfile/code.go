package classfile

import (
	"fmt"
	"strconv"
)

// Code is a decoded Code attribute (JVMS §4.7.3). Code aliases the class
// file bytes when decoded: copy it before changing it in place.
type Code struct {
	MaxStack   uint16
	MaxLocals  uint16
	Code       []byte
	Exceptions []ExceptionEntry
	Attrs      []CodeAttr // in file order
}

// ExceptionEntry is one exception_table entry. EndPC is exclusive;
// CatchType 0 catches everything.
type ExceptionEntry struct {
	StartPC, EndPC, HandlerPC, CatchType uint16
}

// CodeAttrKind says how a Code sub-attribute is held.
type CodeAttrKind uint8

// Code sub-attribute kinds. Other attributes (type annotations, ...) are
// CodeAttrRaw.
const (
	CodeAttrRaw CodeAttrKind = iota
	CodeAttrLineNumbers
	CodeAttrLocalVars
	CodeAttrLocalVarTypes
	CodeAttrStackMap
)

var codeAttrKindNames = [...]string{"Raw", AttrLineNumberTable, AttrLocalVariableTable,
	AttrLocalVariableTypeTable, AttrStackMapTable}

func (k CodeAttrKind) String() string {
	if int(k) < len(codeAttrKindNames) {
		return codeAttrKindNames[k]
	}
	return "UNKNOWN_CODE_ATTR_" + strconv.Itoa(int(k))
}

// CodeAttr is an attribute of a Code attribute. Kind selects the field
// that holds its content: Lines (LineNumberTable), Locals
// (LocalVariableTable and LocalVariableTypeTable, where Desc is the
// signature_index), Frames (StackMapTable) or Data (any other).
type CodeAttr struct {
	Name   uint16 // attribute_name_index
	Kind   CodeAttrKind
	Lines  []LineNumber
	Locals []LocalVar
	Frames []Frame
	Data   []byte // CodeAttrRaw only; aliases the class file when decoded
	Offset int    // offset of the attribute's info in the class file, -1 if built
}

// LineNumber is a LineNumberTable entry.
type LineNumber struct{ StartPC, Line uint16 }

// LocalVar is a LocalVariableTable or LocalVariableTypeTable entry; it
// covers [StartPC, StartPC+Length).
type LocalVar struct {
	StartPC, Length uint16
	Name            uint16 // name_index
	Desc            uint16 // descriptor_index, or signature_index in a type table
	Index           uint16 // local variable slot
}

// CodeIndex returns the index in m.Attrs of the Code attribute, or -1
// (abstract and native methods, fields).
func (m *Member) CodeIndex(p *Pool) int { return FindAttr(p, m.Attrs, AttrCode) }

// Code decodes the method's Code attribute; it returns nil, nil when there
// is none. Errors are *FormatError naming the offset in the class file.
func (m *Member) Code(p *Pool) (*Code, error) {
	i := m.CodeIndex(p)
	if i < 0 {
		return nil, nil
	}
	return DecodeCode(p, &m.Attrs[i])
}

// SetCode encodes c and stores it as the method's Code attribute, in place
// of the existing one or appended (adding the "Code" name to the pool).
func (m *Member) SetCode(p *Pool, c *Code) error {
	data, err := c.Encode()
	if err != nil {
		return err
	}
	return m.setCodeData(p, data)
}

func (m *Member) setCodeData(p *Pool, data []byte) error {
	if i := m.CodeIndex(p); i >= 0 {
		m.Attrs[i].Data, m.Attrs[i].Offset = data, -1
		return nil
	}
	name, err := p.AddUTF8(AttrCode)
	if err != nil {
		return err
	}
	m.Attrs = append(m.Attrs, Attribute{Name: name, Data: data, Offset: -1})
	return nil
}

// codeBlock holds a Code with room for the usual number of exception
// entries and sub-attributes, so that decoding allocates once for them.
type codeBlock struct {
	code  Code
	attrs [3]CodeAttr
	exc   [2]ExceptionEntry
}

// DecodeCode decodes the info of a Code attribute. Line, local-variable
// and stack-map tables are decoded into typed values; every other
// sub-attribute is kept as bytes.
func DecodeCode(p *Pool, a *Attribute) (*Code, error) { return decodeCode(p, a, nil) }

// decodeCode decodes a Code attribute, taking memory from arena when it is
// not nil.
func decodeCode(p *Pool, a *Attribute, arena *CodeArena) (*Code, error) {
	base := a.Offset
	if base < 0 {
		base = 0
	}
	r := &reader{b: a.Data, base: base}
	var blk *codeBlock
	var c *Code
	if arena == nil {
		blk = &codeBlock{}
		c = &blk.code
	} else {
		c = &take(&arena.codes, 1)[0]
	}
	c.MaxStack = r.u2("max_stack")
	c.MaxLocals = r.u2("max_locals")
	at := r.pos()
	n := r.u4("code_length")
	if r.err == nil && (n == 0 || n > maxU2) {
		return nil, formatErr(at, ErrBadAttribute, "code_length "+strconv.FormatUint(uint64(n), 10))
	}
	if r.err == nil && uint64(n) > uint64(r.remaining()) {
		return nil, formatErr(at, ErrTruncated, "code")
	}
	c.Code = r.bytes(int(n), "code")
	ne := int(r.u2("exception_table_length"))
	if r.need(ne*excEntrySize, "exception_table") && ne > 0 {
		switch {
		case arena != nil:
			c.Exceptions = take(&arena.excs, ne)
		case ne <= len(blk.exc):
			c.Exceptions = blk.exc[:ne:ne]
		default:
			c.Exceptions = make([]ExceptionEntry, ne)
		}
		for i := range c.Exceptions {
			e := &c.Exceptions[i]
			e.StartPC = r.u2("start_pc")
			e.EndPC = r.u2("end_pc")
			e.HandlerPC = r.u2("handler_pc")
			at = r.pos()
			e.CatchType = r.u2("catch_type")
			if e.CatchType != 0 && !p.is(e.CatchType, TagClass) {
				r.failAt(at, ErrBadConstant, "catch_type is not a Class")
			}
		}
	}
	na := int(r.u2("Code attributes_count"))
	if r.need(na*attrHeadSize, "Code attributes") && na > 0 {
		switch {
		case arena != nil:
			c.Attrs = take(&arena.attrs, na)
		case na <= len(blk.attrs):
			c.Attrs = blk.attrs[:na:na]
		default:
			c.Attrs = make([]CodeAttr, na)
		}
		for i := range c.Attrs {
			decodeCodeAttr(r, p, &c.Attrs[i], arena)
		}
	}
	if r.err == nil && r.remaining() != 0 {
		r.fail(ErrBadAttribute, "Code attribute longer than its content")
	}
	if r.err != nil {
		return nil, r.err
	}
	return c, nil
}

func decodeCodeAttr(r *reader, p *Pool, ca *CodeAttr, arena *CodeArena) {
	at := r.pos()
	ca.Name = r.u2("attribute_name_index")
	size := r.u4("attribute_length")
	if r.err != nil {
		return
	}
	if !p.is(ca.Name, TagUtf8) {
		r.failAt(at, ErrBadConstant, "Code attribute name is not a Utf8")
		return
	}
	if uint64(size) > uint64(r.remaining()) {
		r.fail(ErrTruncated, "Code attribute "+p.Utf8(ca.Name))
		return
	}
	ca.Offset = r.pos()
	sub := &reader{b: r.bytes(int(size), "attribute"), base: ca.Offset}
	name := p.Utf8Bytes(ca.Name)
	switch string(name) {
	case AttrLineNumberTable:
		ca.Kind = CodeAttrLineNumbers
		n := int(sub.u2("line_number_table_length"))
		if sub.need(n*lineEntrySize, "line_number_table") {
			ca.Lines = alloc(arena.lineSlab(), n)
			for i := range ca.Lines {
				ca.Lines[i] = LineNumber{StartPC: sub.u2("start_pc"), Line: sub.u2("line_number")}
			}
		}
	case AttrLocalVariableTable, AttrLocalVariableTypeTable:
		ca.Kind = CodeAttrLocalVars
		if string(name) == AttrLocalVariableTypeTable {
			ca.Kind = CodeAttrLocalVarTypes
		}
		n := int(sub.u2("local_variable_table_length"))
		if sub.need(n*localEntrySize, "local_variable_table") {
			ca.Locals = alloc(arena.localSlab(), n)
			for i := range ca.Locals {
				v := &ca.Locals[i]
				v.StartPC = sub.u2("start_pc")
				v.Length = sub.u2("length")
				v.Name = sub.u2("name_index")
				v.Desc = sub.u2("descriptor_index")
				v.Index = sub.u2("index")
			}
		}
	case AttrStackMapTable:
		ca.Kind = CodeAttrStackMap
		ca.Frames = decodeFrames(sub, p, arena)
	default:
		ca.Kind = CodeAttrRaw
		ca.Data = sub.b
		return
	}
	if sub.err == nil && sub.remaining() != 0 {
		sub.fail(ErrBadAttribute, string(name)+" longer than its content")
	}
	if sub.err != nil && r.err == nil {
		r.err = sub.err
	}
}

// Size returns the encoded size of the Code attribute's info.
func (c *Code) Size() int {
	n := codeHeadSize + len(c.Code) + 2 + excEntrySize*len(c.Exceptions) + 2
	for i := range c.Attrs {
		n += attrHeadSize + c.Attrs[i].size()
	}
	return n
}

func (ca *CodeAttr) size() int {
	switch ca.Kind {
	case CodeAttrLineNumbers:
		return 2 + lineEntrySize*len(ca.Lines)
	case CodeAttrLocalVars, CodeAttrLocalVarTypes:
		return 2 + localEntrySize*len(ca.Locals)
	case CodeAttrStackMap:
		return framesSize(ca.Frames)
	}
	return len(ca.Data)
}

// Encode returns the info bytes of the Code attribute.
func (c *Code) Encode() ([]byte, error) { return c.AppendTo(make([]byte, 0, c.Size())) }

// AppendTo appends the info bytes of the Code attribute to b. It returns
// ErrTooLarge when the code exceeds 65535 bytes or a table its count, and
// an error wrapping ErrBadAttribute for a stack map frame that cannot be
// encoded. A decoded, unchanged Code encodes to its original bytes.
func (c *Code) AppendTo(b []byte) ([]byte, error) {
	switch {
	case len(c.Code) == 0 || len(c.Code) > maxU2:
		return b, tooLarge("code_length", len(c.Code))
	case len(c.Exceptions) > maxU2:
		return b, tooLarge("exception_table_length", len(c.Exceptions))
	case len(c.Attrs) > maxU2:
		return b, tooLarge("Code attributes_count", len(c.Attrs))
	}
	b = appendU2(b, c.MaxStack)
	b = appendU2(b, c.MaxLocals)
	b = appendU4(b, uint32(len(c.Code)))
	b = append(b, c.Code...)
	b = appendU2(b, uint16(len(c.Exceptions)))
	for _, e := range c.Exceptions {
		b = appendU2(b, e.StartPC)
		b = appendU2(b, e.EndPC)
		b = appendU2(b, e.HandlerPC)
		b = appendU2(b, e.CatchType)
	}
	b = appendU2(b, uint16(len(c.Attrs)))
	for i := range c.Attrs {
		var err error
		if b, err = c.Attrs[i].appendTo(b); err != nil {
			return b, err
		}
	}
	return b, nil
}

func (ca *CodeAttr) appendTo(b []byte) ([]byte, error) {
	b = appendU2(b, ca.Name)
	lenAt := len(b)
	b = appendU4(b, 0)
	switch ca.Kind {
	case CodeAttrLineNumbers:
		if len(ca.Lines) > maxU2 {
			return b, tooLarge("line_number_table_length", len(ca.Lines))
		}
		b = appendU2(b, uint16(len(ca.Lines)))
		for _, l := range ca.Lines {
			b = appendU2(b, l.StartPC)
			b = appendU2(b, l.Line)
		}
	case CodeAttrLocalVars, CodeAttrLocalVarTypes:
		if len(ca.Locals) > maxU2 {
			return b, tooLarge("local_variable_table_length", len(ca.Locals))
		}
		b = appendU2(b, uint16(len(ca.Locals)))
		for _, v := range ca.Locals {
			b = appendU2(b, v.StartPC)
			b = appendU2(b, v.Length)
			b = appendU2(b, v.Name)
			b = appendU2(b, v.Desc)
			b = appendU2(b, v.Index)
		}
	case CodeAttrStackMap:
		var err error
		if b, err = appendFrames(b, ca.Frames); err != nil {
			return b, err
		}
	case CodeAttrRaw:
		b = append(b, ca.Data...)
	default:
		return b, fmt.Errorf("%w: unknown CodeAttrKind %d", ErrBadAttribute, ca.Kind)
	}
	n := len(b) - lenAt - 4
	if uint64(n) > 0xFFFFFFFF {
		return b, tooLarge("attribute_length", n)
	}
	putU4(b[lenAt:], uint32(n))
	return b, nil
}

// Attr returns the first sub-attribute of the given kind, or nil.
func (c *Code) Attr(kind CodeAttrKind) *CodeAttr {
	for i := range c.Attrs {
		if c.Attrs[i].Kind == kind {
			return &c.Attrs[i]
		}
	}
	return nil
}

// LineAt returns the source line of the instruction at pc: the line of
// the LineNumberTable entry with the greatest StartPC <= pc, over every
// LineNumberTable of the method. ok is false when no entry applies.
func (c *Code) LineAt(pc int) (line int, ok bool) {
	best := -1
	for i := range c.Attrs {
		if c.Attrs[i].Kind != CodeAttrLineNumbers {
			continue
		}
		for _, l := range c.Attrs[i].Lines {
			if int(l.StartPC) <= pc && int(l.StartPC) > best {
				best, line, ok = int(l.StartPC), int(l.Line), true
			}
		}
	}
	return line, ok
}
