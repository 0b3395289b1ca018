package filter

import (
	"math"
	"strconv"
	"strings"
)

// tokKind is a lexical token type.
type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tGlobal // $ctx.name or $app.provider:ctx
	tInt
	tFloat
	tString
	tLParen
	tRParen
	tLBrack
	tRBrack
	tDot
	tArrow
	tNot
	tBitNot
	tEq
	tNe
	tLt
	tLe
	tGt
	tGe
	tAnd
	tOr
	tBitAnd
	tBitOr
	tBitXor
	tShl
	tShr
	tPlus
	tMinus
	tMul
	tDiv
	tMod
)

var tokNames = [...]string{
	tEOF: "end of expression", tIdent: "identifier", tGlobal: "context field", tInt: "integer",
	tFloat: "float", tString: "string", tLParen: "'('", tRParen: "')'", tLBrack: "'['",
	tRBrack: "']'", tDot: "'.'", tArrow: "'->'", tNot: "'!'", tBitNot: "'~'", tEq: "'=='",
	tNe: "'!='", tLt: "'<'", tLe: "'<='", tGt: "'>'", tGe: "'>='", tAnd: "'&&'", tOr: "'||'",
	tBitAnd: "'&'", tBitOr: "'|'", tBitXor: "'^'", tShl: "'<<'", tShr: "'>>'", tPlus: "'+'",
	tMinus: "'-'", tMul: "'*'", tDiv: "'/'", tMod: "'%'",
}

func (k tokKind) String() string {
	if int(k) < len(tokNames) {
		return tokNames[k]
	}
	return "token " + strconv.Itoa(int(k))
}

// token is one lexical token.
type token struct {
	kind tokKind
	pos  int    // byte offset in the source
	text string // source text
	u    uint64 // tInt
	f    float64
	s    string // tString: the literal in glob form (escapes \\ and \* kept)
}

// punct maps operator spellings, longest first, to tokens.
var punct = []struct {
	s string
	k tokKind
}{
	{"==", tEq}, {"!=", tNe}, {"<=", tLe}, {">=", tGe}, {"&&", tAnd}, {"||", tOr},
	{"<<", tShl}, {">>", tShr}, {"->", tArrow},
	{"(", tLParen}, {")", tRParen}, {"[", tLBrack}, {"]", tRBrack}, {".", tDot},
	{"!", tNot}, {"~", tBitNot}, {"<", tLt}, {">", tGt}, {"&", tBitAnd}, {"|", tBitOr},
	{"^", tBitXor}, {"+", tPlus}, {"-", tMinus}, {"*", tMul}, {"/", tDiv}, {"%", tMod},
}

