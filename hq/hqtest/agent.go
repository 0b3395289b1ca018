// Package hqtest is a scripted fake Bytefrog agent and a traffic generator,
// for testing and benchmarking an HQ over real connections. It speaks the
// protocol with transport/bytefrog and checks what HQ answers.
package hqtest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// DefaultTimeout bounds each wait for HQ.
const DefaultTimeout = 10 * time.Second

// ErrUnexpected: HQ sent something other than what the script expected.
var ErrUnexpected = errors.New("hqtest: unexpected message from HQ")

// Agent is one fake agent: a control connection and its data connections.
// It is not safe for concurrent use, except that Write on different data
// connections may run concurrently.
type Agent struct {
	Ctl     net.Conn
	Dialect bytefrog.Dialect
	Config  bytefrog.Config // the Configuration HQ sent
	Data    []net.Conn
	Timeout time.Duration

	addr string
	dec  *bytefrog.Decoder
	m    bytefrog.Msg
	buf  []byte
}

// dialHQ connects to an HQ address (host:port, unix:/path, @name).
func dialHQ(addr string, timeout time.Duration) (net.Conn, error) {
	a, err := bytefrog.ParseAddr(addr)
	if err != nil {
		return nil, err
	}
	return net.DialTimeout(a.Net, a.Addr, timeout)
}

// Dial connects to HQ at addr (host:port, unix:/path or @name), sends Hello and reads the Configuration.
func Dial(addr string, version uint8, flavor bytefrog.Flavor) (*Agent, error) {
	return dial(addr, bytefrog.AppendHello(nil, version), version, flavor)
}

// DialProject is Dial with a ProjectHello (protocol v4).
func DialProject(addr string, version uint8, projectID int32, flavor bytefrog.Flavor) (*Agent, error) {
	return dial(addr, bytefrog.AppendProjectHello(nil, version, projectID), version, flavor)
}

func dial(addr string, hello []byte, version uint8, flavor bytefrog.Flavor) (*Agent, error) {
	c, err := dialHQ(addr, DefaultTimeout)
	if err != nil {
		return nil, err
	}
	a := &Agent{Ctl: c, addr: addr, Timeout: DefaultTimeout,
		Dialect: bytefrog.Dialect{Version: version, Flavor: flavor}}
	a.dec = bytefrog.NewDecoder(c, a.Dialect)
	if err := a.WriteControl(hello); err != nil {
		c.Close()
		return nil, err
	}
	m, err := a.Next()
	if err != nil {
		c.Close()
		return nil, err
	}
	if m.Type != bytefrog.MsgConfiguration {
		c.Close()
		return nil, fmt.Errorf("%w: %v (want Configuration)%s", ErrUnexpected, m.Type, errorText(m))
	}
	a.Config = m.Config
	return a, nil
}

func errorText(m *bytefrog.Msg) string {
	if m.Type == bytefrog.MsgError {
		return ": " + bytefrog.String(m.Text)
	}
	return ""
}

// Next reads the next message HQ sent on the control connection. The
// result is valid until the next call.
func (a *Agent) Next() (*bytefrog.Msg, error) {
	a.Ctl.SetReadDeadline(time.Now().Add(a.Timeout))
	if err := a.dec.Next(&a.m); err != nil {
		return nil, err
	}
	return &a.m, nil
}

// Expect reads the next control message and checks its type.
func (a *Agent) Expect(t bytefrog.MsgType) (*bytefrog.Msg, error) {
	m, err := a.Next()
	if err != nil {
		return nil, fmt.Errorf("hqtest: waiting for %v: %w", t, err)
	}
	if m.Type != t {
		return m, fmt.Errorf("%w: %v (want %v)%s", ErrUnexpected, m.Type, t, errorText(m))
	}
	return m, nil
}

// ExpectError reads until HQ sends Error and returns its text.
func (a *Agent) ExpectError() (string, error) {
	for {
		m, err := a.Next()
		if err != nil {
			return "", fmt.Errorf("hqtest: waiting for Error: %w", err)
		}
		if m.Type == bytefrog.MsgError {
			return bytefrog.String(m.Text), nil
		}
	}
}

