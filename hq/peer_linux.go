package hq

import (
	"net"
	"syscall"
)

// peerCred returns the process and user at the other end of a Unix-domain
// connection, as the kernel recorded them when it connected (SO_PEERCRED);
// ok is false for other connections.
func peerCred(conn net.Conn) (pid, uid int32, ok bool) {
	uc, isUnix := conn.(*net.UnixConn)
	if !isUnix {
		return 0, 0, false
	}
	rc, err := uc.SyscallConn()
	if err != nil {
		return 0, 0, false
	}
	var cred *syscall.Ucred
	var cerr error
	if err := rc.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil || cerr != nil {
		return 0, 0, false
	}
	return cred.Pid, int32(cred.Uid), true
}
