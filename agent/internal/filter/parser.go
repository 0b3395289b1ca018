package filter

import (
	"math"
	"strconv"
	"strings"
)

// Limits of Compile.
const (
	// MaxLen is the longest expression, in bytes (LTTNG_FILTER_MAX_LEN
	// minus the NUL).
	MaxLen = 65535
	// MaxDepth bounds the depth of the expression tree, which bounds the
	// recursion of Eval.
	MaxDepth = 1000
	// maxNesting bounds the parser's recursion through parentheses and
	// unary operators. The canonical form of a tree of depth d nests at
	// most 2d deep, so every accepted Program's String compiles again.
	maxNesting = 2 * MaxDepth
)

// op is a node operation.
type op uint8

const (
	opLit      op = iota // literal value (n.val); a string literal may be a glob (n.glob)
	opField              // field (n.field, n.name)
	opNot                // !a
	opBitNot             // ~a
	opNeg                // -a
	opPlus               // +a: a, which must be a number
	opAnd                // a && b
	opOr                 // a || b
	opBitAnd             // a & b
	opBitOr              // a | b
	opBitXor             // a ^ b
	opShl                // a << b
	opShr                // a >> b
	opCmp                // a <cmp> b, generic
	opStrField           // built-in string field <cmp> string literal (== or !=)
	opIntField           // int_loglevel <cmp> integer literal
)

// cmpOp is a comparison.
type cmpOp uint8

const (
	cmpEq cmpOp = iota
	cmpNe
	cmpLt
	cmpLe
	cmpGt
	cmpGe
)

var cmpNames = [...]string{cmpEq: "==", cmpNe: "!=", cmpLt: "<", cmpLe: "<=", cmpGt: ">", cmpGe: ">="}

// swapped is the comparison with its operands exchanged: a < b ⇔ b > a.
var swapped = [...]cmpOp{cmpEq: cmpEq, cmpNe: cmpNe, cmpLt: cmpGt, cmpLe: cmpGe, cmpGt: cmpLt, cmpGe: cmpLe}

var tokCmp = map[tokKind]cmpOp{tEq: cmpEq, tNe: cmpNe, tLt: cmpLt, tLe: cmpLe, tGt: cmpGt, tGe: cmpGe}

// staticType is what the compiler knows of a node's type.
type staticType uint8

const (
	typeUnknown staticType = iota // a field resolved at run time
	typeNum
	typeString
)

// node is one node of the compiled tree; children are indices into
// Program.nodes.
type node struct {
	op    op
	cmp   cmpOp
	field fieldID
	isGlb bool // opLit string literal, opStrField: the literal is a glob
	typ   staticType
	depth int32
	a, b  int32
	val   Value  // opLit; opStrField, opIntField: the literal
	name  string // opField: the name in the expression
	glob  Glob   // isGlb: the compiled pattern
	pos   int32  // source offset, for messages
}

// binLevels lists the binary operators from the loosest to the tightest.
// The arithmetic levels are parsed only to be refused, as LTTng does.
var binLevels = [][]tokKind{
	{tOr},
	{tAnd},
	{tBitOr},
	{tBitXor},
	{tBitAnd},
	{tEq, tNe},
	{tLt, tLe, tGt, tGe},
	{tShl, tShr},
	{tPlus, tMinus},
	{tMul, tDiv, tMod},
}

var binOps = map[tokKind]op{
	tOr: opOr, tAnd: opAnd, tBitOr: opBitOr, tBitXor: opBitXor, tBitAnd: opBitAnd,
	tShl: opShl, tShr: opShr,
}

// parser builds the tree by recursive descent.
type parser struct {
	lex   lexer
	tok   token
	nodes []node
	depth int // nesting of parentheses and unary operators, up to maxNesting
}

