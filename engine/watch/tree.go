package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/vzn/vx/engine/filestate"
)

// node is one entry of the mirror.
type node struct {
	entry filestate.Entry
	// gen moves at every change of the entry: a hash taken at an older one is dropped.
	gen uint64
	// resolve is set while git has not said whether it would show the file.
	resolve bool
	// hashedAt is when the entry's hash was taken (ns), 0 when it has none.
	hashedAt int64
}

// tree is the mirror: each watched folder's entries. Only the holder of the watcher's settleMu
// touches it.
type tree struct {
	w        *Watcher
	stateRel string
	hashed   func(rel string) bool
	dirs     map[string]map[string]*node
	// dirInfo is each watched folder's own stat, taken before its entries were last read.
	dirInfo map[string]filestate.Info
	// unhashed are the files whose hash is still to take (or to decide against).
	unhashed map[string]*node
	// touched are the folders changed since the last publish; published the last snapshot's.
	touched   map[string]bool
	published map[string]*filestate.Dir
	last      *filestate.Snapshot
	gen       uint64
	// newDirs are the folders created in this settle, whose files git is asked about at once.
	newDirs map[string]bool
	// gitignored is set when an ignore file changed: every visibility is asked again.
	gitignored bool
	// dropped, while a settle drops the folders gone (dropGoneFolders), collects the inode
	// numbers of the folders whose watch it removes; nil the rest of the time.
	dropped map[uint64]bool
	// linked are the files with another name (a hard link), each watched itself: a write through
	// a name outside the workspace is an event of the file's own watch, never of its folder's.
	linked map[string]bool
}

func newTree(w *Watcher) *tree {
	return &tree{w: w, stateRel: filestate.StateRel(w.opts.Root, w.opts.StateDir), dirs: map[string]map[string]*node{}, dirInfo: map[string]filestate.Info{},
		unhashed: map[string]*node{}, touched: map[string]bool{}, published: map[string]*filestate.Dir{}, newDirs: map[string]bool{},
		linked: map[string]bool{}}
}

