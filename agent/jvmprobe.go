package agent

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/tadpole-trace/tadpole/internal/host"
	"github.com/tadpole-trace/tadpole/transport/bytefrog"
)

// appendProbeBatch converts probe words (host.ProbeEntry) into host batch
// records (host.BatchHeaderSize) appended to dst. A word naming an unregistered method or
// exception id (NewMethod, NewExceptionType), of an unknown kind, or an
// exception word without its type is left out, and the first such problem
// is returned (host.ErrBadProbe) with the records of the other words.
func appendProbeBatch(dst []byte, ev []int64) ([]byte, error) {
	var mono int64
	var bad error
	methods, excs := uint32(methodNames.count.Load()), uint32(exceptionNames.count.Load())
	n := len(dst)
	need := n + len(ev)*batchHeaderSize
	if cap(dst) < need {
		d := make([]byte, n, need)
		copy(d, dst)
		dst = d
	}
	dst = dst[:need]
	for i := 0; i < len(ev); i++ {
		v := uint64(ev[i])
		k := byte(v)
		if k == host.ProbeTime {
			mono = int64(v>>8) * 1e6
			continue
		}
		r := dst[n : n+batchHeaderSize : n+batchHeaderSize]
		var exc uint32
		line := uint16(v >> 48)
		switch k {
		case host.ProbeEntry:
			r[0], line = batchEntry, bytefrog.NoLine
		case host.ProbeExit:
			r[0] = batchExit
		case host.ProbeThrown, host.ProbeBubble:
			if i+1 >= len(ev) {
				if bad == nil {
					bad = fmt.Errorf("%w: exception word %d lacks its type", host.ErrBadProbe, i)
				}
				continue
			}
			i++
			exc = uint32(ev[i])
			if exc-1 >= excs {
				if bad == nil {
					bad = fmt.Errorf("%w: exception id %d not registered", host.ErrBadProbe, int32(exc))
				}
				continue
			}
			r[0] = batchThrow
			if k == host.ProbeBubble {
				r[0], line = batchBubble, bytefrog.NoLine
			}
		default:
			if bad == nil {
				bad = fmt.Errorf("%w: kind %d at word %d", host.ErrBadProbe, k, i)
			}
			continue
		}
		m := uint32(v >> 8)
		if m-1 >= methods {
			if bad == nil {
				bad = fmt.Errorf("%w: method id %d not registered", host.ErrBadProbe, int32(m))
			}
			continue
		}
		r[1] = 0
		binary.LittleEndian.PutUint16(r[2:], line)
		binary.LittleEndian.PutUint32(r[4:], m)
		binary.LittleEndian.PutUint32(r[8:], exc)
		binary.LittleEndian.PutUint32(r[12:], 0)
		binary.LittleEndian.PutUint64(r[16:], uint64(mono))
		n += batchHeaderSize
	}
	return dst[:n], bad
}

// hostSubmitProbes is host.SubmitProbes. A buffer of the usual words
// (entries, exits, exceptions and time words) is copied as it is checked,
// into a pooled buffer that the drain encodes straight into wire messages
// (probes, jvmdrain.go): one pass here, one there. A buffer with a word of
// another kind, or larger than a JVM's, takes the general path: converted
// into a host batch (appendProbeBatch) and recorded as one.
func hostSubmitProbes(thread uint64, ev []int64) (int, error) {
	s := active.Load()
	if s == nil || len(ev) == 0 {
		return 0, nil
	}
	var pb *probeBuf
	var n int
	var err error
	ok := len(ev) <= maxProbeWords // the pooled buffers hold a JVM probe buffer
	if ok {
		pb = probePool.Get().(*probeBuf)
		pb.w, n, ok, err = copyProbes(pb.w[:0], ev)
		if !ok {
			pb.done()
		}
	}
	if !ok {
		bp := batchPool.Get().(*[]byte)
		b, err := appendProbeBatch((*bp)[:0], ev)
		*bp = b
		if len(b) == 0 {
			batchPool.Put(bp)
			return 0, err
		}
		// The records are checked as they are made: no second pass.
		return submitBatch(thread, b, bp, len(b)/batchHeaderSize), err
	}
	if n == 0 {
		pb.done()
		return 0, err
	}
	if submitProbes(s, thread, pb, n) == 0 {
		pb.done()
		return 0, err
	}
	return n, err
}

