package agent

import (
	"sync"
	"sync/atomic"
)

// Method is a registered method signature: the handle instrumented code
// keeps so that a hot Enter or Exit costs no lookup. Handles are
// process-wide, created once (typically in a package-level var) and valid
// across agent restarts. The zero Method is a valid no-op.
type Method struct {
	id  int32
	sig string
}

// ID is the method id sent on the wire (from 1).
func (m *Method) ID() int32 { return m.id }

// Signature is the registered signature text.
func (m *Method) Signature() string { return m.sig }

// ExceptionType is a registered exception class name, likewise a handle.
type ExceptionType struct {
	id   int32
	name string
}

// ID is the exception id sent on the wire (from 1).
func (e *ExceptionType) ID() int32 { return e.id }

// Name is the registered exception name.
func (e *ExceptionType) Name() string { return e.name }

// known reports whether id has been given out.
func (n *names) known(id int32) bool { return id >= 1 && id <= n.count.Load() }

// names interns strings to dense ids from 1; ids are never reused.
type names struct {
	mu    sync.RWMutex
	ids   map[string]int32
	byID  []string     // byID[id-1]
	count atomic.Int32 // len(byID), read without the lock
	// max, when set, is the last id given out: it stands for overflow and
	// every name past it.
	max      int32
	overflow string
}

func (n *names) intern(s string) (int32, bool) {
	n.mu.RLock()
	id, ok := n.ids[s]
	n.mu.RUnlock()
	if ok {
		return id, false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if id, ok := n.ids[s]; ok {
		return id, false
	}
	if n.ids == nil {
		n.ids = make(map[string]int32)
	}
	if n.max > 0 && int32(len(n.byID)) >= n.max-1 {
		if int32(len(n.byID)) == n.max-1 {
			n.byID = append(n.byID, n.overflow)
			n.count.Store(n.max)
		}
		return n.max, false
	}
	n.byID = append(n.byID, s)
	id = int32(len(n.byID))
	n.ids[s] = id
	n.count.Store(id)
	return id, true
}

func (n *names) name(id int32) string {
	n.mu.RLock()
	defer n.mu.RUnlock()
	if id < 1 || int(id) > len(n.byID) {
		return ""
	}
	return n.byID[id-1]
}

func (n *names) len() int {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return len(n.byID)
}

var (
	methodNames    names
	exceptionNames = names{max: maxExceptionTypes, overflow: "<more exception types>"}
	methodHandles  sync.Map // id → *Method
	excHandles     sync.Map // id → *ExceptionType
)

// NewMethod registers a method signature and returns its handle. The same
// signature always gives the same handle. For JVM-style consumers the
// signature is "pkg/Class.method;access;descriptor"; Go code may use any
// stable text such as "main.(*Server).Handle".
func NewMethod(signature string) *Method {
	id, _ := methodNames.intern(signature)
	if h, ok := methodHandles.Load(id); ok {
		return h.(*Method)
	}
	h, _ := methodHandles.LoadOrStore(id, &Method{id: id, sig: signature})
	return h.(*Method)
}

// NewExceptionType registers an exception class name and returns its handle.
func NewExceptionType(name string) *ExceptionType {
	id, _ := exceptionNames.intern(name)
	if h, ok := excHandles.Load(id); ok {
		return h.(*ExceptionType)
	}
	h, _ := excHandles.LoadOrStore(id, &ExceptionType{id: id, name: name})
	return h.(*ExceptionType)
}
