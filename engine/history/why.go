package history

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/hasher"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/vxerr"
)

// Why is `vx why TASKID --format json`: a run's key for the task against the previous run's.
type Why struct {
	TaskID string       `json:"taskId"`
	RunID  string       `json:"runId"`
	Status store.Status `json:"status"`
	Hash   string       `json:"hash"`
	// PreviousRunID and PreviousHash name the task's previous execution with a key; null when there
	// is none (then changed is true and diff empty).
	PreviousRunID *string `json:"previousRunId"`
	PreviousHash  *string `json:"previousHash"`
	Changed       bool    `json:"changed"`
	Diff          Diff    `json:"diff"`
	// Roots are, under a moved upstream, the tasks whose own inputs moved.
	Roots []Root `json:"roots"`
	// Reason says in one line why the task ran or hit.
	Reason string `json:"reason"`
	// NotCachedReason says why the execution explained, which ran and passed, stored no cache
	// entry; absent when it did (or did not pass).
	NotCachedReason string `json:"notCachedReason,omitempty"`
	// Store names the folder the answer was read from: this checkout's history.
	Store Store `json:"store"`
	// Cutoff is true for an early-cutoff hit: its key missed and its Action digest (which holds its
	// upstreams' output digests) found its result in the engine's Action Cache; Reason says what
	// moved upstream. Absent otherwise.
	Cutoff bool `json:"cutoff,omitempty"`

	// The original's names: Found is false for a run that did not record the task or computed
	// no key for it (blocked); HashChanged is null when there is nothing to compare (no previous
	// run with a key, or no key); ThisRun and PreviousRun are the two executions compared
	// (PreviousRun null on the task's first run with a key); Note is Reason.
	Found       bool     `json:"found"`
	HashChanged *bool    `json:"hashChanged"`
	ThisRun     *RunSide `json:"thisRun"`
	PreviousRun *RunSide `json:"previousRun"`
	Note        string   `json:"note"`
	// Why is the original's nested why object (the facts above); null where Found is false.
	Why *WhyCore `json:"why"`
}

// RunSide is one execution of a why answer, as the original names it: cacheHit, restored (on a
// hit: whether outputs were restored; null otherwise), cached and startedAt in epoch
// milliseconds.
type RunSide struct {
	RunID    string       `json:"runId"`
	Hash     string       `json:"hash"`
	Status   store.Status `json:"status"`
	CacheHit bool         `json:"cacheHit"`
	Restored *bool        `json:"restored"`
	// Cached is whether the task declares a cache: null, the index does not keep it.
	Cached    *bool `json:"cached"`
	StartedAt int64 `json:"startedAt"`
}

// sideOf is e as a RunSide.
func sideOf(e store.Execution) *RunSide {
	s := &RunSide{RunID: e.RunID, Hash: e.Hash, Status: e.Status, CacheHit: e.Status == store.StatusHit, StartedAt: e.Started.UnixMilli()}
	if s.CacheHit && e.RestoredFiles != nil {
		restored := *e.RestoredFiles > 0
		s.Restored = &restored
	}
	return s
}

// notFound answers a why of a run that recorded no key for the task: found false, and why.
func notFound(taskID, runID, note string) *Why {
	w := &Why{TaskID: taskID, RunID: runID, Roots: []Root{}, Diff: emptyDiff(), Reason: note, Note: note}
	w.original()
	return w
}

// Diff is what moved between two manifests.
type Diff struct {
	Files FileDiff `json:"files"`
	// Env lists the env and exec.env names whose value changed (values are never shown).
	Env     []string       `json:"env"`
	Command *CommandChange `json:"command"`
	// Upstream lists the dependencies whose key changed (or that were added or removed).
	Upstream []UpstreamChange `json:"upstream"`
	// Outputs is true when the declared outputs changed; Version when vx's cache version did.
	Outputs bool `json:"outputs"`
	Version bool `json:"version"`
	// Scripts lists the package.json scripts the command runs whose text changed (or that were
	// added or removed).
	Scripts []string `json:"scripts"`
	// Global lists the workspace's global input files (root-relative) that moved.
	Global FileDiff `json:"global"`
	// Packages lists the external packages whose resolved version moved in the lockfile.
	Packages []PackageChange `json:"packages"`
	// Lockfile is true when a lockfile vx cannot parse changed.
	Lockfile bool `json:"lockfile"`
	// Through lists the projects a `^task` dependency passes through (they lack the task) whose
	// files changed.
	Through []string `json:"through"`
	// DepFiles lists the projects whose files a `^default` input takes in and that moved.
	DepFiles []string `json:"depFiles"`
	// Runtime lists the runtime probes (`node -v`) whose output moved, with both outputs.
	Runtime []RuntimeChange `json:"runtime"`
	// sandbox is true when the sandbox the task runs under changed (its declaration, or an
	// agent's narrowing of it); the reason says so.
	sandbox bool
	// unchanged counts the components of the key that did not move.
	unchanged int

	// The original's diff fields: the run and task explained, whether the task was found, the
	// previous run compared, each moved component as an entry, how many did not move, the note.
	RunID          string  `json:"runId,omitempty"`
	TaskID         string  `json:"taskId,omitempty"`
	Found          bool    `json:"found"`
	PreviousRunID  *string `json:"previousRunId"`
	Entries        []Entry `json:"entries"`
	UnchangedCount int     `json:"unchangedCount"`
	Note           string  `json:"note"`
}

