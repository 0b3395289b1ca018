package bytefrog

import (
	"encoding/binary"
	"fmt"
)

// Protocol v1 carries the configuration as java.io.ObjectOutputStream
// serialization of RuntimeAgentConfigurationV1 (Java Object Serialization
// Specification, chapter 6). This file has the grammar's constants and
// writes the exact stream the original HQ writes; javaserread.go reads it.

// javaTC is a type code of the serialization stream grammar.
type javaTC uint8

// Stream type codes (java.io.ObjectStreamConstants).
const (
	tcNull           javaTC = 0x70
	tcReference      javaTC = 0x71
	tcClassDesc      javaTC = 0x72
	tcObject         javaTC = 0x73
	tcString         javaTC = 0x74
	tcArray          javaTC = 0x75
	tcClass          javaTC = 0x76
	tcBlockData      javaTC = 0x77
	tcEndBlockData   javaTC = 0x78
	tcReset          javaTC = 0x79
	tcBlockDataLong  javaTC = 0x7A
	tcException      javaTC = 0x7B
	tcLongString     javaTC = 0x7C
	tcProxyClassDesc javaTC = 0x7D
	tcEnum           javaTC = 0x7E
)

var javaTCNames = [...]string{
	tcNull - tcNull:           "TC_NULL",
	tcReference - tcNull:      "TC_REFERENCE",
	tcClassDesc - tcNull:      "TC_CLASSDESC",
	tcObject - tcNull:         "TC_OBJECT",
	tcString - tcNull:         "TC_STRING",
	tcArray - tcNull:          "TC_ARRAY",
	tcClass - tcNull:          "TC_CLASS",
	tcBlockData - tcNull:      "TC_BLOCKDATA",
	tcEndBlockData - tcNull:   "TC_ENDBLOCKDATA",
	tcReset - tcNull:          "TC_RESET",
	tcBlockDataLong - tcNull:  "TC_BLOCKDATALONG",
	tcException - tcNull:      "TC_EXCEPTION",
	tcLongString - tcNull:     "TC_LONGSTRING",
	tcProxyClassDesc - tcNull: "TC_PROXYCLASSDESC",
	tcEnum - tcNull:           "TC_ENUM",
}

func (t javaTC) String() string {
	if t >= tcNull && int(t-tcNull) < len(javaTCNames) {
		return javaTCNames[t-tcNull]
	}
	return fmt.Sprintf("UNKNOWN_TC_0x%02x", uint8(t))
}

// Stream header, class descriptor flags and handles.
const (
	javaStreamMagic   = 0xACED
	javaStreamVersion = 5

	scWriteMethod  = 0x01 // the class has a writeObject method
	scSerializable = 0x02 // the class is Serializable (not Externalizable)

	// javaBaseHandle is the first handle of a stream (baseWireHandle).
	javaBaseHandle = 0x7E0000

	javaI64Size = 8

	javaHeaderSize   = 2 * u16Size          // magic, version
	javaTCSize       = 1                    // a type code
	javaMinFieldSize = javaTCSize + u16Size // type code, empty name
	javaMinElemSize  = javaTCSize + u16Size // TC_STRING of ""
	javaMaxShortStr  = MaxStringLen         // longest TC_STRING body
)

// Java class names and serialVersionUIDs of the classes a v1 payload uses.
const (
	javaArrayList       = "java.util.ArrayList"
	javaLinkedList      = "java.util.LinkedList"
	javaArraysArrayList = "java.util.Arrays$ArrayList"
	javaStringArray     = "[Ljava.lang.String;"
	javaObjectArray     = "[Ljava.lang.Object;"

	javaArrayListSUID int64 = 0x7881D21D99C7619D

	javaListType        = "Ljava/util/List;"    // type string of the list fields
	javaObjectArrayType = "[Ljava/lang/Object;" // Arrays$ArrayList.a as declared
	javaStringArrayType = "[Ljava/lang/String;"
)

// Handles the writer relies on: the stream is always built the same way.
const (
	handleConfigDesc    = javaBaseHandle     // RuntimeAgentConfigurationV1 descriptor
	handleListType      = javaBaseHandle + 1 // "Ljava/util/List;"
	handleArrayListDesc = javaBaseHandle + 3 // java.util.ArrayList descriptor
)

// javaField is a serializable field: its type code and name.
type javaField struct {
	code byte
	name string
}

// Java field type codes.
const (
	jtByte    = 'B'
	jtChar    = 'C'
	jtDouble  = 'D'
	jtFloat   = 'F'
	jtInt     = 'I'
	jtLong    = 'J'
	jtShort   = 'S'
	jtBoolean = 'Z'
	jtObject  = 'L'
	jtArray   = '['
)

// javaPrimSize gives the size of a primitive field value; 0 marks a type
// code that is not a primitive.
var javaPrimSize = [256]uint8{
	jtByte: 1, jtChar: 2, jtDouble: 8, jtFloat: 4, jtInt: 4, jtLong: 8, jtShort: 2, jtBoolean: 1,
}

// Indexes of javaConfigFields.
const (
	cfBufferMemoryBudget = iota
	cfHeartbeatInterval
	cfNumDataSenders
	cfQueueRetryCount
	cfRunID
	cfExclusions
	cfInclusions
	numJavaConfigFields
)