// ExpectClosed reads until HQ closes the control connection, returning
// the Error text HQ sent on the way, if any.
func (a *Agent) ExpectClosed() (string, error) {
	text := ""
	for {
		m, err := a.Next()
		if err == io.EOF || errors.Is(err, net.ErrClosed) || isReset(err) {
			return text, nil
		}
		if err != nil {
			return text, err
		}
		if m.Type == bytefrog.MsgError {
			text = bytefrog.String(m.Text)
		}
	}
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}

// WriteControl writes raw bytes on the control connection.
func (a *Agent) WriteControl(b []byte) error {
	a.Ctl.SetWriteDeadline(time.Now().Add(a.Timeout))
	_, err := a.Ctl.Write(b)
	return err
}

// Heartbeat sends a heartbeat.
func (a *Agent) Heartbeat(mode bytefrog.Mode, buffers uint16) error {
	return a.WriteControl(bytefrog.AppendHeartbeat(a.buf[:0], mode, buffers))
}

// DataBreak sends DataBreak(seq).
func (a *Agent) DataBreak(seq int32) error {
	return a.WriteControl(bytefrog.AppendDataBreak(a.buf[:0], seq))
}

// Class sends a class report (ClassTransformed, ClassIgnored or
// ClassTransformFailed).
func (a *Agent) Class(t bytefrog.MsgType, name string) error {
	return a.WriteControl(bytefrog.AppendClassMsg(a.buf[:0], t, name))
}

// SendError sends Error(msg) on the control connection.
func (a *Agent) SendError(msg string) error {
	return a.WriteControl(bytefrog.AppendError(a.buf[:0], msg))
}

// OpenData opens a data connection for the run id from the Configuration
// and waits for DataHelloReply; it returns the connection's index in Data.
func (a *Agent) OpenData() (int, error) {
	return a.OpenDataFor(a.Config.RunID)
}

// OpenDataFor is OpenData with any run id.
func (a *Agent) OpenDataFor(runID uint8) (int, error) {
	c, err := dialHQ(a.addr, a.Timeout)
	if err != nil {
		return 0, err
	}
	c.SetDeadline(time.Now().Add(a.Timeout))
	if _, err := c.Write(bytefrog.AppendDataHello(nil, runID)); err != nil {
		c.Close()
		return 0, err
	}
	var reply bytefrog.Msg
	dec := bytefrog.NewDecoder(c, a.Dialect)
	if err := dec.Next(&reply); err != nil {
		c.Close()
		return 0, fmt.Errorf("hqtest: waiting for DataHelloReply: %w", err)
	}
	if reply.Type != bytefrog.MsgDataHelloReply {
		c.Close()
		return 0, fmt.Errorf("%w: %v (want DataHelloReply)%s", ErrUnexpected, reply.Type, errorText(&reply))
	}
	c.SetDeadline(time.Time{})
	a.Data = append(a.Data, c)
	return len(a.Data) - 1, nil
}

// Write writes b on data connection i.
func (a *Agent) Write(i int, b []byte) error {
	a.Data[i].SetWriteDeadline(time.Now().Add(a.Timeout))
	_, err := a.Data[i].Write(b)
	return err
}

// CloseData closes every data connection.
func (a *Agent) CloseData() {
	for _, c := range a.Data {
		c.Close()
	}
}

// Shutdown ends the run as an agent does: an 'X' heartbeat, HQ's Stop
// (unless HQ already sent it, or stopSeen), then the data connections
// close, then the control connection.
func (a *Agent) Shutdown(stopSeen bool) error {
	if err := a.Heartbeat(bytefrog.ModeShutdown, 0); err != nil {
		return err
	}
	if !stopSeen {
		if _, err := a.Expect(bytefrog.MsgStop); err != nil {
			return err
		}
	}
	a.CloseData()
	return a.Ctl.Close()
}

// Close closes every connection.
func (a *Agent) Close() {
	a.CloseData()
	a.Ctl.Close()
}