// lexer produces tokens on demand.
type lexer struct {
	src string
	pos int
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdentChar(c byte) bool { return isIdentStart(c) || isDigit(c) }

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func errAt(pos int, msg string) *SyntaxError { return &SyntaxError{Offset: pos, Msg: msg} }

// next returns the next token.
func (l *lexer) next() (token, error) {
	for l.pos < len(l.src) && isSpace(l.src[l.pos]) {
		l.pos++
	}
	start := l.pos
	if start == len(l.src) {
		return token{kind: tEOF, pos: start}, nil
	}
	c := l.src[start]
	switch {
	case isIdentStart(c):
		l.pos++
		for l.pos < len(l.src) && isIdentChar(l.src[l.pos]) {
			l.pos++
		}
		return token{kind: tIdent, pos: start, text: l.src[start:l.pos]}, nil
	case c == '$':
		return l.global()
	case isDigit(c) || (c == '.' && start+1 < len(l.src) && isDigit(l.src[start+1])):
		return l.number()
	case c == '"':
		return l.str()
	case c == '\'':
		return token{}, errAt(start, "character constants are not supported")
	}
	for _, p := range punct {
		if strings.HasPrefix(l.src[start:], p.s) {
			l.pos += len(p.s)
			return token{kind: p.k, pos: start, text: p.s}, nil
		}
	}
	return token{}, errAt(start, "unexpected character "+strconv.QuoteRune(rune(c)))
}

// global lexes "$ctx.<name>" and "$app.<provider>:<ctx>".
func (l *lexer) global() (token, error) {
	start := l.pos
	ident := func() bool {
		i := l.pos
		if i >= len(l.src) || !isIdentStart(l.src[i]) {
			return false
		}
		for i < len(l.src) && (isIdentChar(l.src[i]) || l.src[i] == '.') {
			i++
		}
		l.pos = i
		return true
	}
	rest := l.src[start:]
	switch {
	case strings.HasPrefix(rest, "$ctx."):
		l.pos += len("$ctx.")
		if !ident() {
			return token{}, errAt(l.pos, "expected a context name after $ctx.")
		}
	case strings.HasPrefix(rest, "$app."):
		l.pos += len("$app.")
		if !ident() {
			return token{}, errAt(l.pos, "expected a provider name after $app.")
		}
		if l.pos >= len(l.src) || l.src[l.pos] != ':' {
			return token{}, errAt(l.pos, "expected ':' in $app.<provider>:<context>")
		}
		l.pos++
		if !ident() {
			return token{}, errAt(l.pos, "expected a context name after ':'")
		}
	default:
		return token{}, errAt(start, "expected $ctx. or $app.")
	}
	return token{kind: tGlobal, pos: start, text: l.src[start:l.pos]}, nil
}

// number lexes C integer and floating literals.
func (l *lexer) number() (token, error) {
	start := l.pos
	src := l.src
	i := start
	hex := false
	if strings.HasPrefix(src[i:], "0x") || strings.HasPrefix(src[i:], "0X") {
		hex = true
		i += 2
		for i < len(src) && isHexDigit(src[i]) {
			i++
		}
		if i == start+2 {
			return token{}, errAt(start, "hexadecimal literal without digits")
		}
	} else {
		for i < len(src) && isDigit(src[i]) {
			i++
		}
	}
	isFloat := false
	if !hex && i < len(src) && src[i] == '.' {
		isFloat = true
		i++
		for i < len(src) && isDigit(src[i]) {
			i++
		}
	}
	if !hex && i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		j := i + 1
		if j < len(src) && (src[j] == '+' || src[j] == '-') {
			j++
		}
		if j < len(src) && isDigit(src[j]) {
			isFloat = true
			for j < len(src) && isDigit(src[j]) {
				j++
			}
			i = j
		}
	}
	body := src[start:i]
	// C suffixes: u, l, ul, ll, … for integers; f or l for floats.
	for i < len(src) && strings.IndexByte("uUlLfF", src[i]) >= 0 {
		if !isFloat && (src[i] == 'f' || src[i] == 'F') {
			break
		}
		i++
	}
	if i < len(src) && (isIdentChar(src[i]) || src[i] == '.') {
		return token{}, errAt(i, "malformed number")
	}
	l.pos = i
	if isFloat {
		f, err := strconv.ParseFloat(body, 64)
		if err != nil || math.IsInf(f, 0) {
			return token{}, errAt(start, "floating literal out of range")
		}
		return token{kind: tFloat, pos: start, text: src[start:i], f: f}, nil
	}
	base, digits := 10, body
	switch {
	case hex:
		base, digits = 16, body[2:]
	case len(body) > 1 && body[0] == '0':
		base, digits = 8, body[1:]
	}
	u, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		return token{}, errAt(start, "bad or out-of-range integer literal")
	}
	return token{kind: tInt, pos: start, text: src[start:i], u: u}, nil
}

func isHexDigit(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// str lexes a string literal into glob form: escapes are decoded, except
// that a literal backslash is kept as `\\` and a literal star as `\*`, so
// that the only special characters left are unescaped stars.
func (l *lexer) str() (token, error) {
	start := l.pos
	src := l.src
	var b []byte
	i := start + 1
	for {
		if i >= len(src) {
			return token{}, errAt(start, "unterminated string literal")
		}
		c := src[i]
		if c == '"' {
			i++
			break
		}
		if c == 0 {
			return token{}, errAt(i, "NUL in string literal")
		}
		if c != '\\' {
			b = append(b, c)
			i++
			continue
		}
		esc := i
		i++
		if i >= len(src) {
			return token{}, errAt(start, "unterminated string literal")
		}
		var v byte
		switch e := src[i]; e {
		case '\\', '*':
			b = append(b, '\\', e)
			i++
			continue
		case '"', '\'', '?':
			v = e
			i++
		case 'a':
			v, i = '\a', i+1
		case 'b':
			v, i = '\b', i+1
		case 'f':
			v, i = '\f', i+1
		case 'n':
			v, i = '\n', i+1
		case 'r':
			v, i = '\r', i+1
		case 't':
			v, i = '\t', i+1
		case 'v':
			v, i = '\v', i+1
		case 'x':
			j := i + 1
			for j < len(src) && j < i+3 && isHexDigit(src[j]) {
				j++
			}
			if j == i+1 {
				return token{}, errAt(esc, `\x without hexadecimal digits`)
			}
			n, _ := strconv.ParseUint(src[i+1:j], 16, 8)
			v, i = byte(n), j
		default:
			if e < '0' || e > '7' {
				return token{}, errAt(esc, "unknown escape sequence \\"+string(rune(e)))
			}
			j := i
			for j < len(src) && j < i+3 && src[j] >= '0' && src[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(src[i:j], 8, 16)
			if n > 0xff {
				return token{}, errAt(esc, "octal escape out of range")
			}
			v, i = byte(n), j
		}
		switch v {
		case 0:
			return token{}, errAt(esc, "NUL in string literal")
		case '\\', '*':
			b = append(b, '\\', v)
		default:
			b = append(b, v)
		}
	}
	l.pos = i
	return token{kind: tString, pos: start, text: src[start:i], s: string(b)}, nil
}
