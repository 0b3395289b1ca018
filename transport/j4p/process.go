package j4p

import (
	"errors"
	"strconv"
	"strings"
)

// limits are the effective serialization limits of one request.
func (h *Handler) limits(p Params) walk {
	eff := func(req, cap int) int {
		if cap == 0 || (req > 0 && req < cap) {
			return req
		}
		return cap
	}
	return walk{
		maxDepth:   eff(p.MaxDepth, h.cfg.MaxDepth),
		maxColl:    eff(p.MaxCollectionSize, h.cfg.MaxCollectionSize),
		maxObjects: eff(p.MaxObjects, h.cfg.MaxObjects),
	}
}

// execute runs one request and returns its JSON-ready value.
func (h *Handler) execute(r *Request) (any, error) {
	switch r.Type {
	case TypeSearch, TypeList, TypeVersion:
		// No MBean member to allow one by one: <commands> decides.
		if !h.cfg.Policy.AllowType(r.Type) {
			return nil, errorf(ErrAccessDenied, "%v not allowed by policy", r.Type)
		}
	}
	switch r.Type {
	case TypeRead:
		return h.read(r)
	case TypeWrite:
		return h.write(r)
	case TypeExec:
		return h.exec(r)
	case TypeSearch:
		return h.search(r)
	case TypeList:
		return h.list(r)
	case TypeVersion:
		return h.version(), nil
	}
	return nil, errorf(ErrUnsupported, "request type %v", r.Type)
}

func (h *Handler) readAllowed(n ObjectName, attr string) bool {
	return h.cfg.Policy.Allowed(h.cfg.Policy.AllowType(TypeRead), TypeRead, n, attr)
}

func (h *Handler) read(r *Request) (any, error) {
	w := h.limits(r.Params)
	if !r.MultiAttr && len(r.Attributes) == 1 && r.Attributes[0] == "*" {
		// "*" is every attribute: jolokia.js reads all attributes with
		// GET <mbean>/*.
		all := *r
		all.Attributes = nil
		r = &all
	}
	if r.Name.IsPattern() {
		names := h.mbs.Query(r.Name)
		if len(names) == 0 {
			return nil, errorf(ErrInstanceNotFound, "no MBean matches %s", r.MBean)
		}
		out := make(map[string]any, len(names))
		for _, n := range names {
			vals, err := h.readAttrs(n, r, &w, true)
			if err != nil {
				return nil, err
			}
			if len(vals) > 0 {
				out[n.Name(r.Params.CanonicalNaming)] = vals
			}
		}
		return out, nil
	}
	if r.MultiAttr || len(r.Attributes) == 0 {
		vals, err := h.readAttrs(r.Name, r, &w, false)
		if err != nil {
			return nil, err
		}
		return vals, nil
	}
	attr := r.Attributes[0]
	if !h.readAllowed(r.Name, attr) {
		return nil, errorf(ErrAccessDenied, "reading %s of %s not allowed by policy", attr, r.MBean)
	}
	v, err := h.mbs.GetAttribute(r.Name, attr)
	if err != nil {
		return nil, err
	}
	if v, err = navigate(v, r.Path); err != nil {
		return nil, err
	}
	return w.jsonValue(v, 0), nil
}

// readAttrs reads the request's attributes (all readable ones when none
// are named) of one MBean into a map, in one call of the MBean server when
// it is a MultiGetter. In a pattern read, attributes an MBean lacks or the
// policy denies are left out.
func (h *Handler) readAttrs(n ObjectName, r *Request, w *walk, pattern bool) (map[string]any, error) {
	all := len(r.Attributes) == 0
	var ask []string
	for _, a := range r.Attributes {
		if !h.readAllowed(n, a) {
			if pattern {
				continue
			}
			return nil, errorf(ErrAccessDenied, "reading %s of %s not allowed by policy", a, n)
		}
		ask = append(ask, a)
	}
	out := map[string]any{}
	if !all && len(ask) == 0 {
		return out, nil
	}
	vals, err := GetAttributes(h.mbs, n, ask)
	if err != nil {
		return nil, err
	}
	for _, av := range vals {
		if all && !h.readAllowed(n, av.Name) {
			continue
		}
		v, err := av.Value, av.Err
		if err == nil {
			v, err = navigate(v, r.Path)
		}
		if err != nil {
			if pattern && errors.Is(err, ErrAttributeNotFound) {
				continue
			}
			if r.Params.IgnoreErrors || all {
				out[av.Name] = "ERROR: " + err.Error()
				continue
			}
			return nil, err
		}
		out[av.Name] = w.jsonValue(v, 1)
	}
	return out, nil
}

func (h *Handler) writeAllowed(t Type, n ObjectName, member string) error {
	enabled := h.cfg.AllowWrite
	if t == TypeExec {
		enabled = h.cfg.AllowExec
	}
	if !h.cfg.Policy.Allowed(enabled && h.cfg.Policy.AllowType(t), t, n, member) {
		if !enabled && h.cfg.Policy == nil {
			return errorf(ErrAccessDenied, "%v of %s on %s is not enabled", t, member, n)
		}
		return errorf(ErrAccessDenied, "%v of %s on %s not allowed by policy", t, member, n)
	}
	return nil
}

