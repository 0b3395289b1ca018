package lttngagent

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
)

const (
	maxPort = 65535
	// portFileReadMax bounds the bytes read from a port file: a port and
	// a newline need 6, the rest is slack for whitespace.
	portFileReadMax = 64
)

// ReadPortFile reads a sessiond agent.port file: "Parse only the first line,
// trim it, and require 1–65535". A missing file is an error matching
// fs.ErrNotExist; anything unusable is ErrBadPortFile.
func ReadPortFile(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var buf [portFileReadMax]byte
	n, err := io.ReadFull(f, buf[:])
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return 0, err
	}
	return ParsePort(buf[:n])
}

// ParsePort parses the content of a port file.
func ParsePort(b []byte) (int, error) {
	// "The file is opened without truncation": a shorter port written over
	// a longer one leaves a tail behind the first newline.
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	s := string(bytes.TrimSpace(b))
	port, err := strconv.Atoi(s)
	if err != nil || port < 1 || port > maxPort {
		return 0, fmt.Errorf("%w: %q", ErrBadPortFile, s)
	}
	return port, nil
}

// resolvePort returns the port to dial for daemon d, or an error saying why
// there is none. It re-reads both files: "If both give the same port, run
// only the root one."
func (c *Client) resolvePort(d Daemon) (int, error) {
	if c.cfg.Port > 0 {
		return c.cfg.Port, nil
	}
	port, err := c.readPort(c.portFile(d))
	if err != nil || d == DaemonRoot {
		return port, err
	}
	if root, rerr := c.readPort(c.cfg.RootPortFile); rerr == nil && root == port {
		return 0, errSharedPort
	}
	return port, nil
}

// errSharedPort: the user port file names the root daemon's port.
var errSharedPort = errors.New("lttngagent: user and root port files name the same port; the root connection serves it")

func (c *Client) portFile(d Daemon) string {
	if d == DaemonRoot {
		return c.cfg.RootPortFile
	}
	return c.cfg.UserPortFile
}

func (c *Client) readPort(path string) (int, error) {
	if path == "" {
		return 0, fs.ErrNotExist
	}
	port, err := ReadPortFile(path)
	if errors.Is(err, fs.ErrNotExist) && c.cfg.FallbackPort != 0 {
		return c.cfg.FallbackPort, nil
	}
	return port, err
}
