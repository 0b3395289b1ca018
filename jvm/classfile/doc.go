// Package classfile reads and writes JVM class files (JVMS SE 25 chapter 4),
// versions 45.0 (JDK 1.1) to 69.0 (JDK 25), losslessly: parsing a class and
// writing it back unchanged gives the identical bytes. It is pure Go, has no
// dependencies beyond the standard library, and is the base of the
// bytecode rewriter in jvm/instrument.
//
// # Model
//
//	Parse(b) (*Class, error)       header, constant pool, fields, methods, attributes
//	Class.Bytes / AppendTo         write back (untouched parts copied as bytes)
//	Class.Pool *Pool               typed constants; Add* look up or append
//	Member{Access, Name, Desc, Attrs}
//	Member.Code(pool) (*Code, error)   decode a method's Code attribute
//	Member.SetCode(pool, *Code)        encode and store it back
//	Code{MaxStack, MaxLocals, Code, Exceptions, Attrs []CodeAttr}
//	CodeAttr.Kind: Lines (LineNumberTable), Locals (LocalVariableTable,
//	  LocalVariableTypeTable), Frames (StackMapTable), Data (anything else)
//	Frame{Kind, Offset (absolute), Chop, Locals, Stack []VType}
//	VType{Tag, Index}              Index: Class constant (VObject) or offset of the new (VUninitialized)
//	Code.LineAt(pc)                source line of an instruction
//	FindAttr, Member.CodeIndex     find attributes by name
//
// Attributes are kept as raw bytes (Attribute.Data) until asked for:
// Member.Code decodes a Code attribute on demand, so a method that is not
// rewritten is written from its original bytes. Every other attribute of
// classes, fields, methods and Code (annotations, BootstrapMethods,
// type annotations, ...) is carried over as bytes, in order.
//
// # Reusing memory
//
// A CodeArena (zero value ready) decodes Codes and stores re-encoded ones
// (CodeArena.Code, Decode, SetCode) from slabs that Reset recycles, so a
// rewriter handling class after class allocates almost nothing per method.
// What it returned is valid until Reset: write the class first.
//
// # Constant pool
//
// Constants are Constant{Tag, Kind, A, B, Bits, Utf8}; the meaning of A and
// B per tag is documented on Constant. Long and Double take two slots (the
// second is TagNone). Entries are never changed or removed: AddUTF8,
// AddClass, AddString, AddNameAndType, AddFieldref, AddMethodref,
// AddInterfaceMethodref, AddMethodHandle, AddMethodType, AddDynamic,
// AddInvokeDynamic, AddModule, AddPackage, AddInteger, AddFloat, AddLong and
// AddDouble return the index of an equal entry or append one (ErrPoolFull
// past 65535 slots), so existing indexes stay valid. Parsed entries are
// written from their original bytes; appended ones are encoded.
// Utf8 values are raw modified UTF-8 bytes, never converted.
//
// # Stack maps
//
// Frames carry absolute offsets: the decoder resolves the offset_delta
// chain, the encoder rebuilds it, so a rewriter only maps Frame.Offset and
// VUninitialized indexes. Kind is kept so that an unchanged table encodes to
// its original bytes; FrameSame and FrameSameLocals1 switch to their
// extended forms when a delta no longer fits 6 bits. FrameChop uses Chop,
// FrameAppend uses Locals (1-3), FrameFull uses Locals and Stack.
//
// # Type annotations
//
// Runtime(In)VisibleTypeAnnotations attributes stay raw like every other
// attribute; DecodeTypeAnnotations decodes one (target_info typed, type_path
// and annotation kept as bytes in Rest) and EncodeTypeAnnotations writes it
// back byte for byte. In a Code attribute their targets hold bytecode
// offsets (TargetType.HasOffset: Offset; localvar targets: LocalVars;
// catch targets: an exception table index), which a rewriter must map.
//
// # Errors
//
// A malformed class file gives a *FormatError{Offset, What, Err} whose
// Offset is the byte offset in the class file and whose Err is one of
// ErrTruncated, ErrBadMagic, ErrUnsupportedVersion, ErrBadConstant,
// ErrBadAttribute or ErrTrailingBytes (match with errors.Is). Every count
// and length is checked against the remaining input before anything is
// allocated; no input makes Parse or DecodeCode panic. Writing returns
// ErrTooLarge (wrapped) when a count or length exceeds its field, e.g. code
// longer than 65535 bytes.
//
// What is checked: the structure (every count and length), the version, the
// kind of every constant pool reference (a Class names a Utf8, a Methodref a
// Class and a NameAndType, a MethodHandle a member of its reference kind,
// ...), this_class, super_class, interfaces, member names and descriptors,
// attribute names, and, when a Code is decoded, catch types, stack map
// Object types, reserved frame and verification tags and code_length
// 1..65535. Not checked: descriptors' syntax, modified UTF-8, instructions,
// and offsets against the code (that is the verifier's and the rewriter's
// concern).
//
// # Ownership and concurrency
//
// A Class, its Pool, Attribute.Data, Code.Code and CodeAttr.Data alias the
// bytes given to Parse: keep them unchanged while the Class is in use, and
// copy Code.Code before editing it in place. A Class is not safe for
// concurrent use; distinct Classes are independent.
package classfile
