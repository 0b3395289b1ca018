package live

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"runtime"
	"time"
)

// Request reading.
const (
	// readBuffer holds a few requests (the largest is 36 bytes).
	readBuffer = 512
	// deadlineStep is how often, at most, the read and write deadlines
	// move forward (and at least every quarter of their timeout): a
	// timeout fires up to this much early.
	deadlineStep = time.Second
)

// viewer is one connection's state, owned by its goroutine: requests are
// strictly sequential (one request, one reply), so the reading goroutine
// also writes each reply, in one write under a deadline (a packet's bytes
// go from the trace's buffer in the same writev).
type viewer struct {
	srv *Server
	c   interface {
		io.ReadWriter
		SetReadDeadline(time.Time) error
		SetWriteDeadline(time.Time) error
	}
	r         *bufio.Reader // requests: a header and its payload come in one segment
	deadline  time.Time     // the read deadline set last
	connected bool
	created   bool
	id        uint64
	req       [HeaderSize + MaxRequestPayload]byte
	out       []byte                 // reply buffer, reused
	data      []byte                 // packet bytes sent after out (shared, read-only)
	bufArr    [2][]byte              // out and data
	bufs      net.Buffers            // over bufArr, for one writev
	sent      int                    // packet bytes in data
	wdeadline time.Time              // the write deadline set last
	attached  map[uint64]*attachment // by session id
	streams   map[uint64]*vstream    // by viewer stream id
	nextID    uint64                 // viewer stream ids and ctf trace ids
	// read lists the sessions this connection has read to their end:
	// LIST_SESSIONS leaves them out, or a viewer that keeps looking for
	// its session (babeltrace's session-not-found-action=continue) would
	// attach again and read the run a second time.
	read map[uint64]bool
}

type attachment struct {
	sessionID uint64
	trace     *Trace
	reader    *Reader
	release   func()
	traceID   uint64
	metaID    uint64
	clients   interface{ Add(int32) int32 }
}

type vstream struct {
	a     *attachment
	index int // data stream index; -1 for the metadata stream
}

func (v *viewer) run() error {
	v.r = bufio.NewReaderSize(v.c, readBuffer)
	for {
		// The idle deadline moves at most once a second: one timer change
		// per request would cost more than the request.
		if now := time.Now(); now.Sub(v.deadline) >= min(deadlineStep, v.srv.cfg.IdleTimeout/4) {
			v.deadline = now
			v.c.SetReadDeadline(now.Add(v.srv.cfg.IdleTimeout))
		}
		if _, err := io.ReadFull(v.r, v.req[:HeaderSize]); err != nil {
			return err
		}
		h, _ := ParseHeader(v.req[:HeaderSize])
		n, err := h.Check()
		if err != nil {
			// An unknown command gets lttng-relayd's generic error reply,
			// then the connection closes; a wrong size cannot be skipped
			// safely either.
			v.out = be.AppendUint32(v.out[:0], ErrUnknownCommandCode)
			v.write()
			return err
		}
		p := v.req[HeaderSize : HeaderSize+n]
		if _, err := io.ReadFull(v.r, p); err != nil {
			return err
		}
		if !v.connected && h.Cmd != CmdConnect {
			return &CommandError{Cmd: h.Cmd, DataSize: h.DataSize, Err: ErrNotConnected}
		}
		v.out, v.data = v.out[:0], nil
		v.sent = 0
		pacer := v.srv.cfg.Pacer
		locked := pacer != nil && pacer.Paced()
		var cpu0 int64
		var cpuOK bool
		if locked {
			// The goroutine keeps its thread for the request, so that the
			// thread's CPU time is the request's.
			runtime.LockOSThread()
			cpu0, cpuOK = threadCPU()
		}
		t0 := time.Now()
		err = v.handle(h.Cmd, p)
		if err == nil {
			err = v.write()
		}
		now := time.Now()
		busy := now.Sub(t0)
		if locked {
			if cpu1, ok := threadCPU(); cpuOK && ok {
				busy = min(time.Duration(cpu1-cpu0), busy)
			}
			runtime.UnlockOSThread()
		}
		if err != nil {
			return err
		}
		v.srv.lastReq.Store(now.UnixNano())
		if v.sent > 0 {
			v.srv.sent.Add(int64(v.sent))
		}
		if pacer != nil {
			pacer.Pace(max(busy, 0), v.sent)
		}
	}
}

