package bytefrog_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// An agent appends messages to one buffer; HQ reads them back with a
// Decoder.
func ExampleDecoder() {
	var buf []byte
	buf = bytefrog.AppendDataHello(buf, 0)
	buf = bytefrog.AppendMapThreadName(buf, 0, 5, "main")
	buf = bytefrog.AppendMapMethodSignature(buf, 1, "com/ex/Main.main;9;([Ljava/lang/String;)V")
	buf = bytefrog.AppendMethodEntry(buf, 5, 0, 1, 0)
	buf = bytefrog.AppendMethodExit(buf, 7, 1, 1, 12, 0)

	dec := bytefrog.NewDecoder(bytes.NewReader(buf), bytefrog.Dialect{Version: bytefrog.Version1})
	var m bytefrog.Msg
	for {
		err := dec.Next(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch m.Type {
		case bytefrog.MsgDataHello:
			fmt.Printf("%v run %d\n", m.Type, m.RunID)
		case bytefrog.MsgMapThreadName:
			fmt.Printf("%v %d = %q\n", m.Type, m.ThreadID, bytefrog.String(m.Text))
		case bytefrog.MsgMapMethodSignature:
			fmt.Printf("%v %d = %s\n", m.Type, m.MethodID, bytefrog.String(m.Text))
		case bytefrog.MsgMethodEntry:
			fmt.Printf("%v seq %d method %d thread %d t=%dms\n", m.Type, m.Seq, m.MethodID, m.ThreadID, m.RelTime)
		case bytefrog.MsgMethodExit:
			fmt.Printf("%v seq %d method %d line %d (% x)\n", m.Type, m.Seq, m.MethodID, m.Line, m.Raw)
		}
	}
	// Output:
	// DataHello run 0
	// MapThreadName 0 = "main"
	// MapMethodSignature 1 = com/ex/Main.main;9;([Ljava/lang/String;)V
	// MethodEntry seq 0 method 1 thread 0 t=5ms
	// MethodExit seq 1 method 1 line 12 (15 00 00 00 07 00 00 00 01 00 00 00 01 00 0c 00 00)
}

// The MethodExit layout is a property of the HQ, not of the version.
func ExampleAppendMethodExitCodePulse() {
	bf := bytefrog.AppendMethodExit(nil, 376433, 372, 785932, 34, 13)
	cp := bytefrog.AppendMethodExitCodePulse(nil, 376433, 372, 785932, true, 13)
	fmt.Printf("bytefrog:  % x\n", bf)
	fmt.Printf("codepulse: % x\n", cp)

	var m bytefrog.Msg
	n, err := bytefrog.Dialect{Version: 1, Flavor: bytefrog.FlavorCodePulse}.Parse(&m, cp)
	fmt.Println(n, err, m.ExceptionThrown)
	// Output:
	// bytefrog:  15 00 05 be 71 00 00 01 74 00 0b fe 0c 00 22 00 0d
	// codepulse: 15 00 05 be 71 00 00 01 74 00 0b fe 0c 01 00 0d
	// 16 <nil> true
}

// Strings travel as Java's writeUTF: U+0000 is C0 80 and a character
// above U+FFFF is a surrogate pair.
func ExampleAppendUTF() {
	b := bytefrog.AppendUTF(nil, "a\x00é😀")
	fmt.Printf("% x\n", b)
	fmt.Printf("%q\n", bytefrog.String(b[2:]))
	// Output:
	// 00 0b 61 c0 80 c3 a9 ed a0 bd ed b8 80
	// "a\x00é😀"
}

// Parse reports ErrShort until the whole message is there.
func ExampleDialect_Parse() {
	msg := bytefrog.AppendHeartbeat(nil, bytefrog.ModeTracing, 3)
	d := bytefrog.Dialect{Version: bytefrog.Version1}
	var m bytefrog.Msg
	for i := 1; i <= len(msg); i++ {
		n, err := d.Parse(&m, msg[:i])
		fmt.Println(i, n, err)
	}
	fmt.Println(m.Type, m.Mode, m.Buffers)
	// Output:
	// 1 0 bytefrog: need more bytes
	// 2 0 bytefrog: need more bytes
	// 3 0 bytefrog: need more bytes
	// 4 4 <nil>
	// Heartbeat Tracing 3
}
