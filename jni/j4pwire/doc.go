// Package j4pwire is the encoding between tadpole's management endpoint and
// io.tadpole.J4P, the Java helper that serves the JVM's platform MBean
// server (package jni): one byte array each way per JNI call.
//
// A request is an operation byte and its fields:
//
//	OpGet     name, attribute
//	OpSet     name, attribute, value
//	OpInvoke  name, operation, count, signature types…, argument values…
//	OpQuery   pattern ("" for all)
//	OpInfo    name
//	OpGetAll  name, count, attribute names… (0: every readable one)
//
// An answer is TagOK and a value, or TagError, a Kind byte, the Java
// exception's class and its message. Strings (name, attribute, … and the
// text of values) are an unsigned varint length and UTF-8 bytes; counts are
// unsigned varints. A value is a tag and its payload:
//
//	N          null
//	T, F       true, false
//	I          int64, 8 bytes big-endian (Java's integral types)
//	D          float64, 8 bytes big-endian (IEEE 754 bits)
//	S          string
//	B          a decimal number as text (BigInteger, BigDecimal)
//	L          count, then that many values
//	M          count, then that many (string key, value) pairs
//	X          an attribute that could not be read (OpGetAll answers
//	           only): a Kind byte, the exception's class and message
//
// J4P writes values as Jolokia serializes them (CompositeData and maps as
// M, TabularData as M keyed by index values, arrays and collections as L,
// ObjectName as M {"objectName": …}; an OpGetAll answer is M of attribute
// name to value or X), so the endpoint follows inner paths
// and applies its limits in Go. Decoding bounds nesting (MaxDepth), the
// answer's size (MaxBytes) and every count by the bytes left.
package j4pwire
