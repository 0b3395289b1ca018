package filter

import (
	"fmt"
	"strings"
)

// Program is a compiled filter expression. It is immutable and safe for
// concurrent use.
type Program struct {
	src    string
	nodes  []node
	root   int32
	fields FieldSet
}

// Compile parses a filter expression. Errors are *SyntaxError (matching
// ErrSyntax) with the byte offset of the problem, or ErrTooLong.
func Compile(expr string) (*Program, error) {
	if len(expr) > MaxLen {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLong, len(expr), MaxLen)
	}
	p := &parser{lex: lexer{src: expr}}
	if err := p.advance(); err != nil {
		return nil, err
	}
	root, err := p.expr()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tEOF {
		return nil, errAt(p.tok.pos, "unexpected "+p.tok.kind.String()+" after the expression")
	}
	if p.nodes[root].typ == typeString {
		return nil, errAt(0, "the expression is a string, not a condition")
	}
	prog := &Program{src: expr, nodes: p.nodes, root: root}
	for i := range prog.nodes {
		switch n := &prog.nodes[i]; n.op {
		case opField, opStrField, opIntField:
			prog.fields |= fieldUses[n.field]
		}
	}
	return prog, nil
}

// MustCompile is Compile that panics on error, for expressions known to be
// valid.
func MustCompile(expr string) *Program {
	p, err := Compile(expr)
	if err != nil {
		panic(err)
	}
	return p
}

// Source returns the expression as given to Compile.
func (p *Program) Source() string { return p.src }

// Fields reports which fields the expression reads.
func (p *Program) Fields() FieldSet { return p.fields }

// Eval reports whether r passes the filter. Any evaluation error (a missing
// field, a type mismatch) makes it false. It does not allocate, and does not
// keep r.
func (p *Program) Eval(r *Record) bool {
	ok, valid := p.test(p.root, r)
	return ok && valid
}

// test evaluates node i as a condition; valid is false on an evaluation
// error.
func (p *Program) test(i int32, r *Record) (ok, valid bool) {
	n := &p.nodes[i]
	switch n.op {
	case opAnd:
		a, v := p.test(n.a, r)
		if !v || !a {
			return false, v
		}
		return p.test(n.b, r)
	case opOr:
		a, v := p.test(n.a, r)
		if !v || a {
			return a, v
		}
		return p.test(n.b, r)
	case opNot:
		a, v := p.test(n.a, r)
		return !a, v
	case opStrField:
		s := r.Message
		if n.field == fieldLoggerName {
			s = r.LoggerName
		}
		var eq bool
		if n.isGlb {
			eq = n.glob.Match(s)
		} else {
			eq = s == n.val.Str
		}
		return eq == (n.cmp == cmpEq), true
	case opIntField:
		return cmpInt(n.cmp, int64(r.Level), n.val.Int), true
	case opCmp:
		return p.compare(n, r)
	}
	return p.testValue(i, r)
}

// testValue evaluates node i as a value and tests it. It is kept out of
// test so that test, on the hot path, has a small frame.
//
//go:noinline
func (p *Program) testValue(i int32, r *Record) (ok, valid bool) {
	v, valid := p.eval(i, r)
	switch {
	case !valid:
		return false, false
	case v.Kind == KindInt:
		return v.Int != 0, true
	case v.Kind == KindFloat:
		return v.Float != 0, true
	}
	return false, false // a string is not a condition
}

// eval evaluates node i as a value.
func (p *Program) eval(i int32, r *Record) (Value, bool) {
	n := &p.nodes[i]
	switch n.op {
	case opLit:
		return n.val, true
	case opField:
		return field(n, r)
	case opAnd, opOr, opNot, opStrField, opIntField, opCmp:
		b, valid := p.test(i, r)
		return boolValue(b), valid
	case opNeg, opPlus, opBitNot:
		a, valid := p.eval(n.a, r)
		if !valid {
			return a, false
		}
		switch {
		case n.op == opPlus && (a.Kind == KindInt || a.Kind == KindFloat):
			return a, true
		case n.op == opNeg && a.Kind == KindInt:
			return IntValue(-a.Int), true
		case n.op == opNeg && a.Kind == KindFloat:
			return FloatValue(-a.Float), true
		case n.op == opBitNot && a.Kind == KindInt:
			return IntValue(^a.Int), true
		}
		return Value{}, false
	}
	// Bitwise binary operators: integers only.
	a, va := p.eval(n.a, r)
	b, vb := p.eval(n.b, r)
	if !va || !vb || a.Kind != KindInt || b.Kind != KindInt {
		return Value{}, false
	}
	switch n.op {
	case opBitAnd:
		return IntValue(a.Int & b.Int), true
	case opBitOr:
		return IntValue(a.Int | b.Int), true
	case opBitXor:
		return IntValue(a.Int ^ b.Int), true
	}
	// Shifts: the count must be 0 to 63, as in lttng-ust.
	if b.Int < 0 || b.Int > 63 {
		return Value{}, false
	}
	if n.op == opShl {
		return IntValue(int64(uint64(a.Int) << uint(b.Int))), true
	}
	return IntValue(a.Int >> uint(b.Int)), true
}

// field reads a field of r.
func field(n *node, r *Record) (Value, bool) {
	switch n.field {
	case fieldLoggerName:
		return StringValue(r.LoggerName), true
	case fieldMessage:
		return StringValue(r.Message), true
	case fieldLevel:
		return IntValue(int64(r.Level)), true
	}
	if r.Fields == nil {
		return Value{}, false
	}
	v, ok := r.Fields.Field(n.name)
	if !ok || v.Kind == KindNone || v.Kind > KindString {
		return Value{}, false
	}
	return v, true
}

// compare evaluates a generic comparison node.
//
//go:noinline
func (p *Program) compare(n *node, r *Record) (ok, valid bool) {
	a, va := p.eval(n.a, r)
	b, vb := p.eval(n.b, r)
	if !va || !vb {
		return false, false
	}
	switch {
	case a.Kind == KindString && b.Kind == KindString:
		if ln, rn := &p.nodes[n.a], &p.nodes[n.b]; ln.isGlb || rn.isGlb {
			// Only == and != reach here with a glob.
			var m bool
			if ln.isGlb {
				m = ln.glob.Match(b.Str)
			} else {
				m = rn.glob.Match(a.Str)
			}
			return m == (n.cmp == cmpEq), true
		}
		return cmpOrder(n.cmp, strings.Compare(a.Str, b.Str)), true
	case a.Kind == KindInt && b.Kind == KindInt:
		return cmpInt(n.cmp, a.Int, b.Int), true
	case a.Kind == KindString || b.Kind == KindString:
		return false, false
	}
	x, y := a.Float, b.Float
	if a.Kind == KindInt {
		x = float64(a.Int)
	}
	if b.Kind == KindInt {
		y = float64(b.Int)
	}
	switch n.cmp {
	case cmpEq:
		return x == y, true
	case cmpNe:
		return x != y, true
	case cmpLt:
		return x < y, true
	case cmpLe:
		return x <= y, true
	case cmpGt:
		return x > y, true
	}
	return x >= y, true
}

func cmpInt(c cmpOp, x, y int64) bool {
	switch c {
	case cmpEq:
		return x == y
	case cmpNe:
		return x != y
	case cmpLt:
		return x < y
	case cmpLe:
		return x <= y
	case cmpGt:
		return x > y
	}
	return x >= y
}

// cmpOrder applies c to the result of a three-way comparison.
func cmpOrder(c cmpOp, d int) bool { return cmpInt(c, int64(d), 0) }
