package planmemo

import (
	"io/fs"
	"maps"
	"path"

	"github.com/vzn/vx/engine/cache"
	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/handoff"
	"github.com/vzn/vx/engine/pathglob"
	"github.com/vzn/vx/engine/runner"
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
	// seen is the outputs' digest as the snapshot held them (handoff.OutputsSeen).
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

// Intact answers, by task id, the tasks of nodes whose handed entry (index's, for the task's key)
// would restore nothing in the plan's snapshot: from the memo's verdicts where they hold, else
// asked of cache.Intact (hashes answering the outputs' contents) and kept for the next plan. Nil
// without a snapshot or an index.
func (v *memoView) Intact(nodes []runner.KeyedTask, index *handoff.Index, hashes cache.FileHasher) map[string]handoff.IntactHit {
	if v.snap == nil || index == nil {
		return nil
	}
	out := make(map[string]handoff.IntactHit, len(nodes))
	made := map[string]intactVerdict{}
	for _, n := range nodes {
		e, ok := index.Entries[n.Key]
		if !n.Task.Cache || !ok {
			continue
		}
		if verdict, ok := v.verdicts[n.Task.ID]; ok && verdict.holds(v.ws, n.Key, e.OutputsBlob, v.snap) {
			out[n.Task.ID] = handoff.IntactHit{Blob: e.OutputsBlob, Files: len(e.Outputs), Seen: verdict.seen}
			continue
		}
		set, err := pathglob.NewSet(n.Project.Dir, n.Task.Outputs)
		if err != nil {
			continue
		}
		dirs, ok := outputDirs(v.snap, set.Bases())
		if !ok || !cache.Intact(v.ws, n.Project, n.Task, e.Outputs, v.snap, hashes) {
			continue
		}
		seen, err := handoff.OutputsSeen(handoff.SnapshotTree(v.snap), set.Bases())
		if err != nil {
			continue
		}
		out[n.Task.ID] = handoff.IntactHit{Blob: e.OutputsBlob, Files: len(e.Outputs), Seen: seen}
		made[n.Task.ID] = intactVerdict{ws: v.ws, key: n.Key, blob: e.OutputsBlob, dirs: dirs, seen: seen}
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
