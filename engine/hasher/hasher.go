// Package hasher computes a task's cache key: it lists the task's input files (by default every file
// of the project that git does not ignore, else the task's input globs), hashes them through a stat
// cache so that an unchanged file costs a stat rather than a read, and hashes a JSON manifest of
// everything that defines the work. The manifest is kept with each execution so that `vx why` can
// say what moved.
package hasher

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vzn/vx/engine/counters"
	"github.com/vzn/vx/engine/depversions"
	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/git"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/mask"
	"github.com/vzn/vx/engine/pathglob"
	"github.com/vzn/vx/engine/store"
)

// CacheVersion enters every cache key: changing how keys or cache entries are made changes it, so
// entries of an older vx are never hit.
const CacheVersion = "3"

// racyWindow is how close to the moment it was hashed a file's mtime may be before its stat cache
// row is distrusted: a write within the same timestamp tick leaves size and mtime unchanged. A
// file system that stamps whole seconds (or FAT's two) needs the long window; one that stamps
// nanoseconds does so from the kernel's coarse clock, a tick of at most a few milliseconds behind
// the real time, so the short one is ample there and a file rewritten with the same content is
// re-hashed once, not by every run for two seconds.
const (
	racyWindow     = 2 * time.Second
	fineRacyWindow = 100 * time.Millisecond
)

// Manifest is everything that defines a task's work. Its JSON encoding (map keys sorted) is hashed
// into the task's cache key.
type Manifest struct {
	Version string `json:"version"`
	TaskID  string `json:"taskId"`
	Command string `json:"command"`
	// Env holds the values of the task's env names ("" for an unset variable).
	Env map[string]string `json:"env"`
	// ExecEnv holds the exec.env given to the command: literal values, and secrets as
	// "secret:sha256:<hex>" of their value (never the value).
	ExecEnv map[string]string `json:"execEnv"`
	Outputs []string          `json:"outputs"`
	// Sandbox is the sandbox the task runs under, as declared (never what the host enforces of
	// it); nil for none.
	Sandbox *graph.Sandbox `json:"sandbox,omitempty"`
	// Scripts holds the text of the package.json scripts the command runs, by name.
	Scripts map[string]string `json:"scripts,omitempty"`
	// Files maps each input file (relative to the project folder; "//"-prefixed and relative to
	// the workspace root when outside it) to its digest: git's blob id of the content as git
	// stores it (a symlink: "link:" and the blob id of its target's text), see digest.go.
	Files map[string]string `json:"files"`
	// Global maps each file of the workspace's globalInputs (root-relative) to its digest.
	Global map[string]string `json:"global,omitempty"`
	// Packages maps each external package the project resolves to (with the root's own
	// dependencies) to its resolved version(s), read from the lockfile.
	Packages map[string]string `json:"packages,omitempty"`
	// Lockfile is the SHA-256 of a lockfile vx cannot parse, which then stands for every package.
	Lockfile string `json:"lockfile,omitempty"`
	// Deps maps each task this one depends on to its cache key.
	Deps map[string]string `json:"deps"`
	// Through maps each project a `^task` dependency passed through (it lacks the task) to a
	// digest of its files.
	Through map[string]string `json:"through,omitempty"`
	// DepFiles maps each project the task's project depends on, transitively, to a digest of its
	// git-visible files, when the task's inputs name `^default` (graph.DependencyDefault).
	DepFiles map[string]string `json:"depFiles,omitempty"`
	// Runtime maps each runtime probe the task declares, and the workspace's (`node -v`), to
	// its trimmed standard output.
	Runtime map[string]string `json:"runtime,omitempty"`

	// Inputs is what the hasher saw of every input file it keyed, and of the folders holding
	// them, for Recheck after the task ran; it is never part of the key.
	Inputs *InputStats `json:"-"`

	// salted maps "env\x00NAME" and "exec\x00NAME" to the salted digest of a secret value that
	// the stored form shows in place of the key digest.
	salted map[string]string
}

