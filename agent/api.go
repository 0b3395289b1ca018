package agent

import (
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/timandy/routine"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// record is the hot path shared by every recording call: check the mode,
// reserve a slot, fill it, publish it.
func record(h uint64, method int32) {
	s := active.Load()
	if s == nil {
		return
	}
	recordOn(s, uint64(routine.Goid()), h, method)
}

// recordOn records one event of a fixed-size kind. It is claim, fill and
// commit written out in one function for the lane's current thread: this
// is the path every traced call takes twice, and each call or reload saved
// shows.
// h is the slot header without the lap (see header): constant for most
// calls.
//
// The clock is read before the mode, both while pinned: an event that finds
// the agent tracing is stamped no later than the moment it looked, so no
// event is stamped inside a suspend or pause the agent took after that.
func recordOn(s *pipeline, thread, h uint64, method int32) {
	ls := s.lanes
	p := procPin()
	now := s.now()
	if s.mode.Load() != modeTracing {
		procUnpin()
		if s.gate() {
			recordSlow(s, thread, h, method)
		}
		return
	}
	all := ls.list()
	if p >= len(all) || all[p] == nil {
		procUnpin()
		recordSlow(s, thread, h, method)
		return
	}
	l := all[p]
	l.acquire()
	i := loadTail(l)
	if i >= l.room && !ls.hasRoom(l, i) || atomic.LoadUint64(&l.cur) != thread {
		l.release()
		procUnpin()
		recordSlow(s, thread, h, method)
		return
	}
	sl := &l.slots[i&ls.mask]
	sl.data = eventData(method, now)
	setTail(l, i+1)
	v := ls.lap(i) | h
	if i&(ls.batch-1) != ls.batch-1 {
		storeRelease(&sl.hdr, v)
	} else {
		ls.publishLast(sl, v)
	}
	l.release()
	procUnpin()
}

// recordSlow is recordOn for a P without a lane yet, a full lane, a thread
// that is not its lane's current one, or a mode other than Tracing when the
// call began.
func recordSlow(s *pipeline, thread, h uint64, method int32) {
	for {
		l, i, sl, ok := s.lanes.claim(thread)
		if !ok {
			return
		}
		now := s.now()
		if s.mode.Load() == modeTracing {
			sl.data = eventData(method, now)
			s.lanes.commit(l, sl, i, h)
			return
		}
		// The agent suspended or paused while the slot was being claimed
		// (claim may wait for room): void it, then wait out a pause.
		s.lanes.void(l, sl, i, thread)
		if !s.gate() {
			return
		}
	}
}

func recordText(k kind, key, value string) {
	s := active.Load()
	if s == nil {
		return
	}
	if s.mode.Load() != modeTracing && !s.gate() {
		return
	}
	for {
		l, i, sl, ok := s.lanes.claim(uint64(routine.Goid()))
		if !ok {
			return
		}
		now := s.now() // before the mode: see recordOn
		if s.mode.Load() == modeTracing {
			sl.data = eventData(0, now)
			t := &l.texts[i&s.lanes.mask]
			t.key, t.value = key, value
			s.lanes.commit(l, sl, i, uint64(k))
			return
		}
		s.lanes.void(l, sl, i, uint64(routine.Goid()))
		if !s.gate() {
			return
		}
	}
}

// Enter records a MethodEntry on the calling goroutine and returns a Frame
// whose Exit records the matching exit, so that
//
//	defer m.Enter().Exit()
//
// traces a whole call. It costs no allocation and returns at once when no
// agent is tracing.
func (m *Method) Enter() Frame {
	s := active.Load()
	if s == nil {
		return Frame{m: m}
	}
	g := uint64(routine.Goid())
	recordOn(s, g, entryHeader, m.id)
	return Frame{m: m, s: s, g: g}
}

// Exit records a MethodExit with an unknown line.
func (m *Method) Exit() { record(exitHeader, m.id) }

// ExitLine records a MethodExit at a source line.
func (m *Method) ExitLine(line int) { record(header(kindExit, 0, clampLine(line), false), m.id) }

// Throw records an Exception raised in m at line.
func (m *Method) Throw(e *ExceptionType, line int) {
	record(header(kindThrow, e.id, clampLine(line), false), m.id)
}

// Bubble records that m ended by letting exception e pass: it takes the
// place of Exit for that call.
func (m *Method) Bubble(e *ExceptionType) { record(header(kindBubble, e.id, 0, false), m.id) }

// Frame is an entered method call; see Method.Enter. It remembers the
// session and goroutine of the entry so that Exit repeats no lookup.
type Frame struct {
	m *Method
	s *pipeline
	g uint64
}

// Exit records the exit of the call.
func (f Frame) Exit() {
	if f.s != nil { // a session that ended is no longer in tracing mode
		recordOn(f.s, f.g, exitHeader, f.m.id)
	}
}

// ExitErr records the exit of a call whose error result is *err: an
// ExceptionBubble of the error's type when it is non-nil, a MethodExit
// otherwise. Use it as "defer m.Enter().ExitErr(&err)".
func (f Frame) ExitErr(err *error) {
	if err == nil || *err == nil {
		f.Exit()
		return
	}
	f.m.Bubble(ErrorType(*err))
}

// Mark records a marker: a custom key/value event in the trace.
func Mark(key, value string) { recordText(kindMarker, key, value) }

// SetThreadName names the calling goroutine in the trace. A goroutine not
// named is shown as "goroutine-<id>".
func SetThreadName(name string) {
	s := active.Load()
	if s == nil {
		return
	}
	// A rename is recorded in every mode but Shutdown so that the name is
	// right when tracing resumes.
	if s.stopping.Load() {
		return
	}
	l, i, sl, ok := s.lanes.claim(uint64(routine.Goid()))
	if !ok {
		return
	}
	sl.data = eventData(0, s.now())
	l.texts[i&s.lanes.mask].key = name
	s.lanes.commit(l, sl, i, uint64(kindName))
}

const noLine = 0xFFFF

// Headers of the most common events (see header).
const (
	entryHeader = uint64(kindEntry)
	exitHeader  = uint64(kindExit) | noLine<<8
)

func clampLine(line int) uint16 {
	if line < 0 || line >= noLine {
		return noLine
	}
	return uint16(line)
}

const modeTracing = uint32(bytefrog.ModeTracing)

var errTypes sync.Map // reflect.Type → *ExceptionType

// ErrorType returns the exception type that stands for err in a trace: its
// dynamic Go type, such as "*fs.PathError".
func ErrorType(err error) *ExceptionType {
	t := reflect.TypeOf(err)
	if e, ok := errTypes.Load(t); ok {
		return e.(*ExceptionType)
	}
	name := "<nil>"
	if t != nil {
		name = t.String()
	}
	e, _ := errTypes.LoadOrStore(t, NewExceptionType(name))
	return e.(*ExceptionType)
}
