package j4p

import (
	"slices"
	"strings"
)

// Prop is one key=value property of an ObjectName; a quoted value keeps its
// quotes, as in JMX.
type Prop struct {
	Key, Value string
}

// ObjectName is a JMX object name "domain:key=value,…", or a pattern: a
// domain with * or ?, a value with * or ? (unquoted), or a key list ending
// in "*" (",*").
type ObjectName struct {
	Domain string
	Props  []Prop // in the order given
	// PropListPattern: the key list ends in "*", so names with more keys
	// match too.
	PropListPattern bool
}

// maxObjectNameLen bounds a name before it is parsed.
const maxObjectNameLen = 4096

// ParseObjectName parses s as JMX does: the domain is everything before the
// first ':', then comma-separated key=value properties; a value may be
// quoted ("…" with \" \\ \n \* \? escapes) and hold , = : ; a "*" element
// makes a property list pattern.
func ParseObjectName(s string) (ObjectName, error) {
	var n ObjectName
	if len(s) > maxObjectNameLen {
		return n, errorf(ErrBadObjectName, "name longer than %d bytes", maxObjectNameLen)
	}
	dom, rest, ok := strings.Cut(s, ":")
	if !ok {
		return n, errorf(ErrBadObjectName, "%q: no ':' after the domain", s)
	}
	if strings.ContainsAny(dom, "\n") {
		return n, errorf(ErrBadObjectName, "%q: newline in the domain", s)
	}
	n.Domain = dom
	if rest == "" {
		return n, errorf(ErrBadObjectName, "%q: no key properties", s)
	}
	for len(rest) > 0 {
		if rest[0] == '*' && (len(rest) == 1 || rest[1] == ',') {
			if n.PropListPattern {
				return n, errorf(ErrBadObjectName, "%q: '*' twice", s)
			}
			n.PropListPattern = true
			rest = rest[1:]
		} else {
			eq := strings.IndexByte(rest, '=')
			if eq < 0 {
				return n, errorf(ErrBadObjectName, "%q: property without '='", s)
			}
			key := rest[:eq]
			if key == "" || strings.ContainsAny(key, ":,*?\n=") {
				return n, errorf(ErrBadObjectName, "%q: bad key %q", s, key)
			}
			rest = rest[eq+1:]
			var val string
			if len(rest) > 0 && rest[0] == '"' {
				end, err := quotedEnd(rest)
				if err != nil {
					return n, errorf(ErrBadObjectName, "%q: %v", s, err)
				}
				val, rest = rest[:end], rest[end:]
			} else {
				c := strings.IndexByte(rest, ',')
				if c < 0 {
					c = len(rest)
				}
				val, rest = rest[:c], rest[c:]
				if strings.ContainsAny(val, "=:\"\n") {
					return n, errorf(ErrBadObjectName, "%q: bad value %q", s, val)
				}
			}
			if val == "" {
				return n, errorf(ErrBadObjectName, "%q: empty value of %q", s, key)
			}
			if n.get(key) >= 0 {
				return n, errorf(ErrBadObjectName, "%q: key %q twice", s, key)
			}
			n.Props = append(n.Props, Prop{key, val})
		}
		if len(rest) > 0 {
			if rest[0] != ',' || len(rest) == 1 {
				return n, errorf(ErrBadObjectName, "%q: bad property list", s)
			}
			rest = rest[1:]
		}
	}
	return n, nil
}

// quotedEnd returns the length of the quoted value at the start of s.
func quotedEnd(s string) (int, error) {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 >= len(s) || !strings.ContainsRune(`"\n*?`, rune(s[i+1])) {
				return 0, errorf(ErrBadObjectName, "bad escape in quoted value")
			}
			i++
		case '"':
			return i + 1, nil
		case '\n':
			return 0, errorf(ErrBadObjectName, "newline in quoted value")
		}
	}
	return 0, errorf(ErrBadObjectName, "unterminated quoted value")
}