// joinRel joins a root-relative folder and a name.
func joinRel(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// splitRel splits a root-relative path into its folder ("." for the root) and name.
func splitRel(rel string) (dir, name string) {
	dir, name = path.Split(rel)
	if dir == "" {
		return ".", name
	}
	return dir[:len(dir)-1], name
}

// firstLook watches and lists every folder, asks git what it shows and seeds the hashes.
func (t *tree) firstLook(ctx context.Context) error {
	t.dirs = map[string]map[string]*node{}
	t.dirInfo = map[string]filestate.Info{}
	t.unhashed = map[string]*node{}
	if err := t.scanDir(".", nil); err != nil {
		return err
	}
	if err := t.relistAll(ctx, nil); err != nil {
		return err
	}
	t.seedAll()
	for dir := range t.dirs {
		t.touched[dir] = true
	}
	return nil
}

// apply brings the mirror up to date with the paths events named (true for those removed or
// renamed meanwhile); rescan takes it all again, relist asks git again about every file.
func (t *tree) apply(ctx context.Context, pending map[string]bool, relist, rescan bool) (Change, error) {
	if rescan {
		return t.rescan(ctx)
	}
	ch := &changeSet{paths: map[string]bool{}}
	paths := make([]string, 0, len(pending))
	for p := range pending {
		paths = append(paths, p)
	}
	// Folders before what they hold: a created folder's scan covers its files' events.
	slices.Sort(paths)
	stats := t.statFolders(paths)
	t.dropped = map[uint64]bool{}
	t.dropGoneFolders(paths, pending, ch)
	dropped := t.dropped
	t.dropped = nil
	if err := t.rewatch(dropped, ch); err != nil {
		return Change{}, err
	}
	for _, rel := range paths {
		if err := t.settlePath(rel, ch); err != nil {
			return Change{}, err
		}
	}
	t.restatFolders(stats)
	if relist || t.gitignored {
		t.gitignored = false
		if err := t.relistAll(ctx, ch); err != nil {
			return Change{}, err
		}
		ch.rescan = true
	} else if err := t.resolveNew(ctx, ch); err != nil {
		return Change{}, err
	}
	t.newDirs = map[string]bool{}
	return ch.change(), nil
}

// statFolders stats, before the events' paths are settled, each watched folder they lie in (and
// each that one of them is): a folder's own stamps, taken before its entries are read again, are
// then never newer than what the snapshot says it holds.
func (t *tree) statFolders(paths []string) map[string]filestate.Info {
	stats := map[string]filestate.Info{}
	look := func(dir string) {
		if _, done := stats[dir]; done {
			return
		}
		if _, watched := t.dirs[dir]; !watched {
			return
		}
		if fi, err := os.Lstat(t.w.abs(dir)); err == nil && fi.IsDir() {
			stats[dir] = filestate.InfoOf(fi)
		}
	}
	for _, rel := range paths {
		dir, _ := splitRel(rel)
		look(dir)
		look(rel)
	}
	return stats
}

// restatFolders records the folders' stats statFolders took, for each still watched as the same
// folder and not listed afresh in this settle (whose stat is newer).
func (t *tree) restatFolders(stats map[string]filestate.Info) {
	for dir, info := range stats {
		old, watched := t.dirInfo[dir]
		if !watched || t.newDirs[dir] || old.Ino != info.Ino || old == info {
			continue
		}
		t.dirInfo[dir] = info
		t.touched[dir] = true
	}
}

// changeSet collects a settle's change.
type changeSet struct {
	paths  map[string]bool
	rescan bool
}

func (c *changeSet) add(rel string) {
	if c != nil {
		c.paths[rel] = true
	}
}

func (c *changeSet) change() Change {
	out := Change{Rescan: c.rescan}
	for p := range c.paths {
		out.Paths = append(out.Paths, p)
	}
	slices.Sort(out.Paths)
	return out
}

// rescan takes the whole mirror again after events were lost, keeping the hashes of the files
// that stat as they did when hashed long enough after their last change.
func (t *tree) rescan(ctx context.Context) (Change, error) {
	old := t.dirs
	for rel := range t.linked {
		t.unlink(rel) // watched again below where it still has another name
	}
	t.dirs = map[string]map[string]*node{}
	t.dirInfo = map[string]filestate.Info{}
	t.unhashed = map[string]*node{}
	if err := t.scanDir(".", nil); err != nil {
		return Change{}, err
	}
	if err := t.relistAll(ctx, nil); err != nil {
		return Change{}, err
	}
	for dir, nodes := range t.dirs {
		for name, n := range nodes {
			if o := old[dir][name]; o != nil && o.entry.Info.Hash != "" && o.entry.Info.SameStat(n.entry.Info) &&
				!racy(o.entry.Info.MtimeNs, o.hashedAt) {
				n.entry.Info.Hash, n.entry.Info.Digest, n.hashedAt = o.entry.Info.Hash, o.entry.Info.Digest, o.hashedAt
				delete(t.unhashed, joinRel(dir, name))
			}
		}
	}
	t.seedAll()
	t.touched = map[string]bool{}
	t.published = map[string]*filestate.Dir{}
	for dir := range t.dirs {
		t.touched[dir] = true
	}
	return Change{Rescan: true}, nil
}

// racy reports whether a hash taken at hashedAt may miss a write within the timestamp tick of
// mtime: the hasher's rule (hasher.Trusted), for the watcher's own hashes.
func racy(mtimeNs, hashedAt int64) bool {
	window := 2 * time.Second
	if mtimeNs%int64(time.Second) != 0 {
		window = 100 * time.Millisecond
	}
	return mtimeNs >= hashedAt-window.Nanoseconds()
}

// dropGoneFolders removes, before anything is added, each folder an event named that is no longer
// there as it was: removed, renamed, or another in its place. Another may have the old one's inode
// number (`rm -rf dist && mkdir dist` often gets it), so one removed or renamed meanwhile (gone)
// is dropped whatever it stats as now: the kernel dropped the old one's watch. And a watch is an
// inode's, not a path's: were a folder moved to a name settled before its old one, its new name
// would be given the watch it had (the kernel answers that one), which the removal of its old
// name would then take away.
func (t *tree) dropGoneFolders(paths []string, gone map[string]bool, ch *changeSet) {
	for _, rel := range paths {
		dir, name := splitRel(rel)
		old := t.dirs[dir][name]
		if rel == "." || old == nil || !old.entry.Info.Mode.IsDir() {
			continue
		}
		fi, err := os.Lstat(t.w.abs(rel))
		if err == nil && fi.IsDir() && !gone[rel] && filestate.InfoOf(fi).Ino == old.entry.Info.Ino {
			continue
		}
		t.remove(rel, old, ch)
	}
}

// settlePath brings one path's entry up to date.
func (t *tree) settlePath(rel string, ch *changeSet) error {
	if rel == "." || rel == "" {
		return nil
	}
	dir, name := splitRel(rel)
	nodes, ok := t.dirs[dir]
	if !ok {
		return nil // under a folder not watched, or one removed since: its own entry says so
	}
	if name == ".gitignore" {
		t.gitignored = true
	}
	if name == ".git" && dir != "." {
		// A repository began or ended here: its folder is opaque, or watched, from now on.
		return t.redoDir(dir, ch)
	}
	old := nodes[name]
	fi, err := os.Lstat(t.w.abs(rel))
	if err != nil {
		if old != nil {
			t.remove(rel, old, ch)
		}
		return nil
	}
	info := infoOf(t.w.abs(rel), fi)
	switch {
	case fi.IsDir():
		if old != nil && old.entry.Info.Mode.IsDir() && old.entry.Info.Ino == info.Ino {
			// The same folder (dropGoneFolders dropped any other): its own stamps (moved by what
			// is made in it, the state folder's at every run) say nothing its entries' events do
			// not.
			return nil
		}
		if old != nil {
			t.remove(rel, old, ch)
		}
		t.newDirs[rel] = true
		return t.addDir(rel, info, ch)
	case fi.Mode().IsRegular() || fi.Mode()&fs.ModeSymlink != 0:
		if old != nil && old.entry.Info.Mode.IsDir() {
			t.remove(rel, old, ch)
			old = nil
		}
		t.putFile(dir, name, info, old, ch)
		return t.watchLinked(rel, fi)
	default:
		if old != nil {
			t.remove(rel, old, ch)
		}
	}
	return nil
}

// putFile records a file's new entry; what git says of it is kept from its old entry (the same
// path: only an ignore rule or the index moves it, and those relist), else asked.
func (t *tree) putFile(dir, name string, info filestate.Info, old *node, ch *changeSet) {
	t.gen++
	n := &node{entry: filestate.Entry{Name: name, Info: info}, gen: t.gen}
	rel := joinRel(dir, name)
	if old != nil {
		n.entry.Visible, n.resolve = old.entry.Visible, old.resolve
	} else {
		n.entry.Visible, n.resolve = !t.w.git.on, t.w.git.on
	}
	if n.entry.Visible || (old != nil && old.entry.Visible) {
		ch.add(rel)
	}
	t.dirs[dir][name] = n
	t.unhashed[rel] = n
	t.touched[dir] = true
}

// watchLinked watches a regular file with another name itself (see linked), and stops watching
// one that has no other name any more.
func (t *tree) watchLinked(rel string, fi fs.FileInfo) error {
	linked := fi.Mode().IsRegular() && linkCount(fi) > 1
	switch {
	case linked && !t.linked[rel]:
		if err := t.addWatch(t.w.abs(rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cannot watch %s: %w", rel, limitError(err, len(t.dirs)))
		}
		t.linked[rel] = true
	case !linked && t.linked[rel]:
		t.unlink(rel)
	}
	return nil
}

// unlink stops watching a linked file itself.
func (t *tree) unlink(rel string) {
	if t.linked[rel] {
		delete(t.linked, rel)
		_ = t.w.fsw.Remove(t.w.abs(rel)) // gone with its name already, most often
	}
}

// remove drops an entry, with everything under it for a folder.
func (t *tree) remove(rel string, old *node, ch *changeSet) {
	t.unlink(rel)
	dir, name := splitRel(rel)
	delete(t.dirs[dir], name)
	delete(t.unhashed, rel)
	t.touched[dir] = true
	if old.entry.Visible {
		ch.add(rel)
	}
	if !old.entry.Info.Mode.IsDir() || old.entry.Opaque {
		return
	}
	prefix := rel + "/"
	for d, nodes := range t.dirs {
		if d != rel && !strings.HasPrefix(d, prefix) {
			continue
		}
		for name, n := range nodes {
			if n.entry.Visible {
				ch.add(joinRel(d, name))
			}
			delete(t.unhashed, joinRel(d, name))
			t.unlink(joinRel(d, name))
		}
		if info, ok := t.dirInfo[d]; ok && t.dropped != nil {
			t.dropped[info.Ino] = true
		}
		delete(t.dirs, d)
		delete(t.dirInfo, d)
		delete(t.touched, d)
		_ = t.w.fsw.Remove(t.w.abs(d)) // gone with its folder already, most often
	}
}

// rewatch takes again each folder of the mirror that is one of the folders whose watch was just
// dropped (dropped: their inode numbers), under another name. A watch is an inode's: a folder
// moved into a folder being listed is found there, by the listing, before its old name's event,
// and watching it answers the watch it had, which fsnotify keeps under the old name; dropping the
// old name then drops the watch of the new one, whose events would never come again.
func (t *tree) rewatch(dropped map[uint64]bool, ch *changeSet) error {
	if len(dropped) == 0 {
		return nil
	}
	var dirs []string
	for d, info := range t.dirInfo {
		if d != "." && dropped[info.Ino] {
			dirs = append(dirs, d)
		}
	}
	slices.Sort(dirs)
	done := ""
	for _, d := range dirs {
		if done != "" && strings.HasPrefix(d, done+"/") {
			continue // taken again with the folder holding it
		}
		if err := t.redoDir(d, ch); err != nil {
			return err
		}
		done = d
	}
	return nil
}

// redoDir takes a watched folder again from its parent's point of view (a .git appeared in it or
// left it).
func (t *tree) redoDir(dir string, ch *changeSet) error {
	parent, name := splitRel(dir)
	old := t.dirs[parent][name]
	if old == nil {
		return nil
	}
	t.remove(dir, old, ch)
	fi, err := os.Lstat(t.w.abs(dir))
	if err != nil || !fi.IsDir() {
		return nil
	}
	t.newDirs[dir] = true
	return t.addDir(dir, infoOf(t.w.abs(dir), fi), ch)
}

// opaque reports whether a folder is never watched: the root's .git, the state folder,
// node_modules, a nested repository.
func (t *tree) opaque(rel string) bool {
	_, name := splitRel(rel)
	if rel == ".git" || (t.stateRel != "" && rel == t.stateRel) || name == "node_modules" {
		return true
	}
	if t.w.opts.StateDir != "" && t.w.abs(rel) == t.w.opts.StateDir {
		return true
	}
	_, err := os.Lstat(t.w.abs(rel) + "/.git")
	return err == nil
}

// addDir records a folder's entry in its parent and, unless it is opaque, watches and lists it.
func (t *tree) addDir(rel string, info filestate.Info, ch *changeSet) error {
	dir, name := splitRel(rel)
	op := t.opaque(rel)
	t.dirs[dir][name] = &node{entry: filestate.Entry{Name: name, Info: info, Opaque: op}}
	t.touched[dir] = true
	if op {
		return nil
	}
	return t.scanDir(rel, ch)
}

// scanDir watches a folder, then lists it (in that order: a file created after the listing is
// an event), recording each entry and scanning each folder in it.
func (t *tree) scanDir(rel string, ch *changeSet) error {
	abs := t.w.abs(rel)
	if err := t.addWatch(abs); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed meanwhile: its parent's event says so
		}
		return fmt.Errorf("cannot watch %s: %w", rel, limitError(err, len(t.dirs)+1))
	}
	self, err := os.Lstat(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	t.dirInfo[rel] = filestate.InfoOf(self)
	entries, err := os.ReadDir(abs)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("cannot watch %s: %w", rel, err)
	}
	t.dirs[rel] = map[string]*node{}
	t.touched[rel] = true
	for _, de := range entries {
		child := joinRel(rel, de.Name())
		fi, err := os.Lstat(t.w.abs(child))
		if err != nil {
			continue // removed meanwhile
		}
		info := infoOf(t.w.abs(child), fi)
		switch {
		case fi.IsDir():
			if err := t.addDir(child, info, ch); err != nil {
				return err
			}
		case fi.Mode().IsRegular() || fi.Mode()&fs.ModeSymlink != 0:
			t.putFile(rel, de.Name(), info, nil, ch)
			if err := t.watchLinked(child, fi); err != nil {
				return err
			}
		}
	}
	return nil
}

