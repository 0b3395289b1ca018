package agent

import (
	"encoding/binary"
	"fmt"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// Probe events: the JVM agent's method probes (io.tadpole.Probe) append one
// int64 per event to a per-thread Java buffer, and the agent hands a full
// buffer over at once. Layout of a word, low byte first:
//
//	bits 0–7    kind: ProbeEntry, ProbeExit, ProbeThrown, ProbeBubble, ProbeTime
//	bits 8–39   method id (from NewMethod); for ProbeTime bits 8–63 are
//	            CLOCK_MONOTONIC milliseconds
//	bits 48–63  line (exit and thrown; 0xFFFF unknown)
//
// ProbeThrown and ProbeBubble take a second word: the exception type id
// (from NewExceptionType). A buffer starts with a ProbeTime word; each
// event is stamped with the latest one before it.
const (
	ProbeEntry  = 0
	ProbeExit   = 1
	ProbeThrown = 2
	ProbeBubble = 3
	ProbeTime   = 4
)

// ErrBadProbe reports a malformed probe buffer; nothing of it is recorded.
var ErrBadProbe = fmt.Errorf("%w: bad probe buffer", ErrBadBatch)

// AppendProbeBatch converts probe words into host batch records (see
// SubmitBatch) appended to dst. A word naming an unregistered method or
// exception id (NewMethod, NewExceptionType), of an unknown kind, or an
// exception word without its type is left out, and the first such problem
// is returned (ErrBadProbe) with the records of the other words.
func AppendProbeBatch(dst []byte, ev []int64) ([]byte, error) {
	var mono int64
	var bad error
	methods, excs := uint32(methodNames.count.Load()), uint32(exceptionNames.count.Load())
	n := len(dst)
	need := n + len(ev)*BatchHeaderSize
	if cap(dst) < need {
		d := make([]byte, n, need)
		copy(d, dst)
		dst = d
	}
	dst = dst[:need]
	for i := 0; i < len(ev); i++ {
		v := uint64(ev[i])
		k := byte(v)
		if k == ProbeTime {
			mono = int64(v>>8) * 1e6
			continue
		}
		r := dst[n : n+BatchHeaderSize : n+BatchHeaderSize]
		var exc uint32
		line := uint16(v >> 48)
		switch k {
		case ProbeEntry:
			r[0], line = BatchEntry, bytefrog.NoLine
		case ProbeExit:
			r[0] = BatchExit
		case ProbeThrown, ProbeBubble:
			if i+1 >= len(ev) {
				if bad == nil {
					bad = fmt.Errorf("%w: exception word %d lacks its type", ErrBadProbe, i)
				}
				continue
			}
			i++
			exc = uint32(ev[i])
			if exc-1 >= excs {
				if bad == nil {
					bad = fmt.Errorf("%w: exception id %d not registered", ErrBadProbe, int32(exc))
				}
				continue
			}
			r[0] = BatchThrow
			if k == ProbeBubble {
				r[0], line = BatchBubble, bytefrog.NoLine
			}
		default:
			if bad == nil {
				bad = fmt.Errorf("%w: kind %d at word %d", ErrBadProbe, k, i)
			}
			continue
		}
		m := uint32(v >> 8)
		if m-1 >= methods {
			if bad == nil {
				bad = fmt.Errorf("%w: method id %d not registered", ErrBadProbe, int32(m))
			}
			continue
		}
		r[1] = 0
		binary.LittleEndian.PutUint16(r[2:], line)
		binary.LittleEndian.PutUint32(r[4:], m)
		binary.LittleEndian.PutUint32(r[8:], exc)
		binary.LittleEndian.PutUint32(r[12:], 0)
		binary.LittleEndian.PutUint64(r[16:], uint64(mono))
		n += BatchHeaderSize
	}
	return dst[:n], bad
}

// SubmitProbes records a JVM thread's probe words (thread: its Java thread
// id) as one batch: consecutive sequence numbers, the thread's order kept.
// It returns the number of events taken (0 when not tracing); bad words
// are left out and reported (ErrBadProbe) while the rest is recorded.
func SubmitProbes(thread uint64, ev []int64) (int, error) {
	if active.Load() == nil {
		return 0, nil
	}
	bp := batchPool.Get().(*[]byte)
	b, err := AppendProbeBatch((*bp)[:0], ev)
	*bp = b
	if len(b) == 0 {
		batchPool.Put(bp)
		return 0, err
	}
	// The records are checked as they are made: no second pass.
	return submitBatch(thread, b, bp, len(b)/BatchHeaderSize), err
}

// ReportClass queues a class report for HQ: t is MsgClassTransformed,
// MsgClassIgnored or MsgClassTransformFailed, name the internal class name.
// It never blocks: false when no run is on or the control queue is full.
func ReportClass(t bytefrog.MsgType, name string) bool {
	s := current.Load()
	if s == nil || s.stopping.Load() {
		return false
	}
	switch t {
	case bytefrog.MsgClassTransformed, bytefrog.MsgClassIgnored, bytefrog.MsgClassTransformFailed:
	default:
		return false
	}
	select {
	case s.ctrlLow <- bytefrog.AppendClassMsg(nil, t, name):
		return true
	default:
		return false
	}
}

// ClassFilters returns HQ's class exclusions and inclusions (Java regexes
// matched with lookingAt against internal class names; an inclusion
// overrides the exclusions) of the active run; ok is false when no run is
// on. The slices are HQ's: do not modify them.
func ClassFilters() (exclusions, inclusions []string, ok bool) {
	s := current.Load()
	if s == nil {
		return nil, nil, false
	}
	return s.hq.Exclusions, s.hq.Inclusions, true
}
