package instrument

import (
	"errors"
	"fmt"

	"github.com/tadpole-trace/tadpole/jvm/classfile"
)

// MethodResult says what happened to one method of a class.
type MethodResult struct {
	Name, Desc string
	// Access is the method's access flags as ASM reports them (ASMAccess),
	// the form Signature uses.
	Access    int
	ID        int32
	Signature string // Bytefrog signature, for MapMethodSignature
	// Err is nil when the method was instrumented; else a typed reason
	// (ErrTooLarge, ErrCtorFlow, ...) and the method is unchanged.
	Err error
}

// ClassResult lists the methods of a class the policy selected.
type ClassResult struct {
	Class   string
	Methods []MethodResult
}

// Instrumented returns the number of methods instrumented.
func (r *ClassResult) Instrumented() int {
	n := 0
	for _, m := range r.Methods {
		if m.Err == nil {
			n++
		}
	}
	return n
}

// classPool adapts a classfile.Pool to Pool.
type classPool struct{ p *classfile.Pool }

func (c classPool) Member(i uint16) (string, string, error) {
	switch c.p.Tag(i) {
	case classfile.TagFieldref, classfile.TagMethodref, classfile.TagInterfaceMethodref:
		_, n, d := c.p.MemberRef(i)
		return n, d, nil
	case classfile.TagInvokeDynamic:
		n, d := c.p.NameAndType(c.p.Get(i).B)
		return n, d, nil
	}
	return "", "", fmt.Errorf("%w: entry %d is %v", ErrBadPoolRef, i, c.p.Tag(i))
}

func (c classPool) Methodref(class, name, desc string) (uint16, error) {
	return c.p.AddMethodref(class, name, desc)
}
func (c classPool) Class(name string) (uint16, error) { return c.p.AddClass(name) }
func (c classPool) Integer(v int32) (uint16, error)   { return c.p.AddInteger(v) }
func (c classPool) Long(v int64) (uint16, error)      { return c.p.AddLong(v) }

// Code attributes holding bytecode offsets in type annotation targets.
var typeAnnotationAttrs = []string{"RuntimeVisibleTypeAnnotations", "RuntimeInvisibleTypeAnnotations"}

// InstrumentClass parses a class file, instruments the methods the policy
// selects and returns the new class file. out is nil when nothing changed
// (excluded class, no method instrumented). res lists every selected method
// with its id, signature and outcome. err is a parse or write error: the
// class should then be loaded unchanged.
func (x *Instrumenter) InstrumentClass(b []byte) (out []byte, res *ClassResult, err error) {
	c, err := classfile.Parse(b)
	if err != nil {
		return nil, nil, err
	}
	return x.instrumentParsed(c)
}

func (x *Instrumenter) instrumentParsed(c *classfile.Class) ([]byte, *ClassResult, error) {
	name := c.Name()
	res := &ClassResult{Class: name}
	if x.cfg.Excluded(name) {
		return nil, res, nil
	}
	x.refs = probeRefs{}
	x.sites = siteRefs{}
	x.leafs = leafRefs{}
	x.codes.Reset() // the previous class was written: its codes are free
	pool := classPool{c.Pool}
	changed := false
	for i := range c.Methods {
		m := &c.Methods[i]
		if !x.wants(m.Access) || m.CodeIndex(c.Pool) < 0 {
			continue
		}
		mname, desc := c.MemberName(m), c.MemberDesc(m)
		access := ASMAccess(m.Access, classfile.FindAttr(c.Pool, m.Attrs, "Deprecated") >= 0,
			classfile.FindAttr(c.Pool, m.Attrs, "Synthetic") >= 0)
		if x.cfg.SitesOnly {
			// No method ids: the method keeps its code unless it calls a site.
			err := x.instrumentMember(c, m, mname, desc, 0, pool)
			if errors.Is(err, errNoSites) {
				continue
			}
			changed = changed || err == nil
			res.Methods = append(res.Methods, MethodResult{Name: mname, Desc: desc, Access: access, Err: err})
			continue
		}
		var sig string
		id, ok := x.methodID(name, mname, desc, access, func() string {
			sig = Signature(name, mname, access, desc)
			return sig
		})
		if !ok {
			continue
		}
		if sig == "" {
			sig = Signature(name, mname, access, desc)
		}
		r := MethodResult{Name: mname, Desc: desc, Access: access, ID: id, Signature: sig}
		r.Err = x.instrumentMember(c, m, mname, desc, id, pool)
		changed = changed || r.Err == nil
		res.Methods = append(res.Methods, r)
	}
	if !changed {
		return nil, res, nil
	}
	out, err := c.Bytes()
	if err != nil {
		return nil, res, err
	}
	return out, res, nil
}