// Key is the manifest's cache key, the SHA-256 of its JSON encoding, and the manifest as it is
// stored: there a secret's value reads as a digest salted with the workspace's own salt, where
// the key holds one every checkout computes alike.
func (m *Manifest) Key() (key string, stored []byte, err error) {
	data, err := json.Marshal(m)
	if err != nil {
		return "", nil, fmt.Errorf("encode manifest of %s: %w", m.TaskID, err)
	}
	sum := sha256.Sum256(data)
	stored = data // without a secret, the stored form is the manifest itself: encoded once
	if len(m.salted) > 0 {
		if stored, err = json.Marshal(m.storedForm()); err != nil {
			return "", nil, fmt.Errorf("encode manifest of %s: %w", m.TaskID, err)
		}
	}
	return hex.EncodeToString(sum[:]), stored, nil
}

// storedForm is the manifest with every secret's key digest replaced by its salted digest.
func (m *Manifest) storedForm() *Manifest {
	if len(m.salted) == 0 {
		return m
	}
	c := *m
	c.Env, c.ExecEnv = maps.Clone(m.Env), maps.Clone(m.ExecEnv)
	for field, digest := range m.salted {
		kind, name, _ := strings.Cut(field, "\x00")
		if kind == "env" {
			c.Env[name] = digest
		} else {
			c.ExecEnv[name] = digest
		}
	}
	c.salted = nil
	return &c
}

// ParseManifest decodes a manifest kept in the index.
func ParseManifest(data []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("decode manifest: %w", err)
	}
	return &m, nil
}

// secretKeyIterations makes a guess at a secret from a cache key cost as much as a password
// hash: the key's digest must be one every checkout computes alike, so it cannot be salted.
const secretKeyIterations = 100_000

// secretKeyDigest is what a secret value reads as in the manifest a key is computed from.
func secretKeyDigest(value string) string {
	sum, err := pbkdf2.Key(sha256.New, value, []byte("vx secret key digest"), secretKeyIterations, 32)
	if err != nil {
		panic(err) // only for a key length out of range
	}
	return "secret:pbkdf2:" + hex.EncodeToString(sum)
}

// secretSaltedDigest is what a secret value reads as wherever the manifest is stored or printed.
func secretSaltedDigest(salt []byte, value string) string {
	mac := hmac.New(sha256.New, salt)
	mac.Write([]byte(value))
	return "secret:salted:" + hex.EncodeToString(mac.Sum(nil))
}

// Options configure a Hasher.
type Options struct {
	// Root is the absolute workspace root.
	Root string
	// CacheDir is the state folder, never an input.
	CacheDir string
	// Stats is the stat cache as loaded from the index; nil for none.
	Stats *store.StatCache
	// Getenv reads env values and secrets; nil means os.Getenv.
	Getenv func(string) string
	// Debug receives every hash input when VX_DEBUG_HASH=1; nil for none.
	Debug io.Writer
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Salt is the workspace's secret salt (store.Salt); nil for a random one of this hasher's own.
	Salt []byte
	// Workspace, when set, gives the project folders (a project's inputs never include the files
	// of a project nested inside it) and the global input globs; Root and CacheDir default to its.
	Workspace *graph.Workspace
	// Warn receives a one-line warning for the user (a lockfile vx cannot parse); nil drops it.
	Warn func(msg string)
	// Files is the workspace's file state as a watcher knew it (a filestate.Snapshot); nil, or
	// once a task wrote files, the hasher scans (filestate.Scan).
	Files filestate.Source
	// Lockfile is the workspace's lockfile as a hasher of a long-lived process read it (Lockfile),
	// while the watcher saw no file of the root change; nil reads it.
	Lockfile *depversions.Lockfile
	// Environ is the environment runtime probes start from (under the workspace's env rules);
	// nil means os.Environ().
	Environ []string
	// Counters count the files it opens and the stat calls it makes; nil counts nothing.
	Counters *counters.Counters
	// Early is git's listing, and maybe index, asked for before the hasher was made
	// (StartEarly); taken where its root and state folder are the hasher's, nil for none.
	Early *Early
}

