package jsonquote

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// marshal is what encoding/json writes of s, HTML characters unescaped.
func marshal(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(buf.String(), "\n")
}

// Append writes what encoding/json writes, for strings of every kind of byte at every alignment.
func TestAppendIsMarshal(t *testing.T) {
	cases := []string{
		"", "x", "plain text of some length, past eight bytes",
		`"quoted" \back\slash`, "<a href='x'>&amp;</a>", "tab\there\nnewline\rcr\x00nul\x1besc\x7fdel",
		"héllo wörld ✓ 日本語", "\u2028line\u2029para", "bad \xff utf8 \xc3 cut", "\xed\xa0\x80 surrogate",
		strings.Repeat("0123456789abcdef<&>", 100),
	}
	for _, c := range cases {
		for pad := range 9 {
			s := strings.Repeat("y", pad) + c
			want := marshal(s)
			if got := Append(nil, s); string(got) != want {
				t.Errorf("Append(%q) = %s, want %s", s, got, want)
			}
			if got := Append(nil, []byte(s)); string(got) != want {
				t.Errorf("Append([]byte(%q)) = %s, want %s", s, got, want)
			}
		}
	}
}

// Every byte value, alone and among verbatim ones, is quoted as encoding/json quotes it, and
// Verbatim stops at exactly the first byte that is not printable ASCII without a JSON escape.
func TestEveryByte(t *testing.T) {
	for c := range 256 {
		for pad := range 9 {
			s := strings.Repeat("a", pad) + string(rune(0)) + "tail"
			b := []byte(s)
			b[pad] = byte(c)
			s = string(b)
			want := marshal(s)
			if got := Append(nil, s); string(got) != want {
				t.Errorf("byte %#x after %d: Append = %s, want %s", c, pad, got, want)
			}
			n := Verbatim(s)
			if wantN := pad + 1 + 4; n != wantN && VerbatimByte(byte(c)) {
				t.Errorf("byte %#x after %d: Verbatim = %d, want %d", c, pad, n, wantN)
			} else if !VerbatimByte(byte(c)) && n != pad {
				t.Errorf("byte %#x after %d: Verbatim = %d, want %d", c, pad, n, pad)
			}
		}
	}
}

func FuzzAppend(f *testing.F) {
	f.Add("hello <world> \"x\" \u2028 \xff")
	f.Fuzz(func(t *testing.T, s string) {
		want := marshal(s)
		if got := Append(nil, s); string(got) != want {
			t.Fatalf("Append(%q) = %s, want %s", s, got, want)
		}
	})
}

// BenchmarkAppend40kB quotes a 40 kB page of plain text, as encoding/json (Marshal) and Append.
func BenchmarkAppend40kB(b *testing.B) {
	page := strings.Repeat("ok   src/app.test.ts (12 tests) 41ms\n", 40_000/38)
	b.Run("Marshal", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		for b.Loop() {
			_, _ = json.Marshal(page)
		}
	})
	xs := strings.Repeat("x", 40_000)
	b.Run("MarshalX", func(b *testing.B) {
		b.SetBytes(int64(len(xs)))
		for b.Loop() {
			_, _ = json.Marshal(xs)
		}
	})
	b.Run("AppendX", func(b *testing.B) {
		b.SetBytes(int64(len(xs)))
		buf := make([]byte, 0, 64<<10)
		for b.Loop() {
			buf = Append(buf[:0], xs)
		}
	})
	b.Run("Append", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		buf := make([]byte, 0, 64<<10)
		for b.Loop() {
			buf = Append(buf[:0], page)
		}
	})
}

// Control finds the first byte below 0x20 at every alignment, among bytes of every other value.
func TestControl(t *testing.T) {
	for c := range 256 {
		for at := range 20 {
			b := []byte(strings.Repeat("\xff a\x7f", 5))
			b[at] = byte(c)
			want := len(b)
			if c < 0x20 {
				want = at
			}
			if got := Control(b); got != want {
				t.Errorf("byte %#x at %d: Control = %d, want %d", c, at, got, want)
			}
		}
	}
}
