package j4pwire

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Op is an operation of J4P.call.
type Op uint8

// Operations.
const (
	OpGet Op = iota + 1
	OpSet
	OpInvoke
	OpQuery
	OpInfo
	OpGetAll
)

var opNames = [...]string{"", "get", "set", "invoke", "query", "info", "getall"}

func (o Op) String() string {
	if int(o) < len(opNames) && o != 0 {
		return opNames[o]
	}
	return "UNKNOWN_OP_" + strconv.Itoa(int(o))
}

// Tag tags a value.
type Tag byte

// Tags.
const (
	TagNull   Tag = 'N'
	TagTrue   Tag = 'T'
	TagFalse  Tag = 'F'
	TagLong   Tag = 'I'
	TagDouble Tag = 'D'
	TagString Tag = 'S'
	TagList   Tag = 'L'
	TagMap    Tag = 'M'
	TagNumber Tag = 'B' // BigInteger, BigDecimal: decimal text
	TagError  Tag = 'E'
	TagOK     Tag = 'K'
	// TagAttrError is an attribute that could not be read, in an OpGetAll
	// answer: a Kind byte, the exception class and message. It decodes as
	// a *JavaError value.
	TagAttrError Tag = 'X'
)

func (t Tag) String() string {
	switch t {
	case TagNull, TagTrue, TagFalse, TagLong, TagDouble, TagString, TagList, TagMap, TagNumber, TagError, TagOK, TagAttrError:
		return string(rune(t))
	}
	return "UNKNOWN_TAG_" + strconv.Itoa(int(t))
}

// Kind is how J4P classifies a Java exception.
type Kind uint8

// Error kinds.
const (
	KindOther Kind = iota
	KindInstance
	KindAttribute
	KindOperation
	KindArgument
	KindUnsupported
)

var kindNames = [...]string{"other", "instance", "attribute", "operation", "argument", "unsupported"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "UNKNOWN_KIND_" + strconv.Itoa(int(k))
}

// Limits of a decoded answer.
const (
	MaxDepth = 64
	MaxBytes = 32 << 20
)

// ErrMalformed reports an answer of J4P that cannot be decoded.
var ErrMalformed = errors.New("j4pwire: malformed answer")

// Enc builds a request (or, in tests, an answer).
type Enc struct{ b []byte }

// NewEnc starts a request of operation o.
func NewEnc(o Op) *Enc {
	e := &Enc{b: make([]byte, 0, 128)}
	e.b = append(e.b, byte(o))
	return e
}

func (e *Enc) count(n int)  { e.b = binary.AppendUvarint(e.b, uint64(n)) }
func (e *Enc) str(s string) { e.count(len(s)); e.b = append(e.b, s...) }
func (e *Enc) tag(t Tag)    { e.b = append(e.b, byte(t)) }
func (e *Enc) u64(v uint64) { e.b = binary.BigEndian.AppendUint64(e.b, v) }

// Bytes is the request so far.
func (e *Enc) Bytes() []byte { return e.b }

// Str appends a string field.
func (e *Enc) Str(s string) { e.str(s) }

// Strs appends a count and the strings.
func (e *Enc) Strs(ss []string) {
	e.count(len(ss))
	for _, s := range ss {
		e.str(s)
	}
}

// Value appends a request value: nil, bool, integers, floats, strings,
// json.Number, lists and maps of those (as the j4p handler converts
// them); anything else is sent as its text.
func (e *Enc) Value(v any) error { return e.value(v, 0) }

// value encodes a request value: what the j4p handler converted (nil,
// bool, integers, floats, strings, json.Number, lists and maps of those).
func (e *Enc) value(v any, depth int) error {
	if depth > MaxDepth {
		return fmt.Errorf("%w: value nested deeper than %d", ErrMalformed, MaxDepth)
	}
	switch x := v.(type) {
	case nil:
		e.tag(TagNull)
	case bool:
		if x {
			e.tag(TagTrue)
		} else {
			e.tag(TagFalse)
		}
	case int64:
		e.tag(TagLong)
		e.u64(uint64(x))
	case int:
		e.tag(TagLong)
		e.u64(uint64(int64(x)))
	case int32:
		e.tag(TagLong)
		e.u64(uint64(int64(x)))
	case float64:
		e.tag(TagDouble)
		e.u64(math.Float64bits(x))
	case string:
		e.tag(TagString)
		e.str(x)
	case json.Number: // J4P converts its text to the declared type
		e.tag(TagNumber)
		e.str(x.String())
	case *JavaError:
		e.tag(TagAttrError)
		e.b = append(e.b, byte(x.Kind))
		e.str(x.Class)
		e.str(x.Message)
	case []any:
		e.tag(TagList)
		e.count(len(x))
		for _, it := range x {
			if err := e.value(it, depth+1); err != nil {
				return err
			}
		}
	case map[string]any:
		e.tag(TagMap)
		e.count(len(x))
		for k, it := range x {
			e.str(k)
			if err := e.value(it, depth+1); err != nil {
				return err
			}
		}
	default:
		e.tag(TagString)
		e.str(fmt.Sprint(x))
	}
	return nil
}

