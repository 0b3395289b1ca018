//go:build !linux

package live

// threadCPU cannot read a thread's CPU time here: serving is charged its
// wall time.
func threadCPU() (int64, bool) { return 0, false }