// javaConfigFields is RuntimeAgentConfigurationV1's descriptor as
// ObjectStreamClass orders it: primitives first, each group sorted by name.
var javaConfigFields = [numJavaConfigFields]javaField{
	cfBufferMemoryBudget: {jtInt, "bufferMemoryBudget"},
	cfHeartbeatInterval:  {jtInt, "heartbeatInterval"},
	cfNumDataSenders:     {jtInt, "numDataSenders"},
	cfQueueRetryCount:    {jtInt, "queueRetryCount"},
	cfRunID:              {jtByte, "runId"},
	cfExclusions:         {jtObject, "exclusions"},
	cfInclusions:         {jtObject, "inclusions"},
}

// AppendJavaConfig appends c as the original HQ's ObjectOutputStream writes
// it (the v1 Configuration payload, without the i32 length prefix).
//
// The class name is JavaClassCodePulse when c.ClassName says so and
// JavaClassBytefrog otherwise. The lists are written as java.util.ArrayList
// (a nil slice as an empty list, never as null) whose capacity word holds
// the size, as current JDKs write it. Every string is written as a new
// String object (TC_STRING, or TC_LONGSTRING beyond 65535 encoded bytes),
// never as a back-reference, as a Java HQ that builds its lists from
// distinct String objects does; the class descriptors and the
// "Ljava/util/List;" type string are shared by reference exactly as Java
// shares them. The result is byte-identical to the Java stream for such an
// HQ. It does not allocate when b has room.
func AppendJavaConfig(b []byte, c *Config) []byte {
	name := JavaClassBytefrog
	if c.ClassName == JavaClassCodePulse {
		name = JavaClassCodePulse
	}
	b = binary.BigEndian.AppendUint16(b, javaStreamMagic)
	b = binary.BigEndian.AppendUint16(b, javaStreamVersion)
	b = append(b, byte(tcObject), byte(tcClassDesc))
	b = appendJavaUTF(b, name)
	suid := JavaConfigSUID
	b = binary.BigEndian.AppendUint64(b, uint64(suid))
	b = append(b, scSerializable)
	b = binary.BigEndian.AppendUint16(b, numJavaConfigFields)
	for i := range javaConfigFields {
		f := &javaConfigFields[i]
		b = append(b, f.code)
		b = appendJavaUTF(b, f.name)
		if f.code != jtObject {
			continue
		}
		if i == cfExclusions { // the first use of the type string defines it
			b = append(b, byte(tcString))
			b = appendJavaUTF(b, javaListType)
		} else {
			b = appendJavaRef(b, handleListType)
		}
	}
	b = append(b, byte(tcEndBlockData), byte(tcNull)) // no annotation, no superclass
	b = binary.BigEndian.AppendUint32(b, uint32(c.BufferMemoryBudget))
	b = binary.BigEndian.AppendUint32(b, uint32(c.HeartbeatInterval))
	b = binary.BigEndian.AppendUint32(b, uint32(c.NumDataSenders))
	b = binary.BigEndian.AppendUint32(b, uint32(c.QueueRetryCount))
	b = append(b, c.RunID)
	b = appendJavaArrayList(b, c.Exclusions, true)
	return appendJavaArrayList(b, c.Inclusions, false)
}

// appendJavaArrayList appends l as a java.util.ArrayList object. The first
// list of the stream defines the class descriptor; later ones refer to it.
func appendJavaArrayList(b []byte, l []string, first bool) []byte {
	b = append(b, byte(tcObject))
	if first {
		b = append(b, byte(tcClassDesc))
		b = appendJavaUTF(b, javaArrayList)
		b = binary.BigEndian.AppendUint64(b, uint64(javaArrayListSUID))
		b = append(b, scSerializable|scWriteMethod)
		b = binary.BigEndian.AppendUint16(b, 1)
		b = append(b, jtInt)
		b = appendJavaUTF(b, "size")
		b = append(b, byte(tcEndBlockData), byte(tcNull))
	} else {
		b = appendJavaRef(b, handleArrayListDesc)
	}
	// defaultWriteObject writes the size field, then writeObject writes
	// the "capacity" in block data and the elements.
	b = binary.BigEndian.AppendUint32(b, uint32(len(l)))
	b = append(b, byte(tcBlockData), i32Size)
	b = binary.BigEndian.AppendUint32(b, uint32(len(l)))
	for _, s := range l {
		b = appendJavaString(b, s)
	}
	return append(b, byte(tcEndBlockData))
}

// appendJavaString appends s as a new String object.
func appendJavaString(b []byte, s string) []byte {
	n := cfgMUTFLen(s)
	if n <= javaMaxShortStr {
		b = append(b, byte(tcString))
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	} else {
		b = append(b, byte(tcLongString))
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	return cfgAppendMUTF(b, s)
}

// appendJavaUTF appends a short modified UTF-8 string (a class or field
// name) with its u16 length.
func appendJavaUTF(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(cfgMUTFLen(s)))
	return cfgAppendMUTF(b, s)
}

// appendJavaRef appends a TC_REFERENCE to handle h.
func appendJavaRef(b []byte, h uint32) []byte {
	b = append(b, byte(tcReference))
	return binary.BigEndian.AppendUint32(b, h)
}