// Hasher computes cache keys for one run. It is safe for concurrent use.
type Hasher struct {
	opts Options

	mu sync.Mutex
	// listMu is held while the root listing is taken.
	listMu sync.Mutex
	// stats is the stat cache as loaded; updates what this hasher hashed since, which wins.
	stats    *store.StatCache
	updates  map[string]store.FileStat
	listings map[string][]string // project dir (root-relative) → git-visible files under it
	stale    map[string]bool     // project dirs whose listing must be taken again
	// invalidations counts the Invalidate calls of each project dir, for Restored.
	invalidations map[string]int
	// mends holds, by project dir, the change a restore made to its listing, to be applied when
	// the listing is next asked for (Restored).
	mends map[string]*mend
	// ignores answers git's exclude rules for Restored, started on its first need (ignoreOnce).
	ignores    *git.IgnoreChecker
	ignoreOnce sync.Once
	rootList   []string // the root listing, nil until taken; partitioned lazily
	// earlyListed is set once the first root listing was asked for: only that one may be
	// Options.Early's.
	earlyListed bool
	// rootStale is set once a task wrote files: the root listing no longer holds them.
	rootStale bool
	// wroteOutside is set once a task wrote outside its project (Wrote): the root listing no
	// longer vouches for a project listed from it for the first time.
	wroteOutside bool
	// files is Options.Files, scan the file system's own answer; tainted is set once a task
	// wrote files (or started a command), after which only scan answers.
	files, scan filestate.Source
	tainted     bool
	// loadStats loads the stat cache on first need (SetStatsLoader); statsOnce guards it.
	loadStats func() (*store.StatCache, error)
	statsOnce sync.Once
	statsErr  error
	debugMu   sync.Mutex
	// stateRel is the state folder relative to the root ("" when outside it).
	stateRel string
	// created is when the hasher was made, by the system's clock (relistWalk compares file times
	// with it).
	created time.Time
	// nested maps each project folder to the set of the folders of the projects inside it.
	nested map[string]map[string]bool

	// throughDigests memoises projectDigest until a task writes files, throughSeen what it saw
	// of the files behind each digest.
	throughDigests map[string]string
	throughSeen    map[string][]seenFile

	lockOnce sync.Once
	lock     *depversions.Lockfile
	lockErr  error
	// lockRead is lock once read without an error, for Lockfile (under mu).
	lockRead *depversions.Lockfile

	globalGlobs []string
	// secretNames and secretValues are every secret of the workspace, by variable and by value.
	secretNames  map[string]bool
	secretValues map[string]bool
	keyDigests   map[string]string // secret value → key digest, computed once
	salt         []byte
	globalOnce   sync.Once
	global       map[string]string
	globalSeen   []seenFile
	globalErr    error

	// probes holds each runtime probe's answer, run once per hasher (runtime.go).
	probes probeMemo

	// counters for benchmarks and the debug output
	statted, hashed int

	// git is the repository's index and line-ending rules, read on first need (digest.go).
	git gitView
}

// New returns a Hasher.
func New(opts Options) *Hasher {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	h := &Hasher{opts: opts, stats: opts.Stats, updates: map[string]store.FileStat{}, created: time.Now(),
		listings: map[string][]string{}, stale: map[string]bool{}, invalidations: map[string]int{}, mends: map[string]*mend{},
		secretNames: map[string]bool{}, secretValues: map[string]bool{}, keyDigests: map[string]string{}}
	if ws := opts.Workspace; ws != nil {
		if h.opts.Root == "" {
			h.opts.Root = ws.Root
		}
		if h.opts.CacheDir == "" {
			h.opts.CacheDir = ws.CacheDir
		}
		dirs := make([]string, len(ws.Projects))
		for i, p := range ws.Projects {
			dirs[i] = p.Dir
		}
		h.nested = nestedDirs(dirs)
		h.globalGlobs = ws.GlobalInputs
		for _, id := range ws.TaskIDs() {
			t, _ := ws.Task(id)
			for _, name := range t.SecretNames() {
				h.secretNames[name] = true
				if v := opts.Getenv(name); v != "" {
					h.secretValues[v] = true
				}
			}
		}
		for _, v := range ws.Secrets {
			if v != "" {
				h.secretValues[v] = true
			}
		}
	}
	if h.salt = opts.Salt; h.salt == nil {
		h.salt = make([]byte, 32)
		_, _ = rand.Read(h.salt)
	}
	opts = h.opts
	scan := filestate.NewScan(opts.Root, opts.CacheDir)
	scan.Counters = opts.Counters
	h.files, h.scan = opts.Files, scan
	if rel, err := filepath.Rel(opts.Root, opts.CacheDir); err == nil && opts.CacheDir != "" && rel != "." && !strings.HasPrefix(rel, "..") {
		h.stateRel = filepath.ToSlash(rel)
	}
	return h
}

