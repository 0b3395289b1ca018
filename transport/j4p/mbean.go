package j4p

import (
	"slices"
	"strings"
	"sync"
)

// MBeanServer is what a host provides: its managed objects, found by name
// or pattern. Methods are called concurrently from request goroutines.
// Errors should wrap ErrInstanceNotFound, ErrAttributeNotFound,
// ErrOperationNotFound, ErrIllegalArgument or ErrReadOnly where they apply;
// anything else is reported as an MBean failure (500).
type MBeanServer interface {
	// Query returns the registered names matching pattern (or equal to a
	// non-pattern name), in a stable order.
	Query(pattern ObjectName) []ObjectName
	// Info describes one MBean, for list, type conversion and access checks.
	Info(name ObjectName) (*MBeanInfo, error)
	// GetAttribute reads one attribute. Values may be nil, bool, integers,
	// floats, strings, ObjectName, slices, arrays, maps with string keys,
	// structs (exported fields), or anything else (written with %v).
	GetAttribute(name ObjectName, attr string) (any, error)
	// SetAttribute writes one attribute, value already converted to the
	// attribute's declared type.
	SetAttribute(name ObjectName, attr string, value any) error
	// Invoke calls an operation; signature is the argument types of the
	// chosen overload, args converted to them.
	Invoke(name ObjectName, op string, signature []string, args []any) (any, error)
}

// AttrValue is one attribute read by GetAttributes: its value, or why it
// could not be read.
type AttrValue struct {
	Name  string
	Value any
	Err   error
}

// MultiGetter is an MBeanServer that reads several attributes of one MBean
// in one call (a JVM's, across JNI once); the handler uses it for reads of
// several or all attributes. names nil means every readable attribute.
// The error is for the MBean as a whole (ErrInstanceNotFound); an
// attribute's own failure is its AttrValue.Err.
type MultiGetter interface {
	GetAttributes(name ObjectName, names []string) ([]AttrValue, error)
}

// GetAttributes reads several attributes of one MBean of s (every one
// Info lists when names is nil): in one call when s is a MultiGetter, else
// one GetAttribute each.
func GetAttributes(s MBeanServer, name ObjectName, names []string) ([]AttrValue, error) {
	if mg, ok := s.(MultiGetter); ok {
		return mg.GetAttributes(name, names)
	}
	if names == nil {
		info, err := s.Info(name)
		if err != nil {
			return nil, err
		}
		for _, a := range info.Attrs {
			names = append(names, a.Name)
		}
	}
	out := make([]AttrValue, len(names))
	for i, a := range names {
		v, err := s.GetAttribute(name, a)
		out[i] = AttrValue{Name: a, Value: v, Err: err}
	}
	return out, nil
}

// MBeanInfo describes an MBean as list shows it.
type MBeanInfo struct {
	Class string // the implementation's class (Java) or type name
	Desc  string
	Attrs []AttrInfo
	Ops   []OpInfo
}

// AttrInfo describes an attribute. Type is a Java type name ("int",
// "long", "boolean", "java.lang.String", "double", …): values written are
// converted to it.
type AttrInfo struct {
	Name, Type, Desc string
	Writable         bool
}

// OpInfo describes an operation; overloads share a name.
type OpInfo struct {
	Name, Ret, Desc string
	Args            []ArgInfo
}

// ArgInfo describes an operation argument.
type ArgInfo struct {
	Name, Type, Desc string
}

func (i *MBeanInfo) attr(name string) *AttrInfo {
	for k := range i.Attrs {
		if i.Attrs[k].Name == name {
			return &i.Attrs[k]
		}
	}
	return nil
}

func (i *MBeanInfo) ops(name string) []*OpInfo {
	var out []*OpInfo
	for k := range i.Ops {
		if i.Ops[k].Name == name {
			out = append(out, &i.Ops[k])
		}
	}
	return out
}

// Bean is one managed object of a Registry.
type Bean interface {
	Info() *MBeanInfo
	Get(attr string) (any, error)
	Set(attr string, value any) error
	Invoke(op string, signature []string, args []any) (any, error)
}

// Attr is an attribute of a StaticBean: Set nil means read-only.
type Attr struct {
	Name, Type, Desc string
	Get              func() (any, error)
	Set              func(v any) error
}

// Op is an operation of a StaticBean.
type Op struct {
	Name, Ret, Desc string
	Args            []ArgInfo
	Call            func(args []any) (any, error)
}

// StaticBean is a Bean made of functions, fixed at construction.
type StaticBean struct {
	Class, Desc string
	Attrs       []Attr
	Ops         []Op
	info        *MBeanInfo
	once        sync.Once
}

