package hasher

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/vzn/vx/engine/counters"
	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/pathglob"
)

// InputStats is what a key was made from, as the hasher saw it: the lstat of every input file it
// keyed (or that a listed file was absent), and the lstat the file system gave, when the key was
// made, of every folder holding one. Recheck compares them with the file system after the task
// ran: an entry stored under the key must hold what the command made of those very files.
type InputStats struct {
	files []seenFile
	// dirs maps each root-relative folder holding an input to its lstat when the key was made.
	dirs map[string]filestate.Info
	// sameBytes holds, after Recheck, the moved files it named whose content is the content
	// the key took: written again, with the same bytes, while the task ran.
	sameBytes []string
	// outside says that the task's own inputs name a file outside its project ("//" globs).
	outside bool
}

// seenFile is one input file as it was hashed.
type seenFile struct {
	// name is the file as the run names it: relative to the task's project folder, or
	// "//"-prefixed and root-relative for a file outside it.
	name, rootRel string
	info          filestate.Info
	// hash is the content hash the key took of the file ("" where it took none).
	hash string
	// absent says that the file was listed but not there (or not a file) when hashed.
	absent bool
}

// seenOf records what fileHash saw of a file: its stat and the hash it keyed, or its absence.
func seenOf(name, rootRel string, info filestate.Info, sum string, err error) seenFile {
	absent := errors.Is(err, fs.ErrNotExist) || errors.Is(err, errIsDir)
	if err != nil {
		sum = ""
	}
	return seenFile{name: name, rootRel: rootRel, info: info, hash: sum, absent: absent}
}

// SameBytes answers the files the last Recheck named that were written again with the bytes
// the key took: a task that writes one of its own inputs that way declares it in rewrites.
func (s *InputStats) SameBytes() []string {
	if s == nil {
		return nil
	}
	return s.sameBytes
}

// add records files; a nil InputStats records nothing.
func (s *InputStats) add(files ...seenFile) {
	if s != nil {
		s.files = append(s.files, files...)
	}
}

// Outside reports whether the task's own inputs named a file outside its project folder (a
// "//" glob): a write anywhere in the workspace may be one of its inputs. The workspace's global
// inputs and the files of `^GLOB` dependency inputs, which a run hashes once, are not counted.
func (s *InputStats) Outside() bool { return s != nil && s.outside }

// Files answers the input files, root-relative and slash-separated, in the order they were
// hashed: what a remote executor makes a task's input root of.
func (s *InputStats) Files() []string {
	if s == nil {
		return nil
	}
	out := make([]string, 0, len(s.files))
	for _, f := range s.files {
		out = append(out, f.rootRel)
	}
	return out
}

// Len answers how many input files the stats hold.
func (s *InputStats) Len() int {
	if s == nil {
		return 0
	}
	return len(s.files)
}

// StatFolders records in s (a manifest's Inputs, of a task of project p) the lstat of every
// folder holding an input: for a file of p, the folders from its own up to p's; for another, up
// to the root. It asks the file system, never a watcher's snapshot, whose folders' own stamps are
// not kept. A run calls it when it makes the key of a task it may run (a plan has no use for it);
// without it, Recheck compares the files alone.
func (h *Hasher) StatFolders(p *graph.Project, s *InputStats) {
	if s != nil {
		s.statDirs(h.opts.Root, p.Dir, h.opts.Counters)
	}
}

// statDirs is StatFolders for the workspace at root and the project folder projectDir, its stat
// calls counted in c.
func (s *InputStats) statDirs(root, projectDir string, c *counters.Counters) {
	s.dirs = map[string]filestate.Info{}
	for _, f := range s.files {
		stop := "."
		if !strings.HasPrefix(f.name, pathglob.RootPrefix) {
			stop = projectDir
		}
		for dir := path.Dir(f.rootRel); ; dir = path.Dir(dir) {
			if _, ok := s.dirs[dir]; ok {
				break
			}
			c.Stat()
			fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(dir)))
			if err != nil {
				s.dirs[dir] = filestate.Info{} // a missing folder: one that appears has moved
			} else {
				s.dirs[dir] = filestate.InfoOf(fi)
			}
			if dir == stop || dir == "." || dir == "/" {
				break
			}
		}
	}
}

// globalSeenFiles answers what the hasher saw of the global inputs when it hashed them.
func (h *Hasher) globalSeenFiles() []seenFile {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.globalSeen
}

// sameStat reports whether a file stats as it did: kind, permissions, size, stamps and inode (a
// snapshot's link target and hash are not a stat's).
func sameStat(a, b filestate.Info) bool {
	return a.Mode == b.Mode && a.Size == b.Size && a.MtimeNs == b.MtimeNs && a.CtimeNs == b.CtimeNs && a.Ino == b.Ino
}

