package hq

import "errors"

// Sentinel errors; match with errors.Is.
var (
	// ErrClosed: the server is shut down or closed.
	ErrClosed = errors.New("hq: server closed")
	// ErrRunEnded: the run has ended; no command can be sent any more.
	ErrRunEnded = errors.New("hq: run ended")
	// ErrTransition: the command is not valid in the run's current state
	// (the agent would reject it), so HQ does not send it.
	ErrTransition = errors.New("hq: invalid lifecycle transition")
	// ErrConfig: a Config field is out of range.
	ErrConfig = errors.New("hq: invalid configuration")
	// ErrScript: a lifecycle script does not parse.
	ErrScript = errors.New("hq: bad script")
	// ErrTraceFormat: a trace file is not in the expected format.
	ErrTraceFormat = errors.New("hq: bad trace file")
	// ErrTraceTooLarge: a trace file record declares more bytes than any
	// record HQ writes.
	ErrTraceTooLarge = errors.New("hq: trace record too large")
	// ErrNotListening: Serve or Addr was called before Listen.
	ErrNotListening = errors.New("hq: not listening")
	// ErrAddrInUse: Listen's address is taken: another process listens
	// on the port or the Unix socket, or a file that is not a socket is
	// in the way.
	ErrAddrInUse = errors.New("hq: address in use")
	// ErrNoAccess: HQ's user may not create the Unix socket there.
	ErrNoAccess = errors.New("hq: permission denied")
)