// addWatch watches the folder abs (the test's fault first, where one is set).
func (t *tree) addWatch(abs string) error {
	if add := t.w.opts.addWatch; add != nil {
		if err := add(abs); err != nil {
			return err
		}
	}
	return t.w.fsw.Add(abs)
}

// infoOf answers a file's Info, its link target read for a symlink.
func infoOf(abs string, fi fs.FileInfo) filestate.Info {
	info := filestate.InfoOf(fi)
	if fi.Mode()&fs.ModeSymlink != 0 {
		info.Link, _ = os.Readlink(abs)
	}
	return info
}

// eachFile calls fn with every file entry of the mirror.
func (t *tree) eachFile(fn func(rel string, n *node)) {
	for dir, nodes := range t.dirs {
		for name, n := range nodes {
			if !n.entry.Info.Mode.IsDir() {
				fn(joinRel(dir, name), n)
			}
		}
	}
}

// relistAll asks git what it shows of every file (outside git, everything is shown).
func (t *tree) relistAll(ctx context.Context, ch *changeSet) error {
	var set map[string]bool
	if t.w.git.on {
		var err error
		if set, err = t.w.git.visibleSet(ctx, t.w.opts.Root, t.w.opts.StateDir, nil); err != nil {
			return err
		}
	}
	t.eachFile(func(rel string, n *node) {
		visible := !t.w.git.on || set[rel]
		if visible != n.entry.Visible {
			ch.add(rel)
			dir, _ := splitRel(rel)
			t.touched[dir] = true
			n.entry.Visible = visible
			if visible && n.entry.Info.Hash == "" {
				t.unhashed[rel] = n
			}
		}
		n.resolve = false
	})
	return nil
}

