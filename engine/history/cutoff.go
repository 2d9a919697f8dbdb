package history

import (
	"fmt"
	"strings"

	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
)

// cutoff rewrites the reason of an early-cutoff hit (cacheSource remote-action): the task's key
// missed, and its Action digest, which holds its upstreams' output digests rather than their
// keys, found the result of an earlier execution in the engine's Action Cache. It names what
// moved upstream and says that those outputs are byte-identical.
func cutoff(w *Why, cur store.Execution) {
	if cur.Status != store.StatusHit || cur.CacheSource != summary.CacheSourceRemoteAction {
		return
	}
	w.Cutoff = true
	const found = "restored by its Action digest from the engine's Action Cache (early cutoff)"
	switch {
	case !w.Changed && w.PreviousRunID != nil:
		w.Reason = "same key as run " + *w.PreviousRunID + ", which left no entry under it: " + found
	case len(w.Diff.Upstream) == 0:
		w.Reason = fmt.Sprintf("the key changed (%s), but its Action digest matched, what moved being no part of the Action: %s",
			w.Reason, found)
	default:
		w.Reason = fmt.Sprintf("the key changed (%s%s), but its Action digest matched: the outputs of %s are byte-identical, so it was %s",
			upstreamNames(w.Diff.Upstream), rootsMoved(w.Roots), upstreamNames(w.Diff.Upstream), found)
	}
}

// upstreamNames names the upstream tasks whose key moved.
func upstreamNames(us []UpstreamChange) string {
	names := make([]string, 0, len(us))
	for _, u := range us {
		names = append(names, u.TaskID)
	}
	return strings.Join(names, ", ")
}

// rootsMoved says what moved of the roots' own inputs: ", whose key changed: a#build's input
// files changed (src/a.ts)"; "" without roots.
func rootsMoved(roots []Root) string {
	if len(roots) == 0 {
		return "'s key changed"
	}
	parts := make([]string, 0, len(roots))
	for _, r := range roots {
		files := append(append(append([]string{}, r.Files.Modified...), r.Files.Added...), r.Files.Removed...)
		what := "inputs changed"
		if len(files) > 0 {
			const shown = 3
			if len(files) > shown {
				files = append(files[:shown], fmt.Sprintf("and %d more", len(files)-shown))
			}
			what = "input files changed: " + strings.Join(files, ", ")
		}
		parts = append(parts, r.TaskID+"'s "+what)
	}
	return "'s key changed, as " + strings.Join(parts, "; ")
}