// hostHandProbes is host.HandProbes: the words are published as they are,
// with no copy and no pass over them here; the drain checks each word as
// it encodes it (probes), leaves out the bad ones as copyProbes would,
// and releases them to owner.
func hostHandProbes(thread uint64, ev []int64, owner host.ProbeOwner) bool {
	s := active.Load()
	if s == nil || len(ev) == 0 || len(ev) > maxProbeWords || owner == nil {
		return false
	}
	pb := lentPool.Get().(*probeBuf)
	pb.w, pb.owner = ev, owner
	if submitProbes(s, thread, pb, 1) == 0 {
		pb.w, pb.owner = nil, nil
		lentPool.Put(pb)
		return false
	}
	return true
}

// maxProbeWords is the capacity of the pooled probe buffers: a JVM probe
// buffer's (io.tadpole.Probe.SIZE).
const maxProbeWords = 8192

// probeBuf is a thread's probe words on their way to the drain
// (kindProbes): words copied into a pooled buffer (owner nil), or a
// host's own, lent (host.HandProbes) until owner gets them back.
type probeBuf struct {
	w     []int64
	owner host.ProbeOwner
}

var (
	probePool = sync.Pool{New: func() any { return &probeBuf{w: make([]int64, 0, maxProbeWords)} }}
	lentPool  = sync.Pool{New: func() any { return new(probeBuf) }}
)

// done gives pb back: lent words to their owner, a pooled buffer to its
// pool.
func (pb *probeBuf) done() {
	if o := pb.owner; o != nil {
		pb.w, pb.owner = nil, nil
		lentPool.Put(pb)
		o.Release()
		return
	}
	pb.w = pb.w[:0]
	probePool.Put(pb)
}

// copyProbes appends the words of ev to dst as it checks them: dst gets every entry, exit and time word, and each exception
// word with its type word, whose ids are registered; it reports the number
// of events. A word naming an unregistered id, or an exception word without
// its type, is left out, and the first such problem is returned
// (host.ErrBadProbe). ok is false, at the first word of another kind, when
// the buffer needs the general path (appendProbeBatch).
func copyProbes(dst []int64, ev []int64) (w []int64, n int, ok bool, err error) {
	methods, excs := uint32(methodNames.count.Load()), uint32(exceptionNames.count.Load())
	if cap(dst) < len(ev) {
		dst = make([]int64, 0, len(ev))
	}
	dst = dst[:len(ev)]
	j := 0
	for i := 0; i < len(ev); i++ {
		v := uint64(ev[i])
		k := byte(v)
		if k <= host.ProbeExit {
			// The bulk: an entry or exit of a registered method.
			if uint32(v>>8)-1 < methods {
				dst[j] = int64(v)
				j++
				n++
				continue
			}
			if err == nil {
				err = fmt.Errorf("%w: method id %d not registered", host.ErrBadProbe, int32(uint32(v>>8)))
			}
			continue
		}
		switch k {
		case host.ProbeTime:
			dst[j] = int64(v)
			j++
			continue
		case host.ProbeThrown, host.ProbeBubble:
		default:
			return dst[:0], 0, false, nil
		}
		if i+1 >= len(ev) {
			if err == nil {
				err = fmt.Errorf("%w: exception word %d lacks its type", host.ErrBadProbe, i)
			}
			continue
		}
		i++
		exc := uint32(ev[i])
		switch {
		case exc-1 >= excs:
			if err == nil {
				err = fmt.Errorf("%w: exception id %d not registered", host.ErrBadProbe, int32(exc))
			}
		case uint32(v>>8)-1 >= methods:
			if err == nil {
				err = fmt.Errorf("%w: method id %d not registered", host.ErrBadProbe, int32(uint32(v>>8)))
			}
		default:
			dst[j], dst[j+1] = int64(v), int64(exc)
			j += 2
			n++
		}
	}
	return dst[:j], n, true, err
}

// reportClass is host.ReportClass.
func reportClass(t bytefrog.MsgType, name string) bool {
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

// classFilters is host.ClassFilters.
func classFilters() (exclusions, inclusions []string, ok bool) {
	s := current.Load()
	if s == nil {
		return nil, nil, false
	}
	return s.hq.Exclusions, s.hq.Inclusions, true
}
