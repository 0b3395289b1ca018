package bytefrog

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// Reading a v1 Configuration payload: a strict parser for the subset of the
// Java serialization grammar (Java Object Serialization Specification §6.4)
// that a serialized RuntimeAgentConfigurationV1 uses.

// JavaConfigInfo describes a v1 payload beyond the values of its Config.
type JavaConfigInfo struct {
	// ClassName is the configuration object's class, one of
	// JavaClassBytefrog and JavaClassCodePulse.
	ClassName string
	// SUID is the serialVersionUID the stream declares for it.
	SUID int64
	// ExclusionsClass and InclusionsClass name the Java class of each list
	// (java.util.ArrayList, java.util.LinkedList or
	// java.util.Arrays$ArrayList); "" when the field was null.
	ExclusionsClass, InclusionsClass string
}

// SUIDMismatch reports whether the stream's serialVersionUID differs from
// JavaConfigSUID. The parser tolerates a mismatch, as long as the fields
// are understood; a caller may warn about it.
func (i *JavaConfigInfo) SUIDMismatch() bool { return i.SUID != JavaConfigSUID }

// ParseJavaConfig parses a v1 Configuration payload (the bytes after the
// i32 length). See [ParseJavaConfigInfo].
func ParseJavaConfig(b []byte) (Config, error) {
	c, _, err := ParseJavaConfigInfo(b)
	return c, err
}

// ParseJavaConfigInfo parses a v1 Configuration payload: one serialized
// RuntimeAgentConfigurationV1 under either class name, and nothing after
// it. It reads the subset of the serialization grammar that such a stream
// uses (TC_OBJECT, TC_CLASSDESC, TC_REFERENCE, TC_STRING, TC_LONGSTRING,
// TC_NULL, TC_BLOCKDATA, TC_BLOCKDATALONG, TC_ENDBLOCKDATA and TC_ARRAY) and
// reads the field values in the order of the stream's class descriptor.
//
// The seven fields must be declared with their Java types; extra fields
// are read and ignored. A list field may be null, a java.util.ArrayList, a
// java.util.LinkedList or a java.util.Arrays$ArrayList (over a String[] or
// Object[]), or a reference to a list read earlier; its elements must be
// strings or references to earlier strings. An empty or null list yields a
// nil slice. The ArrayList capacity word is ignored. A serialVersionUID
// other than JavaConfigSUID is accepted and reported in the info.
//
// Anything else fails with an error wrapping ErrBadConfig (and also
// ErrInvalidUTF for a malformed string). Lengths and counts are checked
// against the bytes left before anything is allocated, and the parser
// never recurses on input-controlled depth.
func ParseJavaConfigInfo(b []byte) (Config, JavaConfigInfo, error) {
	r := javaReader{b: b}
	c, info := r.config()
	if r.err == nil && r.off != len(r.b) {
		r.failf("%d bytes after the configuration object", len(r.b)-r.off)
	}
	if r.err != nil {
		return Config{}, JavaConfigInfo{}, r.err
	}
	return c, info, nil
}

// javaHandleKind says what a stream handle stands for.
type javaHandleKind uint8

const (
	jhNull javaHandleKind = iota // only in a javaValue: a null reference
	jhString
	jhClassDesc
	jhList
	jhArray
	jhConfig
)

var javaHandleKindNames = [...]string{
	jhNull:      "null",
	jhString:    "a String",
	jhClassDesc: "a class descriptor",
	jhList:      "a List",
	jhArray:     "an array",
	jhConfig:    "the configuration object",
}

func (k javaHandleKind) String() string {
	if int(k) < len(javaHandleKindNames) {
		return javaHandleKindNames[k]
	}
	return fmt.Sprintf("UNKNOWN_HANDLE_KIND_%d", uint8(k))
}

// javaValue is an object read from the stream, or what a handle stands for.
type javaValue struct {
	kind  javaHandleKind
	done  bool           // jhList, jhArray: all elements read
	str   string         // jhString
	desc  *javaClassDesc // jhClassDesc
	list  []string       // jhList, jhArray
	class string         // jhList, jhArray: Java class name
}

// javaClassDesc is a class descriptor read from the stream.
type javaClassDesc struct {
	name   string
	suid   int64
	flags  byte
	fields []javaFieldDesc
}

// javaFieldDesc is one field of a class descriptor.
type javaFieldDesc struct {
	javaField
	class string // type string of an object or array field
}

