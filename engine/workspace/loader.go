package workspace

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/conc/iter"

	"github.com/vzn/vx/engine/atomicfile"
	"github.com/vzn/vx/engine/config"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/mask"
	"github.com/vzn/vx/engine/statedirs"
	"github.com/vzn/vx/engine/vxerr"
)

// Loader evaluates a workspace's config and resolves it, keeping the result so that a later Load
// in the same process answers from memory when no config file, package.json or project folder
// changed. It is safe for concurrent use; the MCP server keeps one for its whole life, so an
// edited config is seen on the next call with no restart.
type Loader struct {
	opts Options
	mu   sync.Mutex
	last *loaded
}

// loaded is one resolved workspace and the stamps of everything it was built from. It is kept in
// memory by a Loader and on disk (resolved.gob under the state folder's config/), so that the next
// process answers without evaluating anything when nothing changed.
type loaded struct {
	Version string
	Root    string
	WS      *graph.Workspace
	Stamps  map[string]stamp
	// ConfigFiles are the stamped files the config itself was evaluated from: the workspace's
	// config and what it imports (see LoadConfig).
	ConfigFiles []string
	// SecretNames are the secrets the tasks read: their values come from the environment of
	// each process, never from the cache.
	SecretNames []string
	// EmptyLists numbers the kept workspace's empty lists (see emptyLists); written with it.
	EmptyLists []uint32
	// broken marks a kept workspace whose config has since failed to load: it serves only masking.
	broken bool
	// unkept marks a workspace that could not be written into the state folder (Keep).
	unkept bool
	// settled marks a kept workspace of which unchanged trusted a racy stamp from now on: kept
	// again, so that the next process stats it instead of hashing its content once more.
	settled bool
}

// stamp is what a stat says of a file or folder; a change of any part means it changed. Racy is
// set when the file changed so close to the moment it was stamped that a later change within the
// same timestamp tick could go unseen: such a stamp also keeps Sum, the hash of the file's content
// (of a folder's sorted entry names), and matches only while that is unchanged too.
type stamp struct {
	Exists bool
	Size   int64
	Mtime  int64
	Ino    uint64
	Ctime  int64
	Racy   bool
	Sum    [sha256.Size]byte
}

// racyWindow is how close to the stamping a change must be for the stamp not to be trusted.
const racyWindow = 2 * time.Second

// unknownSum is the content sum of a file whose content at its evaluation is not known: no
// file's content hashes to it, so its stamp never matches.
var unknownSum = [sha256.Size]byte{0: 0xff, 1: 0xff, 30: 0xff, 31: 0xff}

func stampOf(path string) stamp {
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{}
	}
	s := stamp{Exists: true, Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
	s.Ino, s.Ctime = inodeAndCtime(fi)
	return s
}

// NewLoader returns a Loader for the workspace found from opts.Dir. A relative Dir is made
// absolute now, once: a server's every Load finds the root from it.
func NewLoader(opts Options) *Loader {
	if abs, err := filepath.Abs(opts.Dir); err == nil {
		opts.Dir = abs
	}
	return &Loader{opts: opts}
}

// Root returns the workspace root.
func (l *Loader) Root() (string, error) { return FindRoot(l.opts.Dir) }

// Load evaluates (or reuses) the config and returns the resolved workspace. The returned
// workspace is shared: callers must not change it.
func (l *Loader) Load(ctx context.Context) (*graph.Workspace, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// Started at the root, discovery finds the root while its config is there, and the config is
	// one of the stamps: a workspace whose stamps all match needs no discovery first.
	if l.last != nil && l.last.Root == l.opts.Dir && l.last.unchanged() {
		return l.last.WS, nil
	}
	root, err := FindRoot(l.opts.Dir)
	if err != nil {
		return nil, err
	}
	if l.last != nil && l.last.Root == root && l.last.Root != l.opts.Dir && l.last.unchanged() {
		return l.last.WS, nil
	}
	cacheDir := CacheDir(root, l.opts.getenv)
	if c := readResolved(cacheDir, root, l.opts.Version); c != nil {
		l.placeStore(c.WS)
		c.WS.Index()
		if c.settled {
			c.settled = false
			c.unkept = !writeResolved(cacheDir, c)
		}
		c.WS.Secrets = secretValues(c.SecretNames, l.opts.getenv)
		l.last = c
		return c.WS, nil
	}
	c, err := l.evaluate(ctx, root, cacheDir, nil)
	if err != nil {
		// The last good workspace stays for Masker; the next Load evaluates again.
		if l.last != nil {
			l.last.Stamps = nil
			l.last.broken = true
		}
		return nil, err
	}
	l.placeStore(c.WS)
	l.last = c
	c.unkept = !writeResolved(cacheDir, c)
	return c.WS, nil
}

