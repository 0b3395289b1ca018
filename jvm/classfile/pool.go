package classfile

import (
	"encoding/binary"
	"math"
	"strconv"
)

// Constant is one constant pool entry (JVMS §4.4). Which fields are used
// depends on Tag:
//
//	Utf8                      Utf8 (raw modified UTF-8 bytes)
//	Integer, Float            Bits (low 32 bits; Float as IEEE bits)
//	Long, Double              Bits (Double as IEEE bits)
//	Class                     A = name_index
//	String                    A = string_index
//	Fieldref, Methodref,
//	InterfaceMethodref        A = class_index, B = name_and_type_index
//	NameAndType               A = name_index, B = descriptor_index
//	MethodHandle              Kind = reference_kind, A = reference_index
//	MethodType                A = descriptor_index
//	Dynamic, InvokeDynamic    A = bootstrap_method_attr_index, B = name_and_type_index
//	Module, Package           A = name_index
type Constant struct {
	Tag  Tag
	Kind RefKind
	A, B uint16
	Bits uint64
	Utf8 []byte
}

// Pool is a constant pool. Index 0 and the slot after each Long and Double
// hold TagNone. Existing entries never change; Add* methods look an entry
// up and append it when missing, so every index stays valid.
//
// The Utf8 bytes of a parsed pool alias the parsed input. A Pool is not
// safe for concurrent use.
type Pool struct {
	entries   []entry
	raw       []byte // encoded entries[1:nOrig] as parsed, written as is
	extra     []byte // Utf8 bytes of appended entries
	nOrig     int
	fullScans int
	index     map[constKey]uint16 // built after maxFullScans lookups
}

// entry is the compact form of a Constant (16 bytes). For a Utf8, bits
// holds offset<<16 | length of its bytes in raw (parsed entries) or extra
// (appended ones).
type entry struct {
	tag  Tag
	kind RefKind
	a, b uint16
	bits uint64
}

const utf8LenBits = 16

func (p *Pool) utf8(i int) []byte {
	e := &p.entries[i]
	off, n := int(e.bits>>utf8LenBits), int(e.bits&maxU2)
	if i < p.nOrig {
		return p.raw[off : off+n : off+n]
	}
	return p.extra[off : off+n : off+n]
}

func (p *Pool) constant(i int) Constant {
	e := &p.entries[i]
	c := Constant{Tag: e.tag, Kind: e.kind, A: e.a, B: e.b, Bits: e.bits}
	if e.tag == TagUtf8 {
		c.Bits, c.Utf8 = 0, p.utf8(i)
	}
	return c
}

type constKey struct {
	tag  Tag
	kind RefKind
	a, b uint16
	bits uint64
	s    string
}

func keyOf(e entry, s string) constKey {
	if e.tag == TagUtf8 {
		return constKey{tag: TagUtf8, s: s}
	}
	return constKey{tag: e.tag, kind: e.kind, a: e.a, b: e.b, bits: e.bits}
}

// NewPool returns an empty pool (count 1).
func NewPool() *Pool { return &Pool{entries: make([]entry, 1, 64), nOrig: 1} }

// Count is constant_pool_count: the number of slots including slot 0.
func (p *Pool) Count() int { return len(p.entries) }

// Get returns entry i, or a zero Constant (TagNone) when i is out of range.
func (p *Pool) Get(i uint16) Constant {
	if int(i) >= len(p.entries) {
		return Constant{}
	}
	return p.constant(int(i))
}

// Tag returns the tag of entry i (TagNone when out of range).
func (p *Pool) Tag(i uint16) Tag {
	if int(i) >= len(p.entries) {
		return TagNone
	}
	return p.entries[i].tag
}

func (p *Pool) is(i uint16, t Tag) bool {
	return i != 0 && int(i) < len(p.entries) && p.entries[i].tag == t
}

// Utf8Bytes returns the raw modified UTF-8 of Utf8 entry i, or nil.
// The slice must not be modified.
func (p *Pool) Utf8Bytes(i uint16) []byte {
	if !p.is(i, TagUtf8) {
		return nil
	}
	return p.utf8(int(i))
}