// Info implements Bean.
func (b *StaticBean) Info() *MBeanInfo {
	b.once.Do(func() {
		in := &MBeanInfo{Class: b.Class, Desc: b.Desc}
		for _, a := range b.Attrs {
			in.Attrs = append(in.Attrs, AttrInfo{Name: a.Name, Type: a.Type, Desc: a.Desc, Writable: a.Set != nil})
		}
		for _, o := range b.Ops {
			in.Ops = append(in.Ops, OpInfo{Name: o.Name, Ret: o.Ret, Desc: o.Desc, Args: o.Args})
		}
		b.info = in
	})
	return b.info
}

// Get implements Bean.
func (b *StaticBean) Get(attr string) (any, error) {
	for _, a := range b.Attrs {
		if a.Name == attr {
			return a.Get()
		}
	}
	return nil, errorf(ErrAttributeNotFound, "%q", attr)
}

// Set implements Bean.
func (b *StaticBean) Set(attr string, v any) error {
	for _, a := range b.Attrs {
		if a.Name == attr {
			if a.Set == nil {
				return errorf(ErrReadOnly, "%q", attr)
			}
			return a.Set(v)
		}
	}
	return errorf(ErrAttributeNotFound, "%q", attr)
}

// Invoke implements Bean.
func (b *StaticBean) Invoke(op string, sig []string, args []any) (any, error) {
	for _, o := range b.Ops {
		if o.Name == op && len(o.Args) == len(sig) && slices.EqualFunc(o.Args, sig, func(a ArgInfo, t string) bool { return a.Type == t }) {
			return o.Call(args)
		}
	}
	return nil, errorf(ErrOperationNotFound, "%s(%s)", op, strings.Join(sig, ","))
}

// Registry is an MBeanServer holding Beans by name. It is safe for
// concurrent use.
type Registry struct {
	mu    sync.RWMutex
	beans map[string]regEntry // by canonical name
	order []string            // canonical names, sorted
}

type regEntry struct {
	name ObjectName
	bean Bean
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{beans: make(map[string]regEntry)} }

// Register adds or replaces bean under name (not a pattern).
func (r *Registry) Register(name ObjectName, bean Bean) error {
	if name.IsPattern() {
		return errorf(ErrBadObjectName, "%s is a pattern", name)
	}
	c := name.Canonical()
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.beans[c]; !ok {
		i, _ := slices.BinarySearch(r.order, c)
		r.order = slices.Insert(r.order, i, c)
	}
	r.beans[c] = regEntry{name, bean}
	return nil
}

// Unregister removes the bean named name.
func (r *Registry) Unregister(name ObjectName) {
	c := name.Canonical()
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.beans[c]; ok {
		delete(r.beans, c)
		i, _ := slices.BinarySearch(r.order, c)
		r.order = slices.Delete(r.order, i, i+1)
	}
}

// Has reports whether a bean is registered under name.
func (r *Registry) Has(name ObjectName) bool {
	r.mu.RLock()
	_, ok := r.beans[name.Canonical()]
	r.mu.RUnlock()
	return ok
}

func (r *Registry) bean(name ObjectName) (Bean, error) {
	r.mu.RLock()
	e, ok := r.beans[name.Canonical()]
	r.mu.RUnlock()
	if !ok {
		return nil, errorf(ErrInstanceNotFound, "%s", name)
	}
	return e.bean, nil
}

// Query implements MBeanServer.
func (r *Registry) Query(p ObjectName) []ObjectName {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if !p.IsPattern() {
		if e, ok := r.beans[p.Canonical()]; ok {
			return []ObjectName{e.name}
		}
		return nil
	}
	var out []ObjectName
	for _, c := range r.order {
		if e := r.beans[c]; p.Match(e.name) {
			out = append(out, e.name)
		}
	}
	return out
}

// Info implements MBeanServer.
func (r *Registry) Info(n ObjectName) (*MBeanInfo, error) {
	b, err := r.bean(n)
	if err != nil {
		return nil, err
	}
	return b.Info(), nil
}

// GetAttribute implements MBeanServer.
func (r *Registry) GetAttribute(n ObjectName, attr string) (any, error) {
	b, err := r.bean(n)
	if err != nil {
		return nil, err
	}
	return b.Get(attr)
}

// SetAttribute implements MBeanServer.
func (r *Registry) SetAttribute(n ObjectName, attr string, v any) error {
	b, err := r.bean(n)
	if err != nil {
		return err
	}
	return b.Set(attr, v)
}

// Invoke implements MBeanServer.
func (r *Registry) Invoke(n ObjectName, op string, sig []string, args []any) (any, error) {
	b, err := r.bean(n)
	if err != nil {
		return nil, err
	}
	return b.Invoke(op, sig, args)
}