// PackageChange is an external package whose resolved version(s) moved; an empty side means it
// was added or removed.
type PackageChange struct {
	Name   string `json:"name"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// RuntimeChange is a runtime probe whose output moved; an empty side means the probe was added
// or removed.
type RuntimeChange struct {
	Probe  string `json:"probe"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// FileDiff lists input files (relative to the project) that were added, removed or modified.
type FileDiff struct {
	Added    []string `json:"added"`
	Removed  []string `json:"removed"`
	Modified []string `json:"modified"`
}

// CommandChange is a changed command.
type CommandChange struct {
	Before string `json:"before"`
	After  string `json:"after"`
}

// UpstreamChange is a dependency whose key moved; an empty side means it was added or removed.
type UpstreamChange struct {
	TaskID string `json:"taskId"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// Root is an upstream task whose own inputs moved, and what moved.
type Root struct {
	TaskID  string         `json:"taskId"`
	Files   FileDiff       `json:"files"`
	Env     []string       `json:"env"`
	Command *CommandChange `json:"command"`
	// Scripts and Packages are the root's moved scripts and packages, when any moved.
	Scripts  []string        `json:"scripts,omitempty"`
	Packages []PackageChange `json:"packages,omitempty"`
	// DepFiles are the dependency projects whose files a `^default` input takes in and that moved,
	// where no moved task of theirs, and no moved task below the root taking in the same files,
	// explains it; Through, the dependencies without the task whose files moved.
	DepFiles []string `json:"depFiles,omitempty"`
	Through  []string `json:"through,omitempty"`
	// Chain is the path from the task asked about down to this root, through moved upstream
	// keys; Entries what moved of its own inputs, as the original lists them.
	Chain   []string `json:"chain"`
	Entries []Entry  `json:"entries"`
	// Runtime are the root's runtime probes whose output moved, when any did.
	Runtime []RuntimeChange `json:"runtime,omitempty"`
}

// Explain answers why taskID ran as it did in runID (whole or a prefix; "" for the latest run that
// recorded the task with a key), against the task's previous execution with a key.
func explainOf(ctx context.Context, st *store.Store, taskID, runID string) (*Why, error) {
	if _, _, ok := graph.SplitTaskID(taskID); !ok {
		return nil, vxerr.Usagef("task id %q: want project#task", taskID)
	}
	var cur store.Execution
	if runID == "" {
		execs, err := st.TaskExecutions(ctx, store.ExecQuery{TaskID: taskID, Limit: 50})
		if err != nil {
			return nil, err
		}
		found := false
		for _, e := range execs {
			if e.Hash != "" {
				cur, found = e, true
				break
			}
		}
		if !found {
			return nil, vxerr.Usagef("no recorded run computed a key for %s", taskID)
		}
	} else {
		id, err := ResolveRun(ctx, st, runID)
		if err != nil {
			return nil, err
		}
		e, ok, err := st.Execution(ctx, id, taskID)
		if err != nil {
			return nil, err
		}
		if !ok {
			return notFound(taskID, id, fmt.Sprintf("run %s did not record %s", id, taskID)), nil
		}
		if e.Hash == "" {
			w := notFound(taskID, id, fmt.Sprintf("run %s did not compute a key for %s (it was %s)", id, taskID, e.Status))
			w.Status, w.ThisRun = e.Status, sideOf(e)
			return w, nil
		}
		cur = e
	}
	w := &Why{TaskID: taskID, RunID: cur.RunID, Status: cur.Reported(), Hash: cur.Hash, Roots: []Root{}, Diff: emptyDiff(),
		NotCachedReason: cur.NotCached, Found: true, ThisRun: sideOf(cur)}
	w, err := against(ctx, st, w, store.ExecQuery{TaskID: taskID, BeforeRun: cur.RunID, Limit: 50}, storeManifests(st))
	if err != nil {
		return nil, err
	}
	cutoff(w, cur)
	w.Note = w.Reason
	w.original()
	return w, nil
}

// manifestSource loads the manifest of a key; ok is false when none was kept.
type manifestSource func(ctx context.Context, hash string) (m *hasher.Manifest, ok bool, err error)

// storeManifests is the manifests the index kept.
func storeManifests(st *store.Store) manifestSource {
	return func(ctx context.Context, hash string) (*hasher.Manifest, bool, error) {
		return loadManifest(ctx, st, hash)
	}
}

// against fills w, the key w.Hash of w.TaskID, against the latest execution with a key that prevs
// finds: whether it changed, what moved (manifests from load), the roots, the reason.
func against(ctx context.Context, st *store.Store, w *Why, prevs store.ExecQuery, load manifestSource) (*Why, error) {
	execs, err := st.TaskExecutions(ctx, prevs)
	if err != nil {
		return nil, err
	}
	var prev *store.Execution
	for i := range execs {
		if execs[i].Hash != "" {
			prev = &execs[i]
			break
		}
	}
	if prev == nil {
		w.Changed = true
		w.Reason = "no previous run computed a key for " + w.TaskID
		return w, nil
	}
	w.PreviousRunID, w.PreviousHash = &prev.RunID, &prev.Hash
	w.Changed = prev.Hash != w.Hash
	if w.Found {
		changed := w.Changed
		w.HashChanged, w.PreviousRun = &changed, sideOf(*prev)
	}
	if !w.Changed {
		w.Reason = "same key as run " + prev.RunID + sameKeyReason(w, prev)
		return w, nil
	}
	before, okB, err := load(ctx, prev.Hash)
	if err != nil {
		return nil, err
	}
	after, okA, err := load(ctx, w.Hash)
	if err != nil {
		return nil, err
	}
	if !okA || !okB {
		w.Reason = "the key changed; a manifest was not kept, so what moved is unknown"
		return w, nil
	}
	w.Diff = diffManifests(before, after)
	moved := map[string]*Diff{}
	seen := map[string]bool{}
	parent := map[string]string{}
	for _, u := range w.Diff.Upstream {
		if err := walkUpstream(ctx, load, u, w.TaskID, moved, seen, parent); err != nil {
			return nil, err
		}
	}
	w.Roots = rootsOf(moved)
	for i := range w.Roots {
		w.Roots[i].Chain = chainTo(w.TaskID, w.Roots[i].TaskID, parent)
	}
	w.Reason = reason(w)
	return w, nil
}

// sameKeyReason says, after "same key as run X" (prev, the execution before), what became of an
// unchanged key.
func sameKeyReason(w *Why, prev *store.Execution) string {
	if w.RunID == "" { // a planned key
		if w.Status == store.StatusHit {
			return ": would be restored from the cache"
		}
		return ": would run anyway (" + noEntryReason(prev) + ")"
	}
	switch w.Status {
	case store.StatusHit:
		return ": restored from the cache"
	case store.StatusForced:
		return ": ran anyway (--force)"
	case store.StatusMiss, store.StatusFailed, store.StatusTimedOut:
		return ": ran anyway (" + noEntryReason(prev) + ")"
	}
	return ""
}

// noEntryReason says why the execution prev, of the same key, left no cache entry to use.
func noEntryReason(prev *store.Execution) string {
	switch {
	case prev.NotCached != "":
		return "not cached: " + prev.NotCached
	case prev.Status == store.StatusFailed || prev.Status == store.StatusTimedOut || prev.Status == store.StatusCancelled:
		return "run " + prev.RunID + " did not pass, so it stored no cache entry"
	}
	return "no usable cache entry: --force, cache: false, or the entry was pruned or removed"
}

func reason(w *Why) string {
	d := &w.Diff
	switch {
	case d.Version:
		return "vx's cache version changed"
	case d.Command != nil:
		return "the command changed"
	case len(d.Scripts) > 0:
		return "the package script it runs changed"
	case len(d.Files.Added)+len(d.Files.Removed)+len(d.Files.Modified) > 0:
		return "input files changed"
	case len(d.Global.Added)+len(d.Global.Removed)+len(d.Global.Modified) > 0:
		return "global input files changed"
	case len(d.Runtime) > 0:
		r := d.Runtime[0]
		return fmt.Sprintf("the output of runtime input %q changed: %s → %s", r.Probe, orNone(r.Before), orNone(r.After))
	case len(d.Packages) > 0:
		return "resolved external packages changed"
	case len(d.DepFiles) > 0:
		return "files of upstream project " + strings.Join(d.DepFiles, ", ") + " changed"
	case len(d.Through) > 0:
		return "files of a dependency without the task changed"
	case d.Lockfile:
		return "the lockfile changed"
	case len(d.Env) > 0:
		return "environment changed"
	case d.Outputs:
		return "declared outputs changed"
	case d.sandbox:
		return "the sandbox it runs under changed"
	case len(d.Upstream) > 0:
		return "an upstream task's key changed"
	}
	return "the key changed"
}

func emptyDiff() Diff {
	return Diff{Files: emptyFiles(), Env: []string{}, Upstream: []UpstreamChange{}, Scripts: []string{},
		Global: emptyFiles(), Packages: []PackageChange{}, Through: []string{}, DepFiles: []string{}, Runtime: []RuntimeChange{},
		Entries: []Entry{}}
}

func emptyFiles() FileDiff {
	return FileDiff{Added: []string{}, Removed: []string{}, Modified: []string{}}
}

func loadManifest(ctx context.Context, st *store.Store, hash string) (*hasher.Manifest, bool, error) {
	data, ok, err := st.Manifest(ctx, hash)
	if err != nil || !ok {
		return nil, false, err
	}
	m, err := hasher.ParseManifest(data)
	if err != nil {
		return nil, false, nil
	}
	return m, true, nil
}

// walkUpstream follows a moved upstream key down through the upstream keys that moved in turn,
// recording each moved task's diff (nil where a manifest was not kept).
func walkUpstream(ctx context.Context, load manifestSource, u UpstreamChange, from string, moved map[string]*Diff, seen map[string]bool, parent map[string]string) error {
	if _, ok := parent[u.TaskID]; !ok {
		parent[u.TaskID] = from
	}
	if seen[u.TaskID+u.Before+u.After] {
		return nil
	}
	seen[u.TaskID+u.Before+u.After] = true
	if u.Before == "" || u.After == "" {
		moved[u.TaskID] = nil
		return nil
	}
	before, okB, err := load(ctx, u.Before)
	if err != nil {
		return err
	}
	after, okA, err := load(ctx, u.After)
	if err != nil {
		return err
	}
	if !okA || !okB {
		moved[u.TaskID] = nil
		return nil
	}
	d := diffManifests(before, after)
	moved[u.TaskID] = &d
	for _, next := range d.Upstream {
		if err := walkUpstream(ctx, load, next, u.TaskID, moved, seen, parent); err != nil {
			return err
		}
	}
	return nil
}

// rootsOf answers, of the moved upstream tasks, those whose own inputs moved. A dependency
// project's files moving (a `^default` input) is a task's own cause only where neither a task of
// that project nor a task below it (one it reaches through moved upstream keys) that takes in the
// same files moved: else that one is the root.
func rootsOf(moved map[string]*Diff) []Root {
	projects := map[string]bool{}
	for id := range moved {
		if p, _, ok := graph.SplitTaskID(id); ok {
			projects[p] = true
		}
	}
	below := func(id string) map[string]bool {
		out := map[string]bool{}
		queue := []string{id}
		for len(queue) > 0 {
			d := moved[queue[0]]
			queue = queue[1:]
			if d == nil {
				continue
			}
			for _, u := range d.Upstream {
				if _, ok := moved[u.TaskID]; ok && !out[u.TaskID] {
					out[u.TaskID] = true
					queue = append(queue, u.TaskID)
				}
			}
		}
		return out
	}
	roots := []Root{}
	for _, id := range slices.Sorted(maps.Keys(moved)) {
		d := moved[id]
		if d == nil {
			roots = append(roots, Root{TaskID: id, Files: emptyFiles(), Env: []string{}})
			continue
		}
		var depFiles []string
		deeper := below(id)
		for _, p := range d.DepFiles {
			takenBelow := slices.ContainsFunc(slices.Collect(maps.Keys(deeper)), func(y string) bool {
				return moved[y] != nil && slices.Contains(moved[y].DepFiles, p)
			})
			if !projects[p] && !takenBelow {
				depFiles = append(depFiles, p)
			}
		}
		own := len(d.Files.Added)+len(d.Files.Removed)+len(d.Files.Modified)+len(d.Env)+len(d.Scripts)+len(d.Packages)+len(d.Through)+len(depFiles) > 0 ||
			d.Command != nil || d.Outputs || d.Version || d.Lockfile || d.sandbox || len(d.Runtime) > 0 ||
			len(d.Global.Added)+len(d.Global.Removed)+len(d.Global.Modified) > 0
		if !own {
			continue
		}
		root := Root{TaskID: id, Files: d.Files, Env: d.Env, Command: d.Command, DepFiles: depFiles}
		if len(d.Scripts) > 0 {
			root.Scripts = d.Scripts
		}
		if len(d.Packages) > 0 {
			root.Packages = d.Packages
		}
		if len(d.Through) > 0 {
			root.Through = d.Through
		}
		if len(d.Runtime) > 0 {
			root.Runtime = d.Runtime
		}
		roots = append(roots, root)
	}
	return roots
}

// diffFiles lists what moved between two file → hash maps.
func diffFiles(before, after map[string]string) FileDiff {
	d := emptyFiles()
	for p, h := range after {
		if old, ok := before[p]; !ok {
			d.Added = append(d.Added, p)
		} else if old != h {
			d.Modified = append(d.Modified, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			d.Removed = append(d.Removed, p)
		}
	}
	sort.Strings(d.Added)
	sort.Strings(d.Removed)
	sort.Strings(d.Modified)
	return d
}

// movedKeys lists the keys whose value differs between two maps (added and removed ones too).
func movedKeys(before, after map[string]string) []string {
	moved := []string{}
	for k, v := range after {
		if old, ok := before[k]; !ok || old != v {
			moved = append(moved, k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			moved = append(moved, k)
		}
	}
	sort.Strings(moved)
	return moved
}

func diffManifests(before, after *hasher.Manifest) Diff {
	d := emptyDiff()
	d.Files = diffFiles(before.Files, after.Files)
	d.Global = diffFiles(before.Global, after.Global)
	d.Scripts = movedKeys(before.Scripts, after.Scripts)
	for _, name := range movedKeys(before.Packages, after.Packages) {
		d.Packages = append(d.Packages, PackageChange{Name: name, Before: before.Packages[name], After: after.Packages[name]})
	}
	d.Lockfile = before.Lockfile != after.Lockfile
	d.Through = movedKeys(before.Through, after.Through)
	d.DepFiles = movedKeys(before.DepFiles, after.DepFiles)
	for _, probe := range movedKeys(before.Runtime, after.Runtime) {
		d.Runtime = append(d.Runtime, RuntimeChange{Probe: probe, Before: before.Runtime[probe], After: after.Runtime[probe]})
	}
	envNames := map[string]bool{}
	for k, v := range after.Env {
		if old, ok := before.Env[k]; !ok || old != v {
			envNames[k] = true
		}
	}
	for k := range before.Env {
		if _, ok := after.Env[k]; !ok {
			envNames[k] = true
		}
	}
	for k, v := range after.ExecEnv {
		if old, ok := before.ExecEnv[k]; !ok || old != v {
			envNames[k] = true
		}
	}
	for k := range before.ExecEnv {
		if _, ok := after.ExecEnv[k]; !ok {
			envNames[k] = true
		}
	}
	d.Env = append(d.Env, slices.Sorted(maps.Keys(envNames))...)
	if before.Command != after.Command {
		d.Command = &CommandChange{Before: before.Command, After: after.Command}
	}
	for id, k := range after.Deps {
		if old := before.Deps[id]; old != k {
			d.Upstream = append(d.Upstream, UpstreamChange{TaskID: id, Before: old, After: k})
		}
	}
	for id, k := range before.Deps {
		if _, ok := after.Deps[id]; !ok {
			d.Upstream = append(d.Upstream, UpstreamChange{TaskID: id, Before: k})
		}
	}
	sort.Slice(d.Upstream, func(i, j int) bool { return d.Upstream[i].TaskID < d.Upstream[j].TaskID })
	d.Outputs = !equalStrings(before.Outputs, after.Outputs)
	d.sandbox = !reflect.DeepEqual(before.Sandbox, after.Sandbox)
	d.Version = before.Version != after.Version
	for _, m := range [][2]map[string]string{{before.Files, after.Files}, {before.Global, after.Global}, {before.Env, after.Env},
		{before.ExecEnv, after.ExecEnv}, {before.Deps, after.Deps}, {before.Scripts, after.Scripts}, {before.Packages, after.Packages},
		{before.Runtime, after.Runtime}, {before.Through, after.Through}, {before.DepFiles, after.DepFiles}} {
		d.unchanged += unchangedIn(m[0], m[1])
	}
	return d
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Explain is explainOf with the answer's store named (checkout).
func Explain(ctx context.Context, st *store.Store, taskID, runID string) (*Why, error) {
	out, err := explainOf(ctx, st, taskID, runID)
	if out != nil {
		out.Store = checkoutStore(st)
	}
	return out, err
}

// orNone is a probe's output as a reason shows it: "(none)" for a probe added or removed.
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