// Recheck answers the input files of t (in project p) that moved since its key was made from in:
// each file whose fresh lstat differs from the one hashed, that was removed, or that appeared
// where one was absent; and, when a folder holding inputs moved, each file that the task's
// inputs match now but did not then, or the reverse (the folders are listed again). A file the
// task declares in rewrites (it writes it itself, as tshy writes its package.json) has moved
// only when its content is no longer the content the key took; any other file whose stat moved
// has moved, whatever its content, for an edit undone while the task ran leaves the bytes it
// found (such files of the answer whose content is the key's are in SameBytes). The names are
// sorted, as the run names inputs; none means the key still describes the inputs. It costs an
// lstat per input file and per folder, a read of each moved file, and a listing only where a
// folder moved.
func (h *Hasher) Recheck(ctx context.Context, p *graph.Project, t *graph.Task, in *InputStats) ([]string, error) {
	if in == nil {
		return nil, nil
	}
	var changed []string
	in.sameBytes = nil
	for _, f := range in.files {
		h.opts.Counters.Stat()
		fi, err := os.Lstat(filepath.Join(h.opts.Root, filepath.FromSlash(f.rootRel)))
		switch {
		case err != nil || fi.IsDir():
			if !f.absent {
				changed = append(changed, f.name)
			}
		case f.absent:
			changed = append(changed, f.name)
		case !sameStat(f.info, filestate.InfoOf(fi)):
			same := f.hash != "" && h.contentIs(f, fi)
			if same && rewrites(t, f.name) {
				continue
			}
			if same {
				in.sameBytes = append(in.sameBytes, f.name)
			}
			changed = append(changed, f.name)
		}
	}
	if in.dirsMoved(h.opts.Root, h.opts.Counters) {
		more, err := h.relisted(ctx, p, t, in)
		if err != nil {
			return nil, err
		}
		changed = append(changed, more...)
	}
	slices.Sort(changed)
	return slices.Compact(changed), nil
}

// dirsMoved reports whether a folder holding inputs stats otherwise than when the key was made.
func (s *InputStats) dirsMoved(root string, c *counters.Counters) bool {
	for dir, was := range s.dirs {
		c.Stat()
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(dir)))
		if err != nil {
			if was != (filestate.Info{}) {
				return true
			}
			continue
		}
		if !sameStat(was, filestate.InfoOf(fi)) {
			return true
		}
	}
	return false
}

// relisted lists t's inputs again from the file system and answers the files that entered or
// left them since in was taken.
func (h *Hasher) relisted(ctx context.Context, p *graph.Project, t *graph.Task, in *InputStats) ([]string, error) {
	// Every project whose files the key holds is listed again, not taken from the listing the
	// key was made from.
	h.Invalidate(p.Dir)
	deps := slices.Concat(t.Through, t.DependencyFiles)
	if ws := h.opts.Workspace; ws != nil {
		for _, name := range deps {
			if dp, ok := ws.Project(name); ok {
				h.Invalidate(dp.Dir)
			}
		}
	}
	now := map[string]string{} // root-relative → name
	own, err := h.Inputs(ctx, p, t)
	if err != nil {
		return nil, fmt.Errorf("list the inputs of %s again: %w", t.ID, err)
	}
	for _, rel := range own {
		rootRel, outside := strings.CutPrefix(rel, pathglob.RootPrefix)
		if !outside {
			rootRel = joinRel(p.Dir, rel)
		}
		now[rootRel] = rel
	}
	if err := h.relistOthers(ctx, t, deps, now); err != nil {
		return nil, fmt.Errorf("list the inputs of %s again: %w", t.ID, err)
	}
	was := make(map[string]bool, len(in.files))
	var changed []string
	for _, f := range in.files {
		was[f.rootRel] = true
		if _, ok := now[f.rootRel]; !ok && !f.absent {
			changed = append(changed, f.name) // no longer an input
		}
	}
	for rootRel, name := range now {
		if was[rootRel] {
			continue
		}
		h.opts.Counters.Stat()
		if fi, err := os.Lstat(filepath.Join(h.opts.Root, filepath.FromSlash(rootRel))); err == nil && !fi.IsDir() {
			changed = append(changed, name) // a new input
		}
	}
	return changed, nil
}

// relistOthers adds to now the global inputs and the files of the projects deps (t's `^task`
// pass-throughs and `^default` dependencies), as Manifest takes them.
func (h *Hasher) relistOthers(ctx context.Context, t *graph.Task, deps []string, now map[string]string) error {
	if len(h.globalGlobs) > 0 {
		global, err := h.GlobalInputs(ctx, h.globalGlobs)
		if err != nil {
			return err
		}
		for _, rel := range global {
			now[rel] = pathglob.RootPrefix + rel
		}
	}
	ws := h.opts.Workspace
	if ws == nil {
		return nil
	}
	depGlobs, _ := t.DependencyInputs()
	for i, name := range deps {
		dp, ok := ws.Project(name)
		if !ok {
			continue
		}
		var globs []string
		if i >= len(t.Through) {
			globs = depGlobs
		}
		files, err := h.Inputs(ctx, dp, &graph.Task{ID: name + "#", Inputs: globs})
		if err != nil {
			return err
		}
		for _, rel := range files {
			rootRel := joinRel(dp.Dir, rel)
			now[rootRel] = pathglob.RootPrefix + rootRel
		}
	}
	return nil
}

// RootedInput answers the root-relative ("//"-prefixed) form of an input file name as a task of
// the project folder dir (root-relative, "." for the root) names it, as Recheck answers it: a
// name that is root-relative already is answered as it is.
func RootedInput(dir, name string) string {
	if strings.HasPrefix(name, pathglob.RootPrefix) {
		return name
	}
	if dir == "." || dir == "" {
		return pathglob.RootPrefix + name
	}
	return pathglob.RootPrefix + dir + "/" + name
}

// contentIs reports whether the file f, which stats as fi now, holds the content the key took.
func (h *Hasher) contentIs(f seenFile, fi fs.FileInfo) bool {
	sum, err := h.keyDigest(context.Background(), f.rootRel, fi)
	return err == nil && sum == f.hash
}

// rewrites reports whether t declares the input name (as the run names it: relative to the
// project folder) among the files its command writes itself.
func rewrites(t *graph.Task, name string) bool {
	if strings.HasPrefix(name, pathglob.RootPrefix) {
		return false // a task declares only files of its own project
	}
	for _, g := range t.Rewrites {
		if ok, _ := doublestar.Match(g, name); ok {
			return true
		}
	}
	return false
}
