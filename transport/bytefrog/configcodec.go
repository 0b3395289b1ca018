package bytefrog

import (
	"fmt"
	"unicode/utf8"
)

// Helpers shared by the two Configuration payload codecs (javaser.go for
// protocol v1, jsonconfig.go for v2 and later).

// cfgMUTFLen returns the size of s in Java modified UTF-8, without a length
// prefix and without any limit. Bytes of s that are not valid UTF-8 count
// as U+FFFD, as cfgAppendMUTF writes them.
func cfgMUTFLen(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == 0 || c >= utf8.RuneSelf {
			return i + cfgMUTFLenRunes(s[i:])
		}
	}
	return len(s) // plain ASCII
}

// cfgMUTFLenRunes is cfgMUTFLen character by character; invalid bytes come
// out of the range loop as utf8.RuneError.
func cfgMUTFLenRunes(s string) int {
	n := 0
	for _, r := range s {
		n += mutfRuneLen(r)
	}
	return n
}

// cfgAppendMUTF appends s in Java modified UTF-8 with neither a length
// prefix nor truncation (the body of a serialized String of any length).
// Invalid UTF-8 bytes are each written as U+FFFD.
func cfgAppendMUTF(b []byte, s string) []byte {
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != 0 && s[i] < utf8.RuneSelf {
			i++
		}
		b = append(b, s[:i]...) // a run of plain ASCII
		if i == len(s) {
			break
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		s = s[i+w:]
		b = appendMUTFRune(b, r)
	}
	return b
}

// cfgString validates mutf as Java modified UTF-8 and converts it to a Go
// string (see [String]: pairs joined, a lone surrogate becomes U+FFFD).
func cfgString(mutf []byte) (string, error) {
	if err := ValidUTF(mutf); err != nil {
		return "", err
	}
	return String(mutf), nil
}

// cfgErrorf returns an error that wraps ErrBadConfig.
func cfgErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadConfig, fmt.Sprintf(format, args...))
}