// Utf8 returns Utf8 entry i as a string ("" when i is not a Utf8).
// Modified UTF-8 differs from UTF-8 only for NUL and supplementary
// characters; the bytes are returned unconverted.
func (p *Pool) Utf8(i uint16) string { return string(p.Utf8Bytes(i)) }

// IsUtf8 reports whether entry i is a Utf8 equal to s, without allocating.
func (p *Pool) IsUtf8(i uint16, s string) bool {
	return p.is(i, TagUtf8) && string(p.utf8(int(i))) == s
}

// ClassName returns the internal name of Class entry i ("" if not a Class).
func (p *Pool) ClassName(i uint16) string {
	if !p.is(i, TagClass) {
		return ""
	}
	return p.Utf8(p.entries[i].a)
}

// NameAndType returns the name and descriptor of NameAndType entry i.
func (p *Pool) NameAndType(i uint16) (name, desc string) {
	if !p.is(i, TagNameAndType) {
		return "", ""
	}
	return p.Utf8(p.entries[i].a), p.Utf8(p.entries[i].b)
}

// MemberRef returns owner class, name and descriptor of a Fieldref,
// Methodref or InterfaceMethodref entry.
func (p *Pool) MemberRef(i uint16) (class, name, desc string) {
	t := p.Tag(i)
	if t != TagFieldref && t != TagMethodref && t != TagInterfaceMethodref {
		return "", "", ""
	}
	e := &p.entries[i]
	name, desc = p.NameAndType(e.b)
	return p.ClassName(e.a), name, desc
}

// Integer returns the value of an Integer entry.
func (p *Pool) Integer(i uint16) int32 { return int32(uint32(p.Get(i).Bits)) }

// Float returns the value of a Float entry.
func (p *Pool) Float(i uint16) float32 { return math.Float32frombits(uint32(p.Get(i).Bits)) }

// Long returns the value of a Long entry.
func (p *Pool) Long(i uint16) int64 { return int64(p.Get(i).Bits) }

// Double returns the value of a Double entry.
func (p *Pool) Double(i uint16) float64 { return math.Float64frombits(p.Get(i).Bits) }

// Add returns the index of an entry equal to c, appending c when there is
// none. Long and Double take two slots. Utf8 bytes are copied on append.
// It returns ErrPoolFull when the pool cannot grow, and ErrBadConstant for
// TagNone or an unknown tag. Referenced indexes are not checked.
func (p *Pool) Add(c Constant) (uint16, error) {
	if int(c.Tag) >= len(entrySize) || entrySize[c.Tag] == 0 {
		return 0, ErrBadConstant
	}
	if c.Tag == TagUtf8 {
		return p.add(entry{tag: TagUtf8}, string(c.Utf8))
	}
	return p.add(entry{tag: c.Tag, kind: c.Kind, a: c.A, b: c.B, bits: c.Bits}, "")
}

// add looks up or appends e; s is the content of a Utf8.
func (p *Pool) add(e entry, s string) (uint16, error) {
	if i, ok := p.find(e, s); ok {
		return i, nil
	}
	slots := 1
	if e.tag == TagLong || e.tag == TagDouble {
		slots = 2
	}
	if len(p.entries)+slots > maxPoolCount {
		return 0, ErrPoolFull
	}
	if e.tag == TagUtf8 {
		if len(s) > maxU2 {
			return 0, tooLarge("Utf8 length", len(s))
		}
		e.bits = uint64(len(p.extra))<<utf8LenBits | uint64(len(s))
		if p.extra == nil {
			p.extra = make([]byte, 0, max(len(s), extraRoom))
		}
		p.extra = append(p.extra, s...)
	}
	i := uint16(len(p.entries))
	p.entries = append(p.entries, e)
	if slots == 2 {
		p.entries = append(p.entries, entry{})
	}
	if p.index != nil {
		p.index[keyOf(e, s)] = i
	}
	return i, nil
}

// maxFullScans: find scans the whole pool (no allocation) for the first
// lookups, then builds a map, for classes that add many constants.
const maxFullScans = 64