// javaReader parses one serialization stream. Errors are sticky: after the
// first, every read returns zero values and r.err keeps the first error.
type javaReader struct {
	b       []byte
	off     int
	err     error
	handles []javaValue // index = handle - javaBaseHandle
	block   int         // bytes left in the current block data segment
}

// failf records an error at the current offset unless one is recorded.
func (r *javaReader) failf(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: offset %d: %s", ErrBadConfig, r.off, fmt.Sprintf(format, args...))
	}
}

// left returns the count of unread bytes.
func (r *javaReader) left() int { return len(r.b) - r.off }

// need reports whether n more bytes are there, recording an error if not.
func (r *javaReader) need(n int) bool {
	if r.err != nil {
		return false
	}
	if n < 0 || n > r.left() {
		r.failf("stream ends early: %d bytes needed, %d left", n, r.left())
		return false
	}
	return true
}

func (r *javaReader) u8() byte {
	if !r.need(u8Size) {
		return 0
	}
	r.off += u8Size
	return r.b[r.off-u8Size]
}

func (r *javaReader) tc() javaTC { return javaTC(r.u8()) }

func (r *javaReader) u16() uint16 {
	if !r.need(u16Size) {
		return 0
	}
	r.off += u16Size
	return binary.BigEndian.Uint16(r.b[r.off-u16Size:])
}

func (r *javaReader) i32() int32 {
	if !r.need(i32Size) {
		return 0
	}
	r.off += i32Size
	return int32(binary.BigEndian.Uint32(r.b[r.off-i32Size:]))
}

func (r *javaReader) i64() int64 {
	if !r.need(javaI64Size) {
		return 0
	}
	r.off += javaI64Size
	return int64(binary.BigEndian.Uint64(r.b[r.off-javaI64Size:]))
}

// text reads n bytes of modified UTF-8 as a Go string.
func (r *javaReader) text(n int) string {
	if !r.need(n) {
		return ""
	}
	s, err := cfgString(r.b[r.off : r.off+n])
	if err != nil {
		r.err = fmt.Errorf("%w: offset %d: %w", ErrBadConfig, r.off, err)
		return ""
	}
	r.off += n
	return s
}

// utf reads a u16-prefixed modified UTF-8 string (class and field names).
func (r *javaReader) utf() string { return r.text(int(r.u16())) }

// count checks a declared element count against the bytes left, given the
// smallest encoding of one element, so nothing is allocated for a count
// the input cannot hold.
func (r *javaReader) count(n int32, minSize int, what string) int {
	if r.err != nil {
		return 0
	}
	if n < 0 {
		r.failf("negative %s %d", what, n)
		return 0
	}
	if int(n) > r.left()/minSize {
		r.failf("%s %d does not fit in the %d bytes left", what, n, r.left())
		return 0
	}
	return int(n)
}

// newHandle assigns the next handle to v and returns its index.
func (r *javaReader) newHandle(v javaValue) int {
	r.handles = append(r.handles, v)
	return len(r.handles) - 1
}

// ref reads the handle of a TC_REFERENCE and returns its index, or -1.
func (r *javaReader) ref() int {
	h := uint32(r.i32())
	if r.err != nil {
		return -1
	}
	if h < javaBaseHandle || h-javaBaseHandle >= uint32(len(r.handles)) {
		r.failf("reference to unknown handle 0x%x", h)
		return -1
	}
	return int(h - javaBaseHandle)
}

// newString reads the body of a TC_STRING or TC_LONGSTRING and assigns it
// a handle.
func (r *javaReader) newString(tag javaTC) string {
	var n int
	if tag == tcString {
		n = int(r.u16())
	} else {
		n64 := r.i64()
		if r.err == nil && (n64 < 0 || n64 > int64(r.left())) {
			r.failf("long string of %d bytes with %d bytes left", n64, r.left())
		}
		n = int(n64)
	}
	s := r.text(n)
	if r.err == nil {
		r.newHandle(javaValue{kind: jhString, str: s})
	}
	return s
}

// stringObject reads a String object: TC_STRING, TC_LONGSTRING, or a
// TC_REFERENCE to an earlier string. what names it in errors.
func (r *javaReader) stringObject(what string) string {
	if r.block != 0 {
		r.failf("%d bytes of block data left unread before %s", r.block, what)
		return ""
	}
	switch tag := r.tc(); tag {
	case tcString, tcLongString:
		return r.newString(tag)
	case tcReference:
		if i := r.ref(); i >= 0 {
			if v := &r.handles[i]; v.kind == jhString {
				return v.str
			}
			r.failf("%s refers to %v, want a String", what, r.handles[i].kind)
		}
	case tcNull:
		r.failf("%s is null", what)
	default:
		r.failf("%s is %v, want a String", what, tag)
	}
	return ""
}

