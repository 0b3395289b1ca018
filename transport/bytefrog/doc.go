// Package bytefrog encodes and decodes the Bytefrog agent ⇄ HQ wire protocol,
// versions 1 to 4, including the Code Pulse additions (ids 13–16).
//
// # Wire format
//
// A message is one type byte followed by a fixed or variable body; messages are
// concatenated with no delimiter, length prefix or checksum. Integers are
// big-endian two's complement (i32, u16, i16); strings are Java
// DataOutputStream.writeUTF: a u16 count of encoded bytes, then modified UTF-8.
//
//	id  name                  body after the type byte                         total
//	 0  Hello                 u8 version                                       2
//	16  ProjectHello (v4)     u8 version, i32 projectId                        6
//	 1  Configuration v1      i32 n, n bytes of Java serialization             5+n
//	 1  Configuration v2+     utf JSON                                         3+n
//	 2…7 Start Stop Pause Unpause Suspend Unsuspend                            1
//	 8  Heartbeat             u8 mode, u16 bufferCount                         4
//	 9  DataBreak             i32 nextSeq                                      5
//	10  MapThreadName         u16 tid, i32 relTime, utf name                   9+n
//	11  MapMethodSignature    i32 id, utf signature                            7+n
//	12  MapException          i32 id, utf class name                           7+n
//	13  MapSourceLocation     i32 slId, i32 methodId, i32 start, i32 end,
//	                          i16 startChar, i16 endChar                       21
//	14  MethodVisit           i32 relTime, i32 seq, i32 methodId, i32 slId,
//	                          u16 tid                                          19
//	15  SourceLocationCount   i32 methodId, i32 count                          9
//	20  MethodEntry           i32 relTime, i32 seq, i32 methodId, u16 tid      15
//	21  MethodExit (Bytefrog) i32 relTime, i32 seq, i32 methodId, u16 line,
//	                          u16 tid                                          17
//	21  MethodExit (CodePulse) i32 relTime, i32 seq, i32 methodId,
//	                          u8 exceptionThrown, u16 tid                      16
//	22  Exception             i32 relTime, i32 seq, i32 methodId, i32 excId,
//	                          u16 line, u16 tid                                21
//	23  ExceptionBubble       i32 relTime, i32 seq, i32 methodId, i32 excId,
//	                          u16 tid                                          19
//	30  DataHello             u8 runId                                         2
//	31  DataHelloReply        —                                                1
//	40…42 ClassTransformed / ClassIgnored / ClassTransformFailed: utf name     3+n
//	50  Marker                i32 relTime, i32 seq, utf key, utf value         13+K+V
//	99  Error                 utf message                                      3+n
//
// The MethodExit layout is chosen by an explicit [Flavor], never by the
// protocol version: Code Pulse changed it without bumping the version.
//
// Reading: a [Decoder] reads any message from a stream into a [Msg]; an
// [EventView] reads the data messages of a buffer (events, markers,
// mappings, Error, DataBreak) in place, field by field, with no copy and no
// allocation, and stops at the first message it refuses with the offset of
// that message ([ViewError]). HQ frames a data connection's reads with a
// view and comes back to each event with [EventView.Revisit] when it is
// released in sequence order.
//
// Configuration payloads: protocol v1 carries a Java-serialized
// RuntimeAgentConfigurationV1 (see [AppendJavaConfig], [ParseJavaConfig]);
// v2 and later carry JSON with case-insensitive keys ([AppendJSONConfig],
// [ParseJSONConfig]).
//
// Transport: byte streams, TCP or, on one host, a Unix-domain socket; an
// HQ address ([ParseAddr]) names either (host:port, unix:/path, @name).
package bytefrog