// find returns the index of an entry equal to e (with content s for a
// Utf8). An entry that refers to an appended entry can only match an
// appended one, so only those are scanned: the common case when adding a
// Methodref to a new helper class.
func (p *Pool) find(e entry, s string) (uint16, bool) {
	if p.index != nil {
		i, ok := p.index[keyOf(e, s)]
		return i, ok
	}
	start := 1
	if p.refsAppended(e) {
		start = p.nOrig
	} else {
		p.fullScans++
		if p.fullScans > maxFullScans {
			p.buildIndex()
			i, ok := p.index[keyOf(e, s)]
			return i, ok
		}
	}
	for i := start; i < len(p.entries); i++ {
		x := &p.entries[i]
		if x.tag != e.tag {
			continue
		}
		if e.tag == TagUtf8 {
			if int(x.bits&maxU2) == len(s) && string(p.utf8(i)) == s {
				return uint16(i), true
			}
		} else if x.a == e.a && x.b == e.b && x.kind == e.kind && x.bits == e.bits {
			return uint16(i), true
		}
	}
	return 0, false
}

// refsAppended reports whether e refers to a constant appended after
// parsing (parsed entries cannot).
func (p *Pool) refsAppended(e entry) bool {
	n := uint16(p.nOrig)
	switch e.tag {
	case TagClass, TagString, TagMethodType, TagModule, TagPackage, TagMethodHandle:
		return e.a >= n
	case TagFieldref, TagMethodref, TagInterfaceMethodref, TagNameAndType:
		return e.a >= n || e.b >= n
	case TagDynamic, TagInvokeDynamic: // a is a bootstrap method index
		return e.b >= n
	}
	return false
}

func (p *Pool) buildIndex() {
	p.index = make(map[constKey]uint16, len(p.entries)+16)
	for i := len(p.entries) - 1; i >= 1; i-- { // first occurrence wins
		e := p.entries[i]
		if e.tag == TagUtf8 {
			p.index[keyOf(e, string(p.utf8(i)))] = uint16(i)
		} else if e.tag != TagNone {
			p.index[keyOf(e, "")] = uint16(i)
		}
	}
}

// AddUTF8 looks up or appends a Utf8 entry holding s (already in modified
// UTF-8; plain ASCII, the usual case for names, is the same in both).
func (p *Pool) AddUTF8(s string) (uint16, error) { return p.add(entry{tag: TagUtf8}, s) }

func (p *Pool) addNamed(t Tag, s string) (uint16, error) {
	n, err := p.AddUTF8(s)
	if err != nil {
		return 0, err
	}
	return p.Add(Constant{Tag: t, A: n})
}

// AddClass looks up or appends a Class entry for an internal name ("java/lang/Object").
func (p *Pool) AddClass(name string) (uint16, error) { return p.addNamed(TagClass, name) }

// AddString looks up or appends a String entry.
func (p *Pool) AddString(s string) (uint16, error) { return p.addNamed(TagString, s) }

// AddMethodType looks up or appends a MethodType entry.
func (p *Pool) AddMethodType(desc string) (uint16, error) { return p.addNamed(TagMethodType, desc) }

// AddModule looks up or appends a Module entry.
func (p *Pool) AddModule(name string) (uint16, error) { return p.addNamed(TagModule, name) }

// AddPackage looks up or appends a Package entry.
func (p *Pool) AddPackage(name string) (uint16, error) { return p.addNamed(TagPackage, name) }

// AddNameAndType looks up or appends a NameAndType entry.
func (p *Pool) AddNameAndType(name, desc string) (uint16, error) {
	n, err := p.AddUTF8(name)
	if err != nil {
		return 0, err
	}
	d, err := p.AddUTF8(desc)
	if err != nil {
		return 0, err
	}
	return p.Add(Constant{Tag: TagNameAndType, A: n, B: d})
}

func (p *Pool) addRef(t Tag, class, name, desc string) (uint16, error) {
	c, err := p.AddClass(class)
	if err != nil {
		return 0, err
	}
	nt, err := p.AddNameAndType(name, desc)
	if err != nil {
		return 0, err
	}
	return p.Add(Constant{Tag: t, A: c, B: nt})
}

// AddFieldref looks up or appends a Fieldref entry.
func (p *Pool) AddFieldref(class, name, desc string) (uint16, error) {
	return p.addRef(TagFieldref, class, name, desc)
}

// AddMethodref looks up or appends a Methodref entry.
func (p *Pool) AddMethodref(class, name, desc string) (uint16, error) {
	return p.addRef(TagMethodref, class, name, desc)
}

