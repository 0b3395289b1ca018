package filter

import (
	"fmt"
	"strconv"
)

// Kind is the type of a Value.
type Kind uint8

// Value kinds.
const (
	KindNone Kind = iota
	KindInt
	KindFloat
	KindString
)

var kindNames = [...]string{KindNone: "none", KindInt: "int", KindFloat: "float", KindString: "string"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("UNKNOWN_KIND_%d", uint8(k))
}

// Value is a field value. A Value of KindNone counts as a missing field.
type Value struct {
	Kind  Kind
	Int   int64
	Float float64
	Str   string
}

// IntValue, FloatValue and StringValue build Values.
func IntValue(i int64) Value     { return Value{Kind: KindInt, Int: i} }
func FloatValue(f float64) Value { return Value{Kind: KindFloat, Float: f} }
func StringValue(s string) Value { return Value{Kind: KindString, Str: s} }
func boolValue(b bool) Value {
	if b {
		return Value{Kind: KindInt, Int: 1}
	}
	return Value{Kind: KindInt}
}

func (v Value) String() string {
	switch v.Kind {
	case KindInt:
		return strconv.FormatInt(v.Int, 10)
	case KindFloat:
		return strconv.FormatFloat(v.Float, 'g', -1, 64)
	case KindString:
		return strconv.Quote(v.Str)
	}
	return "<none>"
}

// FieldSource supplies the fields a Record does not carry itself, by their
// name in the expression: payload fields ("class_name", "lineno"),
// "$ctx.<name>", "$app.<provider>:<ctx>", or paths such as "a.b" and
// "a[0]". It returns false for a field it does not have.
type FieldSource interface {
	Field(name string) (Value, bool)
}

// Record is what an expression is evaluated against. Pass a pointer; Eval
// does not keep it.
type Record struct {
	// LoggerName is the field logger_name.
	LoggerName string
	// Level is the field int_loglevel.
	Level int32
	// Message is the field msg.
	Message string
	// Fields resolves every other field; nil means the record has none.
	Fields FieldSource
}

// The built-in field names.
const (
	FieldLoggerName = "logger_name"
	FieldLevel      = "int_loglevel"
	FieldMessage    = "msg"
)

// FieldSet says which fields a Program reads, so that a caller can skip
// producing the costly ones (the message of a Java log record, for one).
type FieldSet uint8

// Field set bits.
const (
	UsesLoggerName FieldSet = 1 << iota
	UsesLevel
	UsesMessage
	UsesOther // any field resolved through Record.Fields
)

// fieldID identifies a field in the compiled tree.
type fieldID uint8

const (
	fieldOther fieldID = iota
	fieldLoggerName
	fieldLevel
	fieldMessage
)

var builtinFields = map[string]fieldID{
	FieldLoggerName: fieldLoggerName,
	FieldLevel:      fieldLevel,
	FieldMessage:    fieldMessage,
}

var fieldUses = [...]FieldSet{
	fieldOther:      UsesOther,
	fieldLoggerName: UsesLoggerName,
	fieldLevel:      UsesLevel,
	fieldMessage:    UsesMessage,
}
