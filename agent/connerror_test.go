package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
)

// TestConnErrorFatal: which failures to reach HQ the background retry
// gives up on, and that each still matches its sentinel and its cause.
func TestConnErrorFatal(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	timeout := &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}
	noHost := &net.DNSError{Err: "no such host", Name: "nohq.invalid", IsNotFound: true}
	dnsBusy := &net.DNSError{Err: "server misbehaving", Name: "hq.example", IsTemporary: true}
	badAddr := &net.AddrError{Err: "missing port in address", Addr: "hq"}
	for _, tc := range []struct {
		name  string
		err   error
		cause error
		fatal bool
	}{
		{"refused", fmt.Errorf("%w at hq: %w", ErrNoHQ, refused), syscall.ECONNREFUSED, false},
		{"reset", fmt.Errorf("%w: hello: %w", ErrNoHQ, reset), syscall.ECONNRESET, false},
		{"timeout", fmt.Errorf("%w at hq: %w", ErrNoHQ, timeout), os.ErrDeadlineExceeded, false},
		{"dns temporary", fmt.Errorf("%w at hq: %w", ErrNoHQ, dnsBusy), dnsBusy, false},
		{"closed before the configuration", fmt.Errorf("%w: reading configuration: %w", ErrRejected, readErr(io.EOF)), io.EOF, false},
		{"reset before the configuration", fmt.Errorf("%w: reading configuration: %w", ErrRejected, reset), syscall.ECONNRESET, false},
		{"rejected", fmt.Errorf("%w: %s", ErrRejected, "unsupported version"), ErrRejected, true},
		{"protocol", fmt.Errorf("%w: %v before the configuration", ErrProtocol, "Start"), ErrProtocol, true},
		{"no such host", fmt.Errorf("%w at hq: %w", ErrNoHQ, noHost), noHost, true},
		{"bad address", fmt.Errorf("%w at hq: %w", ErrNoHQ, badAddr), badAddr, true},
	} {
		err := error(connError("dial", "hq:1", tc.err))
		var ce *ConnError
		if !errors.As(err, &ce) {
			t.Fatalf("%s: %v is no ConnError", tc.name, err)
		}
		if ce.Fatal != tc.fatal || ce.Temporary() == tc.fatal || retryable(err) == tc.fatal {
			t.Errorf("%s: Fatal %v, Temporary %v, retryable %v; want fatal %v", tc.name, ce.Fatal, ce.Temporary(), retryable(err), tc.fatal)
		}
		if !errors.Is(err, tc.cause) {
			t.Errorf("%s: %v does not wrap %v", tc.name, err, tc.cause)
		}
		if err.Error() != tc.err.Error() {
			t.Errorf("%s: text %q; want %q", tc.name, err.Error(), tc.err.Error())
		}
	}
}

// TestConnErrorFromDial: a refused HQ is a temporary ConnError wrapping
// ErrNoHQ and ECONNREFUSED; an address without a port is fatal.
func TestConnErrorFromDial(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	log, _ := newLogger("none", LevelOff)
	for _, tc := range []struct {
		addr  string
		fatal bool
		cause error
	}{
		{addr, false, syscall.ECONNREFUSED},
		{"127.0.0.1", true, nil},
	} {
		cfg := testConfig(tc.addr)
		_, err := newSession(cfg, log).dial(context.Background(), firstDial)
		var ce *ConnError
		if !errors.As(err, &ce) || !errors.Is(err, ErrNoHQ) {
			t.Fatalf("%s: dial: %v; want a ConnError wrapping ErrNoHQ", tc.addr, err)
		}
		if ce.Fatal != tc.fatal || ce.Op != "dial" || ce.Addr != tc.addr {
			t.Errorf("%s: %+v; want Op dial, Addr %s, Fatal %v", tc.addr, ce, tc.addr, tc.fatal)
		}
		if tc.cause != nil && !errors.Is(err, tc.cause) {
			t.Errorf("%s: %v does not wrap %v", tc.addr, err, tc.cause)
		}
	}
}
