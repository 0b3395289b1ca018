package hce_test

import (
	"fmt"

	"github.com/tadpole-trace/tadpole/transport/hce"
)

// A client's first envelope on a socket, and a command block it may send
// once the hub has given it connection ID 3.
func Example() {
	fmt.Printf("% x\n", hce.AppendEnvelope(nil, hce.FlagSocketConnect, false, nil))
	b := &hce.Block{Dest: hce.EngineID, Src: 3, Iface: hce.IfaceAgentManager, Cmd: hce.CmdQueryRunningAgents,
		Context: 1, Data: hce.AppendIDs(nil, []hce.InterfaceID{hce.IfaceTadpole})}
	fmt.Println(b)
	fmt.Println(len(hce.AppendBlocksEnvelope(nil, true, b)), "bytes with MD5")
	// Output:
	// fe c0 48 45 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
	// HII_AGENT_MANAGER CID_QUERY_RUNNING_AGENTS 3→1 ctx 1 (8 bytes)
	// 72 bytes with MD5
}
