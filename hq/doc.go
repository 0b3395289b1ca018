// Package hq is the reference Bytefrog HQ: the collector an agent streams its
// trace to (protocol versions 1 to 4, see transport/bytefrog).
//
// # Connections
//
// One listening port serves every agent. Each accepted connection gets its own
// goroutine, which reads the first two bytes under a read timeout
// (Config.GreetTimeout), so a silent peer never delays another greeting:
//
//	00 v           Hello, protocol version v: a new run (trace). HQ answers with
//	               a Configuration (v1: Java serialization, v2+: JSON), then
//	               Suspend when starting suspended, then Start unless
//	               AutoStart is off. An unsupported v gets
//	               Error("Invalid Protocol Version") and the connection closes.
//	10 v p p p p   ProjectHello (v4): as Hello, with an i32 project id.
//	1E r           DataHello for run id r: HQ waits up to Config.DataHelloWait
//	               for run r, then answers DataHelloReply (1F), or Error and
//	               closes.
//	anything else  Error("Unexpected Input Format"), then close.
//
// Run ids go round-robin over 0..254 and are unique among live runs. A data
// connection must come from the IP address of its run's control connection.
//
// # Processing
//
// The control connection may carry only Heartbeat, DataBreak, the three class
// reports and Error; anything else fails the run ("Bad control message"), as
// does an unknown heartbeat mode or an Error from the agent. Data connections
// are parsed in their own goroutines straight from pooled read buffers (slabs);
// one goroutine per run, the core, routes unsequenced messages (mappings) on
// arrival and releases sequenced events in sequence order (i32, wrapping) by a
// k-way merge of the per-connection queues, with a heap as fallback for a
// connection whose numbers go backwards. The core reports gaps, duplicates,
// late events, ids used before their mapping and data breaks for numbers
// already passed, and delivers each data break right before the event carrying
// its number. Held events are capped (Config.MaxHeldEvents, MaxHeldBytes): when
// the cap is reached while waiting for a missing number the run fails with
// "gap at seq N: waited for it while holding M events".
//
// A run completes when the agent has sent the 'X' heartbeat (HQ then sends
// Stop unless it already did) and every connection has reached EOF. A control
// EOF before 'X' and before HQ sent Stop fails the run. A failing run costs
// only itself: HQ sends Error to its agent and closes its connections.
//
// # Trace files
//
// With Config.TraceDir set, every run is written to one file. By default
// (Config.Compression CompressColumns, docs/tracefile.md) it is tadpole's
// columnar layout: a header (magic "TPHQ", format version 2, run id,
// protocol version, flavour, start time, agent address, the limits in
// force) and zstd blocks in which the events are per-thread columns (kinds,
// time differences, method ids, other fields) and everything else HQ took
// is kept whole: 10× and more smaller than the Bytefrog bytes. The older
// layouts (format 1: an S2 or zstd stream, or none, of records — kind,
// connection index, time, length, bytes — of everything received and sent)
// can still be written and read. Either way the file holds what the core
// processed, in its order: [Replay] feeds it through the same core and
// gives the same [Report]; it tells the layout by the file's first bytes.
//
// # Concurrency
//
// Server and Run methods are safe for concurrent use. Processors are called
// from the run's core goroutine only, one message at a time; the Msg they get
// and the slices it holds are valid only during the call.
package hq
