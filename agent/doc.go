// Package agent is tadpole's tracing core, in pure Go: configuration, the
// Bytefrog session with HQ (hello, configuration, start, heartbeats, pause,
// suspend, stop), the event path, the caches and the Go API.
//
// # Event path
//
// Instrumented code never writes to a socket and never takes a lock. A
// recording call loads the active session, checks the mode, pins its
// goroutine to its P while it fills the next slot of that P's lane (a ring
// with one producer at a time, so no atomic read-modify-write), and
// publishes the slot. A single drain goroutine merges the lanes, earliest
// millisecond first, and keeps each thread's events in the order it
// recorded them when it moves between Ps (see lanes). It alone assigns
// Bytefrog sequence numbers (gap-free by construction), thread ids and
// first-use mappings, and encodes messages into pooled send buffers, each
// mapping in the same buffer right before the event that first uses it.
// Data writers, one per data connection, send full buffers. The pool is
// bounded by the buffer budget: when every buffer is in flight the drain
// waits, the lanes fill and recording calls wait — back-pressure, never
// loss, while tracing. Control messages travel on their own connection and
// queue, ahead of nothing.
//
// Modes: Pause blocks recording calls until Unpause. Suspend drops events
// before they take a slot, so no sequence number is consumed, and a
// DataBreak carrying the next number goes to HQ. Stop (from HQ) and
// Shutdown send the 'X' heartbeat, drain what was recorded, close the data
// connections and then the control connection; the host keeps running.
//
// # Hosts
//
// Go code uses Method handles (NewMethod), Mark, SetThreadName and the
// slog handler. JVM and C hosts (packages jni and capi, in libtadpole.so)
// encode events into per-thread buffers and hand whole buffers to the
// agent through the module's internal/host package; batches take the same
// path, one slot per buffer. The drain encodes a JVM probe buffer's words
// straight into wire messages, in one pass, runs of entries and exits of
// mapped methods without a branch between the two.
//
// # Management
//
// With the option j4p=127.0.0.1:8778, StartManagement serves the Jolokia
// protocol (transport/j4p) over HTTP in the background: the MBeans
// io.tadpole:type=Agent (mode, HQ, counters; mark and flush) and
// io.tadpole:type=Logger,name=<logger> (state; enable, disable, reset),
// plus any the host adds to Management.Registry. Loopback only, write and
// exec refused unless j4p_write=on or a j4p_policy allows them.
//
// # Logging
//
// The agent never writes to stdout. It logs to stderr (or a file, or
// nowhere) at or above the configured level, each distinct problem once.
package agent