// dec reads an answer.
type dec struct {
	b   []byte
	p   int
	err error
}

func (d *dec) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
	}
}

func (d *dec) u8() byte {
	if d.p >= len(d.b) {
		d.fail("truncated at %d", d.p)
		return 0
	}
	c := d.b[d.p]
	d.p++
	return c
}

// count reads a length, which can never exceed the bytes left (each item
// takes one byte at least).
func (d *dec) count() int {
	if d.err != nil {
		return 0
	}
	n, k := binary.Uvarint(d.b[d.p:])
	if k <= 0 || n > uint64(len(d.b)-d.p-k) {
		d.fail("bad length at %d", d.p)
		return 0
	}
	d.p += k
	return int(n)
}

func (d *dec) str() string {
	n := d.count()
	if d.err != nil {
		return ""
	}
	s := string(d.b[d.p : d.p+n])
	d.p += n
	return s
}

func (d *dec) u64() uint64 {
	if d.err != nil || len(d.b)-d.p < 8 {
		d.fail("truncated number at %d", d.p)
		return 0
	}
	v := binary.BigEndian.Uint64(d.b[d.p:])
	d.p += 8
	return v
}

// value decodes one value.
func (d *dec) value(depth int) any {
	if depth > MaxDepth {
		d.fail("nested deeper than %d", MaxDepth)
		return nil
	}
	t := Tag(d.u8())
	if d.err != nil {
		return nil
	}
	switch t {
	case TagNull:
		return nil
	case TagTrue:
		return true
	case TagFalse:
		return false
	case TagLong:
		return int64(d.u64())
	case TagDouble:
		return math.Float64frombits(d.u64())
	case TagString:
		return d.str()
	case TagNumber:
		s := d.str()
		if _, err := strconv.ParseFloat(s, 64); err != nil && d.err == nil {
			return s // not a JSON number: its text
		}
		return json.Number(s)
	case TagAttrError:
		je := &JavaError{Kind: Kind(d.u8())}
		je.Class = d.str()
		je.Message = d.str()
		if d.err != nil {
			return nil
		}
		return je
	case TagList:
		n := d.count()
		out := make([]any, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			out = append(out, d.value(depth+1))
		}
		return out
	case TagMap:
		n := d.count()
		out := make(map[string]any, n)
		for i := 0; i < n && d.err == nil; i++ {
			k := d.str()
			out[k] = d.value(depth + 1)
		}
		return out
	}
	d.fail("bad tag %v at %d", t, d.p-1)
	return nil
}

// JavaError is an exception J4P reported.
type JavaError struct {
	Kind    Kind
	Class   string
	Message string
}

func (e *JavaError) Error() string {
	if e.Message == "" {
		return e.Class
	}
	return e.Message
}

// DecodeAnswer decodes J4P.call's answer: the value, or the Java
// exception as a *JavaError.
func DecodeAnswer(b []byte) (any, error) {
	if len(b) > MaxBytes {
		return nil, fmt.Errorf("%w: %d bytes", ErrMalformed, len(b))
	}
	d := &dec{b: b}
	switch t := Tag(d.u8()); t {
	case TagOK:
		v := d.value(0)
		if d.err == nil && d.p != len(b) {
			d.fail("%d bytes after the value", len(b)-d.p)
		}
		return v, d.err
	case TagError:
		e := &JavaError{Kind: Kind(d.u8())}
		e.Class = d.str()
		e.Message = d.str()
		if d.err != nil {
			return nil, d.err
		}
		return nil, e
	default:
		d.fail("bad answer tag %v", t)
		return nil, d.err
	}
}