func (x *Instrumenter) instrumentMember(c *classfile.Class, m *classfile.Member, name, desc string, id int32, pool classPool) error {
	cc, err := x.codes.Code(c.Pool, m)
	if err != nil {
		return err
	}
	in := fromClassfile(cc)
	out, err := x.InstrumentCode(&Method{Class: c.Name(), Name: name, Desc: desc, Access: m.Access, Code: in}, id, c.Major, pool)
	if err != nil {
		return err
	}
	nc, err := toClassfile(c.Pool, cc, out, &x.layout)
	if err != nil {
		return err
	}
	return x.codes.SetCode(c.Pool, m, nc)
}

// fromClassfile returns the instrumenter's view of a decoded Code attribute;
// it shares cc's tables.
func fromClassfile(cc *classfile.Code) *Code {
	c := &Code{MaxStack: cc.MaxStack, MaxLocals: cc.MaxLocals, Bytecode: cc.Code, Handlers: cc.Exceptions}
	for i := range cc.Attrs {
		a := &cc.Attrs[i]
		switch a.Kind {
		case classfile.CodeAttrLineNumbers:
			c.Lines = append(c.Lines, a.Lines)
		case classfile.CodeAttrLocalVars:
			c.LocalVars = append(c.LocalVars, a.Locals)
		case classfile.CodeAttrLocalVarTypes:
			c.LocalVarTypes = append(c.LocalVarTypes, a.Locals)
		case classfile.CodeAttrStackMap:
			if !c.HasFrames { // a second table is ignored by the JVM too
				c.HasFrames, c.Frames = true, a.Frames
			}
		}
	}
	return c
}

// toClassfile builds the classfile.Code of out, keeping the sub-attributes
// of orig in order.
func toClassfile(p *classfile.Pool, orig *classfile.Code, out *Code, l *Layout) (*classfile.Code, error) {
	nc := &classfile.Code{MaxStack: out.MaxStack, MaxLocals: out.MaxLocals, Code: out.Bytecode, Exceptions: out.Handlers}
	nc.Attrs = make([]classfile.CodeAttr, 0, len(orig.Attrs)+1)
	var lines, lvs, lvts int
	frames := false
	for _, a := range orig.Attrs {
		na := classfile.CodeAttr{Name: a.Name, Kind: a.Kind, Offset: -1}
		switch a.Kind {
		case classfile.CodeAttrLineNumbers:
			na.Lines = out.Lines[lines]
			lines++
		case classfile.CodeAttrLocalVars, classfile.CodeAttrLocalVarTypes:
			t := &lvs
			src := out.LocalVars
			if a.Kind == classfile.CodeAttrLocalVarTypes {
				t, src = &lvts, out.LocalVarTypes
			}
			na.Locals = src[*t]
			*t++
		case classfile.CodeAttrStackMap:
			if frames {
				continue
			}
			frames = true
			na.Frames = out.Frames
		default:
			na.Data, na.Offset = a.Data, a.Offset
			if isTypeAnnotations(p, a.Name) {
				var ok bool
				if na.Data, ok = mapTypeAnnotations(a.Data, l); !ok {
					continue // unreadable: dropped rather than left with stale offsets
				}
				na.Offset = -1
			}
		}
		nc.Attrs = append(nc.Attrs, na)
	}
	if out.HasFrames && !frames {
		n, err := p.AddUTF8(classfile.AttrStackMapTable)
		if err != nil {
			return nil, err
		}
		nc.Attrs = append(nc.Attrs, classfile.CodeAttr{Name: n, Kind: classfile.CodeAttrStackMap, Frames: out.Frames, Offset: -1})
	}
	return nc, nil
}

func isTypeAnnotations(p *classfile.Pool, name uint16) bool {
	for _, n := range typeAnnotationAttrs {
		if p.IsUtf8(name, n) {
			return true
		}
	}
	return false
}

// mapTypeAnnotations maps the bytecode offsets of a Code type annotations
// attribute through l. Catch targets index the exception table, whose
// original entries keep their order.
func mapTypeAnnotations(data []byte, l *Layout) ([]byte, bool) {
	as, err := classfile.DecodeTypeAnnotations(data, -1)
	if err != nil {
		return nil, false
	}
	for i := range as {
		a := &as[i]
		if a.Target.HasOffset() {
			n, ok := l.Insn(int(a.Offset))
			if !ok {
				return nil, false
			}
			a.Offset = uint16(n)
		}
		if len(a.LocalVars) > 0 {
			lv := make([]classfile.LocalVarTarget, len(a.LocalVars))
			for j, v := range a.LocalVars {
				s, ok1 := l.Start(int(v.StartPC))
				e, ok2 := l.End(int(v.StartPC) + int(v.Length))
				if !ok1 || !ok2 {
					return nil, false
				}
				lv[j] = classfile.LocalVarTarget{StartPC: uint16(s), Length: uint16(e - s), Index: v.Index}
			}
			a.LocalVars = lv
		}
	}
	out, err := classfile.EncodeTypeAnnotations(nil, as)
	return out, err == nil
}