// MustObjectName is ParseObjectName for names known to be valid; it panics
// otherwise, so use it only with constants.
func MustObjectName(s string) ObjectName {
	n, err := ParseObjectName(s)
	if err != nil {
		panic(err)
	}
	return n
}

func (n ObjectName) get(key string) int {
	for i, p := range n.Props {
		if p.Key == key {
			return i
		}
	}
	return -1
}

// Key returns the value of key, or "".
func (n ObjectName) Key(key string) string {
	if i := n.get(key); i >= 0 {
		return n.Props[i].Value
	}
	return ""
}

// IsPattern reports whether n matches other names than itself.
func (n ObjectName) IsPattern() bool {
	return n.PropListPattern || isGlob(n.Domain) || slices.ContainsFunc(n.Props, func(p Prop) bool { return valuePattern(p.Value) })
}

func isGlob(s string) bool { return strings.ContainsAny(s, "*?") }

// valuePattern: an unquoted value with * or ?.
func valuePattern(v string) bool { return !strings.HasPrefix(v, `"`) && isGlob(v) }

// String is the name with its properties in the order given.
func (n ObjectName) String() string { return n.format(n.Props) }

// KeyList is the property list in the order given ("type=Memory,x=y").
func (n ObjectName) KeyList() string { return n.keyList(n.Props) }

// CanonicalKeyList is the property list with keys sorted.
func (n ObjectName) CanonicalKeyList() string { return n.keyList(n.sorted()) }

// Canonical is the canonical name: properties sorted by key.
func (n ObjectName) Canonical() string { return n.format(n.sorted()) }

func (n ObjectName) sorted() []Prop {
	byKey := func(a, b Prop) int { return strings.Compare(a.Key, b.Key) }
	if slices.IsSortedFunc(n.Props, byKey) {
		return n.Props // read only: no copy needed
	}
	ps := slices.Clone(n.Props)
	slices.SortFunc(ps, byKey)
	return ps
}

func (n ObjectName) keyList(ps []Prop) string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(p.Key)
		b.WriteByte('=')
		b.WriteString(p.Value)
	}
	if n.PropListPattern {
		if len(ps) > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('*')
	}
	return b.String()
}

func (n ObjectName) format(ps []Prop) string { return n.Domain + ":" + n.keyList(ps) }

// Name returns the name as canonical (sorted keys) or as given.
func (n ObjectName) Name(canonical bool) string {
	if canonical {
		return n.Canonical()
	}
	return n.String()
}

// Match reports whether the name name matches the pattern n (a non-pattern
// n matches only an equal name, in any key order).
func (n ObjectName) Match(name ObjectName) bool {
	if !globMatch(n.Domain, name.Domain) {
		return false
	}
	if !n.PropListPattern && len(n.Props) != len(name.Props) {
		return false
	}
	for _, p := range n.Props {
		i := name.get(p.Key)
		if i < 0 {
			return false
		}
		v := name.Props[i].Value
		if valuePattern(p.Value) {
			if !globMatch(p.Value, v) {
				return false
			}
		} else if p.Value != v {
			return false
		}
	}
	return true
}

// globMatch matches s against a pattern of * (any run) and ? (one
// character), iteratively: no recursion, linear backtracking.
func globMatch(pat, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pat) && (pat[p] == '?' || pat[p] == s[i]):
			p++
			i++
		case p < len(pat) && pat[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pat) && pat[p] == '*' {
		p++
	}
	return p == len(pat)
}

// Quote makes s usable as a property value: unchanged when it holds none
// of , = : " * ? \ or a newline (and is not empty), else quoted as JMX's
// ObjectName.quote does.
func Quote(s string) string {
	if s != "" && !strings.ContainsAny(s, ",=:\"*?\\\n") {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '*', '?', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Unquote is the inverse of Quote; a value not in quotes is returned as is.
func Unquote(v string) string {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return v
	}
	var b strings.Builder
	for i := 1; i < len(v)-1; i++ {
		if v[i] == '\\' && i+1 < len(v)-1 {
			i++
			if v[i] == 'n' {
				b.WriteByte('\n')
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}
