package classfile

import (
	"fmt"
	"strconv"
)

// TargetType is a type_annotation target_type (JVMS §4.7.20, Tables
// 4.7.20-A and -B).
type TargetType uint8

// Target types. Those from TargetLocalVariable on occur only in the type
// annotations of a Code attribute and hold bytecode offsets.
const (
	TargetClassTypeParameter                TargetType = 0x00
	TargetMethodTypeParameter               TargetType = 0x01
	TargetSupertype                         TargetType = 0x10
	TargetClassTypeParamBound               TargetType = 0x11
	TargetMethodTypeParamBound              TargetType = 0x12
	TargetField                             TargetType = 0x13
	TargetMethodReturn                      TargetType = 0x14
	TargetMethodReceiver                    TargetType = 0x15
	TargetMethodFormalParameter             TargetType = 0x16
	TargetThrows                            TargetType = 0x17
	TargetLocalVariable                     TargetType = 0x40
	TargetResourceVariable                  TargetType = 0x41
	TargetExceptionParameter                TargetType = 0x42
	TargetInstanceof                        TargetType = 0x43
	TargetNew                               TargetType = 0x44
	TargetConstructorReference              TargetType = 0x45
	TargetMethodReference                   TargetType = 0x46
	TargetCast                              TargetType = 0x47
	TargetConstructorInvocationTypeArgument TargetType = 0x48
	TargetMethodInvocationTypeArgument      TargetType = 0x49
	TargetConstructorReferenceTypeArgument  TargetType = 0x4A
	TargetMethodReferenceTypeArgument       TargetType = 0x4B
)

func (t TargetType) String() string {
	switch {
	case t <= TargetMethodTypeParameter:
		return "type_parameter_target"
	case t == TargetSupertype:
		return "supertype_target"
	case t == TargetClassTypeParamBound || t == TargetMethodTypeParamBound:
		return "type_parameter_bound_target"
	case t >= TargetField && t <= TargetMethodReceiver:
		return "empty_target"
	case t == TargetMethodFormalParameter:
		return "formal_parameter_target"
	case t == TargetThrows:
		return "throws_target"
	case t == TargetLocalVariable || t == TargetResourceVariable:
		return "localvar_target"
	case t == TargetExceptionParameter:
		return "catch_target"
	case t >= TargetInstanceof && t <= TargetMethodReference:
		return "offset_target"
	case t >= TargetCast && t <= TargetMethodReferenceTypeArgument:
		return "type_argument_target"
	}
	return "UNKNOWN_TARGET_TYPE_" + strconv.Itoa(int(t))
}

// HasOffset reports whether the target holds a bytecode offset in
// TypeAnnotation.Offset (offset_target, type_argument_target).
func (t TargetType) HasOffset() bool {
	return t >= TargetInstanceof && t <= TargetMethodReferenceTypeArgument
}

// TypeAnnotation is one type_annotation of a Runtime(In)VisibleTypeAnnotations
// attribute. The target_info is decoded into the fields its Target uses;
// the type_path and the annotation are kept as bytes in Rest.
type TypeAnnotation struct {
	Target TargetType
	// Offset: bytecode offset of offset_target and type_argument_target.
	Offset uint16
	// Index: type_parameter_index, supertype_index, formal_parameter_index,
	// throws_type_index, exception_table_index (catch_target) or
	// type_argument_index, by Target.
	Index uint16
	// Bound: bound_index of type_parameter_bound_target.
	Bound uint8
	// LocalVars: the table of a localvar_target.
	LocalVars []LocalVarTarget
	// Rest: type_path and annotation, raw (aliases the input when decoded).
	Rest []byte
}

// LocalVarTarget is one entry of a localvar_target: a live range
// [StartPC, StartPC+Length) of local variable slot Index.
type LocalVarTarget struct{ StartPC, Length, Index uint16 }

// maxAnnotationDepth bounds the nesting of annotations and arrays inside an
// element_value, so that crafted input cannot exhaust the stack.
const maxAnnotationDepth = 64