// maxSpecs bounds the paths one git call is asked about; past it, git lists everything.
const maxSpecs = 1000

// resolveNew asks git about the files created since the last settle: the new folders whole, and
// each new file in a folder that was there.
func (t *tree) resolveNew(ctx context.Context, ch *changeSet) error {
	var files []string
	specs := map[string]bool{}
	for rel, n := range t.unhashed {
		if !n.resolve {
			continue
		}
		files = append(files, rel)
		spec := rel
		for d, _ := splitRel(rel); d != "."; d, _ = splitRel(d) {
			if t.newDirs[d] {
				spec = d
			}
		}
		specs[spec] = true
	}
	if len(files) == 0 {
		return nil
	}
	if len(specs) > maxSpecs {
		return t.relistAll(ctx, ch)
	}
	list := make([]string, 0, len(specs))
	for s := range specs {
		list = append(list, s)
	}
	slices.Sort(list)
	set, err := t.w.git.visibleSet(ctx, t.w.opts.Root, t.w.opts.StateDir, list)
	if err != nil {
		return err
	}
	for _, rel := range files {
		n := t.unhashed[rel]
		n.resolve = false
		if set[rel] {
			n.entry.Visible = true
			ch.add(rel)
			dir, _ := splitRel(rel)
			t.touched[dir] = true
		}
	}
	return nil
}