// classDesc reads a class descriptor: a new one or a reference to one.
func (r *javaReader) classDesc() *javaClassDesc {
	switch tag := r.tc(); tag {
	case tcClassDesc:
		return r.newClassDesc()
	case tcReference:
		if i := r.ref(); i >= 0 {
			if v := &r.handles[i]; v.kind == jhClassDesc {
				return v.desc
			}
			r.failf("class descriptor refers to %v", r.handles[i].kind)
		}
	default:
		if r.err == nil {
			r.failf("%v where a class descriptor is needed", tag)
		}
	}
	return nil
}

// newClassDesc reads the body of a TC_CLASSDESC.
func (r *javaReader) newClassDesc() *javaClassDesc {
	d := &javaClassDesc{name: r.utf(), suid: r.i64()}
	if r.err != nil {
		return nil
	}
	r.newHandle(javaValue{kind: jhClassDesc, desc: d})
	d.flags = r.u8()
	n := r.count(int32(r.u16()), javaMinFieldSize, "field count")
	d.fields = make([]javaFieldDesc, 0, n)
	sawObject := false
	for i := 0; i < n && r.err == nil; i++ {
		f := javaFieldDesc{javaField: javaField{code: r.u8(), name: r.utf()}}
		switch {
		case r.err != nil:
		case javaPrimSize[f.code] != 0:
			// java.io.ObjectStreamClass: primitive fields precede
			// object fields ("illegal field order").
			if sawObject {
				r.failf("class %s: primitive field %s follows an object field", d.name, f.name)
			}
		case f.code == jtObject || f.code == jtArray:
			sawObject = true
			f.class = r.stringObject("the type of field " + f.name)
		default:
			r.failf("class %s: field %s has unknown type code 0x%02x", d.name, f.name, f.code)
		}
		d.fields = append(d.fields, f)
	}
	r.endAnnotation("class annotation of " + d.name)
	if tag := r.tc(); tag != tcNull && r.err == nil {
		r.failf("class %s has a serializable superclass (%v): not supported", d.name, tag)
	}
	if r.err != nil {
		return nil
	}
	return d
}

// endAnnotation skips block data up to the TC_ENDBLOCKDATA that ends a
// class annotation or an object's custom data. Objects there are refused.
func (r *javaReader) endAnnotation(what string) {
	if r.block != 0 {
		r.failf("%d bytes of block data left unread in %s", r.block, what)
		return
	}
	for r.err == nil {
		switch tag := r.tc(); tag {
		case tcEndBlockData:
			return
		case tcBlockData, tcBlockDataLong:
			if n := r.blockHeader(tag); r.need(n) {
				r.off += n
			}
		default:
			if r.err == nil {
				r.failf("%v in %s: not supported", tag, what)
			}
		}
	}
}

// blockHeader reads the length of a TC_BLOCKDATA or TC_BLOCKDATALONG.
func (r *javaReader) blockHeader(tag javaTC) int {
	if tag == tcBlockData {
		return int(r.u8())
	}
	n := r.i32()
	if n < 0 {
		r.failf("negative block data length %d", n)
		return 0
	}
	return int(n)
}

// blockInt reads an int written in block data mode, which may span block
// data segments.
func (r *javaReader) blockInt(what string) int32 {
	var v [i32Size]byte
	for got := 0; got < i32Size && r.err == nil; {
		if r.block == 0 {
			switch tag := r.tc(); tag {
			case tcBlockData, tcBlockDataLong:
				r.block = r.blockHeader(tag)
			default:
				if r.err == nil {
					r.failf("%v where block data with the %s is needed", tag, what)
				}
			}
			continue
		}
		n := min(r.block, i32Size-got)
		if !r.need(n) {
			break
		}
		copy(v[got:], r.b[r.off:r.off+n])
		r.off += n
		r.block -= n
		got += n
	}
	return int32(binary.BigEndian.Uint32(v[:]))
}