func (v *viewer) write() error {
	if now := time.Now(); now.Sub(v.wdeadline) >= min(deadlineStep, v.srv.cfg.WriteTimeout/4) {
		v.wdeadline = now
		v.c.SetWriteDeadline(now.Add(v.srv.cfg.WriteTimeout))
	}
	if len(v.data) == 0 {
		_, err := v.c.Write(v.out)
		return err
	}
	// A packet goes from the trace's own bytes, after its reply header, in
	// one writev on a TCP connection: no copy per viewer.
	v.bufArr = [2][]byte{v.out, v.data}
	v.bufs = v.bufArr[:]
	_, err := v.bufs.WriteTo(v.c)
	v.data = nil
	return err
}

func (v *viewer) handle(cmd Command, p []byte) error {
	switch cmd {
	case CmdConnect:
		return v.connect(p)
	case CmdListSessions:
		v.listSessions()
	case CmdCreateSession:
		// Required before ATTACH; babeltrace may repeat it.
		v.created = true
		v.out = be.AppendUint32(v.out, uint32(CreateOK))
	case CmdAttachSession:
		req, _ := ParseAttach(p)
		v.attach(req)
	case CmdGetNextIndex:
		id, _ := ParseID(p)
		v.nextIndex(id)
	case CmdGetPacket:
		req, _ := ParsePacketRequest(p)
		v.packet(req)
	case CmdGetMetadata:
		id, _ := ParseID(p)
		v.metadata(id)
	case CmdGetNewStreams:
		id, _ := ParseID(p)
		v.newStreams(id)
	case CmdDetachSession:
		id, _ := ParseID(p)
		v.detach(id)
	}
	return nil
}

func (v *viewer) connect(p []byte) error {
	req, _ := ParseConnect(p)
	// "Protocols are compatible if they have the same major number."
	if req.Major != ProtocolMajor {
		return fmt.Errorf("%w: viewer speaks %d.%d", ErrVersion, req.Major, req.Minor)
	}
	v.connected = true
	rep := Connect{Major: ProtocolMajor, Minor: min(ProtocolMinor, req.Minor)}
	if req.Type == ConnCommand {
		// "A viewer_session_id is assigned only for type 1."
		if v.id == 0 {
			v.id = v.srv.nextViewer.Add(1)
		}
		rep.ViewerSessionID = v.id
	}
	v.out = rep.Append(v.out)
	return nil
}

func (v *viewer) listSessions() {
	ss := v.srv.cat.Sessions()
	n := 0
	for _, s := range ss {
		if !v.read[s.Info().ID] {
			n++
		}
	}
	v.out = be.AppendUint32(v.out, uint32(n))
	for _, s := range ss {
		in := s.Info()
		if v.read[in.ID] {
			continue
		}
		if n--; n < 0 {
			break // a session appeared meanwhile
		}
		v.out = SessionRecord{ID: in.ID, LiveTimer: in.LiveTimer, Clients: uint32(v.srv.Clients(in.ID)),
			Streams: uint32(in.Streams), Hostname: in.Hostname, Name: in.Name}.Append(v.out)
	}
}

func (v *viewer) attach(req AttachRequest) {
	status := func(s Status) { v.out = append(be.AppendUint32(v.out, uint32(s)), 0, 0, 0, 0) }
	if !v.created {
		status(AttachNoSession)
		return
	}
	sess := v.srv.cat.Session(req.SessionID)
	if sess == nil {
		status(AttachUnknown)
		return
	}
	in := sess.Info()
	switch {
	case v.attached[req.SessionID] != nil:
		status(AttachAlready)
		return
	case in.LiveTimer == 0:
		status(AttachNotLive)
		return
	case req.Seek != SeekBeginning && req.Seek != SeekLast:
		status(AttachSeekErr)
		return
	}
	t, release, err := sess.Open()
	if err != nil {
		v.srv.log.Warn("live: cannot open session", "session", in.Name, "err", err)
		status(AttachUnknown)
		return
	}
	seek := req.Seek
	if in.Recorded || v.srv.cfg.ForceBeginning {
		seek = SeekBeginning
	}
	a := &attachment{sessionID: req.SessionID, trace: t, reader: t.NewReader(seek), release: release,
		clients: v.srv.clientCount(req.SessionID)}
	a.clients.Add(1)
	v.nextID++
	a.traceID = v.nextID
	v.nextID++
	a.metaID = v.nextID
	v.streams[a.metaID] = &vstream{a: a, index: -1}
	v.attached[req.SessionID] = a
	news := a.reader.NewStreams()
	v.out = be.AppendUint32(v.out, uint32(AttachOK))
	v.out = be.AppendUint32(v.out, uint32(len(news)+1))
	// The metadata stream always goes with the data streams, or babeltrace
	// polls GET_NEW_STREAMS forever.
	v.out = StreamRecord{ID: a.metaID, CTFTraceID: a.traceID, Metadata: true, Path: in.Name,
		Channel: "metadata"}.Append(v.out)
	v.appendStreams(a, news, in.Name)
}

