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
func record(k kind, method, exc int32, line uint16, flag bool) {
	s := active.Load()
	if s == nil {
		return
	}
	recordOn(s, uint64(routine.Goid()), k, method, exc, line, flag)
}

// recordOn records one event of a fixed-size kind. It is claim, fill and
// commit written out in one function: this is the path every traced call
// takes twice, and each call or reload saved shows.
func recordOn(s *session, thread uint64, k kind, method, exc int32, line uint16, flag bool) {
	if s.mode.Load() != modeTracing && !s.gate() {
		return
	}
	ls := s.lanes
	p := procPin()
	all := ls.list()
	if p >= len(all) || all[p] == nil {
		procUnpin()
		recordSlow(s, thread, k, method, exc, line, flag)
		return
	}
	l := all[p]
	l.acquire()
	i := loadTail(l)
	entry, at := lastEntry(thread, p)
	if i >= l.room && !ls.hasRoom(l, i) || atomic.LoadUint64(&ls.last[at]) != entry {
		l.release()
		procUnpin()
		recordSlow(s, thread, k, method, exc, line, flag)
		return
	}
	sl := &l.slots[i&ls.mask]
	sl.fill(thread, method, exc, line, flag, s.clock.Load())
	sl.after = false
	setTail(l, i+1)
	v := ls.lap(i)<<8 | uint32(k)
	if i&(ls.batch-1) != ls.batch-1 {
		storeRelease(&sl.hdr, v)
	} else {
		ls.publishLast(sl, v)
	}
	l.release()
	procUnpin()
}

// recordSlow is recordOn for a P without a lane yet, a full lane, or a
// thread that moved from another lane.
func recordSlow(s *session, thread uint64, k kind, method, exc int32, line uint16, flag bool) {
	l, i, sl, ok := s.lanes.claim(thread)
	if !ok {
		return
	}
	sl.fill(thread, method, exc, line, flag, s.clock.Load())
	s.lanes.commit(l, sl, i, k)
}

func recordText(k kind, key, value string) {
	s := active.Load()
	if s == nil {
		return
	}
	if s.mode.Load() != modeTracing && !s.gate() {
		return
	}
	thread := uint64(routine.Goid())
	l, i, sl, ok := s.lanes.claim(thread)
	if !ok {
		return
	}
	sl.method, sl.exc = 0, 0
	sl.rel = s.clock.Load()
	sl.thread = thread
	t := &l.texts[i&s.lanes.mask]
	t.key, t.value = key, value
	s.lanes.commit(l, sl, i, k)
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
	recordOn(s, g, kindEntry, m.id, 0, 0, false)
	return Frame{m: m, s: s, g: g}
}

// Exit records a MethodExit with an unknown line.
func (m *Method) Exit() { record(kindExit, m.id, 0, noLine, false) }

// ExitLine records a MethodExit at a source line.
func (m *Method) ExitLine(line int) { record(kindExit, m.id, 0, clampLine(line), false) }

// Throw records an Exception raised in m at line.
func (m *Method) Throw(e *ExceptionType, line int) {
	record(kindThrow, m.id, e.id, clampLine(line), false)
}

// Bubble records that m ended by letting exception e pass: it takes the
// place of Exit for that call.
func (m *Method) Bubble(e *ExceptionType) { record(kindBubble, m.id, e.id, 0, true) }

// Frame is an entered method call; see Method.Enter. It remembers the
// session and goroutine of the entry so that Exit repeats no lookup.
type Frame struct {
	m *Method
	s *session
	g uint64
}

// Exit records the exit of the call.
func (f Frame) Exit() {
	if f.s != nil { // a session that ended is no longer in tracing mode
		recordOn(f.s, f.g, kindExit, f.m.id, 0, noLine, false)
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
	thread := uint64(routine.Goid())
	l, i, sl, ok := s.lanes.claim(thread)
	if !ok {
		return
	}
	sl.rel = s.clock.Load()
	sl.thread = thread
	l.texts[i&s.lanes.mask].key = name
	s.lanes.commit(l, sl, i, kindName)
}

const noLine = 0xFFFF

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