// Prefetch takes the workspace's file listing ahead of the first task that needs it, so that the
// git call runs beside whatever the caller does meanwhile (loading the stat cache); a failure is
// met again, and reported, by that task.
func (h *Hasher) Prefetch(ctx context.Context) {
	_, _ = h.rootListing(ctx)
}

// SetStats gives the hasher the stat cache, loaded since New (before the first Manifest).
func (h *Hasher) SetStats(c *store.StatCache) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stats = c
}

// SetStatsLoader gives the hasher the stat cache to load when it first needs it: a run whose file
// state came from a watcher reads the index's stat cache only for a file the watcher had not
// hashed.
func (h *Hasher) SetStatsLoader(load func() (*store.StatCache, error)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.loadStats = load
}

// statCache answers the stat cache, loading it on first need.
func (h *Hasher) statCache() (*store.StatCache, error) {
	h.mu.Lock()
	stats, load := h.stats, h.loadStats
	h.mu.Unlock()
	if stats != nil || load == nil {
		return stats, nil
	}
	h.statsOnce.Do(func() {
		c, err := load()
		h.mu.Lock()
		h.stats, h.statsErr = c, err
		h.mu.Unlock()
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stats, h.statsErr
}

// source answers the file state to ask: the watcher's until a task wrote files, then the file
// system's.
func (h *Hasher) source() filestate.Source {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.files == nil || h.tainted {
		return h.scan
	}
	return h.files
}

// watched reports whether the hasher's file state is a watcher's (and no task wrote files yet).
func (h *Hasher) watched() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.files != nil && !h.tainted
}

// Lstat answers a root-relative path's lstat from the hasher's file state (the cache compares
// outputs through it).
func (h *Hasher) Lstat(rel string) (fs.FileInfo, error) { return h.source().Lstat(rel) }

// WalkFiles walks the files and symlinks under a root-relative folder from the hasher's file
// state (the cache finds stale outputs through it).
func (h *Hasher) WalkFiles(base string, fn func(rel string, mode fs.FileMode)) error {
	return h.source().WalkFiles(base, fn)
}

// Updates answers the stat cache rows this hasher (re)computed, to be stored after the run.
func (h *Hasher) Updates() map[string]store.FileStat {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]store.FileStat, len(h.updates))
	for k, v := range h.updates {
		out[k] = v
	}
	return out
}

// Counts answers how many files were only statted and how many were read and hashed.
func (h *Hasher) Counts() (statted, hashed int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.statted, h.hashed
}

// Invalidate marks the file listing of a project folder (and of every folder holding it) stale:
// a task of that project wrote or restored files, or started its command. From then on the
// hasher asks the file system, never the watcher's file state, which no longer holds.
func (h *Hasher) Invalidate(projectDir string) { h.invalidate(projectDir) }

// invalidate is Invalidate, answering the project's count of invalidations it leaves.
func (h *Hasher) invalidate(projectDir string) (generation int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rootStale = true
	h.tainted = true
	h.throughDigests, h.throughSeen = nil, nil
	h.invalidations[projectDir]++
	// The folders holding projectDir are its own and those above it: a look-up each, not a pass
	// over every listing (a pass a restored task made a full run quadratic).
	for dir := projectDir; ; dir = path.Dir(dir) {
		if _, ok := h.listings[dir]; ok {
			h.stale[dir] = true
		}
		if dir == "." || dir == "/" || dir == "" {
			break
		}
	}
	return h.invalidations[projectDir]
}