// AddInterfaceMethodref looks up or appends an InterfaceMethodref entry.
func (p *Pool) AddInterfaceMethodref(class, name, desc string) (uint16, error) {
	return p.addRef(TagInterfaceMethodref, class, name, desc)
}

// AddMethodHandle looks up or appends a MethodHandle entry.
func (p *Pool) AddMethodHandle(kind RefKind, ref uint16) (uint16, error) {
	return p.Add(Constant{Tag: TagMethodHandle, Kind: kind, A: ref})
}

// AddDynamic looks up or appends a Dynamic (condy) entry.
func (p *Pool) AddDynamic(bootstrap uint16, name, desc string) (uint16, error) {
	nt, err := p.AddNameAndType(name, desc)
	if err != nil {
		return 0, err
	}
	return p.Add(Constant{Tag: TagDynamic, A: bootstrap, B: nt})
}

// AddInvokeDynamic looks up or appends an InvokeDynamic entry.
func (p *Pool) AddInvokeDynamic(bootstrap uint16, name, desc string) (uint16, error) {
	nt, err := p.AddNameAndType(name, desc)
	if err != nil {
		return 0, err
	}
	return p.Add(Constant{Tag: TagInvokeDynamic, A: bootstrap, B: nt})
}

// AddInteger looks up or appends an Integer entry.
func (p *Pool) AddInteger(v int32) (uint16, error) {
	return p.Add(Constant{Tag: TagInteger, Bits: uint64(uint32(v))})
}

// AddFloat looks up or appends a Float entry (matched by bits).
func (p *Pool) AddFloat(v float32) (uint16, error) {
	return p.Add(Constant{Tag: TagFloat, Bits: uint64(math.Float32bits(v))})
}

// AddLong looks up or appends a Long entry (two slots).
func (p *Pool) AddLong(v int64) (uint16, error) {
	return p.Add(Constant{Tag: TagLong, Bits: uint64(v)})
}

// AddDouble looks up or appends a Double entry (two slots, matched by bits).
func (p *Pool) AddDouble(v float64) (uint16, error) {
	return p.Add(Constant{Tag: TagDouble, Bits: math.Float64bits(v)})
}

// appendRoom: spare entries allocated with a parsed pool, enough for what
// an instrumenter typically appends without growing the slice.
const appendRoom = 32

// extraRoom: initial capacity for the bytes of appended Utf8 entries.
const extraRoom = 256

// parsePool reads constant_pool_count and the entries. r is positioned at
// the count.
func parsePool(r *reader) *Pool {
	count := int(r.u2("constant_pool_count"))
	if count == 0 {
		r.failAt(r.pos()-2, ErrBadConstant, "constant_pool_count is 0")
		return nil
	}
	if !r.need((count-1)*minConstSize, "constant pool") {
		return nil
	}
	start := r.off
	p := &Pool{entries: make([]entry, count, count+appendRoom), nOrig: count}
	// Hot loop: one bounds check per entry, then direct reads.
	b, off := r.b, r.off
	for i := 1; i < count; i++ {
		e := &p.entries[i]
		if off >= len(b) {
			r.off = off
			r.fail(ErrTruncated, "constant tag")
			return nil
		}
		e.tag = Tag(b[off])
		size := 0
		if int(e.tag) < len(entrySize) {
			size = entrySize[e.tag]
		}
		if size == 0 {
			r.failAt(r.base+off, ErrBadConstant, "constant "+strconv.Itoa(i)+" has "+e.tag.String())
			return nil
		}
		if len(b)-off < size {
			r.off = off + 1
			r.fail(ErrTruncated, "constant "+strconv.Itoa(i))
			return nil
		}
		switch e.tag {
		case TagUtf8:
			n := int(b[off+1])<<8 | int(b[off+2])
			if len(b)-off-size < n {
				r.off = off + size
				r.fail(ErrTruncated, "Utf8 bytes")
				return nil
			}
			e.bits = uint64(off+size-start)<<utf8LenBits | uint64(n)
			size += n
		case TagInteger, TagFloat:
			e.bits = uint64(binary.BigEndian.Uint32(b[off+1:]))
		case TagLong, TagDouble:
			e.bits = binary.BigEndian.Uint64(b[off+1:])
			i++ // takes two slots
			if i >= count {
				r.failAt(r.base+off, ErrBadConstant, "Long or Double in the last slot")
				return nil
			}
		case TagMethodHandle:
			e.kind = RefKind(b[off+1])
			e.a = binary.BigEndian.Uint16(b[off+2:])
		default: // one or two u2 indexes
			e.a = binary.BigEndian.Uint16(b[off+1:])
			if size == 5 {
				e.b = binary.BigEndian.Uint16(b[off+3:])
			}
		}
		off += size
	}
	r.off = off
	p.raw = r.b[start:r.off:r.off]
	if i, what := p.check(); i != 0 {
		r.failAt(r.base+start+p.entryOffset(i), ErrBadConstant, "constant "+strconv.Itoa(i)+": "+what)
		return nil
	}
	return p
}

