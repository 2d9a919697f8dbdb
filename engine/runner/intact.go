package runner

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/vzn/vx/engine/cache"
	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/pathglob"
)

// intactVerdict is the memo's word that a task's local entry would restore nothing
// (cache.Intact): its outputs were in place in a watcher's snapshot. It holds while the workspace
// is the one it was made for and each folder it looked at (outputDir) is the same Dir in the
// snapshot at hand: a watcher keeps the Dir of a folder that did not change, and makes another
// for one that did.
type intactVerdict struct {
	ws        *graph.Workspace
	key, blob string
	dirs      []outputDir
	// seen is the outputs' digest as the snapshot held them (outputsSeen).
	seen string
}

// outputDir is a folder of a task's outputs as a snapshot held it: its Dir, nil for none.
type outputDir struct {
	path string
	dir  *filestate.Dir
}

// holds reports whether the verdict stands for key and blob in ws and snap.
func (v intactVerdict) holds(ws *graph.Workspace, key, blob string, snap *filestate.Snapshot) bool {
	if v.ws != ws || v.key != key || v.blob != blob {
		return false
	}
	for _, d := range v.dirs {
		if snap.Dir(d.path) != d.dir {
			return false
		}
	}
	return true
}

// outputDirs answers the folders of snap a verdict on outputs under bases (root-relative) looks
// at: each base's folder and every folder under it; for a base that is not a watched folder (a
// file, or missing), the base as absent and its parent folder. ok is false where the snapshot
// cannot tell (the workspace's root, a folder it does not watch, a folder behind a symlink), for
// which no verdict is kept.
func outputDirs(snap *filestate.Snapshot, bases []string) (dirs []outputDir, ok bool) {
	var under func(dir string, d *filestate.Dir) bool
	under = func(dir string, d *filestate.Dir) bool {
		dirs = append(dirs, outputDir{dir, d})
		for _, e := range d.Entries {
			if e.Opaque {
				return false
			}
			if e.Info.Mode.Type() != fs.ModeDir {
				continue
			}
			sub := snap.Dir(dir + "/" + e.Name)
			if sub == nil || !under(dir+"/"+e.Name, sub) {
				return false
			}
		}
		return true
	}
	for _, base := range bases {
		if base == "." || base == "" {
			return nil, false
		}
		if d := snap.Dir(base); d != nil {
			if !under(base, d) {
				return nil, false
			}
			continue
		}
		parent := path.Dir(base)
		pd := snap.Dir(parent)
		if pd == nil {
			return nil, false
		}
		dirs = append(dirs, outputDir{base, nil}, outputDir{parent, pd})
	}
	return dirs, true
}

// intact answers, by task id, the tasks of nodes whose handed entry (index's, for the task's key)
// would restore nothing in the plan's snapshot: from the memo's verdicts where they hold, else
// asked of cache.Intact (hashes answering the outputs' contents) and kept for the next plan. Nil
// without a snapshot or an index.
func (v *memoView) intact(nodes []*node, index *HandedIndex, hashes cache.FileHasher) map[string]IntactHit {
	if v == nil || v.snap == nil || index == nil {
		return nil
	}
	out := make(map[string]IntactHit, len(nodes))
	made := map[string]intactVerdict{}
	for _, n := range nodes {
		e, ok := index.Entries[n.key]
		if !n.task.Cache || !ok {
			continue
		}
		if verdict, ok := v.verdicts[n.task.ID]; ok && verdict.holds(v.ws, n.key, e.OutputsBlob, v.snap) {
			out[n.task.ID] = IntactHit{Blob: e.OutputsBlob, Files: len(e.Outputs), Seen: verdict.seen}
			continue
		}
		set, err := pathglob.NewSet(n.project.Dir, n.task.Outputs)
		if err != nil {
			continue
		}
		dirs, ok := outputDirs(v.snap, set.Bases())
		if !ok || !cache.Intact(v.ws, n.project, n.task, e.Outputs, v.snap, hashes) {
			continue
		}
		seen, err := outputsSeen(snapshotTree{v.snap}, set.Bases())
		if err != nil {
			continue
		}
		out[n.task.ID] = IntactHit{Blob: e.OutputsBlob, Files: len(e.Outputs), Seen: seen}
		made[n.task.ID] = intactVerdict{ws: v.ws, key: n.key, blob: e.OutputsBlob, dirs: dirs, seen: seen}
	}
	v.m.keepVerdicts(v.ws, made)
	return out
}

