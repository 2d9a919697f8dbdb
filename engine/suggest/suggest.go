// Package suggest finds, for a word vx does not know (a verb, a flag, a task, a project), the
// known word it most likely meant, for a "did you mean" hint.
package suggest

import (
	"slices"
	"strings"
)

// Closest answers the candidate word most likely meant: the one fewest edits away (a letter
// added, dropped, changed, or two swapped), within a third of the word's length (at least one
// edit, at most three), or else the one that the word starts with or that starts with it (at
// least three letters in common, as --dry in --dry-run). Case is ignored. ok is false when none
// is near.
func Closest(word string, candidates []string) (best string, ok bool) {
	w := strings.ToLower(word)
	if w == "" {
		return "", false
	}
	limit := min(3, max(1, len([]rune(w))/3))
	bestDist := limit + 1
	for _, c := range sortedUnique(candidates) {
		if c == word {
			continue
		}
		if d := distance(w, strings.ToLower(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	if best != "" {
		return best, true
	}
	longest := 0
	for _, c := range sortedUnique(candidates) {
		lc := strings.ToLower(c)
		if c == word {
			continue
		}
		if n := len(lc); n >= 3 && n > longest && (strings.HasPrefix(w, lc) || strings.HasPrefix(lc, w) && len(w) >= 3) {
			best, longest = c, n
		}
	}
	return best, best != ""
}

func sortedUnique(words []string) []string {
	out := slices.Clone(words)
	slices.Sort(out)
	return slices.Compact(out)
}

// distance is the optimal string alignment distance between a and b: insertions, deletions,
// substitutions and transpositions of adjacent letters, each one edit.
func distance(a, b string) int {
	s, t := []rune(a), []rune(b)
	prev2 := make([]int, len(t)+1)
	prev := make([]int, len(t)+1)
	cur := make([]int, len(t)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(s); i++ {
		cur[0] = i
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(t)]
}

// Nearest answers up to n candidates nearest to word, nearest first: those fewest edits away
// (within the distance Closest allows, each counted as Closest counts them), then those that
// share word's start or its part after the '#' (a task id's task name), then those that share its
// part before the '#' (a task id's project). Case is ignored.
func Nearest(word string, candidates []string, n int) []string {
	w := strings.ToLower(word)
	if w == "" || n <= 0 {
		return nil
	}
	limit := min(3, max(1, len([]rune(w))/3))
	type scored struct {
		word string
		dist int
	}
	var near []scored
	head, tail, hasTail := strings.Cut(w, "#")
	for _, c := range sortedUnique(candidates) {
		lc := strings.ToLower(c)
		if c == word {
			continue
		}
		switch d := distance(w, lc); {
		case d <= limit:
			near = append(near, scored{c, d})
		case hasTail && strings.HasSuffix(lc, "#"+tail), strings.HasPrefix(lc, w) && len(w) >= 3:
			near = append(near, scored{c, limit + 1})
		case hasTail && strings.HasPrefix(lc, head+"#"):
			near = append(near, scored{c, limit + 2})
		}
	}
	slices.SortStableFunc(near, func(a, b scored) int { return a.dist - b.dist })
	out := make([]string, 0, min(n, len(near)))
	for _, s := range near[:min(n, len(near))] {
		out = append(out, s.word)
	}
	return out
}
