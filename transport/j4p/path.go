package j4p

import (
	"strings"
)

// maxPathParts bounds the parts of one GET path or inner path.
const maxPathParts = 1024

// SplitPath splits a percent-decoded GET path into parts with Jolokia's "!"
// escapes: "!/" is a literal '/', "!!" is '!', "!x" is x. A leading '/' is
// dropped and a trailing empty part too; a lone trailing '!' is an error.
// It works in one pass without recursion, whatever the input.
func SplitPath(p string) ([]string, error) {
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return nil, nil
	}
	n := strings.Count(p, "/") + 1
	if n > maxPathParts+1 {
		return nil, errorf(ErrBadRequest, "more than %d path parts", maxPathParts)
	}
	if strings.IndexByte(p, '!') < 0 {
		// No escapes: the parts are substrings of p.
		parts := strings.SplitN(p, "/", n)
		if parts[len(parts)-1] == "" && len(parts) > 1 {
			parts = parts[:len(parts)-1]
		}
		return parts, nil
	}
	parts := make([]string, 0, n)
	var b strings.Builder
	plain := 0 // start of the unescaped run not yet in b
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '!':
			if i+1 >= len(p) {
				return nil, errorf(ErrBadEscape, "path ends in an unpaired '!'")
			}
			b.WriteString(p[plain:i])
			b.WriteByte(p[i+1])
			i++
			plain = i + 1
		case '/':
			b.WriteString(p[plain:i])
			parts = append(parts, b.String())
			b.Reset()
			plain = i + 1
			if len(parts) > maxPathParts {
				return nil, errorf(ErrBadRequest, "more than %d path parts", maxPathParts)
			}
		}
	}
	b.WriteString(p[plain:])
	if b.Len() > 0 || len(parts) == 0 {
		parts = append(parts, b.String())
	}
	return parts, nil
}

// EscapePart escapes one part for a Jolokia GET path: '!' and '/' get a '!'.
func EscapePart(s string) string {
	if !strings.ContainsAny(s, "!/") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '!' || s[i] == '/' {
			b.WriteByte('!')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// SplitPath030 splits a GET path with j4p 0.30 escapes: the path is split
// on runs of '/', and an element of n '-' glues its neighbours with n
// slashes; n '-' then '+' ends the part with n+1 slashes.
func SplitPath030(p string) ([]string, error) {
	var parts []string
	glue := false
	for _, e := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' }) {
		if n, plus, ok := slashEscape(e); ok {
			if len(parts) == 0 {
				parts = append(parts, "")
			}
			parts[len(parts)-1] += strings.Repeat("/", n)
			glue = !plus
			continue
		}
		if glue {
			parts[len(parts)-1] += e
			glue = false
		} else {
			parts = append(parts, e)
		}
		if len(parts) > maxPathParts {
			return nil, errorf(ErrBadRequest, "more than %d path parts", maxPathParts)
		}
	}
	return parts, nil
}

// slashEscape recognises "-…-" (n slashes, glued) and "-…-+" (n+1 slashes,
// ending the part).
func slashEscape(e string) (n int, plus bool, ok bool) {
	d := len(e) - len(strings.TrimLeft(e, "-"))
	switch {
	case d == len(e) && d > 0:
		return d, false, true
	case d == len(e)-1 && e[d] == '+':
		return d + 1, true, true
	}
	return 0, false, false
}

// EscapePart030 writes a part for a j4p 0.30 path: each run of n slashes
// becomes "/" + n×"-" + "/", a trailing one "/" + (n-1)×"-" + "+/".
func EscapePart030(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '/' {
			b.WriteByte(s[i])
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '/' {
			j++
		}
		b.WriteByte('/')
		if j == len(s) {
			b.WriteString(strings.Repeat("-", j-i-1))
			b.WriteByte('+')
		} else {
			b.WriteString(strings.Repeat("-", j-i))
		}
		b.WriteByte('/')
		i = j
	}
	return b.String()
}

// ParseInnerPath splits an inner path ("used", "a!/b/0") into segments with
// the "!" escapes.
func ParseInnerPath(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	return SplitPath(p)
}

// joinInnerPath is the inverse of ParseInnerPath.
func joinInnerPath(segs []string) string {
	es := make([]string, len(segs))
	for i, s := range segs {
		es[i] = EscapePart(s)
	}
	return strings.Join(es, "/")
}

// splitList splits a comma list of names with "\," escaping a comma.
func splitList(s string) []string {
	if strings.IndexByte(s, ',') < 0 {
		return []string{s}
	}
	var out []string
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == ',':
			b.WriteByte(',')
			i++
		case s[i] == ',':
			out = append(out, b.String())
			b.Reset()
		default:
			b.WriteByte(s[i])
		}
	}
	return append(out, b.String())
}