func (v *viewer) appendStreams(a *attachment, news []StreamInfo, path string) {
	for _, si := range news {
		v.nextID++
		v.streams[v.nextID] = &vstream{a: a, index: si.Index}
		v.out = StreamRecord{ID: v.nextID, CTFTraceID: a.traceID, Path: path, Channel: si.Channel}.Append(v.out)
	}
}

func (v *viewer) nextIndex(id uint64) {
	vs := v.streams[id]
	if vs == nil || vs.index < 0 {
		v.out = Index{Status: IndexErr}.Append(v.out)
		return
	}
	v.out = vs.a.reader.NextIndex(vs.index).Append(v.out)
}

func (v *viewer) packet(req PacketRequest) {
	vs := v.streams[req.StreamID]
	if vs == nil || vs.index < 0 {
		v.out = append(be.AppendUint32(v.out, uint32(PacketErr)), 0, 0, 0, 0, 0, 0, 0, 0)
		return
	}
	data, flags, ok := vs.a.reader.Packet(vs.index, req.Offset, min(int(req.Len), v.srv.cfg.MaxPacketRead))
	if !ok {
		// Out of range: ERR with len 0. Flags are left out: babeltrace
		// 2.0.4 retries on ERR with flags, which would loop.
		v.out = append(be.AppendUint32(v.out, uint32(PacketErr)), 0, 0, 0, 0, 0, 0, 0, 0)
		return
	}
	v.out = be.AppendUint32(v.out, uint32(PacketOK))
	v.out = be.AppendUint32(v.out, uint32(len(data)))
	v.out = be.AppendUint32(v.out, uint32(flags))
	v.data = data
	v.sent = len(data)
}

func (v *viewer) metadata(id uint64) {
	vs := v.streams[id]
	if vs == nil || vs.index >= 0 {
		v.out = be.AppendUint32(be.AppendUint64(v.out, 0), uint32(MetadataErr))
		return
	}
	m := vs.a.reader.Metadata()
	if len(m) == 0 {
		// Never OK with len 0: fatal in babeltrace 2.0.4.
		v.out = be.AppendUint32(be.AppendUint64(v.out, 0), uint32(MetadataNoNew))
		return
	}
	v.out = be.AppendUint32(be.AppendUint64(v.out, uint64(len(m))), uint32(MetadataOK))
	v.out = append(v.out, m...)
}

func (v *viewer) newStreams(sessionID uint64) {
	a := v.attached[sessionID]
	if a == nil {
		v.out = append(be.AppendUint32(v.out, uint32(NewStreamsErr)), 0, 0, 0, 0)
		return
	}
	news := a.reader.NewStreams()
	switch {
	case len(news) > 0:
		v.out = be.AppendUint32(v.out, uint32(NewStreamsOK))
		v.out = be.AppendUint32(v.out, uint32(len(news)))
		v.appendStreams(a, news, "")
	case a.reader.Done():
		if v.read == nil {
			v.read = map[uint64]bool{}
		}
		v.read[sessionID] = true
		v.out = append(be.AppendUint32(v.out, uint32(NewStreamsHup)), 0, 0, 0, 0)
	default:
		v.out = append(be.AppendUint32(v.out, uint32(NewStreamsNoNew)), 0, 0, 0, 0)
	}
}

func (v *viewer) detach(sessionID uint64) {
	a := v.attached[sessionID]
	if a == nil {
		v.out = be.AppendUint32(v.out, uint32(DetachUnknown))
		return
	}
	v.drop(a)
	v.out = be.AppendUint32(v.out, uint32(DetachOK))
}

func (v *viewer) drop(a *attachment) {
	for id, vs := range v.streams {
		if vs.a == a {
			delete(v.streams, id)
		}
	}
	delete(v.attached, a.sessionID)
	a.reader.Close()
	a.clients.Add(-1)
	if a.release != nil {
		a.release()
	}
}

func (v *viewer) detachAll() {
	for _, a := range v.attached {
		v.drop(a)
	}
}