// checkDesc reports whether d has exactly the given flags and fields.
func (r *javaReader) checkDesc(d *javaClassDesc, flags byte, fields ...javaField) bool {
	if r.err != nil {
		return false
	}
	if d.flags != flags {
		r.failf("class %s: flags 0x%02x, want 0x%02x", d.name, d.flags, flags)
		return false
	}
	if len(d.fields) != len(fields) {
		r.failf("class %s: %d fields, want %d", d.name, len(d.fields), len(fields))
		return false
	}
	for i, f := range fields {
		if d.fields[i].javaField != f {
			r.failf("class %s: field %c %s, want %c %s", d.name, d.fields[i].code, d.fields[i].name, f.code, f.name)
			return false
		}
	}
	return true
}

// elements reads n list elements, each a String.
func (r *javaReader) elements(n int, class string) []string {
	if n == 0 || r.err != nil {
		return nil
	}
	l := make([]string, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		l = append(l, r.stringObject("element of "+class))
	}
	return l
}

// value reads the value of an object field: null, a String, a supported
// List, an array of strings, or a reference to one of them.
func (r *javaReader) value() javaValue {
	switch tag := r.tc(); tag {
	case tcNull:
		return javaValue{}
	case tcString, tcLongString:
		return javaValue{kind: jhString, str: r.newString(tag)}
	case tcObject:
		return r.list()
	case tcArray:
		return r.array()
	case tcReference:
		i := r.ref()
		if i < 0 {
			return javaValue{}
		}
		v := r.handles[i]
		switch {
		case v.kind == jhClassDesc || v.kind == jhConfig:
			r.failf("field value refers to %v: not supported", v.kind)
		case (v.kind == jhList || v.kind == jhArray) && !v.done:
			r.failf("field value refers to %v that is still being read", v.kind)
		}
		v.list = slices.Clone(v.list) // the two fields must not share elements
		return v
	default:
		if r.err == nil {
			r.failf("field value is %v: not supported", tag)
		}
	}
	return javaValue{}
}

// list reads the class descriptor and data of a TC_OBJECT that must be
// one of the supported java.util List classes.
func (r *javaReader) list() javaValue {
	d := r.classDesc()
	if r.err != nil {
		return javaValue{}
	}
	i := r.newHandle(javaValue{kind: jhList, class: d.name})
	var l []string
	switch d.name {
	case javaArrayList:
		l = r.arrayList(d)
	case javaLinkedList:
		l = r.linkedList(d)
	case javaArraysArrayList:
		l = r.arraysArrayList(d)
	default:
		r.failf("object of class %s: only %s, %s and %s lists are supported",
			d.name, javaArrayList, javaLinkedList, javaArraysArrayList)
	}
	if r.err != nil {
		return javaValue{}
	}
	v := &r.handles[i]
	v.list, v.done = l, true
	return *v
}

// arrayList reads java.util.ArrayList's data: the size field, then in its
// custom data the capacity (ignored: older JDKs wrote the backing array's
// length, newer ones the size) and the elements.
func (r *javaReader) arrayList(d *javaClassDesc) []string {
	if !r.checkDesc(d, scSerializable|scWriteMethod, javaField{jtInt, "size"}) {
		return nil
	}
	size := r.i32()
	r.blockInt("ArrayList capacity")
	l := r.elements(r.count(size, javaMinElemSize, "ArrayList size"), d.name)
	r.endAnnotation("custom data of " + d.name)
	return l
}

// linkedList reads java.util.LinkedList's data: no fields; its custom
// data holds the size, then the elements.
func (r *javaReader) linkedList(d *javaClassDesc) []string {
	if !r.checkDesc(d, scSerializable|scWriteMethod) {
		return nil
	}
	size := r.blockInt("LinkedList size")
	l := r.elements(r.count(size, javaMinElemSize, "LinkedList size"), d.name)
	r.endAnnotation("custom data of " + d.name)
	return l
}

// arraysArrayList reads java.util.Arrays$ArrayList's data: its field a,
// an array of strings.
func (r *javaReader) arraysArrayList(d *javaClassDesc) []string {
	if !r.checkDesc(d, scSerializable, javaField{jtArray, "a"}) {
		return nil
	}
	if t := d.fields[0].class; t != javaObjectArrayType && t != javaStringArrayType {
		r.failf("class %s: field a has type %s", d.name, t)
		return nil
	}
	switch tag := r.tc(); tag {
	case tcArray:
		return r.array().list
	case tcReference:
		if i := r.ref(); i >= 0 {
			if v := &r.handles[i]; v.kind == jhArray && v.done {
				return slices.Clone(v.list)
			}
			r.failf("%s.a refers to %v", d.name, r.handles[i].kind)
		}
	default:
		if r.err == nil {
			r.failf("%s.a is %v, want an array", d.name, tag)
		}
	}
	return nil
}

