package bytefrog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Protocol v2 and later carry the configuration as JSON text, written by
// the Code Pulse HQ with JSON-B and sent with writeUTF.

// Indexes of jsonConfigKeys.
const (
	jkBufferMemoryBudget = iota
	jkExclusions
	jkHeartbeatInterval
	jkInclusions
	jkNumDataSenders
	jkQueueRetryCount
	jkRunID
	numJSONKeys
)

// jsonConfigKeys are the JSON property names, in the lexicographic order
// JSON-B writes them.
var jsonConfigKeys = [numJSONKeys]string{
	jkBufferMemoryBudget: "bufferMemoryBudget",
	jkExclusions:         "exclusions",
	jkHeartbeatInterval:  "heartbeatInterval",
	jkInclusions:         "inclusions",
	jkNumDataSenders:     "numDataSenders",
	jkQueueRetryCount:    "queueRetryCount",
	jkRunID:              "runId",
}

// runId is a Java byte: signed on the Java side, while the C# agent reads
// it as unsigned. A reader accepts both ranges.
const (
	jsonMinRunID = math.MinInt8
	jsonMaxRunID = math.MaxUint8
)

// AppendJSONConfig appends c as the v2+ JSON payload, without the u16
// length prefix, in the Code Pulse HQ's form: camelCase keys in
// lexicographic order, no spaces, lists as arrays of strings (a nil slice
// as []), for example
//
//	{"bufferMemoryBudget":25600,"exclusions":[".*"],"heartbeatInterval":1000,"inclusions":["^com/example/[^/]+$"],"numDataSenders":1,"queueRetryCount":5,"runId":0}
//
// runId is written as the Java byte the HQ holds, so 128–255 come out as
// negative numbers. Strings are escaped as JSON-B escapes them (quote,
// backslash, and control characters); other characters up to U+FFFF are
// written as they are, characters above U+FFFF as a \u surrogate pair
// escape, and invalid UTF-8 bytes as U+FFFD. The text therefore holds
// neither NUL nor 4-byte sequences, so its bytes are the same in UTF-8
// and in modified UTF-8. If it is longer than MaxStringLen bytes, the
// limit of writeUTF, AppendJSONConfig returns b unchanged and an error
// wrapping ErrTooLarge. It does not allocate when b has room.
func AppendJSONConfig(b []byte, c *Config) ([]byte, error) {
	start := len(b)
	for k := range jsonConfigKeys {
		if k == 0 {
			b = append(b, '{', '"')
		} else {
			b = append(b, ',', '"')
		}
		b = append(b, jsonConfigKeys[k]...)
		b = append(b, '"', ':')
		switch k {
		case jkBufferMemoryBudget:
			b = strconv.AppendInt(b, int64(c.BufferMemoryBudget), 10)
		case jkExclusions:
			b = appendJSONList(b, c.Exclusions)
		case jkHeartbeatInterval:
			b = strconv.AppendInt(b, int64(c.HeartbeatInterval), 10)
		case jkInclusions:
			b = appendJSONList(b, c.Inclusions)
		case jkNumDataSenders:
			b = strconv.AppendInt(b, int64(c.NumDataSenders), 10)
		case jkQueueRetryCount:
			b = strconv.AppendInt(b, int64(c.QueueRetryCount), 10)
		case jkRunID:
			b = strconv.AppendInt(b, int64(int8(c.RunID)), 10)
		}
	}
	b = append(b, '}')
	// Spec §4.3: the whole JSON must be ≤ 65535 encoded bytes.
	if n := len(b) - start; n > MaxStringLen {
		return b[:start], fmt.Errorf("%w: JSON configuration of %d bytes (max %d)", ErrTooLarge, n, MaxStringLen)
	}
	return b, nil
}

// appendJSONList appends l as a JSON array of strings.
func appendJSONList(b []byte, l []string) []byte {
	b = append(b, '[')
	for i, s := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

// appendJSONString appends s as a JSON string literal (see AppendJSONConfig).
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, w := utf8.DecodeRuneInString(s[i:])
			i += w
			if r > 0xFFFF {
				hi, lo := utf16.EncodeRune(r)
				b = appendJSONUnit(appendJSONUnit(b, hi), lo)
			} else {
				b = utf8.AppendRune(b, r) // utf8.RuneError for an invalid byte
			}
			continue
		}
		i++
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			if c < ' ' {
				b = appendJSONUnit(b, rune(c))
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"')
}

// appendJSONUnit appends the escape \uXXXX (lower-case hex) of u ≤ 0xFFFF.
func appendJSONUnit(b []byte, u rune) []byte {
	const hex = "0123456789abcdef"
	return append(b, '\\', 'u', hex[u>>12&0xF], hex[u>>8&0xF], hex[u>>4&0xF], hex[u&0xF])
}

// ParseJSONConfig parses a v2+ Configuration payload: the JSON text, in
// modified UTF-8, without its u16 length prefix.
//
// Keys are matched case-insensitively (ASCII) in any order; unknown keys
// are ignored; a key given twice is an error. A missing key keeps its
// DefaultConfig value (RunID 0, empty lists); a null or empty list yields a
// nil slice. Numbers must be integers in the range of their Java type
// (runId: −128…255, the sign of a Java byte or the C# agent's unsigned
// byte); strings are the list elements. Any other input, and anything
// after the object, fails with an error wrapping ErrBadConfig (and also
// ErrInvalidUTF for malformed modified UTF-8).
func ParseJSONConfig(b []byte) (Config, error) {
	if err := ValidUTF(b); err != nil {
		return Config{}, fmt.Errorf("%w: JSON text: %w", ErrBadConfig, err)
	}
	p := jsonParser{dec: json.NewDecoder(bytes.NewReader(AppendString(nil, b)))}
	p.dec.UseNumber()
	c, err := p.config()
	if err != nil {
		return Config{}, err
	}
	return c, nil
}

