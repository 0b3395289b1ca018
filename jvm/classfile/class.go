package classfile

import "strconv"

// Attribute is an attribute kept as its raw info bytes (JVMS §4.7).
type Attribute struct {
	Name uint16 // attribute_name_index (a Utf8 in the pool)
	Data []byte // info; aliases the parsed input unless replaced
	// Offset is where Data starts in the parsed class file, used to report
	// errors found when Data is decoded later; -1 for attributes built in
	// memory.
	Offset int
}

// Member is a field_info or method_info (JVMS §4.5, §4.6).
type Member struct {
	Access uint16      // access_flags
	Name   uint16      // name_index
	Desc   uint16      // descriptor_index
	Attrs  []Attribute // in file order
}

// Class is a parsed class file. It aliases the bytes given to Parse: they
// must not change while the Class is in use. A Class is not safe for
// concurrent use.
//
// Writing is lossless: constants, members and attributes that were not
// replaced are written from their original bytes, so Parse followed by
// Bytes returns the input unchanged.
type Class struct {
	Minor, Major uint16
	Pool         *Pool
	Access       uint16
	This         uint16 // this_class (a Class constant)
	Super        uint16 // super_class (0 for java/lang/Object and module-info)
	Interfaces   []uint16
	Fields       []Member
	Methods      []Member
	Attrs        []Attribute
}

// Parse decodes a class file of version MinMajor..MaxMajor. The constant
// pool is decoded and checked (every reference names an entry of the right
// kind); attributes are kept as bytes and decoded on demand (Member.Code).
// A malformed input returns a *FormatError; Parse never panics.
func Parse(b []byte) (*Class, error) {
	r := &reader{b: b}
	c := &Class{}
	if !r.need(headerSize, "header") {
		return nil, r.err
	}
	if r.u4("magic") != Magic {
		return nil, formatErr(0, ErrBadMagic, "magic")
	}
	c.Minor = r.u2("minor_version")
	c.Major = r.u2("major_version")
	if c.Major < MinMajor || c.Major > MaxMajor {
		return nil, formatErr(6, ErrUnsupportedVersion,
			"version "+strconv.Itoa(int(c.Major))+"."+strconv.Itoa(int(c.Minor)))
	}
	c.Pool = parsePool(r)
	if r.err != nil {
		return nil, r.err
	}
	p := c.Pool
	c.Access = r.u2("access_flags")
	at := r.pos()
	c.This = r.u2("this_class")
	if r.err == nil && !p.is(c.This, TagClass) {
		r.failAt(at, ErrBadConstant, "this_class is not a Class")
	}
	at = r.pos()
	c.Super = r.u2("super_class")
	if r.err == nil && c.Super != 0 && !p.is(c.Super, TagClass) {
		r.failAt(at, ErrBadConstant, "super_class is not a Class")
	}
	n := int(r.u2("interfaces_count"))
	if r.need(2*n, "interfaces") && n > 0 {
		c.Interfaces = make([]uint16, n)
		for i := range c.Interfaces {
			at = r.pos()
			c.Interfaces[i] = r.u2("interface")
			if !p.is(c.Interfaces[i], TagClass) {
				r.failAt(at, ErrBadConstant, "interface is not a Class")
			}
		}
	}
	var attrs []Attribute // shared backing store for all members' attributes
	c.Fields, attrs = parseMembers(r, p, fieldNames, attrs)
	c.Methods, attrs = parseMembers(r, p, methodNames, attrs)
	var end int
	attrs, end = parseAttrs(r, p, classNames, attrs)
	if r.err != nil {
		return nil, r.err
	}
	c.Attrs = attrs[len(attrs)-end:]
	if r.remaining() != 0 {
		return nil, formatErr(r.pos(), ErrTrailingBytes, "end of class file")
	}
	return c, nil
}

// Names used in error messages, fixed so that decoding does not build
// strings.
type memberNames struct {
	kind, count, table, access, name, attrCount, attrs, attrName, attrLen string
}

var (
	fieldNames = &memberNames{"field", "fields_count", "fields", "field access_flags", "field name_index",
		"field attributes_count", "field attributes", "field attribute_name_index", "field attribute_length"}
	methodNames = &memberNames{"method", "methods_count", "methods", "method access_flags", "method name_index",
		"method attributes_count", "method attributes", "method attribute_name_index", "method attribute_length"}
	classNames = &memberNames{kind: "class", attrCount: "class attributes_count", attrs: "class attributes",
		attrName: "class attribute_name_index", attrLen: "class attribute_length"}
)

// parseMembers reads a fields or methods table. Attributes go into the
// shared slice attrs; members get capacity-limited subslices of it.
func parseMembers(r *reader, p *Pool, w *memberNames, attrs []Attribute) ([]Member, []Attribute) {
	n := int(r.u2(w.count))
	if !r.need(n*memberHeadSize, w.table) || n == 0 {
		return nil, attrs
	}
	if free := cap(attrs) - len(attrs); free < 2*n { // most members have 0-3 attributes
		attrs = append(make([]Attribute, 0, len(attrs)+3*n+4), attrs...)
	}
	ms := make([]Member, n)
	first := make([]int, n+1)
	for i := range ms {
		m := &ms[i]
		m.Access = r.u2(w.access)
		at := r.pos()
		m.Name = r.u2(w.name)
		m.Desc = r.u2(w.name)
		if r.err == nil && (!p.is(m.Name, TagUtf8) || !p.is(m.Desc, TagUtf8)) {
			r.failAt(at, ErrBadConstant, w.kind+" "+strconv.Itoa(i)+" name or descriptor is not a Utf8")
		}
		first[i] = len(attrs)
		attrs, _ = parseAttrs(r, p, w, attrs)
		if r.err != nil {
			return nil, attrs
		}
	}
	first[n] = len(attrs)
	for i := range ms {
		ms[i].Attrs = attrs[first[i]:first[i+1]:first[i+1]]
	}
	return ms, attrs
}

