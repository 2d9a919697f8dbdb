// Package logtext turns what a task printed into what vx answers of it: plain text (ANSI escapes
// and progress-bar rewrites removed) and, when long, its head and tail around a marker saying what
// was cut. `vx last --log`, getTaskLog and getFailures all answer a task's output through it.
// Escape is its counterpart for text vx prints of a config (a command, a description, a path):
// shown, never acted on by a terminal.
package logtext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// How much of a long output Cut keeps: the head says what started failing, the tail holds the
// error and the summary a tool prints last.
const (
	HeadBytes = 8 << 10
	TailBytes = 56 << 10
	// snapBytes is how far a cut point moves back (head) or on (tail) to fall on a line break,
	// so that the agent reads whole lines.
	snapBytes = 1 << 10
)

// Text is a task's output as vx answers it: plain text, long output cut in the middle, and how long
// the whole was. Its JSON fields are those of `vx last --log --format json`, getTaskLog and
// getFailures.
type Text struct {
	// Output is the text kept: all of it, or its first 8 KiB and last 56 KiB around a marker line
	// saying how much was cut.
	Output string `json:"output"`
	// OutputBytes is the length in bytes of the whole plain-text output, before any cut.
	OutputBytes int `json:"outputBytes"`
	// OmittedBytes is how many bytes were cut from the middle (0: Output is whole).
	OmittedBytes int `json:"omittedBytes"`
}

// Cut keeps the first HeadBytes and the last TailBytes of s (snapped to line breaks nearby, never
// splitting a UTF-8 sequence) and puts a marker line where the rest was.
func Cut(s string) Text {
	return CutTo(s, HeadBytes+TailBytes)
}

// CutTo is Cut for a budget of limit bytes kept, head and tail in Cut's proportion (1:7): an
// answer that holds several outputs gives each a share.
func CutTo(s string, limit int) Text {
	if len(s) <= limit {
		return Text{Output: s, OutputBytes: len(s)}
	}
	head := limit * HeadBytes / (HeadBytes + TailBytes)
	tailBytes := limit - head
	snap := min(snapBytes, limit/16)
	if nl := strings.LastIndexByte(s[:head], '\n'); nl >= head-snap {
		head = nl + 1
	} else {
		for head > 0 && !utf8.RuneStart(s[head]) {
			head--
		}
	}
	tail := len(s) - tailBytes
	if nl := strings.IndexByte(s[tail:], '\n'); nl >= 0 && nl < snap {
		tail += nl + 1
	} else {
		for tail < len(s) && !utf8.RuneStart(s[tail]) {
			tail++
		}
	}
	omitted := s[head:tail]
	var b strings.Builder
	b.Grow(head + (len(s) - tail) + 160)
	b.WriteString(s[:head])
	if head > 0 && s[head-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "[… vx cut %d bytes (%d lines) from the middle of this output: the first %d and the last %d bytes are kept …]\n",
		len(omitted), strings.Count(omitted, "\n"), head, len(s)-tail)
	b.WriteString(s[tail:])
	return Text{Output: b.String(), OutputBytes: len(s), OmittedBytes: len(omitted)}
}

// Plain turns what a task printed into what a reader of a terminal would have seen, as plain
// text: ANSI escape sequences (colours, cursor moves, OSC titles and links) are removed, a line
// rewritten with carriage returns (a progress bar) keeps only its last state, CRLF becomes LF, and
// other control characters but tabs are dropped. Text without any of these is returned as it is.
func Plain(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	b := make([]byte, 0, len(s))
	lineStart := 0 // where the current line begins in b, for carriage returns
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b:
			i = skipEscape(s, i)
			continue
		case c == '\r':
			if i+1 < len(s) && s[i+1] != '\n' {
				// A bare carriage return: what follows overwrites the line. Keep only the last state.
				b = b[:lineStart]
			}
			// CRLF: the \n ends the line.
		case c == '\n':
			b = append(b, c)
			lineStart = len(b)
		case c == '\t':
			b = append(b, c)
		case c < 0x20 || c == 0x7f:
			// BEL, backspace and the like: nothing a reader sees.
		default:
			b = append(b, c)
		}
		i++
	}
	return string(b)
}

// skipEscape answers the index just past the escape sequence starting at s[i] (an ESC).
func skipEscape(s string, i int) int {
	i++ // ESC
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[': // CSI: parameters and intermediates, then one final byte in 0x40..0x7e
		for i++; i < len(s); i++ {
			if c := s[i]; c >= 0x40 && c <= 0x7e {
				return i + 1
			}
		}
		return i
	case ']', 'P', '_', '^', 'X': // OSC, DCS, APC, PM, SOS: up to BEL or ST (ESC \)
		for i++; i < len(s); i++ {
			if s[i] == 0x07 {
				return i + 1
			}
			if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		}
		return i
	case '(', ')', '*', '+', '#', '%': // a character set designation: one more byte
		return min(i+2, len(s))
	default: // a two-byte escape (ESC 7, ESC M, ESC =, …)
		return i + 1
	}
}