// jsonParser reads a configuration object token by token.
type jsonParser struct {
	dec *json.Decoder
}

// token returns the next token; the end of the input is an error.
func (p *jsonParser) token() (json.Token, error) {
	t, err := p.dec.Token()
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, fmt.Errorf("%w: JSON: %w", ErrBadConfig, err)
	}
	return t, nil
}

// delim reads the next token, which must be the delimiter want.
func (p *jsonParser) delim(want json.Delim, what string) error {
	t, err := p.token()
	if err != nil {
		return err
	}
	if d, ok := t.(json.Delim); !ok || d != want {
		return cfgErrorf("JSON: %s is %v, want %v", what, jsonTokenString(t), want)
	}
	return nil
}

func (p *jsonParser) config() (Config, error) {
	c := DefaultConfig()
	if err := p.delim('{', "the configuration"); err != nil {
		return c, err
	}
	var seen [numJSONKeys]bool
	for p.dec.More() {
		t, err := p.token()
		if err != nil {
			return c, err
		}
		key, _ := t.(string) // the decoder returns object keys as strings
		k := jsonKey(key)
		if k < 0 {
			var skip json.RawMessage
			if err := p.dec.Decode(&skip); err != nil {
				return c, fmt.Errorf("%w: JSON: %w", ErrBadConfig, err)
			}
			continue
		}
		if seen[k] {
			return c, cfgErrorf("JSON: key %q given twice", jsonConfigKeys[k])
		}
		seen[k] = true
		if err := p.value(&c, k); err != nil {
			return c, err
		}
	}
	if err := p.delim('}', "the end of the configuration"); err != nil {
		return c, err
	}
	if t, err := p.dec.Token(); err != io.EOF {
		if err != nil {
			return c, fmt.Errorf("%w: JSON: %w", ErrBadConfig, err)
		}
		return c, cfgErrorf("JSON: %s after the configuration object", jsonTokenString(t))
	}
	return c, nil
}

// value reads the value of key k into c.
func (p *jsonParser) value(c *Config, k int) error {
	var err error
	var v int64
	switch k {
	case jkExclusions:
		c.Exclusions, err = p.list(k)
	case jkInclusions:
		c.Inclusions, err = p.list(k)
	case jkRunID:
		v, err = p.integer(k, jsonMinRunID, jsonMaxRunID)
		c.RunID = uint8(v)
	default:
		v, err = p.integer(k, math.MinInt32, math.MaxInt32)
		switch k {
		case jkBufferMemoryBudget:
			c.BufferMemoryBudget = int32(v)
		case jkHeartbeatInterval:
			c.HeartbeatInterval = int32(v)
		case jkNumDataSenders:
			c.NumDataSenders = int32(v)
		case jkQueueRetryCount:
			c.QueueRetryCount = int32(v)
		}
	}
	return err
}

// integer reads an integer literal in [lo, hi].
func (p *jsonParser) integer(k int, lo, hi int64) (int64, error) {
	t, err := p.token()
	if err != nil {
		return 0, err
	}
	n, ok := t.(json.Number)
	if !ok {
		return 0, cfgErrorf("JSON: %s is %s, want an integer", jsonConfigKeys[k], jsonTokenString(t))
	}
	v, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, cfgErrorf("JSON: %s is %s, want an integer", jsonConfigKeys[k], n)
	}
	if err != nil || v < lo || v > hi {
		return 0, cfgErrorf("JSON: %s %s out of range [%d, %d]", jsonConfigKeys[k], n, lo, hi)
	}
	return v, nil
}

// list reads null or an array of strings.
func (p *jsonParser) list(k int) ([]string, error) {
	t, err := p.token()
	if err != nil || t == nil {
		return nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '[' {
		return nil, cfgErrorf("JSON: %s is %s, want an array of strings", jsonConfigKeys[k], jsonTokenString(t))
	}
	var l []string
	for p.dec.More() {
		t, err := p.token()
		if err != nil {
			return nil, err
		}
		s, ok := t.(string)
		if !ok {
			return nil, cfgErrorf("JSON: element %d of %s is %s, want a string", len(l), jsonConfigKeys[k], jsonTokenString(t))
		}
		l = append(l, s)
	}
	return l, p.delim(']', "the end of "+jsonConfigKeys[k])
}

// jsonKey returns the index of key in jsonConfigKeys, compared without
// regard to ASCII case, or -1.
func jsonKey(key string) int {
	for k, name := range jsonConfigKeys {
		if cfgEqualFoldASCII(key, name) {
			return k
		}
	}
	return -1
}

// cfgEqualFoldASCII reports whether a and b are equal under ASCII case
// folding; other bytes must match exactly.
func cfgEqualFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// jsonTokenString describes a token in an error message.
func jsonTokenString(t json.Token) string {
	switch v := t.(type) {
	case nil:
		return "null"
	case json.Delim:
		return string(v)
	case string:
		return strconv.Quote(v)
	case json.Number:
		return string(v)
	case bool:
		return strconv.FormatBool(v)
	}
	return fmt.Sprint(t)
}
