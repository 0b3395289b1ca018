package testpeers

import (
	"os"
	"os/exec"
	"slices"
	"testing"
)

func TestProcStat(t *testing.T) {
	st, ppid, err := procStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if ppid != os.Getppid() || st == 'Z' {
		t.Errorf("procStat(self) = %c, ppid %d; want running, ppid %d", st, ppid, os.Getppid())
	}
	if _, _, err := procStat(-1); err == nil {
		t.Errorf("procStat(-1) succeeded")
	}
}

func TestDescendantsAndWaitExit(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skipf("sleep: %v", err)
	}
	pid := cmd.Process.Pid
	if !alive(pid) {
		t.Fatalf("child %d not alive", pid)
	}
	if d := descendantsOf(os.Getpid()); !slices.Contains(d, pid) {
		t.Errorf("descendantsOf(self) = %v; want it to hold %d", d, pid)
	}
	cmd.Process.Kill()
	go cmd.Wait()
	if !waitExit(pid, stopTimeout) {
		t.Errorf("waitExit(%d) = false after kill", pid)
	}
}

func TestReadInt(t *testing.T) {
	p := t.TempDir() + "/f"
	if err := os.WriteFile(p, []byte(" 5345 \nrest"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := readInt(p); n != 5345 || err != nil {
		t.Errorf("readInt = %d, %v; want 5345", n, err)
	}
}
