package calltree_test

import (
	"fmt"

	"github.com/tadpole-trace/tadpole/hq/calltree"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// A tree fed by hand, as HQ feeds it: main calls work twice, the second
// call ends by an exception.
func Example() {
	tr, _ := calltree.New(nil)
	for _, m := range []bytefrog.Msg{
		{Type: bytefrog.MsgMapMethodSignature, MethodID: 1, Text: []byte("app/Main.main;9;([Ljava/lang/String;)V")},
		{Type: bytefrog.MsgMapMethodSignature, MethodID: 2, Text: []byte("app/Main.work;10;(I)I")},
		{Type: bytefrog.MsgMethodEntry, MethodID: 1, RelTime: 0},
		{Type: bytefrog.MsgMethodEntry, MethodID: 2, RelTime: 1},
		{Type: bytefrog.MsgMethodExit, MethodID: 2, RelTime: 4},
		{Type: bytefrog.MsgMethodEntry, MethodID: 2, RelTime: 5},
		{Type: bytefrog.MsgExceptionBubble, MethodID: 2, ExceptionID: 7, RelTime: 6},
		{Type: bytefrog.MsgMethodExit, MethodID: 1, RelTime: 10},
	} {
		tr.Message(&m)
	}
	tr.Finish(nil)
	for i := int32(1); i < int32(tr.Len()); i++ {
		n := tr.Node(i)
		fmt.Printf("%*s%s: %d call(s), total %d ms, self %d ms, %d ended by an exception\n",
			2*(n.Depth-1), "", tr.MethodName(n.Method), n.Calls, n.Total, n.Self, n.Bubbled)
	}
	// Output:
	// app.Main.main([Ljava/lang/String;)V: 1 call(s), total 10 ms, self 6 ms, 0 ended by an exception
	//   app.Main.work(I)I: 2 call(s), total 4 ms, self 4 ms, 1 ended by an exception
}