// hashable reports whether the watcher keeps a file's hash: git shows it, or a task's outputs may
// hold it.
func (t *tree) hashable(rel string, n *node) bool {
	return n.entry.Visible || (t.hashed != nil && t.hashed(rel))
}

// rehashAll looks again at every file without a hash (what is hashed changed).
func (t *tree) rehashAll() {
	t.eachFile(func(rel string, n *node) {
		if n.entry.Info.Hash == "" {
			t.unhashed[rel] = n
		}
	})
	t.seedAll()
}

// seedAll takes the hashes a stat cache row vouches for.
func (t *tree) seedAll() {
	if t.w.opts.Seed == nil {
		return
	}
	for rel, n := range t.unhashed {
		if n.resolve || !n.entry.Info.Mode.IsRegular() || !t.hashable(rel, n) {
			continue
		}
		if sum, ok := t.w.opts.Seed(rel, n.entry.Info); ok && strings.Contains(sum, ":") {
			// A key's digest (the hasher's row of an input): the raw hash is still to take.
			n.entry.Info.Digest = sum
		} else if ok {
			n.entry.Info.Hash, n.hashedAt = sum, time.Now().UnixNano()
			delete(t.unhashed, rel)
		}
	}
}

// hashJob is one file to hash: its path and the entry's generation when asked.
type hashJob struct {
	rel string
	gen uint64
	sum string
	// digest is the file's key digest where its content allows one (filestate.HashFileDigest).
	digest string
	at     int64
	err    error
}