// check verifies that every reference names an entry of the right kind
// (JVMS §4.4). It returns the first bad index and why, or 0.
func (p *Pool) check() (int, string) {
	for i := 1; i < len(p.entries); i++ {
		e := &p.entries[i]
		ok := true
		switch e.tag {
		case TagClass, TagString, TagMethodType, TagModule, TagPackage:
			ok = p.is(e.a, TagUtf8)
		case TagFieldref, TagMethodref, TagInterfaceMethodref:
			ok = p.is(e.a, TagClass) && p.is(e.b, TagNameAndType)
		case TagNameAndType:
			ok = p.is(e.a, TagUtf8) && p.is(e.b, TagUtf8)
		case TagDynamic, TagInvokeDynamic:
			ok = p.is(e.b, TagNameAndType)
		case TagMethodHandle:
			switch {
			case e.kind >= RefGetField && e.kind <= RefPutStatic:
				ok = p.is(e.a, TagFieldref)
			case e.kind >= RefInvokeVirtual && e.kind <= RefNewInvokeSpecial:
				ok = p.is(e.a, TagMethodref) || p.is(e.a, TagInterfaceMethodref)
			case e.kind == RefInvokeInterface:
				ok = p.is(e.a, TagInterfaceMethodref)
			default:
				return i, "bad reference_kind " + e.kind.String()
			}
		case TagLong, TagDouble:
			i++
		}
		if !ok {
			return i, e.tag.String() + " refers to a missing or wrong kind of entry"
		}
	}
	return 0, ""
}

// entrySizeAt is the encoded size of entry i.
func (p *Pool) entrySizeAt(i int) int {
	e := &p.entries[i]
	n := entrySize[e.tag]
	if e.tag == TagUtf8 {
		n += int(e.bits & maxU2)
	}
	return n
}

// entryOffset returns the offset of entry i within raw (error path only).
func (p *Pool) entryOffset(i int) int {
	off := 0
	for j := 1; j < i && j < p.nOrig; j++ {
		off += p.entrySizeAt(j)
	}
	return off
}

// appendTo writes constant_pool_count and the entries: the parsed entries
// as their original bytes, appended ones encoded.
func (p *Pool) appendTo(b []byte) []byte {
	b = appendU2(b, uint16(len(p.entries)))
	b = append(b, p.raw...)
	for i := p.nOrig; i < len(p.entries); i++ {
		e := &p.entries[i]
		if e.tag == TagNone {
			continue // second slot of a Long or Double
		}
		b = append(b, byte(e.tag))
		switch e.tag {
		case TagUtf8:
			u := p.utf8(i)
			b = appendU2(b, uint16(len(u)))
			b = append(b, u...)
		case TagInteger, TagFloat:
			b = appendU4(b, uint32(e.bits))
		case TagLong, TagDouble:
			b = appendU4(b, uint32(e.bits>>32))
			b = appendU4(b, uint32(e.bits))
		case TagClass, TagString, TagMethodType, TagModule, TagPackage:
			b = appendU2(b, e.a)
		case TagMethodHandle:
			b = append(b, byte(e.kind))
			b = appendU2(b, e.a)
		default:
			b = appendU2(b, e.a)
			b = appendU2(b, e.b)
		}
	}
	return b
}

// size is the encoded size of the pool including its count.
func (p *Pool) size() int {
	n := 2 + len(p.raw)
	for i := p.nOrig; i < len(p.entries); i++ {
		n += p.entrySizeAt(i)
	}
	return n
}