// array reads a TC_ARRAY of strings after its type code.
func (r *javaReader) array() javaValue {
	d := r.classDesc()
	if r.err != nil {
		return javaValue{}
	}
	if d.name != javaStringArray && d.name != javaObjectArray {
		r.failf("array of class %s: only String[] and Object[] are supported", d.name)
		return javaValue{}
	}
	if !r.checkDesc(d, scSerializable) {
		return javaValue{}
	}
	i := r.newHandle(javaValue{kind: jhArray, class: d.name})
	size := r.i32()
	l := r.elements(r.count(size, javaMinElemSize, "array length"), d.name)
	if r.err != nil {
		return javaValue{}
	}
	v := &r.handles[i]
	v.list, v.done = l, true
	return *v
}

// configField returns the index in javaConfigFields of the field called
// name, or -1.
func javaConfigField(name string) int {
	for i := range javaConfigFields {
		if javaConfigFields[i].name == name {
			return i
		}
	}
	return -1
}

// config reads the whole stream up to the end of the configuration object.
func (r *javaReader) config() (c Config, info JavaConfigInfo) {
	if r.need(javaHeaderSize) {
		magic, version := r.u16(), r.u16()
		if magic != javaStreamMagic || version != javaStreamVersion {
			r.off -= javaHeaderSize
			r.failf("stream header %04x %04x, want %04x %04x", magic, version, javaStreamMagic, javaStreamVersion)
		}
	}
	if tag := r.tc(); tag != tcObject && r.err == nil {
		r.failf("stream starts with %v, want %v", tag, tcObject)
	}
	d := r.classDesc()
	if r.err != nil {
		return
	}
	if d.name != JavaClassBytefrog && d.name != JavaClassCodePulse {
		r.failf("object of class %s, want %s or %s", d.name, JavaClassBytefrog, JavaClassCodePulse)
		return
	}
	if d.flags&^scWriteMethod != scSerializable {
		r.failf("class %s: flags 0x%02x, want a Serializable class", d.name, d.flags)
		return
	}
	r.newHandle(javaValue{kind: jhConfig})
	info.ClassName, info.SUID = d.name, d.suid
	c.ClassName = d.name

	// Field values come in descriptor order: primitives, then objects.
	var seen [numJavaConfigFields]bool
	for i := range d.fields {
		f := &d.fields[i]
		k := javaConfigField(f.name)
		if k >= 0 {
			if want := javaConfigFields[k].code; f.code != want {
				r.failf("class %s: field %s has type %c, want %c", d.name, f.name, f.code, want)
				return
			}
			if seen[k] {
				r.failf("class %s: field %s declared twice", d.name, f.name)
				return
			}
			seen[k] = true
		}
		if size := int(javaPrimSize[f.code]); size != 0 {
			if !r.need(size) {
				return
			}
			r.setPrim(&c, k, r.b[r.off:r.off+size])
			r.off += size
			continue
		}
		v := r.value()
		if r.err != nil {
			return
		}
		if k != cfExclusions && k != cfInclusions {
			continue // a field this version does not know
		}
		if v.kind != jhNull && v.kind != jhList {
			r.failf("field %s holds %v, want a List", f.name, v.kind)
			return
		}
		if k == cfExclusions {
			c.Exclusions, info.ExclusionsClass = v.list, v.class
		} else {
			c.Inclusions, info.InclusionsClass = v.list, v.class
		}
	}
	for k, ok := range seen {
		if !ok {
			r.failf("class %s: field %s missing", d.name, javaConfigFields[k].name)
			return
		}
	}
	if d.flags&scWriteMethod != 0 {
		r.endAnnotation("custom data of " + d.name)
	}
	return c, info
}

// setPrim stores the value p of primitive field k (-1: unknown, ignored).
func (r *javaReader) setPrim(c *Config, k int, p []byte) {
	switch k {
	case cfRunID:
		c.RunID = p[0]
	case cfBufferMemoryBudget:
		c.BufferMemoryBudget = int32(binary.BigEndian.Uint32(p))
	case cfHeartbeatInterval:
		c.HeartbeatInterval = int32(binary.BigEndian.Uint32(p))
	case cfNumDataSenders:
		c.NumDataSenders = int32(binary.BigEndian.Uint32(p))
	case cfQueueRetryCount:
		c.QueueRetryCount = int32(binary.BigEndian.Uint32(p))
	}
}