// Keep writes the workspace the last Load evaluated into the state folder for the next process
// to read back, where that Load could not because the folder did not exist yet: a run makes it
// after its config is loaded, and without this the run after a fresh clone's first evaluates
// the config again.
func (l *Loader) Keep() {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.last
	if c == nil || c.broken || !c.unkept {
		return
	}
	c.unkept = !writeResolved(CacheDir(c.Root, l.opts.getenv), c)
}

// placeStore sets ws's shared store folder and its source, from the loader's --cache-dir, the
// environment and the config's cacheDir: these are the process's, not the kept workspace's, so
// they are set on every workspace the loader resolves or reads back.
func (l *Loader) placeStore(ws *graph.Workspace) {
	d := StoreDirs(ws.Root, l.opts.CacheDirFlag, ws.ConfiguredCacheDir, l.opts.getenv)
	ws.SharedDir, ws.SharedDirSource = d.Shared, string(d.SharedSource)
}

// evaluate evaluates and resolves the workspace at root, leaving out the project folders of skip:
// in a child process when the loader isolates evaluation, unless the config is only data (see
// config.ErrNotData), which runs nothing of the repository's and so is read in process. Its error
// is masked: the secrets met before it, and those of the last workspace this loader or the last
// process resolved, read ***.
func (l *Loader) evaluate(ctx context.Context, root, cacheDir string, skip map[string]bool) (*loaded, error) {
	setup := evalSetup{root: root, cacheDir: cacheDir, version: l.opts.Version,
		console: l.opts.Console, getenv: l.opts.getenv, skip: skip}
	var c *loaded
	var names []string
	var err error
	if iso := l.opts.Isolate; iso == nil {
		c, names, err = evalInProcess(ctx, setup)
	} else {
		err = config.ErrNotData
		if !iso.alwaysChild {
			setup.dataOnly = true
			c, names, err = evalInProcess(ctx, setup)
		}
		if errors.Is(err, config.ErrNotData) {
			c, names, err = l.evalIsolated(ctx, root, cacheDir, skip)
		}
	}
	if err != nil {
		return nil, maskError(err, mask.New(secretValues(l.knownSecrets(cacheDir, names), l.opts.getenv)...))
	}
	c.WS.Secrets = secretValues(c.SecretNames, l.opts.getenv)
	return c, nil
}

// knownSecrets adds to names the secrets of the last workspace resolved here and of the one the
// state folder keeps, whatever changed since: a config that fails before its secrets are read
// still has them masked in its error.
func (l *Loader) knownSecrets(cacheDir string, names []string) []string {
	all := map[string]bool{}
	for _, n := range names {
		all[n] = true
	}
	if l.last != nil {
		for _, n := range l.last.SecretNames {
			all[n] = true
		}
	}
	for _, n := range keptSecretNames(cacheDir) {
		all[n] = true
	}
	return slices.Sorted(maps.Keys(all))
}