func (h *Handler) write(r *Request) (any, error) {
	if r.Name.IsPattern() {
		return nil, errorf(ErrIllegalArgument, "write needs an MBean name, not the pattern %s", r.MBean)
	}
	attr := r.Attributes[0]
	if err := h.writeAllowed(TypeWrite, r.Name, attr); err != nil {
		return nil, err
	}
	info, err := h.mbs.Info(r.Name)
	if err != nil {
		return nil, err
	}
	ai := info.attr(attr)
	if ai == nil {
		return nil, errorf(ErrAttributeNotFound, "%s has no attribute %q", r.MBean, attr)
	}
	if !ai.Writable {
		return nil, errorf(ErrReadOnly, "%s of %s", attr, r.MBean)
	}
	w := h.limits(r.Params)
	cur, err := h.mbs.GetAttribute(r.Name, attr)
	if err != nil && len(r.Path) > 0 {
		return nil, err
	}
	var nv, old any
	if len(r.Path) > 0 {
		plain := (&walk{maxDepth: h.cfg.MaxDepth}).jsonValue(cur, 0)
		v, err := convert(r.Value, "")
		if err != nil {
			return nil, err
		}
		if nv, old, err = setIn(plain, r.Path, v); err != nil {
			return nil, err
		}
	} else {
		if nv, err = convert(r.Value, ai.Type); err != nil {
			return nil, err
		}
		old = cur
	}
	if err := h.mbs.SetAttribute(r.Name, attr, nv); err != nil {
		return nil, err
	}
	return w.jsonValue(old, 0), nil
}

// splitSignature parses "op(type1,type2)" into the name and the types;
// sig is nil when no parentheses are given.
func splitSignature(op string) (name string, sig []string, err error) {
	i := strings.IndexByte(op, '(')
	if i < 0 {
		return op, nil, nil
	}
	if !strings.HasSuffix(op, ")") {
		return "", nil, errorf(ErrIllegalArgument, "bad operation signature %q", trunc(op))
	}
	inner := strings.TrimSpace(op[i+1 : len(op)-1])
	sig = []string{}
	if inner != "" {
		for _, t := range strings.Split(inner, ",") {
			sig = append(sig, strings.TrimSpace(t))
		}
	}
	return op[:i], sig, nil
}

func (h *Handler) exec(r *Request) (any, error) {
	if r.Name.IsPattern() {
		return nil, errorf(ErrIllegalArgument, "exec needs an MBean name, not the pattern %s", r.MBean)
	}
	name, sig, err := splitSignature(r.Operation)
	if err != nil {
		return nil, err
	}
	if err := h.writeAllowed(TypeExec, r.Name, name); err != nil {
		return nil, err
	}
	info, err := h.mbs.Info(r.Name)
	if err != nil {
		return nil, err
	}
	ops := info.ops(name)
	if len(ops) == 0 {
		return nil, errorf(ErrOperationNotFound, "%s has no operation %q", r.MBean, name)
	}
	var op *OpInfo
	for _, o := range ops {
		if sig != nil {
			if len(o.Args) == len(sig) && sameTypes(o.Args, sig) {
				op = o
				break
			}
			continue
		}
		if len(o.Args) == len(r.Arguments) {
			if op != nil {
				return nil, errorf(ErrIllegalArgument, "operation %s is overloaded: give a signature such as %s(%s)", name, name, typeList(o.Args))
			}
			op = o
		}
	}
	if op == nil {
		if sig != nil {
			return nil, errorf(ErrOperationNotFound, "%s has no operation %s", r.MBean, r.Operation)
		}
		return nil, errorf(ErrIllegalArgument, "operation %s takes %d argument(s), %d given", name, len(ops[0].Args), len(r.Arguments))
	}
	if len(r.Arguments) != len(op.Args) {
		return nil, errorf(ErrIllegalArgument, "operation %s takes %d argument(s), %d given", name, len(op.Args), len(r.Arguments))
	}
	args := make([]any, len(op.Args))
	types := make([]string, len(op.Args))
	for i, a := range op.Args {
		types[i] = a.Type
		if args[i], err = convert(r.Arguments[i], a.Type); err != nil {
			return nil, err
		}
	}
	v, err := h.mbs.Invoke(r.Name, name, types, args)
	if err != nil {
		return nil, err
	}
	w := h.limits(r.Params)
	if v, err = navigate(v, r.Path); err != nil {
		return nil, err
	}
	return w.jsonValue(v, 0), nil
}

func sameTypes(args []ArgInfo, sig []string) bool {
	for i := range args {
		if args[i].Type != sig[i] {
			return false
		}
	}
	return true
}

func typeList(args []ArgInfo) string {
	ts := make([]string, len(args))
	for i, a := range args {
		ts[i] = a.Type
	}
	return strings.Join(ts, ",")
}

func (h *Handler) search(r *Request) (any, error) {
	names := h.mbs.Query(r.Name)
	if len(names) == 0 && h.cfg.Dialect == Dialect030 {
		return nil, errorf(ErrInstanceNotFound, "no MBean matches %s", r.MBean)
	}
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = n.Name(r.Params.CanonicalNaming)
	}
	return out, nil
}