// Wrote says that task t of project p wrote (or may have written) its outputs: Invalidate of p's
// folder, and, where t's outputs name paths outside p, of every project's listing, the ones to be
// taken from the workspace's first listing included.
func (h *Hasher) Wrote(p *graph.Project, t *graph.Task) {
	h.Invalidate(p.Dir)
	if !t.OutputsOutside() {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.wroteOutside = true
	for dir := range h.listings {
		h.invalidations[dir]++
		h.stale[dir] = true
	}
}

// Manifest computes the task's manifest from its inputs, environment and the keys of the tasks it
// depends on (depKeys: task id → key; every dependency must be present).
func (h *Hasher) Manifest(ctx context.Context, p *graph.Project, t *graph.Task, depKeys map[string]string) (*Manifest, error) {
	m := &Manifest{
		Version: CacheVersion, TaskID: t.ID, Command: t.Command, Scripts: t.Scripts,
		Env: map[string]string{}, ExecEnv: map[string]string{}, Outputs: nonNil(t.Outputs),
		Sandbox: t.Sandbox, Files: map[string]string{}, Deps: map[string]string{},
		Inputs: &InputStats{},
	}
	if err := h.putPackages(m, p); err != nil {
		return nil, fmt.Errorf("hash %s: %w", t.ID, err)
	}
	global, err := h.globalFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("hash %s: %w", t.ID, err)
	}
	m.Global = global
	m.Inputs.add(h.globalSeenFiles()...)
	if m.Runtime, err = h.runtimeInputs(ctx, t); err != nil {
		return nil, fmt.Errorf("hash %s: %w", t.ID, err)
	}
	// The workspace's env (Turborepo's globalEnv) enters every task's key as the task's own does.
	var globalEnv []string
	if h.opts.Workspace != nil {
		globalEnv = h.opts.Workspace.Env
	}
	for _, name := range slices.Concat(globalEnv, t.Env) {
		v := h.opts.Getenv(name)
		if h.isSecret(t, name, v) {
			h.putSecret(m, "env", name, v)
		} else {
			m.Env[name] = v
		}
	}
	for name, v := range t.ExecEnv {
		if v.Secret != "" {
			h.putSecret(m, "exec", name, h.opts.Getenv(v.Secret))
		} else {
			m.ExecEnv[name] = v.Value
		}
	}
	for _, d := range t.DependsOn {
		k, ok := depKeys[d]
		if !ok {
			return nil, fmt.Errorf("hash %s: no key for its dependency %s", t.ID, d)
		}
		m.Deps[d] = k
	}
	for _, name := range t.Through {
		digest, err := h.projectDigest(ctx, name, m.Inputs)
		if err != nil {
			return nil, fmt.Errorf("hash %s: %w", t.ID, err)
		}
		if m.Through == nil {
			m.Through = map[string]string{}
		}
		m.Through[name] = digest
	}
	depGlobs, _ := t.DependencyInputs()
	for _, name := range t.DependencyFiles {
		digest, err := h.projectInputsDigest(ctx, name, depGlobs, m.Inputs)
		if err != nil {
			return nil, fmt.Errorf("hash %s: %w", t.ID, err)
		}
		if m.DepFiles == nil {
			m.DepFiles = map[string]string{}
		}
		m.DepFiles[name] = digest
	}
	files, err := h.Inputs(ctx, p, t)
	if err != nil {
		return nil, err
	}
	for _, rel := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rootRel, outside := strings.CutPrefix(rel, "//")
		if !outside {
			rootRel = joinRel(p.Dir, rel)
		}
		m.Inputs.outside = m.Inputs.outside || outside
		sum, info, err := h.fileHash(ctx, rootRel)
		m.Inputs.add(seenOf(rel, rootRel, info, sum, err))
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errIsDir) {
			continue // listed by git but deleted from the work tree, or a nested repository
		}
		if err != nil {
			return nil, fmt.Errorf("hash %s: %w", t.ID, err)
		}
		m.Files[rel] = sum
	}
	if h.opts.Debug != nil {
		h.debug(m)
	}
	return m, nil
}

// isSecret reports whether an env variable carries a secret: its name is one any task reads a
// secret from or reads as a credential (NPM_TOKEN), or its value is a secret's value.
func (h *Hasher) isSecret(t *graph.Task, name, value string) bool {
	if h.secretNames[name] || slices.Contains(t.SecretNames(), name) || mask.IsCredentialName(name) {
		return true
	}
	return value != "" && h.secretValues[value]
}

// putSecret records a secret value in the manifest: its key digest, and the salted digest the
// stored form shows.
func (h *Hasher) putSecret(m *Manifest, kind, name, value string) {
	h.mu.Lock()
	digest, ok := h.keyDigests[value]
	h.mu.Unlock()
	if !ok {
		digest = secretKeyDigest(value)
		h.mu.Lock()
		h.keyDigests[value] = digest
		h.mu.Unlock()
	}
	if kind == "env" {
		m.Env[name] = digest
	} else {
		m.ExecEnv[name] = digest
	}
	if m.salted == nil {
		m.salted = map[string]string{}
	}
	m.salted[kind+"\x00"+name] = secretSaltedDigest(h.salt, value)
}