// newLoaded stamps what b built ws from, for a later Load to compare. before holds stamps taken
// before the evaluation read their files: a file whose stamp moved since may have been read before
// or after its change, so its stamp matches nothing and the next Load evaluates again.
func newLoaded(version, root string, b *build, ws *graph.Workspace, before map[string]stamp) *loaded {
	configFiles := append([]string{filepath.Join(root, ConfigFileName)}, b.sess.Inputs()...)
	watched := append(slices.Clone(configFiles), b.watched...)
	sort.Strings(watched)
	now := time.Now()
	stamps := make(map[string]stamp, len(watched))
	for _, p := range watched {
		st := stampOf(p)
		pre, known := before[p]
		switch {
		case known && pre != st:
			st.Racy, st.Sum = true, unknownSum
		case st.Exists && now.Sub(time.Unix(0, st.Mtime)) < racyWindow:
			st.Racy, st.Sum = true, contentSum(p)
		}
		stamps[p] = st
	}
	return &loaded{Version: version, Root: root, WS: ws, Stamps: stamps, ConfigFiles: configFiles,
		SecretNames: slices.Sorted(maps.Keys(b.allSecretNames(ws)))}
}

// LoadConfig is Load for an answer that only the workspace's config decides (its mcp() options:
// the tools listed, the answer budget): while the config file and what it imports stat as they
// did, the last workspace, whatever package.json file or project folder changed since; else
// Load. A server asks it twice a call, for one stat or a few where Load takes a few a project.
func (l *Loader) LoadConfig(ctx context.Context) (*graph.Workspace, error) {
	l.mu.Lock()
	if c := l.last; c != nil && c.Root == l.opts.Dir && !c.broken && len(c.ConfigFiles) > 0 && c.statsMatch(c.ConfigFiles) {
		l.mu.Unlock()
		return c.WS, nil
	}
	l.mu.Unlock()
	return l.Load(ctx)
}

// maskError masks secret values in a load error, keeping its kind.
func maskError(err error, m *mask.Masker) error {
	if m.Empty() {
		return err
	}
	var ce *vxerr.ConfigError
	if errors.As(err, &ce) {
		masked := *ce
		masked.Msg = m.String(ce.Msg)
		return &masked
	}
	var ue *vxerr.UsageError
	if errors.As(err, &ue) {
		return &vxerr.UsageError{Msg: m.String(ue.Msg)}
	}
	return errors.New(m.String(err.Error()))
}

// unchanged reports whether every watched file and folder stats as it did. A racy stamp that
// still matches, checked once its change is older than racyWindow, is trusted from then on: a
// later change moves the stat, so its content need not be hashed at every Load again (an MCP
// server asks before every answer). It changes c: its caller owns c (a Load, under the Loader's
// lock, or readResolved, on the copy it decodes).
func (c *loaded) unchanged() bool {
	if c.broken {
		return false
	}
	checked := time.Now()
	if !c.statsMatch(slices.Collect(maps.Keys(c.Stamps))) {
		return false
	}
	for p, s := range c.Stamps {
		if s.Racy && checked.Sub(time.Unix(0, s.Mtime)) >= racyWindow {
			s.Racy, s.Sum = false, [sha256.Size]byte{}
			c.Stamps[p] = s
			c.settled = true
		}
	}
	return true
}

// statsMatch reports whether the stamps of paths match what they are now.
func (c *loaded) statsMatch(paths []string) bool {
	// A stat is a syscall: check hundreds of them in parallel, in chunks.
	const chunk = 128
	chunks := make([][]string, 0, len(paths)/chunk+1)
	for len(paths) > chunk {
		chunks, paths = append(chunks, paths[:chunk]), paths[chunk:]
	}
	chunks = append(chunks, paths)
	match := func(ps *[]string) bool {
		for _, p := range *ps {
			s := c.Stamps[p]
			now := stampOf(p)
			if s.Racy {
				now.Racy, now.Sum = true, contentSum(p)
			}
			if now != s {
				return false
			}
		}
		return true
	}
	if len(chunks) == 1 { // a few stats: no goroutines for them
		return match(&chunks[0])
	}
	same := iter.Map(chunks, match)
	for _, ok := range same {
		if !ok {
			return false
		}
	}
	return true
}