// list builds the MBean tree, or the part of it the inner path selects.
func (h *Handler) list(r *Request) (any, error) {
	var pattern ObjectName
	switch {
	case len(r.Path) >= 2:
		n, err := ParseObjectName(r.Path[0] + ":" + r.Path[1])
		if err != nil {
			return nil, errorf(ErrPathNotFound, "no MBean %s:%s", r.Path[0], r.Path[1])
		}
		pattern = n
	case len(r.Path) == 1:
		pattern = ObjectName{Domain: r.Path[0], PropListPattern: true}
	default:
		pattern = ObjectName{Domain: "*", PropListPattern: true}
	}
	tree := map[string]any{}
	for _, n := range h.mbs.Query(pattern) {
		info, err := h.mbs.Info(n)
		if err != nil {
			continue // unregistered meanwhile
		}
		dom, _ := tree[n.Domain].(map[string]any)
		if dom == nil {
			dom = map[string]any{}
			tree[n.Domain] = dom
		}
		key := n.KeyList()
		if r.Params.CanonicalNaming {
			key = n.CanonicalKeyList()
		}
		dom[key] = h.listEntry(n, info)
	}
	var v any = tree
	switch {
	case len(r.Path) == 0:
	case isGlob(r.Path[0]) || len(r.Path) >= 2 && pattern.IsPattern():
		// Patterns select several MBeans: the answer keeps the domain and
		// key-list levels, and the rest of the path applies to each MBean.
		segs := []string{"*"}
		if len(r.Path) >= 2 {
			segs = append(append(segs, "*"), r.Path[2:]...)
		}
		var err error
		if v, err = navigate(tree, segs); err != nil {
			return nil, err
		}
	default:
		d, ok := tree[r.Path[0]].(map[string]any)
		if !ok {
			return nil, errorf(ErrPathNotFound, "no domain %q", r.Path[0])
		}
		v = d
		if len(r.Path) > 1 {
			var only any
			for _, e := range d { // the name is no pattern: one MBean at most
				only = e
			}
			if only == nil {
				return nil, errorf(ErrPathNotFound, "no MBean %s:%s", r.Path[0], r.Path[1])
			}
			var err error
			if v, err = navigate(only, r.Path[2:]); err != nil {
				return nil, err
			}
		}
	}
	if r.Params.MaxDepth > 0 {
		v = pruneList(v, r.Params.MaxDepth, 0)
	}
	return v, nil
}

// pruneList replaces the objects at depth max by 1, as Jolokia's list does
// with maxDepth.
func pruneList(v any, max, depth int) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	if depth >= max {
		return int64(1)
	}
	out := make(map[string]any, len(m))
	for k, e := range m {
		out[k] = pruneList(e, max, depth+1)
	}
	return out
}

func (h *Handler) listEntry(n ObjectName, info *MBeanInfo) map[string]any {
	e := map[string]any{"desc": info.Desc}
	if info.Class != "" {
		e["class"] = info.Class
	}
	if len(info.Attrs) > 0 {
		attrs := map[string]any{}
		for _, a := range info.Attrs {
			if !h.readAllowed(n, a.Name) {
				continue
			}
			attrs[a.Name] = map[string]any{"type": a.Type, "desc": a.Desc, "rw": a.Writable}
		}
		e["attr"] = attrs
	}
	if len(info.Ops) > 0 {
		ops := map[string]any{}
		for _, o := range info.Ops {
			args := make([]any, len(o.Args))
			for i, a := range o.Args {
				args[i] = map[string]any{"name": a.Name, "type": a.Type, "desc": a.Desc}
			}
			d := map[string]any{"args": args, "ret": o.Ret, "desc": o.Desc}
			switch prev := ops[o.Name].(type) {
			case nil:
				ops[o.Name] = d
			case []any: // overloads become a list, as in Jolokia
				ops[o.Name] = append(prev, d)
			default:
				ops[o.Name] = []any{prev, d}
			}
		}
		e["op"] = ops
	}
	return e
}

func (h *Handler) version() any {
	if h.cfg.Dialect == Dialect030 {
		return h.cfg.AgentVersion
	}
	itoa := strconv.Itoa
	return map[string]any{
		"agent":    h.cfg.AgentVersion,
		"protocol": ProtocolVersion,
		"id":       h.cfg.AgentID,
		"details": map[string]any{
			"agent_version": h.cfg.AgentVersion,
			"agent_id":      h.cfg.AgentID,
			"secured":       h.cfg.User != "",
		},
		"config": map[string]any{
			"maxDepth":          itoa(h.cfg.MaxDepth),
			"maxObjects":        itoa(h.cfg.MaxObjects),
			"maxCollectionSize": itoa(h.cfg.MaxCollectionSize),
			"dialect":           h.cfg.Dialect.String(),
		},
		"info": map[string]any{
			"product": "tadpole",
			"vendor":  "tadpole",
			"version": h.cfg.AgentVersion,
			"proxy":   map[string]any{},
			"jmx":     map[string]any{},
		},
	}
}
