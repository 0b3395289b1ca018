package filter

import "strings"

// globKind selects the matcher of a compiled Glob.
type globKind uint8

const (
	globExact   globKind = iota // no star: s == lit
	globPrefix                  // "lit*": strings.HasPrefix
	globSuffix                  // "*lit": strings.HasSuffix
	globAny                     // only stars: always
	globGeneral                 // anything else: MatchGlob
)

// Glob is a compiled star glob. The zero Glob matches only "". It is an
// immutable value, safe for concurrent use.
type Glob struct {
	pattern string
	lit     string // unescaped literal of exact, prefix and suffix globs
	kind    globKind
}

// CompileGlob analyses pattern once so that Match takes the fastest path:
// string equality, prefix, suffix or the general matcher.
func CompileGlob(pattern string) Glob {
	g := Glob{pattern: pattern, kind: globGeneral}
	stars, first, last := 0, -1, -1
	escaped := false
	for i := 0; i < len(pattern); i++ {
		switch {
		case escaped:
			escaped = false
		case pattern[i] == '\\':
			escaped = true
		case pattern[i] == '*':
			if first < 0 {
				first = i
			}
			last = i
			stars++
		}
	}
	switch {
	case escaped:
		// A trailing lone backslash: never matches; keep the general path.
	case stars == 0:
		g.kind, g.lit = globExact, unescape(pattern)
	case stars == len(pattern):
		g.kind = globAny
	case stars == 1 && last == len(pattern)-1:
		g.kind, g.lit = globPrefix, unescape(pattern[:last])
	case stars == 1 && first == 0:
		g.kind, g.lit = globSuffix, unescape(pattern[1:])
	}
	return g
}

// Pattern returns the pattern the Glob was compiled from.
func (g Glob) Pattern() string { return g.pattern }

// Literal reports whether the pattern has no unescaped star, and returns the
// text it matches then.
func (g Glob) Literal() (string, bool) { return g.lit, g.kind == globExact }

// Match reports whether s matches the whole pattern. It does not allocate.
func (g Glob) Match(s string) bool {
	switch g.kind {
	case globExact:
		return s == g.lit
	case globPrefix:
		return strings.HasPrefix(s, g.lit)
	case globSuffix:
		return strings.HasSuffix(s, g.lit)
	case globAny:
		return true
	}
	return MatchGlob(g.pattern, s)
}

// MatchGlob reports whether s matches the star glob pattern, without
// compiling it. It does not allocate and runs in O(len(pattern)·len(s)) at
// worst, backtracking only to the most recent star.
func MatchGlob(pattern, s string) bool {
	px, sx := 0, 0
	starP, starS := -1, 0 // pattern index after the last star; s index it is tried at
	for sx < len(s) {
		if px < len(pattern) {
			switch c := pattern[px]; c {
			case '*':
				px++
				starP, starS = px, sx
				continue
			case '\\':
				if px+1 < len(pattern) && pattern[px+1] == s[sx] {
					px += 2
					sx++
					continue
				}
			default:
				if c == s[sx] {
					px++
					sx++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		// Let the last star swallow one more byte and retry.
		starS++
		px, sx = starP, starS
	}
	for px < len(pattern) && pattern[px] == '*' {
		px++
	}
	return px == len(pattern)
}

// unescape removes the glob escapes: "\x" becomes "x".
func unescape(p string) string {
	if strings.IndexByte(p, '\\') < 0 {
		return p
	}
	b := make([]byte, 0, len(p))
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) {
			i++
		}
		b = append(b, p[i])
	}
	return string(b)
}

// hasStar reports whether the glob-form pattern p has an unescaped star.
func hasStar(p string) bool {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '*':
			return true
		}
	}
	return false
}