// projectDigest hashes the files of a project (its default inputs: what git would show, less
// node_modules and nested projects) into one digest, kept until a task writes files.
func (h *Hasher) projectDigest(ctx context.Context, name string, seen *InputStats) (string, error) {
	return h.projectInputsDigest(ctx, name, nil, seen)
}

// projectInputsDigest is projectDigest of the project's files that globs match (nil: every
// git-visible file), for `^GLOB` dependency inputs; each project and globs is digested once per
// run. What it saw of the files is added to seen (nil: nowhere).
func (h *Hasher) projectInputsDigest(ctx context.Context, name string, globs []string, seen *InputStats) (string, error) {
	ws := h.opts.Workspace
	if ws == nil {
		return "", fmt.Errorf("project %s: no workspace", name)
	}
	memo := name
	if globs != nil {
		memo = name + "\x00" + strings.Join(globs, "\x00")
	}
	h.mu.Lock()
	digest, ok := h.throughDigests[memo]
	files := h.throughSeen[memo]
	h.mu.Unlock()
	if ok {
		seen.add(files...)
		return digest, nil
	}
	p, ok := ws.Project(name)
	if !ok {
		return "", fmt.Errorf("no project %s", name)
	}
	listed, err := h.Inputs(ctx, p, &graph.Task{ID: name + "#", Inputs: globs})
	if err != nil {
		return "", err
	}
	sum := sha256.New()
	for _, rel := range listed {
		rootRel := joinRel(p.Dir, rel)
		fh, info, err := h.fileHash(ctx, rootRel)
		files = append(files, seenOf(pathglob.RootPrefix+rootRel, rootRel, info, fh, err))
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errIsDir) {
			continue
		}
		if err != nil {
			return "", err
		}
		fmt.Fprintf(sum, "%s\x00%s\n", rel, fh)
	}
	digest = hex.EncodeToString(sum.Sum(nil))
	h.mu.Lock()
	if h.throughDigests == nil {
		h.throughDigests, h.throughSeen = map[string]string{}, map[string][]seenFile{}
	}
	h.throughDigests[memo], h.throughSeen[memo] = digest, files
	h.mu.Unlock()
	seen.add(files...)
	return digest, nil
}

// putPackages records the external packages the project resolves to, with the root's own, from
// the workspace's lockfile (read once per hasher); a lockfile vx cannot parse stands whole.
func (h *Hasher) putPackages(m *Manifest, p *graph.Project) error {
	h.lockOnce.Do(func() {
		if h.opts.Lockfile != nil {
			h.lock = h.opts.Lockfile
			return
		}
		file := depversions.Find(h.opts.Root)
		if file == "" {
			return
		}
		h.lock, h.lockErr = depversions.Read(h.opts.Root, file)
		if h.lockErr == nil {
			h.mu.Lock()
			h.lockRead = h.lock
			h.mu.Unlock()
		}
		if h.lock != nil && h.lock.Unparsed && h.opts.Warn != nil {
			h.opts.Warn(fmt.Sprintf("%v: its whole content enters every task's key", h.lock.Err))
		}
	})
	switch {
	case h.lockErr != nil:
		return h.lockErr
	case h.lock == nil:
		return nil
	case h.lock.Unparsed:
		m.Lockfile = h.lock.Hash
		return nil
	}
	own := h.lock.Packages(p.Dir)
	if p.Dir == "." {
		m.Packages = own
		return nil
	}
	// The root package.json's own dependencies (the build tools) belong to every project.
	root := h.lock.Packages(".")
	m.Packages = make(map[string]string, len(own)+len(root))
	maps.Copy(m.Packages, root)
	for name, v := range own {
		if r, ok := m.Packages[name]; ok && r != v {
			m.Packages[name] = joinVersions(r, v)
		} else {
			m.Packages[name] = v
		}
	}
	return nil
}

