package hasher

import (
	"context"
	"path"
	"slices"
	"strings"

	"github.com/vzn/vx/engine/git"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/pathglob"
)

// Restored is Invalidate for project p after a cache restore of its task t that left exactly
// files (relative to the project folder, as the entry lists them) under t's outputs. Git's
// listing of the project then differs from the one taken before only under those outputs: the
// files the entry does not list are gone, and those git shows among the ones the listing lacked
// are new. So where the project's listing is current, the listing is mended instead of taken
// again: when it is next asked for, the files it lacks are asked of git's exclude rules (one `git
// check-ignore` for the hasher, kept running). A run whose keys were all made before its restores
// asks nothing. Anything it cannot vouch for (no current listing, a file outside the project or in
// a project nested in it, git not answering, another change to the project first) leaves the
// listing to be taken again, as Invalidate does.
func (h *Hasher) Restored(ctx context.Context, p *graph.Project, t *graph.Task, files []string) {
	projectDir := p.Dir
	outputs, err := pathglob.NewSet(projectDir, t.Outputs)
	if err != nil || t.OutputsOutside() {
		h.Wrote(p, t)
		return
	}
	// A restore of the project's before this one, whose mend is still to be made, is made now:
	// this one mends the listing that one left.
	h.mendNow(ctx, projectDir)
	h.mu.Lock()
	listing, listed := h.listings[projectDir]
	current := listed && !h.stale[projectDir] && h.opts.Root != ""
	h.mu.Unlock()
	generation := h.invalidate(projectDir)
	if !current {
		return
	}
	m := &mend{generation: generation, listing: listing, outputs: outputs, restored: make(map[string]bool, len(files))}
	have := make(map[string]bool, len(listing))
	for _, f := range listing {
		have[f] = true
	}
	for _, f := range files {
		if !h.ownFile(projectDir, f) {
			return
		}
		m.restored[f] = true
		if !have[f] {
			m.lacking = append(m.lacking, f)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	// Another change to the project since its restore leaves the listing to be taken again.
	if h.invalidations[projectDir] == generation {
		h.mends[projectDir] = m
	}
}

// mend is a restore's change to a project's listing: the listing it found, what it restored
// there, and which of those the listing lacked, for git to say which it shows.
type mend struct {
	generation int // the project's invalidations once the restore was made
	listing    []string
	outputs    *pathglob.Set
	restored   map[string]bool
	lacking    []string
}

// mended answers the listing of projectDir as the restore pending for it left it, where no other
// change to the project came after it (its invalidations still at generation) and git answers;
// ok is false otherwise: the listing is then taken again. The pending mend is used up either way.
func (h *Hasher) mended(ctx context.Context, projectDir string, generation int) (listing []string, ok bool) {
	h.mu.Lock()
	m := h.mends[projectDir]
	delete(h.mends, projectDir)
	h.mu.Unlock()
	if m == nil || m.generation != generation {
		return nil, false
	}
	shown, ok := h.shownByGit(ctx, projectDir, m.lacking)
	if !ok {
		return nil, false
	}
	// What the listing held under the task's outputs and the entry does not list, the restore
	// removed.
	updated := make([]string, 0, len(m.listing)+len(shown))
	for _, f := range m.listing {
		if m.restored[f] || !m.outputs.Match(joinRel(projectDir, f)) {
			updated = append(updated, f)
		}
	}
	updated = append(updated, shown...)
	slices.Sort(updated)
	return updated, true
}

// mendNow makes the pending mend of projectDir's listing, if any, and keeps the listing it
// answers as current, unless the project changed again meanwhile.
func (h *Hasher) mendNow(ctx context.Context, projectDir string) {
	h.mu.Lock()
	generation := h.invalidations[projectDir]
	_, pending := h.mends[projectDir]
	h.mu.Unlock()
	if !pending {
		return
	}
	listing, ok := h.mended(ctx, projectDir, generation)
	if !ok {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	// Another change to the project since (a task that wrote files, another restore) leaves it
	// stale; a listing taken again since is git's own, and stays.
	if h.invalidations[projectDir] == generation && h.stale[projectDir] {
		h.listings[projectDir] = listing
		delete(h.stale, projectDir)
	}
}

// ownFile reports whether f, relative to projectDir, is a plain path inside the project and in
// no project nested in it (whose files the project's listing leaves out).
func (h *Hasher) ownFile(projectDir, f string) bool {
	if f == "" || strings.HasPrefix(f, "/") || f != path.Clean(f) || f == ".." || strings.HasPrefix(f, "../") {
		return false
	}
	for inner := range h.nested[projectDir] {
		rel := strings.TrimPrefix(inner, projectDir+"/")
		if projectDir == "." {
			rel = inner
		}
		if f == rel || strings.HasPrefix(f, rel+"/") {
			return false
		}
	}
	return true
}

// shownByGit answers which of files (relative to projectDir) git shows, that is does not ignore;
// ok is false when git could not say.
func (h *Hasher) shownByGit(ctx context.Context, projectDir string, files []string) (shown []string, ok bool) {
	if len(files) == 0 {
		return nil, true
	}
	h.ignoreOnce.Do(func() { h.ignores = git.StartIgnoreChecker(ctx, h.opts.Root) })
	// A folder git ignores hides every file beneath it (git never re-includes a file of an
	// excluded folder, and the restore just made each file's folders): the top folders of the
	// files are asked first, one question for all the files each holds, and only the files
	// outside a folder git ignores are asked one by one. A restore of dist/ asks once.
	var tops []string
	topOf := make([]string, len(files))
	for i, f := range files {
		if top, _, nested := strings.Cut(f, "/"); nested {
			topOf[i] = top
			if !slices.Contains(tops, top) {
				tops = append(tops, top)
			}
		}
	}
	hidden := map[string]bool{}
	if len(tops) > 0 {
		ignored, err := h.ignores.Ignored(rootRelative(projectDir, tops))
		if err != nil {
			return nil, false
		}
		for i, top := range tops {
			hidden[top] = ignored[i]
		}
	}
	var asked []string
	for i, f := range files {
		if !hidden[topOf[i]] {
			asked = append(asked, f)
		}
	}
	if len(asked) == 0 {
		return nil, true
	}
	ignored, err := h.ignores.Ignored(rootRelative(projectDir, asked))
	if err != nil {
		return nil, false
	}
	for i, f := range asked {
		if !ignored[i] {
			shown = append(shown, f)
		}
	}
	return shown, true
}

// rootRelative answers paths relative to projectDir as paths relative to the root.
func rootRelative(projectDir string, paths []string) []string {
	rel := make([]string, len(paths))
	for i, p := range paths {
		rel[i] = path.Join(projectDir, p)
	}
	return rel
}

// Close ends what the hasher keeps running (the git process Restored asks).
func (h *Hasher) Close() error {
	h.ignoreOnce.Do(func() {}) // none is started after Close
	return h.ignores.Close()
}