func (p *parser) advance() error {
	t, err := p.lex.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

func (p *parser) add(n node) (int32, error) {
	if n.depth > MaxDepth {
		return 0, errAt(int(n.pos), "expression nested too deeply")
	}
	p.nodes = append(p.nodes, n)
	return int32(len(p.nodes) - 1), nil
}

func (p *parser) expr() (int32, error) { return p.binary(0) }

func (p *parser) binary(level int) (int32, error) {
	if level == len(binLevels) {
		return p.unary()
	}
	left, err := p.binary(level + 1)
	if err != nil {
		return 0, err
	}
	for {
		t := p.tok
		if !tokIn(t.kind, binLevels[level]) {
			return left, nil
		}
		switch t.kind {
		case tPlus, tMinus, tMul, tDiv, tMod:
			return 0, errAt(t.pos, "binary operator "+t.kind.String()+" is not supported")
		}
		if err := p.advance(); err != nil {
			return 0, err
		}
		right, err := p.binary(level + 1)
		if err != nil {
			return 0, err
		}
		if left, err = p.combine(t, left, right); err != nil {
			return 0, err
		}
	}
}

func tokIn(k tokKind, set []tokKind) bool {
	for _, s := range set {
		if k == s {
			return true
		}
	}
	return false
}

// combine builds the node of binary operator t, checking the types the
// compiler can see.
func (p *parser) combine(t token, a, b int32) (int32, error) {
	na, nb := &p.nodes[a], &p.nodes[b]
	n := node{a: a, b: b, pos: int32(t.pos), typ: typeNum, depth: 1 + max(na.depth, nb.depth)}
	if c, ok := tokCmp[t.kind]; ok {
		return p.compare(n, c, t)
	}
	n.op = binOps[t.kind]
	if na.typ == typeString || nb.typ == typeString {
		return 0, errAt(t.pos, "operator "+t.kind.String()+" needs numbers, not strings")
	}
	return p.add(n)
}

// compare builds a comparison, specialising the forms the lttng CLI
// generates.
func (p *parser) compare(n node, c cmpOp, t token) (int32, error) {
	na, nb := p.nodes[n.a], p.nodes[n.b]
	if (na.typ == typeString && nb.typ == typeNum) || (na.typ == typeNum && nb.typ == typeString) {
		return 0, errAt(t.pos, "cannot compare a string with a number")
	}
	if na.isGlb || nb.isGlb {
		if c != cmpEq && c != cmpNe {
			return 0, errAt(t.pos, "a glob pattern can only be compared with == or !=")
		}
		if na.isGlb && nb.isGlb {
			return 0, errAt(t.pos, "cannot compare two glob patterns")
		}
	}
	n.op, n.cmp = opCmp, c
	// Field on the left, literal on the right.
	lit, fld := nb, na
	if na.op == opLit && nb.op == opField {
		lit, fld, c = na, nb, swapped[c]
	}
	if fld.op == opField && lit.op == opLit {
		switch {
		case (fld.field == fieldLoggerName || fld.field == fieldMessage) &&
			lit.val.Kind == KindString && (c == cmpEq || c == cmpNe):
			return p.add(node{op: opStrField, cmp: c, field: fld.field, isGlb: lit.isGlb, glob: lit.glob,
				val: lit.val, name: fld.name, typ: typeNum, depth: 2, pos: n.pos})
		case fld.field == fieldLevel && lit.val.Kind == KindInt:
			return p.add(node{op: opIntField, cmp: c, field: fld.field, val: lit.val, name: fld.name,
				typ: typeNum, depth: 2, pos: n.pos})
		}
	}
	return p.add(n)
}

func (p *parser) unary() (int32, error) {
	t := p.tok
	var o op
	switch t.kind {
	case tNot:
		o = opNot
	case tBitNot:
		o = opBitNot
	case tMinus:
		o = opNeg
	case tPlus:
		o = opPlus
	default:
		return p.postfix()
	}
	if p.depth++; p.depth > maxNesting {
		return 0, errAt(t.pos, "expression nested too deeply")
	}
	defer func() { p.depth-- }()
	if err := p.advance(); err != nil {
		return 0, err
	}
	// -9223372036854775808 is a literal: negate before range checking.
	if o == opNeg && p.tok.kind == tInt {
		lt := p.tok
		if lt.u > 1<<63 {
			return 0, errAt(lt.pos, "integer literal out of range")
		}
		if err := p.advance(); err != nil {
			return 0, err
		}
		return p.postfixOf(node{op: opLit, val: IntValue(int64(-lt.u)), typ: typeNum, depth: 1, pos: int32(t.pos)}, lt)
	}
	a, err := p.unary()
	if err != nil {
		return 0, err
	}
	na := &p.nodes[a]
	if na.typ == typeString {
		return 0, errAt(t.pos, "operator "+t.kind.String()+" needs a number, not a string")
	}
	// Fold signs of numeric literals so that printing and parsing agree.
	if na.op == opLit && (o == opNeg || o == opPlus) {
		v := na.val
		if o == opNeg {
			if v.Kind == KindInt {
				v.Int = -v.Int
			} else {
				v.Float = -v.Float
			}
		}
		na.val, na.pos = v, int32(t.pos)
		return a, nil
	}
	return p.add(node{op: o, a: a, typ: typeNum, depth: na.depth + 1, pos: int32(t.pos)})
}

// postfix parses a primary and its field path suffixes.
func (p *parser) postfix() (int32, error) {
	t := p.tok
	switch t.kind {
	case tIdent, tGlobal:
		if err := p.advance(); err != nil {
			return 0, err
		}
		name, err := p.path(t.text)
		if err != nil {
			return 0, err
		}
		typ := typeUnknown
		id := builtinFields[name]
		switch id {
		case fieldLoggerName, fieldMessage:
			typ = typeString
		case fieldLevel:
			typ = typeNum
		}
		return p.add(node{op: opField, field: id, name: name, typ: typ, depth: 1, pos: int32(t.pos)})
	case tInt:
		if t.u > math.MaxInt64 {
			return 0, errAt(t.pos, "integer literal out of range")
		}
		if err := p.advance(); err != nil {
			return 0, err
		}
		return p.postfixOf(node{op: opLit, val: IntValue(int64(t.u)), typ: typeNum, depth: 1, pos: int32(t.pos)}, t)
	case tFloat:
		if err := p.advance(); err != nil {
			return 0, err
		}
		return p.postfixOf(node{op: opLit, val: FloatValue(t.f), typ: typeNum, depth: 1, pos: int32(t.pos)}, t)
	case tString:
		if err := p.advance(); err != nil {
			return 0, err
		}
		n := node{op: opLit, typ: typeString, depth: 1, pos: int32(t.pos)}
		if hasStar(t.s) {
			n.isGlb, n.glob, n.val = true, CompileGlob(t.s), StringValue(t.s)
		} else {
			n.val = StringValue(unescape(t.s))
		}
		return p.postfixOf(n, t)
	case tLParen:
		if p.depth++; p.depth > maxNesting {
			return 0, errAt(t.pos, "expression nested too deeply")
		}
		defer func() { p.depth-- }()
		if err := p.advance(); err != nil {
			return 0, err
		}
		e, err := p.expr()
		if err != nil {
			return 0, err
		}
		if p.tok.kind != tRParen {
			return 0, errAt(p.tok.pos, "expected ')' to close the '(' at offset "+strconv.Itoa(t.pos)+
				", found "+p.tok.kind.String())
		}
		if err := p.advance(); err != nil {
			return 0, err
		}
		return e, nil
	case tEOF:
		return 0, errAt(t.pos, "unexpected end of expression")
	}
	return 0, errAt(t.pos, "unexpected "+t.kind.String())
}

// postfixOf adds a literal node, refusing a field path after it.
func (p *parser) postfixOf(n node, t token) (int32, error) {
	switch p.tok.kind {
	case tDot, tLBrack, tArrow:
		return 0, errAt(p.tok.pos, "a literal has no fields")
	}
	return p.add(n)
}

// path reads ".name", "[index]" suffixes of a field into its name.
func (p *parser) path(name string) (string, error) {
	var sb strings.Builder
	sb.WriteString(name)
	for {
		switch p.tok.kind {
		case tDot:
			if err := p.advance(); err != nil {
				return "", err
			}
			if p.tok.kind != tIdent {
				return "", errAt(p.tok.pos, "expected a field name after '.'")
			}
			sb.WriteByte('.')
			sb.WriteString(p.tok.text)
		case tLBrack:
			if err := p.advance(); err != nil {
				return "", err
			}
			if p.tok.kind != tInt {
				return "", errAt(p.tok.pos, "expected an integer index")
			}
			idx := p.tok.u
			if err := p.advance(); err != nil {
				return "", err
			}
			if p.tok.kind != tRBrack {
				return "", errAt(p.tok.pos, "expected ']'")
			}
			sb.WriteByte('[')
			sb.WriteString(strconv.FormatUint(idx, 10))
			sb.WriteByte(']')
		case tArrow:
			return "", errAt(p.tok.pos, "'->' is not supported")
		default:
			return sb.String(), nil
		}
		if err := p.advance(); err != nil {
			return "", err
		}
	}
}
