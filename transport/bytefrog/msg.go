package bytefrog

// Msg is one decoded message. Only the fields of its Type are meaningful;
// the others are left as they were. It is a plain struct so that a reader
// can decode into one value again and again without allocating.
//
// Text, Value and Raw alias the decoder's buffer and are valid only until
// the next call that reads into it. Text and Value hold the string as sent:
// validated Java modified UTF-8 (identical to UTF-8 unless the string has
// U+0000 or characters above U+FFFF); use [String] for a Go string.
type Msg struct {
	Type MsgType

	Version   uint8  // Hello, ProjectHello
	ProjectID int32  // ProjectHello
	RunID     uint8  // DataHello
	Mode      Mode   // Heartbeat
	Buffers   uint16 // Heartbeat: count of send buffers waiting

	RelTime          int32  // ms since trace start: events, MapThreadName
	Seq              int32  // sequenced events; DataBreak: the next sequence number
	MethodID         int32  // events, MapMethodSignature, 13, 15
	ExceptionID      int32  // Exception, ExceptionBubble, MapException
	SourceLocationID int32  // MapSourceLocation, MethodVisit
	ThreadID         uint16 // events, MapThreadName
	Line             uint16 // MethodExit (Bytefrog), Exception; NoLine when unknown
	ExceptionThrown  bool   // MethodExit (Code Pulse)

	StartLine, EndLine int32 // MapSourceLocation
	StartChar, EndChar int16 // MapSourceLocation
	Count              int32 // SourceLocationCount

	// Text: thread name, signature, exception or class name, error message,
	// or marker key. Value: marker value.
	Text  []byte
	Value []byte

	// Config is set for a Configuration message.
	Config Config

	// Raw is the whole message as it was on the wire.
	Raw []byte
}