// hashJobs answers the files to hash, settling at once those that need no read (a symlink, whose
// hash is its target's) and those no longer to hash.
func (t *tree) hashJobs() []hashJob {
	var jobs []hashJob
	for rel, n := range t.unhashed {
		switch {
		case n.resolve:
			continue
		case !t.hashable(rel, n):
			delete(t.unhashed, rel)
		case n.entry.Info.Mode&fs.ModeSymlink != 0:
			n.entry.Info.Hash = filestate.LinkHash(n.entry.Info.Link)
			dir, _ := splitRel(rel)
			t.touched[dir] = true
			delete(t.unhashed, rel)
		default:
			jobs = append(jobs, hashJob{rel: rel, gen: n.gen})
		}
	}
	return jobs
}

// jobBytes answers how many bytes the jobs' files hold.
func (t *tree) jobBytes(jobs []hashJob) int64 {
	var n int64
	for _, j := range jobs {
		if node := t.unhashed[j.rel]; node != nil {
			n += node.entry.Info.Size
		}
	}
	return n
}

// hashAll hashes the jobs' files.
func hashAll(ctx context.Context, root string, jobs []hashJob) []hashJob {
	format := filestate.ObjectFormat(root)
	for i := range jobs {
		if ctx.Err() != nil {
			return jobs[:i]
		}
		jobs[i].at = time.Now().UnixNano()
		jobs[i].sum, jobs[i].digest, jobs[i].err = filestate.HashFileDigest(root+"/"+jobs[i].rel, format)
	}
	return jobs
}

// applyHashes records the hashes taken, each only if its entry did not change meanwhile; it
// reports whether any was.
func (t *tree) applyHashes(done []hashJob) bool {
	changed := false
	for _, j := range done {
		n := t.unhashed[j.rel]
		if n == nil || n.gen != j.gen {
			continue
		}
		delete(t.unhashed, j.rel)
		if j.err != nil {
			continue // unreadable or gone: the asker hashes it, or its event says so
		}
		n.entry.Info.Hash, n.entry.Info.Digest, n.hashedAt = j.sum, j.digest, j.at
		dir, _ := splitRel(j.rel)
		t.touched[dir] = true
		changed = true
	}
	return changed
}

// publish answers the snapshot of the mirror, rebuilding only the folders changed since the last.
func (t *tree) publish() *filestate.Snapshot {
	if len(t.touched) == 0 && t.last != nil {
		return t.last
	}
	dirs := make(map[string]*filestate.Dir, len(t.dirs))
	for dir := range t.dirs {
		if d, ok := t.published[dir]; ok && !t.touched[dir] {
			dirs[dir] = d
			continue
		}
		nodes := t.dirs[dir]
		d := &filestate.Dir{Info: t.dirInfo[dir], Entries: make([]filestate.Entry, 0, len(nodes))}
		for _, n := range nodes {
			d.Entries = append(d.Entries, n.entry)
		}
		slices.SortFunc(d.Entries, func(a, b filestate.Entry) int { return strings.Compare(a.Name, b.Name) })
		dirs[dir] = d
	}
	t.touched = map[string]bool{}
	t.published = dirs
	t.last = filestate.NewSnapshot(t.w.opts.Root, t.w.opts.StateDir, dirs)
	return t.last
}
