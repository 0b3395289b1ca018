package bytefrog

import (
	"encoding/binary"
	"strings"
	"unicode/utf8"
)

// Java modified UTF-8, as written by java.io.DataOutputStream.writeUTF:
// U+0000 is C0 80, U+0001–U+FFFF use the standard 1-, 2- and 3-byte forms
// (a surrogate code unit is encoded like any other), and characters above
// U+FFFF are a UTF-16 surrogate pair, each half in 3 bytes. The 4-byte form
// never appears.

const (
	surrSelf  = 0x10000 // first rune that needs a surrogate pair
	surr1     = 0xD800  // first high surrogate
	surr2     = 0xDC00  // first low surrogate
	surr3     = 0xE000  // first code unit after the surrogates
	pairSize  = 6       // encoded size of a surrogate pair
	unitSize3 = 3       // encoded size of one 3-byte code unit
	nulSize   = 2       // encoded size of U+0000 (C0 80)

	// Lead bytes of the two-byte NUL and of an encoded surrogate.
	nulLead  = 0xC0
	nulTrail = 0x80
	surrLead = 0xED
)

// asciiMask has the high bit of every byte of a uint64 set.
const asciiMask = 0x8080808080808080

// plainASCII reports whether every byte of s is in 0x01–0x7F, the bytes that
// modified UTF-8 and UTF-8 both encode as themselves.
func plainASCII[T string | []byte](s T) bool {
	for len(s) >= 8 {
		w := s[:8]
		v := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		// High bit set in some byte, or some byte zero.
		if v&asciiMask != 0 || (v-0x0101010101010101)&^v&asciiMask != 0 {
			return false
		}
		s = s[8:]
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == 0 || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// plainASCIIBytes is plainASCII for the decoder's byte slices: one load a
// word, and one test at the end instead of one a word. A tail shorter than
// a word is read as the last word of b, overlapping bytes already seen.
func plainASCIIBytes(b []byte) bool {
	n := len(b)
	if n < 8 {
		return plainASCII(b)
	}
	var acc uint64
	for i := 0; i+8 <= n; i += 8 {
		v := binary.LittleEndian.Uint64(b[i:])
		acc |= v | (v-0x0101010101010101)&^v // high bit, or a zero byte
	}
	v := binary.LittleEndian.Uint64(b[n-8:])
	acc |= v | (v-0x0101010101010101)&^v
	return acc&asciiMask == 0
}

// asciiBits folds the bytes of b into a word whose asciiMask bits are all
// clear exactly when b is plain ASCII (bytes 0x01–0x7F): a byte's high bit,
// and a high bit for a zero byte. The decoder's check of a marker's two
// strings ORs theirs and tests once.
func asciiBits(b []byte) uint64 {
	const ones = 0x0101010101010101
	n := len(b)
	switch {
	case n >= 8:
		// Word by word; the tail as the last word of b, overlapping bytes
		// already seen.
		v := binary.LittleEndian.Uint64(b[n-8:])
		acc := v | (v-ones)&^v
		for i := 0; i < n-8; i += 8 {
			v := binary.LittleEndian.Uint64(b[i:])
			acc |= v | (v-ones)&^v
		}
		return acc
	case n >= 4:
		// Two words of four, overlapping when n < 8.
		v := uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint32(b[n-4:]))<<32
		return v | (v-ones)&^v
	}
	var acc uint64
	for _, c := range b {
		x := uint64(c)
		acc |= x | (x-1)&^x // 0 wraps to all ones
	}
	return acc
}

// mutfRuneLen is the encoded size of r in modified UTF-8.
func mutfRuneLen(r rune) int {
	switch {
	case r == 0:
		return nulSize
	case r < 0x80:
		return 1
	case r < 0x800:
		return 2
	case r < surrSelf:
		return unitSize3
	}
	return pairSize
}

// appendUnit3 appends the 3-byte form of the UTF-16 code unit u.
func appendUnit3(b []byte, u rune) []byte {
	return append(b, byte(0xE0|u>>12), byte(0x80|(u>>6)&0x3F), byte(0x80|u&0x3F))
}

// appendMUTFRune appends r in modified UTF-8. r must be a valid rune other
// than a surrogate, or utf8.RuneError.
func appendMUTFRune(b []byte, r rune) []byte {
	switch {
	case r == 0:
		return append(b, nulLead, nulTrail)
	case r < 0x80:
		return append(b, byte(r))
	case r < 0x800:
		return append(b, byte(0xC0|r>>6), byte(0x80|r&0x3F))
	case r < surrSelf:
		return appendUnit3(b, r)
	}
	r -= surrSelf
	b = appendUnit3(b, surr1+(r>>10)&0x3FF)
	return appendUnit3(b, surr2+r&0x3FF)
}

// AppendUTF appends s as DataOutputStream.writeUTF does: a u16 count of
// encoded bytes, then s in Java modified UTF-8. Bytes of s that are not
// valid UTF-8 are each encoded as U+FFFD. A string that would need more
// than MaxStringLen bytes is truncated on a character boundary; a surrogate
// pair is never split.
func AppendUTF(b []byte, s string) []byte {
	if len(s) <= MaxStringLen && plainASCII(s) {
		b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
		return append(b, s...)
	}
	start := len(b)
	b = append(b, 0, 0)
	n := 0 // encoded bytes so far
	for i := 0; i < len(s); {
		if c := s[i]; c != 0 && c < utf8.RuneSelf {
			j := i + 1
			for j < len(s) && s[j] != 0 && s[j] < utf8.RuneSelf {
				j++
			}
			j = min(j, i+MaxStringLen-n)
			b = append(b, s[i:j]...)
			n += j - i
			i = j
			if n == MaxStringLen {
				break
			}
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:]) // invalid bytes: RuneError, 1
		rl := mutfRuneLen(r)
		if n+rl > MaxStringLen {
			break
		}
		b = appendMUTFRune(b, r)
		n += rl
		i += w
	}
	binary.BigEndian.PutUint16(b[start:], uint16(n))
	return b
}

