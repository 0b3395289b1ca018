package filter

import (
	"strconv"
	"strings"
)

var opSpelling = [...]string{
	opNot: "!", opBitNot: "~", opNeg: "-", opPlus: "+", opAnd: "&&", opOr: "||",
	opBitAnd: "&", opBitOr: "|", opBitXor: "^", opShl: "<<", opShr: ">>",
}

// String returns the expression in canonical form: every compound operand
// in parentheses, as the lttng CLI writes the filters it generates, and a
// built-in field compared with a literal written field first. Compiling it
// gives an equivalent Program with the same String.
func (p *Program) String() string {
	var sb strings.Builder
	p.print(&sb, p.root)
	return sb.String()
}

func (p *Program) print(sb *strings.Builder, i int32) {
	n := &p.nodes[i]
	switch n.op {
	case opLit:
		printLit(sb, n)
	case opField:
		sb.WriteString(n.name)
	case opNot, opBitNot, opNeg, opPlus:
		sb.WriteString(opSpelling[n.op])
		p.operand(sb, n.a)
	case opStrField, opIntField:
		sb.WriteString(n.name)
		sb.WriteString(" " + cmpNames[n.cmp] + " ")
		printLit(sb, n)
	case opCmp:
		p.operand(sb, n.a)
		sb.WriteString(" " + cmpNames[n.cmp] + " ")
		p.operand(sb, n.b)
	default:
		p.operand(sb, n.a)
		sb.WriteString(" " + opSpelling[n.op] + " ")
		p.operand(sb, n.b)
	}
}

// operand prints node i, in parentheses unless it is a field or a literal.
func (p *Program) operand(sb *strings.Builder, i int32) {
	if op := p.nodes[i].op; op == opLit || op == opField {
		p.print(sb, i)
		return
	}
	sb.WriteByte('(')
	p.print(sb, i)
	sb.WriteByte(')')
}

func printLit(sb *strings.Builder, n *node) {
	switch v := n.val; v.Kind {
	case KindInt:
		sb.WriteString(strconv.FormatInt(v.Int, 10))
	case KindFloat:
		s := strconv.FormatFloat(v.Float, 'g', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		sb.WriteString(s)
	case KindString:
		sb.WriteByte('"')
		for i := 0; i < len(v.Str); i++ {
			c := v.Str[i]
			switch {
			case n.isGlb && c == '\\' && i+1 < len(v.Str):
				// Glob form keeps its escapes.
				sb.WriteByte(c)
				i++
				sb.WriteByte(v.Str[i])
			case !n.isGlb && (c == '\\' || c == '*'):
				sb.WriteByte('\\')
				sb.WriteByte(c)
			case c == '"':
				sb.WriteString(`\"`)
			case c < 0x20 || c == 0x7f:
				sb.WriteString(`\x`)
				sb.WriteString(strconv.FormatUint(uint64(c)>>4, 16))
				sb.WriteString(strconv.FormatUint(uint64(c)&15, 16))
			default:
				sb.WriteByte(c)
			}
		}
		sb.WriteByte('"')
	}
}
