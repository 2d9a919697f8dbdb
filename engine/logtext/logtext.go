// Package logtext turns what a task printed into what vx answers of it: plain text (ANSI escapes
// and progress-bar rewrites removed) and, when long, its head and tail around a marker saying what
// was cut. `vx last --log`, getTaskLog and getFailures all answer a task's output through it.
// Escape is its counterpart for text vx prints of a config (a command, a description, a path):
// shown, never acted on by a terminal.
package logtext

import (
	"bytes"

	"fmt"
	"github.com/vzn/vx/internal/jsonquote"
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
	t, _ := cutEnds(s, s, len(s), limit, func(head, tail int) int { return strings.Count(s[head:tail], "\n") })
	return t
}

// Ends is a long text known by its ends alone: its first bytes, its last bytes, its length and how
// many line breaks it holds. A reader of a long stored log keeps only these (a few dozen KiB of a
// log of any size) and cuts it with CutEnds as CutTo cuts the whole.
type Ends struct {
	Head, Tail string
	Len        int
	Newlines   int
}

// CutEnds is CutTo of the text e stands for, limit bytes kept; ok is false when e's ends are too
// short to hold what that cut keeps (it needs about limit bytes of each end, and the whole when
// the text fits).
func CutEnds(e *Ends, limit int) (t Text, ok bool) {
	return cutEnds(e.Head, e.Tail, e.Len, limit, func(head, tail int) int {
		return e.Newlines - strings.Count(e.Head[:head], "\n") - strings.Count(e.Tail[len(e.Tail)-(e.Len-tail):], "\n")
	})
}

// cutEnds cuts the text of n bytes that begins with first and ends with last (each the whole,
// for CutTo) to limit bytes; middleLines answers how many line breaks lie between the cut points.
func cutEnds(first, last string, n, limit int, middleLines func(head, tail int) int) (Text, bool) {
	if n <= limit {
		return Text{Output: first, OutputBytes: n}, len(first) == n
	}
	head := limit * HeadBytes / (HeadBytes + TailBytes)
	tailBytes := limit - head
	if head >= len(first) || tailBytes > len(last) {
		return Text{}, false
	}
	snap := min(snapBytes, limit/16)
	if nl := strings.LastIndexByte(first[:head], '\n'); nl >= head-snap {
		head = nl + 1
	} else {
		for head > 0 && !utf8.RuneStart(first[head]) {
			head--
		}
	}
	// s[tail:] of the whole s is end, the last bytes of last.
	end := last[len(last)-tailBytes:]
	if nl := strings.IndexByte(end, '\n'); nl >= 0 && nl < snap {
		end = end[nl+1:]
	} else {
		for len(end) > 0 && !utf8.RuneStart(end[0]) {
			end = end[1:]
		}
	}
	tail := n - len(end)
	var b strings.Builder
	b.Grow(head + len(end) + 160)
	b.WriteString(first[:head])
	if head > 0 && first[head-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "[… vx cut %d bytes (%d lines) from the middle of this output: the first %d and the last %d bytes are kept …]\n",
		tail-head, middleLines(head, tail), head, len(end))
	b.WriteString(end)
	return Text{Output: b.String(), OutputBytes: n, OmittedBytes: tail - head}, true
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

// IsPlain reports whether Plain leaves b as it is: b holds no control character but line feeds
// and tabs, and no DEL. It looks at eight bytes at a time, for a reader of a long log.
func IsPlain(b []byte) bool {
	if bytes.IndexByte(b, 0x7f) >= 0 {
		return false
	}
	for i := 0; ; i++ {
		i += jsonquote.Control(b[i:])
		if i == len(b) {
			return true
		}
		if c := b[i]; c != '\n' && c != '\t' {
			return false
		}
	}
}