// AppendUTFBytes appends mutf, which is already modified UTF-8 (as returned
// by JNI GetStringUTFRegion), with its u16 length prefix. Input longer than
// MaxStringLen bytes is cut on a character boundary, never inside a
// surrogate pair. mutf is not otherwise checked.
func AppendUTFBytes(b []byte, mutf []byte) []byte {
	if len(mutf) > MaxStringLen {
		mutf = mutf[:truncPoint(mutf, MaxStringLen)]
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(mutf)))
	return append(b, mutf...)
}

// truncPoint returns the largest cut ≤ max that does not split a character
// or a surrogate pair of mutf (len(mutf) > max). Invalid input is cut at max
// when no character start is found within one character's reach.
func truncPoint(mutf []byte, max int) int {
	cut := max
	for k := 0; k < unitSize3 && cut > 0 && mutf[cut]&0xC0 == 0x80; k++ {
		cut--
	}
	if mutf[cut]&0xC0 == 0x80 { // no character start nearby: not modified UTF-8
		return max
	}
	// The character before the cut is a high surrogate and the one after it
	// a low surrogate: keep the pair together by dropping both.
	if cut >= unitSize3 && isHighSurrogate(mutf[cut-unitSize3:]) && isLowSurrogate(mutf[cut:]) {
		cut -= unitSize3
	}
	return cut
}

// isHighSurrogate reports whether b starts with an encoded D800–DBFF.
func isHighSurrogate(b []byte) bool {
	return len(b) >= unitSize3 && b[0] == surrLead && b[1]&0xF0 == 0xA0 && b[2]&0xC0 == 0x80
}

// isLowSurrogate reports whether b starts with an encoded DC00–DFFF.
func isLowSurrogate(b []byte) bool {
	return len(b) >= unitSize3 && b[0] == surrLead && b[1]&0xF0 == 0xB0 && b[2]&0xC0 == 0x80
}

// ValidUTF reports whether b is well-formed Java modified UTF-8: it returns
// ErrInvalidUTF for a raw 00 byte, a 4-byte (F0…) or other invalid lead
// byte, a stray continuation byte, a truncated sequence, or an overlong form
// other than C0 80. Encoded surrogates are accepted, paired or not.
func ValidUTF(b []byte) error {
	if invalidUTFAt(b) >= 0 {
		return ErrInvalidUTF
	}
	return nil
}

// invalidUTFAt returns the offset of the first invalid sequence in b, or -1
// if b is valid modified UTF-8.
func invalidUTFAt(b []byte) int {
	if plainASCIIBytes(b) {
		return -1
	}
	for i := 0; i < len(b); {
		if c := b[i]; c != 0 && c < utf8.RuneSelf {
			i++
			continue
		}
		_, w := decodeMUTF(b[i:])
		if w == 0 {
			return i
		}
		i += w
	}
	return -1
}

