package filestate

import (
	"context"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Entry is one name in a folder of a Snapshot: a file, a symlink or a folder.
type Entry struct {
	Name string
	Info Info
	// Visible is true for a file git would show.
	Visible bool
	// Opaque marks a folder the watcher does not watch (node_modules, a nested repository):
	// what lies under it is answered from disk.
	Opaque bool
}

// Dir is a watched folder's entries, sorted by name. A Dir in a Snapshot is never changed.
type Dir struct {
	// Info is what the folder itself looked like before its entries were last read (its Mode 0
	// when not known): a folder that stats otherwise now changed since.
	Info    Info
	Entries []Entry

	// wire is the entries' wire form, made once: a watcher's next snapshot shares the folders
	// that did not change, whose wire form is then not made again.
	wireOnce sync.Once
	wire     []byte
}

// Find answers the entry of name, nil when the folder has none.
func (d *Dir) Find(name string) *Entry {
	i := sort.Search(len(d.Entries), func(i int) bool { return d.Entries[i].Name >= name })
	if i < len(d.Entries) && d.Entries[i].Name == name {
		return &d.Entries[i]
	}
	return nil
}

// Snapshot is the file state a watcher knew at one moment: each watched folder of the workspace
// (root-relative, "." for the root) with its entries. What it does not watch — the root's .git,
// the state folder, node_modules, nested repositories, a folder behind a symlink — it answers
// from disk, so that it answers everything a Scan does, alike. It is never changed once made and
// is safe for concurrent use.
type Snapshot struct {
	root, stateDir string
	// stateRel is the state folder relative to the root, "" when outside it.
	stateRel string
	dirs     map[string]*Dir

	listOnce sync.Once
	visible  []string // every visible file, root-relative, sorted

	encodeOnce sync.Once
	encoded    []byte
}

// NewSnapshot answers the snapshot of the workspace at root (absolute) holding dirs; the caller
// never changes dirs or a Dir in it afterwards.
func NewSnapshot(root, stateDir string, dirs map[string]*Dir) *Snapshot {
	return &Snapshot{root: root, stateDir: stateDir, stateRel: StateRel(root, stateDir), dirs: dirs}
}

// StateRel answers the state folder relative to the root, "" when it lies outside it.
func StateRel(root, stateDir string) string {
	rel, err := filepath.Rel(root, stateDir)
	if err != nil || stateDir == "" || rel == "." || strings.HasPrefix(rel, "..") {
		return ""
	}
	return filepath.ToSlash(rel)
}

// Root answers the workspace root the snapshot is of.
func (s *Snapshot) Root() string { return s.root }

// Dirs answers how many folders the snapshot holds.
func (s *Snapshot) Dirs() int { return len(s.dirs) }

// Dir answers a watched folder's entries; nil when the folder is not one.
func (s *Snapshot) Dir(rel string) *Dir { return s.dirs[rel] }

// splitRel splits a root-relative path into its folder ("." for the root) and its name.
func splitRel(rel string) (dir, name string) {
	dir, name = path.Split(rel)
	if dir == "" {
		return ".", name
	}
	return dir[:len(dir)-1], name
}

// lookup finds the entry of rel. covered is false when the snapshot cannot tell (the path lies
// under a folder it does not watch, or behind a symlink): the disk answers. A nil entry that is
// covered does not exist.
func (s *Snapshot) lookup(rel string) (e *Entry, covered bool) {
	dir, name := splitRel(rel)
	if d, ok := s.dirs[dir]; ok {
		return d.Find(name), true
	}
	// The folder is not watched: the nearest watched ancestor says why.
	for a := dir; a != "." && a != "/" && a != ""; a = path.Dir(a) {
		pdir, pname := splitRel(a)
		pd, ok := s.dirs[pdir]
		if !ok {
			continue
		}
		pe := pd.Find(pname)
		switch {
		case pe == nil:
			return nil, true // a missing folder holds nothing
		case pe.Opaque || pe.Info.Mode&fs.ModeSymlink != 0 || pe.Info.Mode.IsDir():
			return nil, false
		default:
			return nil, true // a file where a folder would be
		}
	}
	return nil, false
}

// Lstat answers the entry of rel as a FileInfo whose Sys() is its *Info.
func (s *Snapshot) Lstat(rel string) (fs.FileInfo, error) {
	if rel == "" || rel == "." {
		return s.disk().Lstat(rel)
	}
	e, covered := s.lookup(rel)
	if !covered {
		return s.disk().Lstat(rel)
	}
	if e == nil {
		return nil, &fs.PathError{Op: "lstat", Path: rel, Err: fs.ErrNotExist}
	}
	if e.Opaque {
		return s.disk().Lstat(rel)
	}
	info := e.Info
	return fileInfo{name: e.Name, info: &info}, nil
}

func (s *Snapshot) disk() *Scan { return &Scan{root: s.root, stateDir: s.stateDir} }

// Visible answers the visible files under dir, relative to it, sorted: the whole list once for
// the root, a walk of its folders for another (a project's, which a plan after an edit asks for
// without the whole list being made again).
func (s *Snapshot) Visible(_ context.Context, dir string) ([]string, error) {
	if dir == "." || dir == "" {
		s.listOnce.Do(s.list)
		return s.visible, nil
	}
	if _, ok := s.dirs[dir]; !ok {
		return nil, nil // not a watched folder: git shows nothing under it the hasher takes
	}
	var out []string
	s.visibleUnder(dir, "", &out)
	slices.Sort(out)
	return out, nil
}

// visibleUnder adds the visible files under the watched folder dir to out, prefixed by prefix.
func (s *Snapshot) visibleUnder(dir, prefix string, out *[]string) {
	for _, e := range s.dirs[dir].Entries {
		switch {
		case e.Visible:
			*out = append(*out, prefix+e.Name)
		case e.Info.Mode.IsDir() && !e.Opaque:
			if _, ok := s.dirs[dir+"/"+e.Name]; ok {
				s.visibleUnder(dir+"/"+e.Name, prefix+e.Name+"/", out)
			}
		}
	}
}

// list builds the sorted list of every visible file: the folders in order, their paths cut from
// one string, so that the sort finds them all but sorted already.
func (s *Snapshot) list() {
	dirs := slices.Sorted(maps.Keys(s.dirs))
	size, n := 0, 0
	for _, dir := range dirs {
		for _, e := range s.dirs[dir].Entries {
			if e.Visible {
				size += len(dir) + 1 + len(e.Name)
				n++
			}
		}
	}
	buf := make([]byte, 0, size)
	ends := make([]int, 0, n)
	for _, dir := range dirs {
		for _, e := range s.dirs[dir].Entries {
			if !e.Visible {
				continue
			}
			if dir != "." {
				buf = append(buf, dir...)
				buf = append(buf, '/')
			}
			buf = append(buf, e.Name...)
			ends = append(ends, len(buf))
		}
	}
	all := string(buf)
	out := make([]string, n)
	start := 0
	for i, end := range ends {
		out[i], start = all[start:end], end
	}
	slices.Sort(out)
	s.visible = out
}

// WalkFiles calls fn with each file and symlink under base: from the snapshot where it watches
// the folders, from disk under one it does not.
func (s *Snapshot) WalkFiles(base string, fn func(rel string, mode fs.FileMode)) error {
	if _, ok := s.dirs[base]; !ok {
		if base != "." {
			if e, covered := s.lookup(base); covered && (e == nil || !e.Info.Mode.IsDir()) {
				return nil
			}
		}
		return s.disk().WalkFiles(base, fn)
	}
	return s.walk(base, fn)
}

func (s *Snapshot) walk(dir string, fn func(rel string, mode fs.FileMode)) error {
	d := s.dirs[dir]
	if d == nil {
		return nil
	}
	for _, e := range d.Entries {
		rel := e.Name
		if dir != "." {
			rel = dir + "/" + e.Name
		}
		switch {
		case e.Opaque && (rel == ".git" || rel == s.stateRel):
			// Never walked, as on disk.
		case e.Opaque:
			if err := s.disk().WalkFiles(rel, fn); err != nil {
				return err
			}
		case e.Info.Mode.IsDir():
			if err := s.walk(rel, fn); err != nil {
				return err
			}
		case e.Info.Mode.IsRegular() || e.Info.Mode&fs.ModeSymlink != 0:
			fn(rel, e.Info.Mode.Type())
		}
	}
	return nil
}

// ChangedDirs answers the folders (root-relative, sorted) whose entries differ between two
// snapshots of one watcher: those whose Dir is another (a watcher keeps an unchanged folder's),
// and those one of them lacks.
func ChangedDirs(old, cur *Snapshot) []string {
	var out []string
	for dir, d := range cur.dirs {
		if old.dirs[dir] != d {
			out = append(out, dir)
		}
	}
	for dir := range old.dirs {
		if _, ok := cur.dirs[dir]; !ok {
			out = append(out, dir)
		}
	}
	slices.Sort(out)
	return out
}

// StateDir answers the absolute state folder the snapshot leaves out.
func (s *Snapshot) StateDir() string { return s.stateDir }
