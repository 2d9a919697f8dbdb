package logtext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Escape makes text that came from a config, a file name or a command line safe to print on a
// terminal: every control character (C0 but tab, DEL, C1), every bidirectional override and
// every byte that is not UTF-8 is written as a Go escape (`\x1b`, `\u009b`, `\u202e`), so that a
// task's command or description can neither clear the screen, set the clipboard (OSC 52) nor
// reorder what a reader sees. Text without any of these is returned as it is. Human renderers
// escape data first and add their own colour after; JSON documents and a task's own output are
// never escaped.
func Escape(s string) string {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if unsafeRune(r, size) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80 && unsafeRune(r, size):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r, size):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// unsafeRune reports whether a terminal would act on r rather than show it: r is the rune
// decoded from size bytes.
func unsafeRune(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size == 1:
		return true // not UTF-8: a terminal may read a lone 0x9b as CSI
	case r == '\t':
		return false
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true // bidirectional embeddings, overrides, isolates and marks
	case r == 0x2028, r == 0x2029:
		return true // line and paragraph separators
	}
	return false
}

// EscapeAll is Escape of each string of list, for renderers that join lists.
func EscapeAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = Escape(s)
	}
	return out
}