// contentSum hashes a file's content, or a folder's sorted entry names; unreadable is all zero.
func contentSum(path string) [sha256.Size]byte {
	if data, err := os.ReadFile(path); err == nil {
		return sha256.Sum256(data)
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return [sha256.Size]byte{}
	}
	h := sha256.New()
	for _, e := range entries {
		h.Write([]byte(e.Name() + "\x00"))
	}
	var sum [sha256.Size]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

// resolvedFormat versions the kept workspace's layout beside vx's own version: bump it when a
// field of graph.Workspace, Project or Task changes, so that no process reads an older layout.
const resolvedFormat = "7"

// resolvedFile is where a resolved workspace is kept between processes.
func resolvedFile(cacheDir string) string { return filepath.Join(cacheDir, "config", "resolved.gob") }

// readResolved reads the kept workspace; anything unreadable or of another version is a miss.
// It answers only a workspace whose stamps all still match; the stamps are checked while the
// workspace itself is decoded, the two halves of the file.
func readResolved(cacheDir, root, version string) *loaded {
	f, err := os.Open(resolvedFile(cacheDir))
	if err != nil {
		return nil
	}
	defer f.Close()
	dec := gob.NewDecoder(bufio.NewReader(f))
	var c loaded
	if dec.Decode(&c) != nil || c.Version != version+"/"+resolvedFormat || c.Root != root {
		return nil
	}
	same := make(chan bool, 1)
	go func() { same <- c.unchanged() }()
	var ws graph.Workspace
	err = dec.Decode(&ws)
	if !<-same || err != nil || !restoreEmptyLists(&ws, c.EmptyLists) {
		return nil
	}
	c.WS, c.EmptyLists = &ws, nil
	return &c
}

// writeResolved keeps the workspace for the next process, atomically, and only where the state
// folder already exists: loading config never creates it.
func writeResolved(cacheDir string, c *loaded) (written bool) {
	if fi, err := os.Stat(cacheDir); err != nil || !fi.IsDir() {
		return false
	}
	dir := filepath.Dir(resolvedFile(cacheDir))
	if os.MkdirAll(dir, 0o755) != nil {
		return false
	}
	err := atomicfile.Write(resolvedFile(cacheDir), func(f io.Writer) error {
		w := bufio.NewWriter(f)
		return errors.Join(encodeLoaded(gob.NewEncoder(w), c), w.Flush())
	})
	return err == nil
}

// encodeLoaded writes c as resolved.gob keeps it, and as an evaluating child answers it: the
// stamps first, then the workspace, so a reader checks the one while decoding the other. Secret
// values come from each process's environment; they are never written down.
func encodeLoaded(enc *gob.Encoder, c *loaded) error {
	noSecrets := *c.WS
	noSecrets.Secrets = nil
	header := *c
	header.Version += "/" + resolvedFormat
	header.WS = nil
	header.EmptyLists = emptyLists(&noSecrets)
	return errors.Join(enc.Encode(&header), enc.Encode(&noSecrets))
}

// decodeLoaded reads what encodeLoaded wrote, without checking its stamps.
func decodeLoaded(dec *gob.Decoder) (*loaded, error) {
	var c loaded
	if err := dec.Decode(&c); err != nil {
		return nil, err
	}
	var ws graph.Workspace
	if err := dec.Decode(&ws); err != nil {
		return nil, err
	}
	if !restoreEmptyLists(&ws, c.EmptyLists) {
		return nil, errors.New("the kept workspace's empty lists do not fit it")
	}
	c.WS, c.EmptyLists = &ws, nil
	return &c, nil
}

// keptSecretNames answers the secret names of the workspace the state folder keeps, whether or
// not it is still current.
func keptSecretNames(cacheDir string) []string {
	f, err := os.Open(resolvedFile(cacheDir))
	if err != nil {
		return nil
	}
	defer f.Close()
	var c loaded
	if gob.NewDecoder(bufio.NewReader(f)).Decode(&c) != nil {
		return nil
	}
	return c.SecretNames
}

// gob writes an empty slice as it writes a nil one — not at all — so a kept `inputs: []` (no
// files) would read back as nil (every file of the project) and `env: []` print null: a task's
// key would change between processes. Every slice of the workspace is numbered in one fixed
// walk; the kept form lists the numbers of the empty, non-nil ones, and reading it back makes
// them empty again. The walk covers every exported field of every type the workspace holds, so
// a field added later is kept right with no change here.

// listWalk numbers the slices reachable from a value: struct fields in order, slice elements in
// order, map values by sorted key. A nil slice and an empty one both have no elements, so the
// numbering of a workspace and of its decoded copy agree.
type listWalk struct {
	holds map[reflect.Type]bool // whether a type can hold a slice, memoised
	// fields are, by struct type, the indexes of its exported fields that can hold a slice.
	fields map[reflect.Type][]int
	next   uint32
	// restoring is set while the walk sets slices: a map value it changed is written back.
	restoring bool
	// set counts the slices set while restoring; done, once true, ends the walk.
	set   int
	done  func() bool
	visit func(n uint32, list reflect.Value)
}

// listFields answers the indexes of the exported fields of struct type t that can hold a slice.
func (w *listWalk) listFields(t reflect.Type) []int {
	if f, ok := w.fields[t]; ok {
		return f
	}
	var out []int
	for i := range t.NumField() {
		if f := t.Field(i); f.IsExported() && w.holdsLists(f.Type) {
			out = append(out, i)
		}
	}
	if w.fields == nil {
		w.fields = map[reflect.Type][]int{}
	}
	w.fields[t] = out
	return out
}

// holdsLists reports whether a value of type t can hold a slice that gob would encode. A type
// with its own gob encoding is left to it.
func (w *listWalk) holdsLists(t reflect.Type) bool {
	if held, ok := w.holds[t]; ok {
		return held
	}
	w.holds[t] = false // a type holding itself holds what its other fields hold
	if t.Implements(reflect.TypeFor[gob.GobEncoder]()) || reflect.PointerTo(t).Implements(reflect.TypeFor[gob.GobEncoder]()) {
		return false
	}
	held := false
	switch t.Kind() {
	case reflect.Slice:
		held = true
	case reflect.Pointer, reflect.Array, reflect.Map:
		held = w.holdsLists(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && w.holdsLists(f.Type) {
				held = true
			}
		}
	}
	w.holds[t] = held
	return held
}

// walk visits the slices reachable from v in their fixed order.
func (w *listWalk) walk(v reflect.Value) {
	if (w.done != nil && w.done()) || !w.holdsLists(v.Type()) {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			w.walk(v.Elem())
		}
	case reflect.Struct:
		for _, i := range w.listFields(v.Type()) {
			w.walk(v.Field(i))
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice {
			w.visit(w.next, v)
			w.next++
		}
		for i := range v.Len() {
			w.walk(v.Index(i))
		}
	case reflect.Map:
		type entry struct {
			order string
			key   reflect.Value
		}
		entries := make([]entry, 0, v.Len())
		for it := v.MapRange(); it.Next(); {
			k := it.Key()
			if k.Kind() == reflect.String {
				entries = append(entries, entry{k.String(), k})
			} else {
				entries = append(entries, entry{fmt.Sprint(k.Interface()), k})
			}
		}
		slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.order, b.order) })
		for _, e := range entries {
			val := v.MapIndex(e.key)
			if val.Kind() == reflect.Pointer {
				w.walk(val)
				continue
			}
			// A map value cannot be set in place: walk a copy, and write it back when restoring
			// set a slice in it.
			cp := reflect.New(val.Type()).Elem()
			cp.Set(val)
			set := w.set
			w.walk(cp)
			if w.restoring && w.set != set {
				v.SetMapIndex(e.key, cp)
			}
		}
	}
}