// decodeMUTF decodes the first character of b (len(b) > 0). It returns the
// code unit or rune and its encoded size, which is 0 if b does not start
// with a valid sequence. A surrogate pair counts as one character of
// pairSize bytes; a lone surrogate is returned as the surrogate itself.
func decodeMUTF(b []byte) (rune, int) {
	c := b[0]
	switch {
	case c == 0:
		return 0, 0
	case c < 0x80:
		return rune(c), 1
	case c < 0xC0: // continuation byte
		return 0, 0
	case c < 0xE0:
		if len(b) < 2 || b[1]&0xC0 != 0x80 {
			return 0, 0
		}
		r := rune(c&0x1F)<<6 | rune(b[1]&0x3F)
		if r < 0x80 && r != 0 { // overlong; only C0 80 is allowed
			return 0, 0
		}
		return r, 2
	case c < 0xF0:
		if len(b) < unitSize3 || b[1]&0xC0 != 0x80 || b[2]&0xC0 != 0x80 {
			return 0, 0
		}
		r := rune(c&0x0F)<<12 | rune(b[1]&0x3F)<<6 | rune(b[2]&0x3F)
		if r < 0x800 { // overlong
			return 0, 0
		}
		if r >= surr1 && r < surr2 && isLowSurrogate(b[unitSize3:]) {
			lo := rune(b[4]&0x3F)<<6 | rune(b[5]&0x3F) | 0xD000
			return surrSelf + (r-surr1)<<10 + (lo - surr2), pairSize
		}
		return r, unitSize3
	}
	return 0, 0
}

// String converts modified UTF-8 to a Go string: C0 80 becomes U+0000, a
// surrogate pair becomes one rune, and a lone surrogate becomes U+FFFD.
// Invalid input is converted as well, each offending byte becoming U+FFFD
// (a raw 00 stays U+0000). Input that is already plain ASCII, or UTF-8
// without any form that differs, costs only the string allocation.
func String(mutf []byte) string {
	if sameAsUTF8(mutf) {
		return string(mutf)
	}
	var sb strings.Builder
	sb.Grow(len(mutf)) // valid input never grows
	for i := 0; i < len(mutf); {
		if j := asciiRun(mutf, i); j > i {
			sb.Write(mutf[i:j])
			i = j
			continue
		}
		r, w := decodeForGo(mutf[i:])
		sb.WriteRune(r)
		i += w
	}
	return sb.String()
}

// asciiRun returns the end of the run of bytes 01–7F that starts at i.
func asciiRun(b []byte, i int) int {
	for i < len(b) && b[i] != 0 && b[i] < utf8.RuneSelf {
		i++
	}
	return i
}

// AppendString appends the UTF-8 form of mutf to dst, converting as
// [String] does.
func AppendString(dst, mutf []byte) []byte {
	if sameAsUTF8(mutf) {
		return append(dst, mutf...)
	}
	for i := 0; i < len(mutf); {
		if j := asciiRun(mutf, i); j > i {
			dst = append(dst, mutf[i:j]...)
			i = j
			continue
		}
		r, w := decodeForGo(mutf[i:])
		dst = utf8.AppendRune(dst, r)
		i += w
	}
	return dst
}

// sameAsUTF8 reports whether converting b to UTF-8 leaves it unchanged:
// b is valid UTF-8 and has no 4-byte forms (those are invalid in modified
// UTF-8 and convert to U+FFFD). Go's UTF-8 check already rejects C0 80 and
// encoded surrogates.
func sameAsUTF8(b []byte) bool {
	if plainASCIIBytes(b) {
		return true
	}
	for _, c := range b {
		if c >= 0xF0 {
			return false
		}
	}
	return utf8.Valid(b)
}

// decodeForGo decodes one character of b (len(b) > 0) for conversion to a
// Go string: lone surrogates and invalid bytes give U+FFFD, and the size is
// always at least 1. A raw 00 byte is passed through as U+0000.
func decodeForGo(b []byte) (rune, int) {
	if b[0] == 0 {
		return 0, 1
	}
	r, w := decodeMUTF(b)
	if w == 0 {
		return utf8.RuneError, 1
	}
	if r >= surr1 && r < surr3 {
		return utf8.RuneError, w
	}
	return r, w
}

// mutfFromUTF8 rewrites the two forms in which UTF-8 differs from modified
// UTF-8, a raw 00 byte and a 4-byte sequence, appending b to dst. Other
// bytes, including sequences that are already modified UTF-8 such as
// encoded surrogates, are copied unchanged.
func mutfFromUTF8(dst, b []byte) []byte {
	for i := 0; i < len(b); {
		c := b[i]
		if c == 0 {
			dst = append(dst, nulLead, nulTrail)
			i++
			continue
		}
		if c >= 0xF0 {
			if r, w := utf8.DecodeRune(b[i:]); w == 4 {
				dst = appendMUTFRune(dst, r)
				i += w
				continue
			}
		}
		dst = append(dst, c)
		i++
	}
	return dst
}

// needsMUTF reports whether mutfFromUTF8 would change b.
func needsMUTF(b []byte) bool {
	for _, c := range b {
		if c == 0 || c >= 0xF0 {
			return true
		}
	}
	return false
}
