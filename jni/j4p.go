package jni

/*
#include <stdlib.h>
#include "tpj4p.h"
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/tadpole-trace/tadpole/internal/host"
	"github.com/tadpole-trace/tadpole/jni/j4pwire"
	"github.com/tadpole-trace/tadpole/transport/j4p"
)

// The JVM's platform MBean server on the management endpoint (j4p=): the
// Go handler of transport/j4p stays the HTTP front, and each MBean server
// operation it needs (a read is one) crosses into the JVM once, as one
// call of io.tadpole.J4P.call with the request and the answer encoded
// (package j4pwire). The calls run on C threads of j4p.c, attached to the
// JVM as daemon threads "tadpole-j4p-<n>" (at most 4, each detached after
// 30 s idle); a finished job comes back through a pipe that a goroutine
// reads with the runtime's poller. So the request's goroutine parks while
// the JVM works, the Go side never holds its one P in a Java call, no Go
// thread is attached to the JVM, and a request waits at most
// platformTimeout: an MBean that never returns holds one worker, never
// the endpoint or the host.

// platformTimeout bounds a request's wait for the JVM: well within the
// endpoint's 10 s to write its answer.
const platformTimeout = 5 * time.Second

// ErrPlatform reports the JVM's MBeans unreachable: no JVM, the helper
// class missing, or no answer in time.
var ErrPlatform = errors.New("jni: JVM platform MBeans")

// platform is a j4p.MBeanServer over the JVM's platform MBean server.
type platform struct {
	once    sync.Once
	initErr error
	r       *os.File // completion pipe, read end

	mu      sync.Mutex
	pending map[uintptr]*jcall // by job address
}

// jcall is one J4P.call.
type jcall struct {
	job  *C.struct_tpj_j4p_job
	raw  []byte // the answer
	err  error
	done chan struct{}
}

func newPlatform() *platform { return &platform{pending: make(map[uintptr]*jcall)} }

// registerPlatform plugs the JVM's MBeans into the management endpoint.
func registerPlatform() { host.SetPlatformMBeans(newPlatform()) }

// start opens the completion pipe and starts its reader, once.
func (p *platform) start() error {
	p.once.Do(func() {
		var fds [2]int
		if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
			p.initErr = fmt.Errorf("%w: %v", ErrPlatform, err)
			return
		}
		if err := syscall.SetNonblock(fds[0], true); err != nil || C.tpj_j4p_init(C.int(fds[1])) != 0 {
			syscall.Close(fds[0])
			syscall.Close(fds[1])
			p.initErr = fmt.Errorf("%w: no JVM in this process", ErrPlatform)
			return
		}
		p.r = os.NewFile(uintptr(fds[0]), "tadpole-j4p")
		go p.reader()
	})
	return p.initErr
}

// reader takes finished jobs (their addresses, 8 bytes each) from the pipe.
func (p *platform) reader() {
	defer func() { recover() }() // never a panic into the host
	buf := make([]byte, 8*256)
	have := 0
	for {
		n, err := p.r.Read(buf[have:])
		if err != nil {
			return
		}
		have += n
		k := 0
		for ; have-k >= 8; k += 8 {
			p.finish(uintptr(binary.NativeEndian.Uint64(buf[k:])))
		}
		have = copy(buf, buf[k:have])
	}
}

// finish takes a job's answer and frees it; its caller, if still waiting,
// is woken.
func (p *platform) finish(key uintptr) {
	p.mu.Lock()
	c := p.pending[key]
	delete(p.pending, key)
	p.mu.Unlock()
	if c == nil {
		return // not ours: never freed, never touched
	}
	j := c.job
	if j.failed != 0 || j.out == nil {
		c.err = fmt.Errorf("%w: the call failed in the JVM", ErrPlatform)
	} else if j.outlen > j4pwire.MaxBytes {
		c.err = fmt.Errorf("%w: answer of %d bytes", j4pwire.ErrMalformed, j.outlen)
	} else {
		c.raw = C.GoBytes(j.out, C.int(j.outlen))
	}
	C.free(j.out)
	C.free(j.req)
	C.free(unsafe.Pointer(j))
	close(c.done)
}

// call runs req in the JVM and decodes the answer.
func (p *platform) call(req []byte) (any, error) {
	if err := p.start(); err != nil {
		return nil, err
	}
	j := (*C.struct_tpj_j4p_job)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_tpj_j4p_job{}))))
	if j == nil {
		return nil, fmt.Errorf("%w: out of memory", ErrPlatform)
	}
	j.req = C.CBytes(req)
	j.n = C.size_t(len(req))
	c := &jcall{job: j, done: make(chan struct{})}
	key := uintptr(unsafe.Pointer(j))
	p.mu.Lock()
	p.pending[key] = c
	p.mu.Unlock()
	if C.tpj_j4p_submit(j) != 0 {
		p.mu.Lock()
		delete(p.pending, key)
		p.mu.Unlock()
		C.free(j.req)
		C.free(unsafe.Pointer(j))
		return nil, fmt.Errorf("%w: no thread can call the JVM (io.tadpole.J4P missing?)", ErrPlatform)
	}
	t := time.NewTimer(platformTimeout)
	defer t.Stop()
	select {
	case <-c.done:
		if c.err != nil {
			return nil, c.err
		}
		return j4pwire.DecodeAnswer(c.raw)
	case <-t.C:
		// The job stays pending: finish frees it when the JVM answers.
		return nil, fmt.Errorf("%w: no answer within %v", ErrPlatform, platformTimeout)
	}
}

// jmxError is a Java exception as the j4p handler reports it: status and
// exception class as Jolokia gives them, the message as text.
type jmxError struct {
	sentinel error
	msg      string
}

func (e *jmxError) Error() string { return e.msg }
func (e *jmxError) Unwrap() error { return e.sentinel }

// errJMX is the sentinel of exceptions j4p has no error for (500).
var errJMX = errors.New("jni: MBean failed")

// asJ4P converts a Java exception into a *j4p.Error.
func asJ4P(err error) error {
	var je *j4pwire.JavaError
	if !errors.As(err, &je) {
		return err
	}
	status, sentinel := 500, errJMX
	switch je.Kind {
	case j4pwire.KindInstance:
		status, sentinel = 404, j4p.ErrInstanceNotFound
	case j4pwire.KindAttribute:
		status, sentinel = 404, j4p.ErrAttributeNotFound
	case j4pwire.KindOperation:
		status, sentinel = 404, j4p.ErrOperationNotFound
	case j4pwire.KindArgument:
		status, sentinel = 400, j4p.ErrIllegalArgument
	}
	return &j4p.Error{Status: status, Type: je.Class, Err: &jmxError{sentinel: sentinel, msg: je.Error()}}
}

func (p *platform) do(e *j4pwire.Enc) (any, error) {
	v, err := p.call(e.Bytes())
	if err != nil {
		return nil, asJ4P(err)
	}
	return v, nil
}

// Query implements j4p.MBeanServer: JMX's queryNames, sorted by canonical
// name. Names the j4p parser refuses are left out.
func (p *platform) Query(pattern j4p.ObjectName) []j4p.ObjectName {
	e := j4pwire.NewEnc(j4pwire.OpQuery)
	e.Str(pattern.String())
	v, err := p.do(e)
	if err != nil {
		return nil
	}
	list, _ := v.([]any)
	out := make([]j4p.ObjectName, 0, len(list))
	for _, it := range list {
		s, _ := it.(string)
		if n, err := j4p.ParseObjectName(s); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// Info implements j4p.MBeanServer.
func (p *platform) Info(name j4p.ObjectName) (*j4p.MBeanInfo, error) {
	e := j4pwire.NewEnc(j4pwire.OpInfo)
	e.Str(name.String())
	v, err := p.do(e)
	if err != nil {
		return nil, err
	}
	return decodeInfo(v)
}

// decodeInfo reads J4P's info answer: [class, desc, [[name, type, desc,
// readable, writable]…], [[name, ret, desc, [[name, type, desc]…]]…]].
func decodeInfo(v any) (*j4p.MBeanInfo, error) {
	bad := fmt.Errorf("%w: bad MBean info", j4pwire.ErrMalformed)
	top, ok := v.([]any)
	if !ok || len(top) != 4 {
		return nil, bad
	}
	str := func(x any) string { s, _ := x.(string); return s }
	in := &j4p.MBeanInfo{Class: str(top[0]), Desc: str(top[1])}
	attrs, _ := top[2].([]any)
	for _, a := range attrs {
		f, ok := a.([]any)
		if !ok || len(f) != 5 {
			return nil, bad
		}
		w, _ := f[4].(bool)
		in.Attrs = append(in.Attrs, j4p.AttrInfo{Name: str(f[0]), Type: str(f[1]), Desc: str(f[2]), Writable: w})
	}
	ops, _ := top[3].([]any)
	for _, o := range ops {
		f, ok := o.([]any)
		if !ok || len(f) != 4 {
			return nil, bad
		}
		op := j4p.OpInfo{Name: str(f[0]), Ret: str(f[1]), Desc: str(f[2]), Args: []j4p.ArgInfo{}}
		args, _ := f[3].([]any)
		for _, a := range args {
			af, ok := a.([]any)
			if !ok || len(af) != 3 {
				return nil, bad
			}
			op.Args = append(op.Args, j4p.ArgInfo{Name: str(af[0]), Type: str(af[1]), Desc: str(af[2])})
		}
		in.Ops = append(in.Ops, op)
	}
	return in, nil
}

// GetAttribute implements j4p.MBeanServer: one crossing; the value comes
// converted as Jolokia converts it, inner paths are followed in Go.
func (p *platform) GetAttribute(name j4p.ObjectName, attr string) (any, error) {
	e := j4pwire.NewEnc(j4pwire.OpGet)
	e.Str(name.String())
	e.Str(attr)
	return p.do(e)
}

// GetAttributes implements j4p.MultiGetter: several or all attributes in
// one crossing; an attribute that fails carries its own error.
func (p *platform) GetAttributes(name j4p.ObjectName, names []string) ([]j4p.AttrValue, error) {
	e := j4pwire.NewEnc(j4pwire.OpGetAll)
	e.Str(name.String())
	e.Strs(names)
	v, err := p.do(e)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: attributes answer is %T", j4pwire.ErrMalformed, v)
	}
	if names == nil {
		names = make([]string, 0, len(m))
		for k := range m {
			names = append(names, k)
		}
		slices.Sort(names)
	}
	out := make([]j4p.AttrValue, 0, len(names))
	for _, a := range names {
		val, ok := m[a]
		if !ok {
			continue
		}
		av := j4p.AttrValue{Name: a, Value: val}
		if je, ok := val.(*j4pwire.JavaError); ok {
			av.Value, av.Err = nil, asJ4P(je)
			if je.Kind == j4pwire.KindUnsupported {
				// As Jolokia reads several attributes: an attribute the JVM
				// does not support (Runtime's BootClassPath) is "Unsupported".
				av.Value, av.Err = "Unsupported", nil
			}
		}
		out = append(out, av)
	}
	return out, nil
}

// SetAttribute implements j4p.MBeanServer; J4P converts the value to the
// attribute's type (its open type for an MXBean).
func (p *platform) SetAttribute(name j4p.ObjectName, attr string, value any) error {
	e := j4pwire.NewEnc(j4pwire.OpSet)
	e.Str(name.String())
	e.Str(attr)
	if err := e.Value(value); err != nil {
		return &j4p.Error{Status: 400, Type: "java.lang.IllegalArgumentException", Err: fmt.Errorf("%w: %v", j4p.ErrIllegalArgument, err)}
	}
	_, err := p.do(e)
	return err
}

// Invoke implements j4p.MBeanServer.
func (p *platform) Invoke(name j4p.ObjectName, op string, sig []string, args []any) (any, error) {
	e := j4pwire.NewEnc(j4pwire.OpInvoke)
	e.Str(name.String())
	e.Str(op)
	e.Strs(sig)
	for _, a := range args {
		if err := e.Value(a); err != nil {
			return nil, &j4p.Error{Status: 400, Type: "java.lang.IllegalArgumentException", Err: fmt.Errorf("%w: %v", j4p.ErrIllegalArgument, err)}
		}
	}
	return p.do(e)
}
