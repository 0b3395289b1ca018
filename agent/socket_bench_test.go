//go:build linux

package agent

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// sockReadSize is what HQ's connection reader asks for per read, about.
const sockReadSize = 256 << 10

// BenchmarkSocketPath measures what carrying the data connection's bytes
// costs both ends together, in one process: the data writer's raw writes
// of full 64 KiB send buffers, the kernel, and a reader reading into a
// 256 KiB buffer as HQ's connection reader does, over loopback TCP or a
// Unix-domain socket, with the socket's default send buffer or a larger
// one. cpu-ns/KiB is the process's CPU time (user and system, getrusage)
// per KiB carried, sys-ns/KiB its system part; an event is 15–17 bytes.
func BenchmarkSocketPath(b *testing.B) {
	for _, network := range []string{"tcp", "unix"} {
		for _, sndbuf := range sockBufs {
			b.Run(fmt.Sprintf("net=%s/sndbuf=%dK", network, sndbuf>>10), func(b *testing.B) {
				benchSocketPath(b, network, sndbuf)
			})
		}
	}
}

func benchSocketPath(b *testing.B, network string, sndbuf int) {
	addr := "127.0.0.1:0"
	if network == "unix" {
		dir, err := os.MkdirTemp("", "sockbench")
		if err != nil {
			b.Fatal(err)
		}
		defer os.RemoveAll(dir)
		addr = filepath.Join(dir, "s")
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	got := make(chan int64, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- -1
			return
		}
		defer c.Close()
		buf := make([]byte, sockReadSize)
		var n int64
		for {
			k, err := c.Read(buf)
			n += int64(k)
			if err == io.EOF || err != nil {
				got <- n
				return
			}
		}
	}()
	c, err := net.Dial(network, ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	if sndbuf > 0 {
		type writeBuffer interface{ SetWriteBuffer(int) error }
		c.(writeBuffer).SetWriteBuffer(sndbuf)
	}
	s := newRawSender(c)
	msg := make([]byte, maxBufSize)
	for i := range msg {
		msg[i] = byte(i)
	}
	b.SetBytes(int64(len(msg)))
	b.ResetTimer()
	cpu0, sys0 := rusageSelf()
	for range b.N {
		if err := s.write(msg); err != nil {
			b.Fatal(err)
		}
	}
	closeWrite(c)
	n := <-got
	cpu1, sys1 := rusageSelf()
	b.StopTimer()
	c.Close()
	if n != int64(b.N)*int64(len(msg)) {
		b.Fatalf("read %d bytes; want %d", n, b.N*len(msg))
	}
	kib := float64(n) / 1024
	b.ReportMetric(float64(cpu1-cpu0)/kib, "cpu-ns/KiB")
	b.ReportMetric(float64(sys1-sys0)/kib, "sys-ns/KiB")
}

// rusageSelf is the process's CPU time and its system part, in ns.
func rusageSelf() (cpu, sys int64) {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano(), ru.Stime.Nano()
}

// sockBufs are the send buffer sizes tried (0: the system's; TCP's grows
// by itself up to net.ipv4.tcp_wmem's last figure).
var sockBufs = []int{0, 256 << 10, 1 << 20}