// parseAttrs appends an attributes table to attrs and returns the number
// of attributes it read.
func parseAttrs(r *reader, p *Pool, w *memberNames, attrs []Attribute) ([]Attribute, int) {
	n := int(r.u2(w.attrCount))
	if !r.need(n*attrHeadSize, w.attrs) {
		return attrs, 0
	}
	for i := 0; i < n; i++ {
		at := r.pos()
		name := r.u2(w.attrName)
		size := r.u4(w.attrLen)
		if r.err == nil && !p.is(name, TagUtf8) {
			r.failAt(at, ErrBadConstant, w.kind+" attribute name is not a Utf8")
		}
		if r.err == nil && uint64(size) > uint64(r.remaining()) {
			r.fail(ErrTruncated, w.kind+" attribute "+p.Utf8(name))
		}
		if r.err != nil {
			return attrs, 0
		}
		off := r.pos()
		attrs = append(attrs, Attribute{Name: name, Data: r.b[r.off : r.off+int(size) : r.off+int(size)], Offset: off})
		r.off += int(size)
	}
	return attrs, n
}

// Name returns the internal name of the class.
func (c *Class) Name() string { return c.Pool.ClassName(c.This) }

// SuperName returns the internal name of the superclass, "" when none.
func (c *Class) SuperName() string { return c.Pool.ClassName(c.Super) }

// MemberName returns the name of a field or method.
func (c *Class) MemberName(m *Member) string { return c.Pool.Utf8(m.Name) }

// MemberDesc returns the descriptor of a field or method.
func (c *Class) MemberDesc(m *Member) string { return c.Pool.Utf8(m.Desc) }

// FindAttr returns the index in attrs of the first attribute called name,
// or -1.
func FindAttr(p *Pool, attrs []Attribute, name string) int {
	for i := range attrs {
		if p.IsUtf8(attrs[i].Name, name) {
			return i
		}
	}
	return -1
}

// Size returns the encoded size of the class file.
func (c *Class) Size() int {
	n := headerSize + c.Pool.size() + classInfoSize + 2 + 2*len(c.Interfaces)
	n += 2 + membersSize(c.Fields) + 2 + membersSize(c.Methods)
	return n + attrsSize(c.Attrs)
}

func membersSize(ms []Member) int {
	n := 0
	for i := range ms {
		n += memberHeadSize - 2 + attrsSize(ms[i].Attrs)
	}
	return n
}

func attrsSize(as []Attribute) int {
	n := 2
	for i := range as {
		n += attrHeadSize + len(as[i].Data)
	}
	return n
}

// Bytes encodes the class file.
func (c *Class) Bytes() ([]byte, error) { return c.AppendTo(make([]byte, 0, c.Size())) }

// AppendTo appends the encoded class file to dst. It returns ErrTooLarge
// when a count does not fit its u2 field.
func (c *Class) AppendTo(dst []byte) ([]byte, error) {
	if err := c.checkSizes(); err != nil {
		return dst, err
	}
	b := appendU4(dst, Magic)
	b = appendU2(b, c.Minor)
	b = appendU2(b, c.Major)
	b = c.Pool.appendTo(b)
	b = appendU2(b, c.Access)
	b = appendU2(b, c.This)
	b = appendU2(b, c.Super)
	b = appendU2(b, uint16(len(c.Interfaces)))
	for _, i := range c.Interfaces {
		b = appendU2(b, i)
	}
	b = appendMembers(b, c.Fields)
	b = appendMembers(b, c.Methods)
	return appendAttrs(b, c.Attrs), nil
}

func (c *Class) checkSizes() error {
	switch {
	case len(c.Interfaces) > maxU2:
		return tooLarge("interfaces_count", len(c.Interfaces))
	case len(c.Fields) > maxU2:
		return tooLarge("fields_count", len(c.Fields))
	case len(c.Methods) > maxU2:
		return tooLarge("methods_count", len(c.Methods))
	}
	if err := checkAttrs(c.Attrs); err != nil {
		return err
	}
	for _, ms := range [2][]Member{c.Fields, c.Methods} {
		for i := range ms {
			if err := checkAttrs(ms[i].Attrs); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkAttrs(as []Attribute) error {
	if len(as) > maxU2 {
		return tooLarge("attributes_count", len(as))
	}
	for i := range as {
		if uint64(len(as[i].Data)) > 0xFFFFFFFF {
			return tooLarge("attribute_length", len(as[i].Data))
		}
	}
	return nil
}

func appendMembers(b []byte, ms []Member) []byte {
	b = appendU2(b, uint16(len(ms)))
	for i := range ms {
		m := &ms[i]
		b = appendU2(b, m.Access)
		b = appendU2(b, m.Name)
		b = appendU2(b, m.Desc)
		b = appendAttrs(b, m.Attrs)
	}
	return b
}

func appendAttrs(b []byte, as []Attribute) []byte {
	b = appendU2(b, uint16(len(as)))
	for i := range as {
		b = appendU2(b, as[i].Name)
		b = appendU4(b, uint32(len(as[i].Data)))
		b = append(b, as[i].Data...)
	}
	return b
}
