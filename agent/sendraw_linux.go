package agent

import (
	"net"
	"os"
	"syscall"
	"unsafe"
)

// rawSender writes a data connection's send buffers with write(2) made
// without telling the Go scheduler (syscall.RawSyscall) on the socket,
// which the runtime keeps non-blocking: a write takes what the socket's
// buffer holds at once, and waits in the poller only when that buffer is
// full. A write through net.Conn is a blocking system call to the
// scheduler: one of tens of microseconds (the loopback TCP stack runs in
// it) makes sysmon hand the writer's P to another thread, which the
// writer then has to get back — futex wake-ups and thread switches per
// send buffer, on cores the traced program needs. Not safe for concurrent
// use: its data writer's alone.
type rawSender struct {
	rc    syscall.RawConn
	b     []byte        // what is left to write
	errno syscall.Errno // the write's error
	step  func(fd uintptr) bool
}

// newRawSender returns the raw sender of c, or nil when c is not a
// socket of the runtime's (a test's connection): c.Write then.
func newRawSender(c net.Conn) *rawSender {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	s := &rawSender{rc: rc}
	s.step = s.writeSome
	return s
}

// write writes b whole, or returns the error: a deadline set on the
// connection ends the wait for room as it ends c.Write
// (os.ErrDeadlineExceeded).
func (s *rawSender) write(b []byte) error {
	s.b, s.errno = b, 0
	err := s.rc.Write(s.step)
	s.b = nil
	if err == nil && s.errno != 0 {
		err = os.NewSyscallError("write", s.errno)
	}
	return err
}

// writeSome writes to fd until s.b is written (true), the socket's
// buffer is full (false: the poller waits for room) or an error (true,
// s.errno set).
func (s *rawSender) writeSome(fd uintptr) bool {
	for len(s.b) > 0 {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&s.b[0])), uintptr(len(s.b)))
		switch e {
		case 0:
			s.b = s.b[n:]
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			s.errno = e
			return true
		}
	}
	return true
}
