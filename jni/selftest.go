package jni

import (
	"errors"
	"os"
	"syscall"
)

// brokenPipe writes to a pipe whose read end is closed and returns the
// errno the write failed with (EPIPE: the agent's SIGPIPE handling let the
// process live), 0 when it did not fail, or -1 when no pipe could be made.
func brokenPipe() int {
	r, w, err := os.Pipe()
	if err != nil {
		return -1
	}
	r.Close()
	defer w.Close()
	_, err = w.Write([]byte{1})
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return int(errno)
	}
	return 0
}
