package j4p

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// appendJSON writes a JSON-ready tree (see walk.jsonValue); map keys are
// sorted, so the output is deterministic. It stops writing once b grows
// past limit (0 = none) and reports false; it never recurses deeper than
// the tree, which jsonValue's depth cap bounds.
func appendJSON(b []byte, v any, limit int) ([]byte, bool) {
	if limit > 0 && len(b) > limit {
		return b, false
	}
	ok := true
	switch x := v.(type) {
	case nil:
		b = append(b, "null"...)
	case bool:
		b = strconv.AppendBool(b, x)
	case int64:
		b = strconv.AppendInt(b, x, 10)
	case uint64:
		b = strconv.AppendUint(b, x, 10)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			b = appendString(b, strconv.FormatFloat(x, 'g', -1, 64))
		} else {
			b = strconv.AppendFloat(b, x, 'g', -1, 64)
		}
	case json.Number:
		b = append(b, x...)
	case string:
		b = appendString(b, x)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendJSON(b, e, limit); !ok {
				return b, false
			}
		}
		b = append(b, ']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			if b, ok = appendJSON(b, x[k], limit); !ok {
				return b, false
			}
		}
		b = append(b, '}')
	case *ordered:
		b = append(b, '{')
		for i := range x.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, x.keys[i])
			b = append(b, ':')
			if b, ok = appendJSON(b, x.vals[i], limit); !ok {
				return b, false
			}
		}
		b = append(b, '}')
	default:
		w := walk{maxDepth: 8}
		return appendJSON(b, w.jsonValue(x, 0), limit)
	}
	return b, limit <= 0 || len(b) <= limit
}

// ordered is a JSON object written in insertion order (response envelopes).
type ordered struct {
	keys []string
	vals []any
}

func newOrdered(n int) *ordered {
	return &ordered{keys: make([]string, 0, n), vals: make([]any, 0, n)}
}

func (o *ordered) add(k string, v any) *ordered {
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
	return o
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string: control characters, quotes,
// backslashes, U+2028 and U+2029 escaped, invalid UTF-8 as U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			switch r {
			case utf8.RuneError:
				b = append(b, `\ufffd`...)
			case '\u2028':
				b = append(b, `\u2028`...)
			default:
				b = append(b, `\u2029`...)
			}
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
