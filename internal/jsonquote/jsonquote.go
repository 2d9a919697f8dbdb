// Package jsonquote writes strings as JSON string literals, byte for byte as encoding/json's
// Encoder does with SetEscapeHTML(false) (quote, backslash and control characters escaped, U+2028
// and U+2029 escaped, invalid UTF-8 as \ufffd), but eight bytes at a time where nothing needs
// escaping. A page of a long log is quoted once in its tool answer and again as the answer's text
// content, where encoding/json looks at every byte of it through a table (figures:
// docs/performance.md, "Answers and records").
package jsonquote

import "unicode/utf8"

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// bad8 is non-zero unless each of the eight bytes of w stands for itself in a JSON string and in
// logtext's plain text: printable ASCII other than quote and backslash. Bytes without their high
// bit add without carrying into the next: 0x60 added sets it on a byte of 0x20 and up, 1 added on
// DEL alone, 0x7f added on any byte but zero (of the byte xor quote, xor backslash). The marks are
// and-ed, not branched on, a page being mostly such words; it is written out in one expression so
// that it is inlined.
func bad8(w uint64) uint64 {
	printable := (w + ones*0x60) &^ (w + ones*0x01)
	return w&highs | highs&^(printable&((w^(ones*'"'))+ones*0x7f)&((w^(ones*'\\'))+ones*0x7f))
}

// Control answers the index of b's first byte below 0x20 (a control character), len(b) when it
// has none: a log's lines are scanned for their end eight bytes at a time.
func Control(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := load(b[i:])
		if (w-ones*0x20)&^w&highs != 0 {
			break
		}
	}
	for ; i < len(b) && b[i] >= 0x20; i++ {
	}
	return i
}

// VerbatimByte reports whether the byte c stands for itself (as bad8 tests each byte of a word).
func VerbatimByte(c byte) bool { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' }

// Verbatim answers how many of b's first bytes each encode as themselves, one character, in a
// JSON string: printable ASCII but quote, backslash and DEL.
func Verbatim[S ~string | ~[]byte](b S) int {
	i := 0
	for ; i+32 <= len(b); i += 32 {
		if bad8(load(b[i:]))|bad8(load(b[i+8:]))|bad8(load(b[i+16:]))|bad8(load(b[i+24:])) != 0 {
			break
		}
	}
	for ; i+8 <= len(b); i += 8 {
		if bad8(load(b[i:])) != 0 {
			break
		}
	}
	for ; i < len(b) && VerbatimByte(b[i]); i++ {
	}
	return i
}

// load reads eight bytes of b as a little-endian word.
func load[S ~string | ~[]byte](b S) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

const hex = "0123456789abcdef"

// Append appends s as a JSON string literal, quotes included, exactly as a json.Encoder with
// SetEscapeHTML(false) writes it.
func Append[S ~string | ~[]byte](dst []byte, s S) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if n := Verbatim(s[i:]); n > 0 {
			i += n
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c == 0x7f { // DEL is verbatim in JSON; Verbatim leaves it to this path
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default: // other control characters
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := decodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// decodeRune is utf8.DecodeRune of a string or a byte slice.
func decodeRune[S ~string | ~[]byte](s S) (rune, int) {
	switch v := any(s).(type) {
	case string:
		return utf8.DecodeRuneInString(v)
	case []byte:
		return utf8.DecodeRune(v)
	}
	// A named type of either: convert its first bytes (a rune is at most four).
	b := make([]byte, 0, utf8.UTFMax)
	for i := 0; i < len(s) && i < utf8.UTFMax; i++ {
		b = append(b, s[i])
	}
	return utf8.DecodeRune(b)
}
