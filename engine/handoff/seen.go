package handoff

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/pathglob"
)

// Tree is where OutputsSeen looks: a snapshot (SnapshotTree), or the disk.
type Tree interface {
	// lstat answers rel's stat; an error wrapping fs.ErrNotExist when it does not exist.
	lstat(rel string) (filestate.Info, error)
	// names answers the names in the folder rel, sorted.
	names(rel string) ([]string, error)
}

// SnapshotTree answers a watcher's snapshot as OutputsSeen looks at it: a folder it does not
// watch, or one that holds a folder it does not watch, cannot be told.
func SnapshotTree(snap *filestate.Snapshot) Tree { return snapshotTree{snap} }

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

// OutputsSeen answers the digest of what lies under bases (root-relative) in tree, the verdict
// that a hit's outputs are in place carries (IntactHit.Seen): each path, a
// folder by its path alone, a file or symlink with its stat (kind, permissions, size, stamps,
// inode), a missing base as missing. An output written, replaced, added or removed changes it;
// a folder's own stamps do not enter it (a watcher need not keep them), its names do.
func OutputsSeen(tree Tree, bases []string) (string, error) {
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

// StaleIntact answers a task of intact, the hits the server found in place, whose outputs in ws
// are no longer what it saw (IntactHit.Seen: an output written, added or removed since, or a task
// it does not know); "" when every one is as it saw them. A run takes the hits in place only then.
// It looks at the hits on a few goroutines, and stops at the first that moved.
func StaleIntact(ws *graph.Workspace, intact map[string]IntactHit) string {
	ids := slices.Sorted(maps.Keys(intact))
	stale := make([]bool, len(ids))
	var next atomic.Int64
	var found atomic.Bool
	var lookers sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), 8, len(ids)) {
		lookers.Go(func() {
			for !found.Load() {
				i := int(next.Add(1)) - 1
				if i >= len(ids) {
					return
				}
				if !intactHolds(ws, ids[i], intact[ids[i]]) {
					stale[i] = true
					found.Store(true)
				}
			}
		})
	}
	lookers.Wait()
	if i := slices.Index(stale, true); i >= 0 {
		return ids[i]
	}
	return ""
}

// intactHolds reports whether the outputs of task id of ws are on disk as hit says they were
// seen.
func intactHolds(ws *graph.Workspace, id string, hit IntactHit) bool {
	t, ok := ws.Task(id)
	if !ok {
		return false
	}
	p, ok := ws.Project(t.Project)
	if !ok {
		return false
	}
	set, err := pathglob.NewSet(p.Dir, t.Outputs)
	if err != nil {
		return false
	}
	seen, err := OutputsSeen(diskTree{ws.Root}, set.Bases())
	return err == nil && seen == hit.Seen
}
