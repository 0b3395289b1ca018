//go:build !unix

package hce

import (
	"context"
	"errors"
)

// errNoPipes: named pipes are a Unix transport here.
var errNoPipes = errors.New("hce: named pipes need a Unix system")

func dialPipe(context.Context, string, Config, Handler) (*Conn, error) { return nil, errNoPipes }

// PipeListener is the hub's well-known FIFO (Unix only).
type PipeListener struct{}

// ListenPipe fails off Unix.
func ListenPipe(string, *Config) (*PipeListener, error) { return nil, errNoPipes }

// Close does nothing.
func (l *PipeListener) Close() error { return nil }

// Accept fails off Unix.
func (l *PipeListener) Accept() (string, error) { return "", errNoPipes }

// AcceptPipe fails off Unix.
func (l *PipeListener) AcceptPipe(string, func() (uint32, Reason), Handler) (*Conn, error) {
	return nil, errNoPipes
}

func mkfifo(string) error { return errNoPipes }
