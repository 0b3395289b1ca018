package jni

/*
#include <stdlib.h>
#include "tpj4p.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/tadpole-trace/tadpole/agent"
	"github.com/tadpole-trace/tadpole/jni/j4pwire"
	"github.com/tadpole-trace/tadpole/transport/j4p"
)

// The JVM's platform MBean server on the management endpoint (j4p=): the
// Go handler of transport/j4p stays the HTTP front, and each MBean server
// operation it needs (a read is one) crosses into the JVM once, as one
// call of io.tadpole.J4P.call with the request and the answer encoded
// (package j4pwire). The calls run on worker goroutines locked to their OS
// threads, each attached to the JVM once as the daemon thread
// "tadpole-j4p-<n>" and detached when it has been idle for
// platformIdle; at most platformWorkers run at a time, and a request waits
// at most platformTimeout for its answer (an MBean that never returns
// holds a worker, never the endpoint or the host).

// Bounds of the platform MBean server's workers.
const (
	platformWorkers = 4
	platformTimeout = 10 * time.Second
	platformIdle    = 30 * time.Second
)

// ErrPlatform reports the JVM's MBeans unreachable: no JVM, the helper
// class missing, or no answer in time.
var ErrPlatform = errors.New("jni: JVM platform MBeans")

// platform is a j4p.MBeanServer over the JVM's platform MBean server.
type platform struct {
	jobs chan *jcall

	mu      sync.Mutex
	workers int // running
	idle    int // waiting for a job
	seq     int
	broken  error // set when a worker could not attach
}

// jcall is one J4P.call.
type jcall struct {
	req  []byte
	out  any
	err  error
	done chan struct{}
}

func newPlatform() *platform { return &platform{jobs: make(chan *jcall)} }

// registerPlatform plugs the JVM's MBeans into the management endpoint.
func registerPlatform() { agent.SetPlatformMBeans(newPlatform()) }

// call runs req in the JVM and decodes the answer.
func (p *platform) call(req []byte) (any, error) {
	p.mu.Lock()
	if p.broken != nil {
		err := p.broken
		p.mu.Unlock()
		return nil, err
	}
	if p.idle == 0 && p.workers < platformWorkers {
		p.workers++
		p.seq++
		go p.worker(p.seq)
	}
	p.mu.Unlock()
	c := &jcall{req: req, done: make(chan struct{})}
	t := time.NewTimer(platformTimeout)
	defer t.Stop()
	select {
	case p.jobs <- c:
	case <-t.C:
		return nil, fmt.Errorf("%w: no worker free within %v", ErrPlatform, platformTimeout)
	}
	select {
	case <-c.done:
		return c.out, c.err
	case <-t.C:
		return nil, fmt.Errorf("%w: no answer within %v", ErrPlatform, platformTimeout)
	}
}

// worker attaches its thread, serves jobs until idle for platformIdle and
// detaches. The thread stays locked: it ends with the goroutine.
func (p *platform) worker(n int) {
	runtime.LockOSThread()
	defer func() {
		if r := recover(); r != nil {
			p.mu.Lock()
			p.broken = fmt.Errorf("%w: %v", ErrPlatform, r)
			p.mu.Unlock()
		}
	}()
	name := C.CString(fmt.Sprintf("tadpole-j4p-%d", n))
	w := C.tpj_j4p_attach(name)
	C.free(unsafe.Pointer(name))
	var attachErr error
	if w == nil {
		attachErr = fmt.Errorf("%w: cannot attach a thread to the JVM or find io.tadpole.J4P", ErrPlatform)
		p.mu.Lock()
		p.broken = attachErr
		p.mu.Unlock()
	} else {
		defer C.tpj_j4p_detach(w)
	}
	idle := time.NewTimer(platformIdle)
	defer idle.Stop()
	for {
		p.mu.Lock()
		p.idle++
		p.mu.Unlock()
		select {
		case c := <-p.jobs:
			p.mu.Lock()
			p.idle--
			p.mu.Unlock()
			if attachErr != nil {
				c.err = attachErr
			} else {
				c.out, c.err = run(w, c.req)
			}
			close(c.done)
			idle.Reset(platformIdle)
		case <-idle.C:
			p.mu.Lock()
			p.idle--
			p.workers--
			p.mu.Unlock()
			return
		}
	}
}

// run makes one JNI crossing on the worker's attached thread.
func run(w unsafe.Pointer, req []byte) (any, error) {
	var n C.size_t
	out := C.tpj_j4p_call(w, unsafe.Pointer(&req[0]), C.size_t(len(req)), &n)
	if out == nil {
		return nil, fmt.Errorf("%w: the call failed in the JVM", ErrPlatform)
	}
	defer C.free(out)
	if n > j4pwire.MaxBytes {
		return nil, fmt.Errorf("%w: answer of %d bytes", j4pwire.ErrMalformed, n)
	}
	return j4pwire.DecodeAnswer(unsafe.Slice((*byte)(out), int(n)))
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