// Lockfile answers the lockfile the hasher read (nil when it read none, or none is there).
func (h *Hasher) Lockfile() *depversions.Lockfile {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lockRead
}

// joinVersions merges two ", "-joined version lists, sorted and without repeats.
func joinVersions(a, b string) string {
	vs := append(strings.Split(a, ", "), strings.Split(b, ", ")...)
	slices.Sort(vs)
	return strings.Join(slices.Compact(vs), ", ")
}

// globalFiles hashes the workspace's global inputs, once per hasher: they are the same for every
// task of a run.
func (h *Hasher) globalFiles(ctx context.Context) (map[string]string, error) {
	h.globalOnce.Do(func() {
		if len(h.globalGlobs) == 0 {
			return
		}
		files, err := h.GlobalInputs(ctx, h.globalGlobs)
		if err != nil {
			h.globalErr = err
			return
		}
		h.global = map[string]string{}
		for _, rel := range files {
			sum, info, err := h.fileHash(ctx, rel)
			h.globalSeen = append(h.globalSeen, seenOf(pathglob.RootPrefix+rel, rel, info, sum, err))
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errIsDir) {
				continue
			}
			if err != nil {
				h.globalErr = err
				return
			}
			h.global[rel] = sum
		}
	})
	return h.global, h.globalErr
}

