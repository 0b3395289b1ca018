package testpeers

import (
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// SockDir returns a new directory for Unix sockets, removed when t ends,
// with a path short enough for sun_path (t.TempDir's can pass 107 bytes).
// prefix names it.
func SockDir(t testing.TB, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// AsNobody runs f without root's file permissions: as root, on a thread of
// its own whose file-system user and group are nobody's (setfsuid clears
// CAP_DAC_OVERRIDE there); the thread ends with f. Other users run f as
// they are. It skips t when the thread cannot drop them.
func AsNobody(t testing.TB, f func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		f()
		return
	}
	const nobody = 65534
	done := make(chan bool)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		unix.Setfsgid(nobody)
		unix.Setfsuid(nobody)
		if cur, _ := unix.SetfsuidRetUid(-1); cur != nobody {
			done <- false
			return
		}
		f()
		done <- true
	}()
	if !<-done {
		t.Skip("cannot drop file permissions on this thread")
	}
}
