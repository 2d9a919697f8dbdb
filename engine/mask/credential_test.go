package mask

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// splitMatch is MatchStars by its definition: the text before the first star a prefix, the text
// after the last a suffix, and each text between stars found in order between them.
func splitMatch(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	rest := name[len(parts[0]):]
	for _, part := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, part)
		if i < 0 {
			return false
		}
		rest = rest[i+len(part):]
	}
	return strings.HasSuffix(rest, parts[len(parts)-1])
}

// MatchStars answers as its definition does on random patterns and names over a small alphabet,
// stars at either end, doubled and alone included.
func TestMatchStarsAsDefined(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	word := func(alphabet string, n int) string {
		var b strings.Builder
		for range rng.IntN(n) {
			b.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	for range 20000 {
		pattern, name := word("AB_*", 7), word("AB_", 8)
		if got, want := MatchStars(pattern, name), splitMatch(pattern, name); got != want {
			t.Fatalf("MatchStars(%q, %q) = %v, want %v", pattern, name, got, want)
		}
	}
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"*", "", true}, {"A*", "A", true}, {"*_TOKEN", "NPM_TOKEN", true}, {"*_TOKEN", "_TOKENX", false},
		{"A*A", "A", false}, {"A**B", "AB", true}, {"GITHUB_*", "GITHUB_", true}, {"LC_*", "LANG", false},
	} {
		if got := MatchStars(c.pattern, c.name); got != c.want {
			t.Errorf("MatchStars(%q, %q) = %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
}
