package logtext

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPlainText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain\ttext\n", "plain\ttext\n"},
		{"\x1b[31merror\x1b[0m: \x1b[1;4mbad\x1b[m\n", "error: bad\n"},
		{"\x1b]0;title\x07ok\n\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\n", "ok\nlink\n"},
		{"windows\r\nlines\r\n", "windows\nlines\n"},
		{"progress 10%\rprogress 50%\rprogress 100%\ndone\n", "progress 100%\ndone\n"},
		{"bell\x07 and \x1b(Bcharset\n", "bell and charset\n"},
		{"trailing\r", "trailing"},
		{"ünïcödé ❯ ok\n", "ünïcödé ❯ ok\n"},
	} {
		if got := Plain(tc.in); got != tc.want {
			t.Errorf("Plain(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCutOutput(t *testing.T) {
	short := strings.Repeat("x", HeadBytes+TailBytes)
	if c := Cut(short); c.Output != short || c.OmittedBytes != 0 || c.OutputBytes != len(short) {
		t.Errorf("a 64 KiB output was cut: %d omitted", c.OmittedBytes)
	}

	// Lines of 100 bytes: the cut falls on line breaks.
	line := strings.Repeat("y", 99) + "\n"
	long := "FIRST\n" + strings.Repeat(line, 2000) + "LAST\n"
	c := Cut(long)
	if c.OutputBytes != len(long) || c.OmittedBytes == 0 {
		t.Fatalf("cut: %d bytes, %d omitted", c.OutputBytes, c.OmittedBytes)
	}
	if !strings.HasPrefix(c.Output, "FIRST\n") || !strings.HasSuffix(c.Output, "LAST\n") {
		t.Errorf("the head or the tail was lost")
	}
	head, rest, ok := strings.Cut(c.Output, "[… vx cut ")
	if !ok {
		t.Fatalf("no marker in %q", c.Output[:200])
	}
	marker, tail, _ := strings.Cut(rest, "\n")
	if len(head) > HeadBytes || len(head) < HeadBytes-snapBytes || !strings.HasSuffix(head, "\n") {
		t.Errorf("head is %d bytes (ends %q)", len(head), head[len(head)-5:])
	}
	if len(tail) > TailBytes || len(tail) < TailBytes-snapBytes || !strings.HasPrefix(tail, "y") {
		t.Errorf("tail is %d bytes", len(tail))
	}
	if len(head)+len(tail)+c.OmittedBytes != len(long) {
		t.Errorf("head %d + tail %d + omitted %d != %d", len(head), len(tail), c.OmittedBytes, len(long))
	}
	if !strings.Contains(marker, "bytes (") || strings.Count(c.Output, "\n") > HeadBytes+TailBytes {
		t.Errorf("marker %q", marker)
	}

	// One long line of multi-byte runes: no rune is split.
	runes := strings.Repeat("é", 100_000)
	c = Cut(runes)
	head, rest, _ = strings.Cut(c.Output, "\n[… vx cut ")
	_, tail, _ = strings.Cut(rest, "\n")
	if strings.Trim(head, "é") != "" || strings.Trim(tail, "é") != "" {
		t.Errorf("a rune was split at the cut")
	}
	if len(head)+len(tail)+c.OmittedBytes != len(runes) {
		t.Errorf("head %d + tail %d + omitted %d != %d", len(head), len(tail), c.OmittedBytes, len(runes))
	}
}

func TestEscapeControlCharacters(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"echo hi\tthere ünï ❯", "echo hi\tthere ünï ❯"},
		{"a\x1b[2Jb", `a\x1b[2Jb`},
		{"\x1b]52;c;aGk=\x07", `\x1b]52;c;aGk=\x07`},
		{"c1 \u009b31m", `c1 \u009b31m`},
		{"raw \x9b byte", `raw \x9b byte`},
		{"two\nlines\r", `two\nlines\r`},
		{"del\x7f", `del\x7f`},
		{"rtl \u202eevil", `rtl \u202eevil`},
	} {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestCutEndsIsCutTo cuts texts known by their ends as CutTo cuts the whole: line breaks and
// multi-byte runes near both cut points, ends of every length around what the cut needs.
func TestCutEndsIsCutTo(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"x", "yy", "\n", "é", "❯", "\t", "line of text\n"}
	for i := range 2000 {
		var b strings.Builder
		for b.Len() < rng.IntN(40_000)+1 {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		limit := rng.IntN(len(s)+64) + 1
		keep := rng.IntN(len(s) + 1)
		e := &Ends{Head: s[:keep], Tail: s[len(s)-keep:], Len: len(s), Newlines: strings.Count(s, "\n")}
		got, ok := CutEnds(e, limit)
		want := CutTo(s, limit)
		if !ok {
			if keep > limit+2*snapBytes+utf8.UTFMax {
				t.Fatalf("case %d: ends of %d bytes refused for a cut to %d of %d", i, keep, limit, len(s))
			}
			continue
		}
		if got != want {
			t.Fatalf("case %d (len %d, limit %d, keep %d):\n got %+v\nwant %+v", i, len(s), limit, keep, got, want)
		}
	}
}

// TestIsPlain: IsPlain says exactly when Plain leaves a text as it is, over every byte value at
// every position of a word.
func TestIsPlain(t *testing.T) {
	for c := range 256 {
		for at := range 17 {
			b := []byte(strings.Repeat("ab\n\té", 4))[:17]
			b[at] = byte(c)
			if got, want := IsPlain(b), Plain(string(b)) == string(b); got != want {
				t.Fatalf("IsPlain(%q) = %v, Plain leaves it as it is: %v", b, got, want)
			}
		}
	}
}
