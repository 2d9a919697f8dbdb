package runner

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// naiveUntouched is writeLog.untouched by its definition: no write since, in dir, a folder
// holding it or one it holds (anywhere: no write at all).
func naiveUntouched(writes []string, since int, dir string, anywhere bool) bool {
	if anywhere {
		return len(writes) == since
	}
	for _, d := range writes[since:] {
		if d == dir || d == "." || dir == "." || strings.HasPrefix(d, dir+"/") || strings.HasPrefix(dir, d+"/") {
			return false
		}
	}
	return true
}

// The write log answers as its definition does, for writes and questions at every depth,
// including the workspace's own folder and folders that share a prefix but hold nothing of
// each other (packages/a, packages/ab).
func TestWriteLogAnswersAsDefined(t *testing.T) {
	dirs := []string{".", "packages", "packages/a", "packages/ab", "packages/a/b", "packages/a/b/c", "apps/web", "apps", "packages/abc"}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var w writeLog
		var writes []string
		for range rng.IntN(12) {
			d := dirs[rng.IntN(len(dirs))]
			w.add(d)
			writes = append(writes, d)
		}
		if w.mark() != len(writes) {
			t.Fatalf("round %d: mark %d after %d writes", round, w.mark(), len(writes))
		}
		for since := 0; since <= len(writes); since++ {
			for _, dir := range dirs {
				for _, anywhere := range []bool{false, true} {
					got, want := w.untouched(since, dir, anywhere), naiveUntouched(writes, since, dir, anywhere)
					if got != want {
						t.Fatalf("round %d: writes %q, since %d, %s (anywhere %v): untouched %v, want %v", round, writes, since, dir, anywhere, got, want)
					}
				}
			}
		}
	}
}
