//go:build !linux

package agent

import "net"

// rawSender is Linux's (sendraw_linux.go); elsewhere data writers use
// net.Conn's Write.
type rawSender struct{}

func newRawSender(net.Conn) *rawSender { return nil }

func (*rawSender) write([]byte) error { return nil }