// emptyLists answers the numbers of ws's empty, non-nil slices, in walk order.
func emptyLists(ws *graph.Workspace) []uint32 {
	var empty []uint32
	w := &listWalk{holds: map[reflect.Type]bool{}, visit: func(n uint32, list reflect.Value) {
		if list.Len() == 0 && !list.IsNil() {
			empty = append(empty, n)
		}
	}}
	w.walk(reflect.ValueOf(ws).Elem())
	return empty
}

// restoreEmptyLists makes the numbered slices of a decoded ws empty again; false when the numbers
// do not fit it (a damaged file).
func restoreEmptyLists(ws *graph.Workspace, empty []uint32) bool {
	ok := true
	// One empty slice per type serves them all: an append to it allocates anew.
	shared := map[reflect.Type]reflect.Value{}
	w := &listWalk{holds: map[reflect.Type]bool{}, restoring: true}
	// The numbers are in walk order: past the last one, nothing is left to set.
	w.done = func() bool { return len(empty) == 0 }
	w.visit = func(n uint32, list reflect.Value) {
		if len(empty) == 0 || empty[0] != n {
			return
		}
		empty = empty[1:]
		if list.Len() > 0 || !list.CanSet() {
			ok = false
			return
		}
		e, found := shared[list.Type()]
		if !found {
			e = reflect.MakeSlice(list.Type(), 0, 0)
			shared[list.Type()] = e
		}
		list.Set(e)
		w.set++
	}
	w.walk(reflect.ValueOf(ws).Elem())
	return ok && len(empty) == 0
}

