package agent

import _ "unsafe" // go:linkname

// procPin pins the calling goroutine to its P and returns the P's id:
// until procUnpin the goroutine is not preempted and no other goroutine
// runs on that P. It is how sync.Pool keeps per-P state; the runtime
// exports it for that use outside the standard library.
//
//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()