// DecodeTypeAnnotations decodes the info of a RuntimeVisibleTypeAnnotations
// or RuntimeInvisibleTypeAnnotations attribute (held as raw bytes in a
// CodeAttr or Attribute). offset is where data starts in the class file,
// for error offsets. Rewriters use it to map the bytecode offsets of Code
// type annotations; EncodeTypeAnnotations writes them back, byte for byte
// when unchanged.
func DecodeTypeAnnotations(data []byte, offset int) ([]TypeAnnotation, error) {
	r := &reader{b: data, base: offset}
	n := int(r.u2("num_annotations"))
	if !r.need(n*(1+1+2+2), "type annotations") { // smallest: empty_target, empty path, type_index, 0 pairs
		return nil, r.err
	}
	out := make([]TypeAnnotation, n)
	for i := range out {
		a := &out[i]
		at := r.pos()
		a.Target = TargetType(r.u1("target_type"))
		switch {
		case a.Target <= TargetMethodTypeParameter, a.Target == TargetMethodFormalParameter:
			a.Index = uint16(r.u1("target index"))
		case a.Target == TargetSupertype, a.Target == TargetThrows, a.Target == TargetExceptionParameter:
			a.Index = r.u2("target index")
		case a.Target == TargetClassTypeParamBound, a.Target == TargetMethodTypeParamBound:
			a.Index = uint16(r.u1("type_parameter_index"))
			a.Bound = r.u1("bound_index")
		case a.Target >= TargetField && a.Target <= TargetMethodReceiver:
		case a.Target == TargetLocalVariable, a.Target == TargetResourceVariable:
			m := int(r.u2("localvar table_length"))
			if r.need(m*(2+2+2), "localvar_target table") {
				a.LocalVars = make([]LocalVarTarget, m)
				for j := range a.LocalVars {
					a.LocalVars[j] = LocalVarTarget{r.u2("start_pc"), r.u2("length"), r.u2("index")}
				}
			}
		case a.Target >= TargetInstanceof && a.Target <= TargetMethodReference:
			a.Offset = r.u2("offset")
		case a.Target >= TargetCast && a.Target <= TargetMethodReferenceTypeArgument:
			a.Offset = r.u2("offset")
			a.Index = uint16(r.u1("type_argument_index"))
		default:
			r.failAt(at, ErrBadAttribute, "target_type "+strconv.Itoa(int(a.Target)))
		}
		start := r.off
		plen := int(r.u1("type_path length"))
		r.bytes(2*plen, "type_path")
		skipAnnotation(r, 0)
		if r.err != nil {
			return nil, r.err
		}
		a.Rest = r.b[start:r.off:r.off]
	}
	if r.remaining() != 0 {
		r.fail(ErrBadAttribute, "type annotations longer than their content")
		return nil, r.err
	}
	return out, nil
}

// skipAnnotation reads past an annotation (JVMS §4.7.16).
func skipAnnotation(r *reader, depth int) {
	if depth > maxAnnotationDepth {
		r.fail(ErrBadAttribute, "annotations nested too deep")
		return
	}
	r.u2("type_index")
	n := int(r.u2("num_element_value_pairs"))
	for i := 0; i < n && r.err == nil; i++ {
		r.u2("element_name_index")
		skipElementValue(r, depth)
	}
}

// skipElementValue reads past an element_value (JVMS §4.7.16.1).
func skipElementValue(r *reader, depth int) {
	if depth > maxAnnotationDepth {
		r.fail(ErrBadAttribute, "annotations nested too deep")
		return
	}
	at := r.pos()
	switch tag := r.u1("element_value tag"); tag {
	case 'B', 'C', 'D', 'F', 'I', 'J', 'S', 'Z', 's', 'c':
		r.u2("const_value_index")
	case 'e':
		r.u2("type_name_index")
		r.u2("const_name_index")
	case '@':
		skipAnnotation(r, depth+1)
	case '[':
		n := int(r.u2("num_values"))
		for i := 0; i < n && r.err == nil; i++ {
			skipElementValue(r, depth+1)
		}
	default:
		if r.err == nil {
			r.failAt(at, ErrBadAttribute, "element_value tag "+strconv.Itoa(int(tag)))
		}
	}
}

// EncodeTypeAnnotations appends the info of a Runtime(In)VisibleTypeAnnotations
// attribute holding as to b.
func EncodeTypeAnnotations(b []byte, as []TypeAnnotation) ([]byte, error) {
	if len(as) > maxU2 {
		return b, tooLarge("num_annotations", len(as))
	}
	b = appendU2(b, uint16(len(as)))
	for i := range as {
		a := &as[i]
		b = append(b, byte(a.Target))
		switch {
		case a.Target <= TargetMethodTypeParameter, a.Target == TargetMethodFormalParameter:
			b = append(b, byte(a.Index))
		case a.Target == TargetSupertype, a.Target == TargetThrows, a.Target == TargetExceptionParameter:
			b = appendU2(b, a.Index)
		case a.Target == TargetClassTypeParamBound, a.Target == TargetMethodTypeParamBound:
			b = append(b, byte(a.Index), a.Bound)
		case a.Target >= TargetField && a.Target <= TargetMethodReceiver:
		case a.Target == TargetLocalVariable, a.Target == TargetResourceVariable:
			if len(a.LocalVars) > maxU2 {
				return b, tooLarge("localvar table_length", len(a.LocalVars))
			}
			b = appendU2(b, uint16(len(a.LocalVars)))
			for _, v := range a.LocalVars {
				b = appendU2(b, v.StartPC)
				b = appendU2(b, v.Length)
				b = appendU2(b, v.Index)
			}
		case a.Target >= TargetInstanceof && a.Target <= TargetMethodReference:
			b = appendU2(b, a.Offset)
		case a.Target >= TargetCast && a.Target <= TargetMethodReferenceTypeArgument:
			b = appendU2(b, a.Offset)
			b = append(b, byte(a.Index))
		default:
			return b, fmt.Errorf("%w: type annotation %d has target_type %d", ErrBadAttribute, i, a.Target)
		}
		b = append(b, a.Rest...)
	}
	return b, nil
}