// secretValues reads the named secrets from the environment, for masking.
func secretValues(names []string, getenv func(string) string) []string {
	var vals []string
	for _, n := range names {
		if v := getenv(n); v != "" {
			vals = append(vals, v)
		}
	}
	return vals
}

// Masker masks the secret values of the last workspace this loader resolved (or, when the last
// load failed, of the last one that succeeded), for texts that leave vx.
func (l *Loader) Masker() *mask.Masker {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		return mask.New()
	}
	return mask.New(l.last.WS.Secrets...)
}

// Sources answers the files and folders (absolute) the last loaded workspace was made from, whose
// stamps the next Load compares; nil when the last load failed. A long-lived process that watches
// them (engine/watch) need not call Load while none changed.
func (l *Loader) Sources() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil || l.last.broken || l.last.Stamps == nil {
		return nil
	}
	out := make([]string, 0, len(l.last.Stamps))
	for p := range l.last.Stamps {
		out = append(out, p)
	}
	return out
}

// LoadPartial is Load for answers that must not fail on one broken project config (vx info): when
// a vx.project.ts does not load, its project is left out and its error listed, and the rest of the
// workspace resolves. err is the load's error when even that is impossible (the workspace config
// itself, or a file several configs share, is broken); failed then holds it too.
func (l *Loader) LoadPartial(ctx context.Context) (ws *graph.Workspace, failed []error, err error) {
	ws, err = l.Load(ctx)
	if err == nil {
		return ws, nil, nil
	}
	root, rerr := FindRoot(l.opts.Dir)
	if rerr != nil {
		return nil, []error{err}, err
	}
	failed = []error{err}
	skip := map[string]bool{}
	for {
		var ce *vxerr.ConfigError
		if !errors.As(err, &ce) || path.Base(ce.File) != ProjectConfigFileName || skip[path.Dir(ce.File)] {
			return nil, failed, failed[0]
		}
		skip[path.Dir(ce.File)] = true
		var c *loaded
		c, err = l.evaluate(ctx, root, CacheDir(root, l.opts.getenv), skip)
		if err == nil {
			l.placeStore(c.WS)
			return c.WS, failed, nil
		}
		failed = append(failed, err)
	}
}

// StoreDirs answers the workspace's two state folders as a verb that does not need the config
// sees them (the history readers, vx cache prune): with the config's cacheDir when the config
// loads; else, where neither --cache-dir nor VX_CACHE_DIR names the shared store, with Shared ""
// (the store the checkout's index records its last run used), so that a broken config never
// hides the cache.
func (l *Loader) StoreDirs(ctx context.Context) (statedirs.Dirs, error) {
	root, err := FindRoot(l.opts.Dir)
	if err != nil {
		return statedirs.Dirs{}, err
	}
	ws, err := l.LoadConfig(ctx)
	if err == nil && ws.Root == root {
		return StoreDirs(root, l.opts.CacheDirFlag, ws.ConfiguredCacheDir, l.opts.getenv), nil
	}
	d := StoreDirs(root, l.opts.CacheDirFlag, "", l.opts.getenv)
	if d.SharedSource == statedirs.SourceDefault || d.SharedSource == statedirs.SourceNoUserCache {
		d.Shared, d.SharedSource = "", ""
	}
	return d, nil
}
