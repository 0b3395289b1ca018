package classfile

import "strconv"

// Class file versions this package reads and writes (JVMS §4.1): 45 is
// JDK 1.0.2/1.1, 52 is 8, 61 is 17, 65 is 21, 69 is 25.
const (
	Magic    = 0xCAFEBABE
	MinMajor = 45
	MaxMajor = 69
)

// Sizes of fixed parts, summed from their fields (JVMS §4.1, §4.5–§4.7).
const (
	headerSize     = 4 + 2 + 2         // magic, minor_version, major_version
	classInfoSize  = 2 + 2 + 2         // access_flags, this_class, super_class
	memberHeadSize = 2 + 2 + 2 + 2     // access_flags, name_index, descriptor_index, attributes_count
	attrHeadSize   = 2 + 4             // attribute_name_index, attribute_length
	minConstSize   = 1 + 2             // the smallest entry: tag + u2 (Class, String, Utf8 "")
	codeHeadSize   = 2 + 2 + 4         // max_stack, max_locals, code_length
	excEntrySize   = 2 + 2 + 2 + 2     // start_pc, end_pc, handler_pc, catch_type
	lineEntrySize  = 2 + 2             // start_pc, line_number
	localEntrySize = 2 + 2 + 2 + 2 + 2 // start_pc, length, name_index, descriptor_index, index
	maxPoolCount   = 0xFFFF            // constant_pool_count is a u2
	maxU2          = 0xFFFF
)

// Tag is a constant pool entry tag (JVMS §4.4, Table 4.4-B).
type Tag uint8

// Constant pool tags. TagNone marks slot 0 and the unusable slot after a
// Long or Double.
const (
	TagNone               Tag = 0
	TagUtf8               Tag = 1
	TagInteger            Tag = 3
	TagFloat              Tag = 4
	TagLong               Tag = 5
	TagDouble             Tag = 6
	TagClass              Tag = 7
	TagString             Tag = 8
	TagFieldref           Tag = 9
	TagMethodref          Tag = 10
	TagInterfaceMethodref Tag = 11
	TagNameAndType        Tag = 12
	TagMethodHandle       Tag = 15
	TagMethodType         Tag = 16
	TagDynamic            Tag = 17
	TagInvokeDynamic      Tag = 18
	TagModule             Tag = 19
	TagPackage            Tag = 20
)

var tagNames = [...]string{
	TagNone: "None", TagUtf8: "Utf8", TagInteger: "Integer", TagFloat: "Float", TagLong: "Long",
	TagDouble: "Double", TagClass: "Class", TagString: "String", TagFieldref: "Fieldref",
	TagMethodref: "Methodref", TagInterfaceMethodref: "InterfaceMethodref",
	TagNameAndType: "NameAndType", TagMethodHandle: "MethodHandle", TagMethodType: "MethodType",
	TagDynamic: "Dynamic", TagInvokeDynamic: "InvokeDynamic", TagModule: "Module", TagPackage: "Package",
}

func (t Tag) String() string {
	if int(t) < len(tagNames) && tagNames[t] != "" {
		return tagNames[t]
	}
	return "UNKNOWN_TAG_" + strconv.Itoa(int(t))
}

// entrySize is the encoded size of an entry with this tag, excluding the
// bytes of a Utf8 (which has a u2 length after the tag); 0 for unknown tags.
var entrySize = [...]int{
	TagUtf8: 1 + 2, TagInteger: 1 + 4, TagFloat: 1 + 4, TagLong: 1 + 8, TagDouble: 1 + 8,
	TagClass: 1 + 2, TagString: 1 + 2, TagFieldref: 1 + 2 + 2, TagMethodref: 1 + 2 + 2,
	TagInterfaceMethodref: 1 + 2 + 2, TagNameAndType: 1 + 2 + 2, TagMethodHandle: 1 + 1 + 2,
	TagMethodType: 1 + 2, TagDynamic: 1 + 2 + 2, TagInvokeDynamic: 1 + 2 + 2, TagModule: 1 + 2,
	TagPackage: 1 + 2,
}

// RefKind is a MethodHandle reference_kind (JVMS §5.4.3.5).
type RefKind uint8

// Method handle reference kinds.
const (
	RefGetField         RefKind = 1
	RefGetStatic        RefKind = 2
	RefPutField         RefKind = 3
	RefPutStatic        RefKind = 4
	RefInvokeVirtual    RefKind = 5
	RefInvokeStatic     RefKind = 6
	RefInvokeSpecial    RefKind = 7
	RefNewInvokeSpecial RefKind = 8
	RefInvokeInterface  RefKind = 9
)

var refKindNames = [...]string{"", "getField", "getStatic", "putField", "putStatic",
	"invokeVirtual", "invokeStatic", "invokeSpecial", "newInvokeSpecial", "invokeInterface"}

func (k RefKind) String() string {
	if k >= 1 && int(k) < len(refKindNames) {
		return refKindNames[k]
	}
	return "UNKNOWN_REF_KIND_" + strconv.Itoa(int(k))
}

// Access flags (JVMS Tables 4.1-B, 4.5-A, 4.6-A). Some bits mean different
// things on classes, fields and methods.
const (
	AccPublic       = 0x0001
	AccPrivate      = 0x0002
	AccProtected    = 0x0004
	AccStatic       = 0x0008
	AccFinal        = 0x0010
	AccSuper        = 0x0020 // class
	AccSynchronized = 0x0020 // method
	AccVolatile     = 0x0040 // field
	AccBridge       = 0x0040 // method
	AccTransient    = 0x0080 // field
	AccVarargs      = 0x0080 // method
	AccNative       = 0x0100
	AccInterface    = 0x0200
	AccAbstract     = 0x0400
	AccStrict       = 0x0800
	AccSynthetic    = 0x1000
	AccAnnotation   = 0x2000
	AccEnum         = 0x4000
	AccModule       = 0x8000 // class
)

// Attribute names this package decodes into typed values.
const (
	AttrCode                   = "Code"
	AttrLineNumberTable        = "LineNumberTable"
	AttrLocalVariableTable     = "LocalVariableTable"
	AttrLocalVariableTypeTable = "LocalVariableTypeTable"
	AttrStackMapTable          = "StackMapTable"
)
