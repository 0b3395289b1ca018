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

// cfgMUTFLenRunes is cfgMUTFLen character by character.
func cfgMUTFLenRunes(s string) int {
	n := 0
	for _, r := range s { // invalid bytes come out as utf8.RuneError
		switch {
		case r == 0:
			n += 2
		case r < utf8.RuneSelf:
			n++
		case r < 0x800:
			n += 2
		case r < 0x10000:
			n += 3
		default:
			n += 6 // surrogate pair, 3 bytes per half
		}
	}
	return n
}

// cfgAppendMUTF appends s in Java modified UTF-8 with neither a length
// prefix nor truncation (the body of a serialized String of any length):
// U+0000 is C0 80 and characters above U+FFFF are a surrogate pair of two
// 3-byte units. Invalid UTF-8 bytes are each written as U+FFFD.
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
		switch {
		case r == 0:
			b = append(b, 0xC0, 0x80)
		case r < 0x800:
			b = append(b, byte(0xC0|r>>6), byte(0x80|r&0x3F))
		case r < 0x10000:
			b = cfgAppendUnit3(b, r)
		default:
			r -= 0x10000
			b = cfgAppendUnit3(b, 0xD800+r>>10)
			b = cfgAppendUnit3(b, 0xDC00+r&0x3FF)
		}
	}
	return b
}

// cfgAppendUnit3 appends the 3-byte form of the UTF-16 code unit u.
func cfgAppendUnit3(b []byte, u rune) []byte {
	return append(b, byte(0xE0|u>>12), byte(0x80|(u>>6)&0x3F), byte(0x80|u&0x3F))
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