// keepVerdicts adds verdicts made for ws to the memo's, which are replaced, never written in
// place; those of another workspace are dropped.
func (m *Memo) keepVerdicts(ws *graph.Workspace, made map[string]intactVerdict) {
	if len(made) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	all := map[string]intactVerdict{}
	if m.ws == ws {
		all = maps.Clone(m.verdicts)
		if all == nil {
			all = map[string]intactVerdict{}
		}
	}
	maps.Copy(all, made)
	m.verdicts = all
}

// seenTree is where outputsSeen looks: a snapshot, or the disk.
type seenTree interface {
	// lstat answers rel's stat; an error wrapping fs.ErrNotExist when it does not exist.
	lstat(rel string) (filestate.Info, error)
	// names answers the names in the folder rel, sorted.
	names(rel string) ([]string, error)
}

// snapshotTree is a watcher's snapshot as outputsSeen looks at it: a folder it does not watch,
// or one that holds a folder it does not watch, cannot be told.
type snapshotTree struct{ snap *filestate.Snapshot }

func (t snapshotTree) lstat(rel string) (filestate.Info, error) {
	fi, err := t.snap.Lstat(rel)
	if err != nil {
		return filestate.Info{}, err
	}
	return filestate.InfoOf(fi), nil
}

func (t snapshotTree) names(rel string) ([]string, error) {
	d := t.snap.Dir(rel)
	if d == nil {
		return nil, fmt.Errorf("%s: a folder the snapshot does not hold", rel)
	}
	names := make([]string, 0, len(d.Entries))
	for _, e := range d.Entries {
		if e.Opaque {
			return nil, fmt.Errorf("%s/%s: a folder the snapshot does not watch", rel, e.Name)
		}
		names = append(names, e.Name)
	}
	return names, nil
}

// diskTree is the workspace at root as lstat and readdir answer now.
type diskTree struct{ root string }

func (t diskTree) lstat(rel string) (filestate.Info, error) {
	fi, err := os.Lstat(filepath.Join(t.root, filepath.FromSlash(rel)))
	if err != nil {
		return filestate.Info{}, err
	}
	return filestate.InfoOf(fi), nil
}

func (t diskTree) names(rel string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(t.root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}

// outputsSeen answers the digest of what lies under bases (root-relative) in tree: each path, a
// folder by its path alone, a file or symlink with its stat (kind, permissions, size, stamps,
// inode), a missing base as missing. An output written, replaced, added or removed changes it;
// a folder's own stamps do not enter it (a watcher need not keep them), its names do.
func outputsSeen(tree seenTree, bases []string) (string, error) {
	h := sha256.New()
	var buf []byte
	var walk func(rel string) error
	walk = func(rel string) error {
		info, err := tree.lstat(rel)
		buf = appendString(buf[:0], rel)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			buf = append(buf, '-')
		case err != nil:
			return err
		case info.Mode.IsDir():
			buf = append(buf, 'd')
		default:
			buf = append(buf, 'f')
			buf = binary.AppendUvarint(buf, uint64(info.Mode))
			for _, n := range []int64{info.Size, info.MtimeNs, info.CtimeNs} {
				buf = binary.AppendVarint(buf, n)
			}
			buf = binary.AppendUvarint(buf, info.Ino)
		}
		h.Write(buf)
		if err != nil || !info.Mode.IsDir() {
			return nil
		}
		names, err := tree.names(rel)
		if err != nil {
			return err
		}
		for _, name := range names {
			if err := walk(rel + "/" + name); err != nil {
				return err
			}
		}
		return nil
	}
	for _, base := range slices.Sorted(slices.Values(bases)) {
		if base == "." || base == "" {
			return "", errors.New("outputs at the workspace's root")
		}
		if err := walk(base); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// StaleIntact answers the first task (by id) of intact, the hits a vx mcp found in place,
// whose outputs in ws are no longer what it saw (IntactHit.Seen: an output written, added or
// removed since, or a task it does not know); "" when every one is as it saw them. A run takes
// the hits in place only then.
func StaleIntact(ws *graph.Workspace, intact map[string]IntactHit) string {
	disk := diskTree{ws.Root}
	for _, id := range slices.Sorted(maps.Keys(intact)) {
		t, ok := ws.Task(id)
		if !ok {
			return id
		}
		p, ok := ws.Project(t.Project)
		if !ok {
			return id
		}
		set, err := pathglob.NewSet(p.Dir, t.Outputs)
		if err != nil {
			return id
		}
		seen, err := outputsSeen(disk, set.Bases())
		if err != nil || seen != intact[id].Seen {
			return id
		}
	}
	return ""
}
