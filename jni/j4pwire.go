package jni

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// The encoding between the management endpoint and io.tadpole.J4P (jni/java):
// a request is an operation byte and its fields; an answer is wireOK and a
// value, or wireError, an error kind, the Java exception class and its
// message. Counts and lengths are unsigned varints, strings UTF-8, int64
// and float64 8 bytes big-endian.

// wireOp is an operation of J4P.call.
type wireOp uint8

// Operations.
const (
	opGet wireOp = iota + 1
	opSet
	opInvoke
	opQuery
	opInfo
)

var opNames = [...]string{"", "get", "set", "invoke", "query", "info"}

func (o wireOp) String() string {
	if int(o) < len(opNames) && o != 0 {
		return opNames[o]
	}
	return "UNKNOWN_OP_" + strconv.Itoa(int(o))
}

// wireTag tags a value.
type wireTag byte

// Tags.
const (
	tagNull   wireTag = 'N'
	tagTrue   wireTag = 'T'
	tagFalse  wireTag = 'F'
	tagLong   wireTag = 'I'
	tagDouble wireTag = 'D'
	tagString wireTag = 'S'
	tagList   wireTag = 'L'
	tagMap    wireTag = 'M'
	tagNumber wireTag = 'B' // BigInteger, BigDecimal: decimal text
	tagError  wireTag = 'E'
	tagOK     wireTag = 'K'
)

func (t wireTag) String() string {
	switch t {
	case tagNull, tagTrue, tagFalse, tagLong, tagDouble, tagString, tagList, tagMap, tagNumber, tagError, tagOK:
		return string(rune(t))
	}
	return "UNKNOWN_TAG_" + strconv.Itoa(int(t))
}

// errKind is how J4P classifies a Java exception.
type errKind uint8

// Error kinds.
const (
	kindOther errKind = iota
	kindInstance
	kindAttribute
	kindOperation
	kindArgument
	kindUnsupported
)

var kindNames = [...]string{"other", "instance", "attribute", "operation", "argument", "unsupported"}

func (k errKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "UNKNOWN_KIND_" + strconv.Itoa(int(k))
}

// Limits of a decoded answer.
const (
	maxWireDepth = 64
	maxWireBytes = 32 << 20
)

// ErrWire reports an answer of J4P that cannot be decoded.
var ErrWire = errors.New("jni: malformed j4p answer")

// wireEnc builds a request.
type wireEnc struct{ b []byte }

func (e *wireEnc) op(o wireOp)      { e.b = append(e.b, byte(o)) }
func (e *wireEnc) count(n int)      { e.b = binary.AppendUvarint(e.b, uint64(n)) }
func (e *wireEnc) str(s string)     { e.count(len(s)); e.b = append(e.b, s...) }
func (e *wireEnc) tag(t wireTag)    { e.b = append(e.b, byte(t)) }
func (e *wireEnc) u64(v uint64)     { e.b = binary.BigEndian.AppendUint64(e.b, v) }
func (e *wireEnc) bytes() []byte    { return e.b }
func newWireEnc(o wireOp) *wireEnc  { e := &wireEnc{b: make([]byte, 0, 128)}; e.op(o); return e }
func (e *wireEnc) strs(ss []string) { e.count(len(ss)); e.strList(ss) }
func (e *wireEnc) strList(ss []string) {
	for _, s := range ss {
		e.str(s)
	}
}

// value encodes a request value: what the j4p handler converted (nil,
// bool, integers, floats, strings, json.Number, lists and maps of those).
func (e *wireEnc) value(v any, depth int) error {
	if depth > maxWireDepth {
		return fmt.Errorf("%w: value nested deeper than %d", ErrWire, maxWireDepth)
	}
	switch x := v.(type) {
	case nil:
		e.tag(tagNull)
	case bool:
		if x {
			e.tag(tagTrue)
		} else {
			e.tag(tagFalse)
		}
	case int64:
		e.tag(tagLong)
		e.u64(uint64(x))
	case int:
		e.tag(tagLong)
		e.u64(uint64(int64(x)))
	case int32:
		e.tag(tagLong)
		e.u64(uint64(int64(x)))
	case float64:
		e.tag(tagDouble)
		e.u64(math.Float64bits(x))
	case string:
		e.tag(tagString)
		e.str(x)
	case json.Number:
		if i, err := x.Int64(); err == nil {
			e.tag(tagLong)
			e.u64(uint64(i))
		} else if f, err := x.Float64(); err == nil {
			e.tag(tagDouble)
			e.u64(math.Float64bits(f))
		} else {
			e.tag(tagNumber)
			e.str(x.String())
		}
	case []any:
		e.tag(tagList)
		e.count(len(x))
		for _, it := range x {
			if err := e.value(it, depth+1); err != nil {
				return err
			}
		}
	case map[string]any:
		e.tag(tagMap)
		e.count(len(x))
		for k, it := range x {
			e.str(k)
			if err := e.value(it, depth+1); err != nil {
				return err
			}
		}
	default:
		e.tag(tagString)
		e.str(fmt.Sprint(x))
	}
	return nil
}

// wireDec reads an answer.
type wireDec struct {
	b   []byte
	p   int
	err error
}

func (d *wireDec) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{ErrWire}, args...)...)
	}
}

func (d *wireDec) u8() byte {
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
func (d *wireDec) count() int {
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

func (d *wireDec) str() string {
	n := d.count()
	if d.err != nil {
		return ""
	}
	s := string(d.b[d.p : d.p+n])
	d.p += n
	return s
}

func (d *wireDec) u64() uint64 {
	if d.err != nil || len(d.b)-d.p < 8 {
		d.fail("truncated number at %d", d.p)
		return 0
	}
	v := binary.BigEndian.Uint64(d.b[d.p:])
	d.p += 8
	return v
}

// value decodes one value.
func (d *wireDec) value(depth int) any {
	if depth > maxWireDepth {
		d.fail("nested deeper than %d", maxWireDepth)
		return nil
	}
	t := wireTag(d.u8())
	if d.err != nil {
		return nil
	}
	switch t {
	case tagNull:
		return nil
	case tagTrue:
		return true
	case tagFalse:
		return false
	case tagLong:
		return int64(d.u64())
	case tagDouble:
		return math.Float64frombits(d.u64())
	case tagString:
		return d.str()
	case tagNumber:
		s := d.str()
		if _, err := strconv.ParseFloat(s, 64); err != nil && d.err == nil {
			return s // not a JSON number: its text
		}
		return json.Number(s)
	case tagList:
		n := d.count()
		out := make([]any, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			out = append(out, d.value(depth+1))
		}
		return out
	case tagMap:
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

// javaError is an exception J4P reported.
type javaError struct {
	Kind    errKind
	Class   string
	Message string
}

func (e *javaError) Error() string {
	if e.Message == "" {
		return e.Class
	}
	return e.Message
}

// decodeAnswer decodes J4P.call's answer: the value, or the Java
// exception as a *javaError.
func decodeAnswer(b []byte) (any, error) {
	if len(b) > maxWireBytes {
		return nil, fmt.Errorf("%w: %d bytes", ErrWire, len(b))
	}
	d := &wireDec{b: b}
	switch t := wireTag(d.u8()); t {
	case tagOK:
		v := d.value(0)
		if d.err == nil && d.p != len(b) {
			d.fail("%d bytes after the value", len(b)-d.p)
		}
		return v, d.err
	case tagError:
		e := &javaError{Kind: errKind(d.u8())}
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