func (h *Hasher) debug(m *Manifest) {
	key, _, keyErr := m.Key()
	m = m.storedForm() // never a secret's key digest: it can be guessed at offline
	h.debugMu.Lock()
	defer h.debugMu.Unlock()
	w := h.opts.Debug
	fmt.Fprintf(w, "vx hash %s: version %s\n", m.TaskID, m.Version)
	fmt.Fprintf(w, "vx hash %s: command %q\n", m.TaskID, m.Command)
	for _, k := range slices.Sorted(maps.Keys(m.Env)) {
		fmt.Fprintf(w, "vx hash %s: env %s=%q\n", m.TaskID, k, m.Env[k])
	}
	for _, k := range slices.Sorted(maps.Keys(m.ExecEnv)) {
		fmt.Fprintf(w, "vx hash %s: exec.env %s=%q\n", m.TaskID, k, m.ExecEnv[k])
	}
	fmt.Fprintf(w, "vx hash %s: outputs %q\n", m.TaskID, m.Outputs)
	for _, k := range slices.Sorted(maps.Keys(m.Scripts)) {
		fmt.Fprintf(w, "vx hash %s: script %s %q\n", m.TaskID, k, m.Scripts[k])
	}
	for _, k := range slices.Sorted(maps.Keys(m.Files)) {
		fmt.Fprintf(w, "vx hash %s: file %s %s\n", m.TaskID, k, m.Files[k])
	}
	for _, k := range slices.Sorted(maps.Keys(m.Global)) {
		fmt.Fprintf(w, "vx hash %s: global %s %s\n", m.TaskID, k, m.Global[k])
	}
	for _, k := range slices.Sorted(maps.Keys(m.Packages)) {
		fmt.Fprintf(w, "vx hash %s: package %s %s\n", m.TaskID, k, m.Packages[k])
	}
	if m.Lockfile != "" {
		fmt.Fprintf(w, "vx hash %s: lockfile %s\n", m.TaskID, m.Lockfile)
	}
	for _, k := range slices.Sorted(maps.Keys(m.Deps)) {
		fmt.Fprintf(w, "vx hash %s: dep %s %s\n", m.TaskID, k, m.Deps[k])
	}
	for _, k := range slices.Sorted(maps.Keys(m.Through)) {
		fmt.Fprintf(w, "vx hash %s: through %s %s\n", m.TaskID, k, m.Through[k])
	}
	for _, k := range slices.Sorted(maps.Keys(m.DepFiles)) {
		fmt.Fprintf(w, "vx hash %s: dependency files %s %s\n", m.TaskID, k, m.DepFiles[k])
	}
	for _, k := range slices.Sorted(maps.Keys(m.Runtime)) {
		fmt.Fprintf(w, "vx hash %s: runtime %q %q\n", m.TaskID, k, m.Runtime[k])
	}
	if keyErr == nil {
		fmt.Fprintf(w, "vx hash %s: key %s\n", m.TaskID, key)
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func joinRel(dir, rel string) string {
	if dir == "." || dir == "" {
		return rel
	}
	return dir + "/" + rel
}

// FileHash answers the SHA-256 of a file's raw content (root-relative, forward slashes), through
// the stat cache: the hash the cache compares outputs by, never a key's digest.
func (h *Hasher) FileHash(rel string) (string, error) {
	fi, err := h.source().Lstat(rel)
	if err != nil {
		return "", err
	}
	return h.FileHashOf(rel, fi)
}

// fileHash answers the digest of an input file for a key (keyDigest) and what the file stat'ed
// as when it was hashed (the zero Info when the lstat failed).
func (h *Hasher) fileHash(ctx context.Context, rel string) (string, filestate.Info, error) {
	fi, err := h.source().Lstat(rel)
	if err != nil {
		return "", filestate.Info{}, err
	}
	sum, err := h.keyDigest(ctx, rel, fi)
	return sum, filestate.InfoOf(fi), err
}

// FileHashOf is FileHash for a file the caller has just lstat'ed (fi), which it does not stat
// again. A file the watcher's file state had hashed (fi from it) is not read.
func (h *Hasher) FileHashOf(rel string, fi fs.FileInfo) (string, error) {
	abs := filepath.Join(h.opts.Root, filepath.FromSlash(rel))
	if fi.IsDir() {
		return "", errIsDir
	}
	info := filestate.InfoOf(fi)
	if rawHash(info.Hash) {
		h.mu.Lock()
		h.statted++
		h.mu.Unlock()
		return info.Hash, nil
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		// A symlink is its target's text, as git records it: never followed out of the workspace.
		target := info.Link
		if target == "" {
			var err error
			if target, err = os.Readlink(abs); err != nil {
				return "", err
			}
		}
		return filestate.LinkHash(target), nil
	}
	cur := statOf(info)
	h.mu.Lock()
	cached, ok := h.updates[rel]
	h.statted++
	h.mu.Unlock()
	if !ok {
		stats, err := h.statCache()
		if err != nil {
			return "", err
		}
		cached, ok = stats.Get(rel)
	}
	if ok && Trusted(cached, info) && rawHash(cached.Hash) {
		return cached.Hash, nil
	}
	recorded := h.opts.Now()
	h.git.countOpen(1)
	h.opts.Counters.Open()
	sum, err := filestate.HashFile(abs)
	if err != nil {
		return "", err
	}
	cur.Hash, cur.RecordedNs = sum, recorded.UnixNano()
	h.mu.Lock()
	h.hashed++
	h.updates[rel] = cur
	h.mu.Unlock()
	return sum, nil
}

var errIsDir = errors.New("a folder, not a file")

// rawHash reports whether a stat cache row's (or a watcher's) hash is the SHA-256 of raw content,
// not a key's digest (digestTag).
func rawHash(hash string) bool { return len(hash) == 64 && !strings.Contains(hash, ":") }

// racy reports whether the file may have changed within the timestamp tick it was hashed in.
func racy(f store.FileStat) bool {
	// A write moves mtime and ctime to the same coarse clock; ctime must also be unchanged for the
	// row to be trusted at all, so the mtime alone decides raciness.
	window := racyWindow
	if f.MtimeNs%int64(time.Second) != 0 {
		// Sub-second stamps: a file system with fine timestamps.
		window = fineRacyWindow
	}
	return f.MtimeNs >= f.RecordedNs-window.Nanoseconds()
}

func statOf(info filestate.Info) store.FileStat {
	return store.FileStat{Size: info.Size, MtimeNs: info.MtimeNs, CtimeNs: info.CtimeNs, Ino: info.Ino}
}

// Trusted reports whether a stat cache row vouches for the file as it stats now (cur): the same
// size, stamps and inode, a hash, and a recording far enough from the last change that no write
// within the same timestamp tick can have gone unseen. A watcher seeds its hashes with it.
func Trusted(cached store.FileStat, cur filestate.Info) bool {
	now := statOf(cur)
	return cached.Size == now.Size && cached.MtimeNs == now.MtimeNs && cached.CtimeNs == now.CtimeNs &&
		cached.Ino == now.Ino && cached.Hash != "" && !racy(cached)
}

// HashBytes is the SHA-256 of data in hex, as file hashes are written.
func HashBytes(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
