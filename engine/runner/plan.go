package runner

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sourcegraph/conc/pool"
	"github.com/vzn/vx/engine/handoff"
	"github.com/vzn/vx/engine/hasher"
	"github.com/vzn/vx/engine/store"
)

// Plan is `vx run --dry=json`: what a run would do, with nothing run and nothing written.
type Plan struct {
	Workers int `json:"workers"`
	// Totals count the plan's tasks, however many a list of them shows.
	Totals PlanTotals `json:"totals"`
	// WallMs is the predicted wall time of the run: the run's own scheduler (longest remaining
	// path first, within the workers and the memory budget) simulated on the p50s (a predicted hit
	// counts 0, a task that never ran the median task); WorkMs the sum of the durations of the tasks
	// that would run.
	WallMs int64 `json:"wallMs"`
	WorkMs int64 `json:"workMs"`
	// CriticalPath is, in that simulation, the chain of tasks that ended last, each waiting on the
	// one before it, first task first.
	CriticalPath []string `json:"criticalPath"`
	// MemoryBudget is the memory the tasks reserve from, and its source.
	MemoryBudget MemorySetting `json:"memoryBudget"`
	// NoTasks says why the plan holds no task ("nothing affected since main"); absent otherwise.
	NoTasks string `json:"noTasks,omitempty"`
	// DurationUnknown says why the plan predicts no duration (no task of it ever ran and passed,
	// so none has a p50 to go by); wallMs and workMs are then 0. Absent otherwise.
	DurationUnknown string `json:"durationUnknown,omitempty"`
	// Manifests holds each task's manifest by its key, as the index would keep it, when
	// PlanOptions.KeepManifests asked for them (vx graph explains each predicted miss with them).
	Manifests map[string][]byte `json:"-"`
	// Tasks are the plan's tasks in dependency order.
	Tasks []PlanTask `json:"tasks"`
	// RemoteUnknown says why rows read remote: "unknown" (their remote status is known only by
	// their Action digest, once their upstreams' outputs are); absent when none does.
	RemoteUnknown string `json:"remoteUnknown,omitempty"`
}

// MemorySetting is a memory budget in bytes and where it came from (resources.MemoryFromFlag, …).
type MemorySetting struct {
	Bytes  int64  `json:"bytes"`
	Source string `json:"source"`
}

// PlanTask is one task of a plan.
type PlanTask struct {
	TaskID string `json:"taskId"`
	// ID is TaskID under the original's name.
	ID      string `json:"id"`
	Command string `json:"command"`
	// Cache is the predicted cache status: hit or miss (always miss under --force or cache: false).
	Cache     store.Status `json:"cache"`
	Cacheable bool         `json:"cacheable"`
	Hash      string       `json:"hash"`
	DependsOn []string     `json:"dependsOn"`
	// P50Ms is the median duration from history; null when the task never ran.
	P50Ms *int64 `json:"p50Ms"`
	// Requested is true for a task asked for (false for one run as a dependency).
	Requested bool `json:"requested"`
	// Affected says why the task's project is affected (under --affected), null otherwise.
	Affected *string `json:"affected"`
	// PriorityMs is the task's remaining path: its predicted duration plus the longest chain of
	// what waits on it. Among ready tasks, the largest starts first.
	PriorityMs int64 `json:"priorityMs"`
	// ReserveBytes is the memory the task reserves from the budget; ReserveFrom says from what
	// (history: its recent peak RSS; median, config or default when it has none).
	ReserveBytes int64  `json:"reserveBytes"`
	ReserveFrom  string `json:"reserveFrom,omitempty"`
	// Remote is "unknown" for a task the run would send to the engine, predicted to miss here,
	// whose result can be found remotely only by its Action digest (the engine lets only its
	// workers write its Action Cache): that digest holds its upstreams' output digests, known
	// once they ran. Absent otherwise.
	Remote string `json:"remote,omitempty"`
}

// PlanOptions configure DryRun: the Options of a run, the affected reasons by project, and the
// memo of a long-lived process's plans (nil for none).
type PlanOptions struct {
	Options
	Affected map[string]string
	// KeepManifests keeps every task's manifest in the plan (Plan.Manifests).
	KeepManifests bool
	Memo          PlanMemo
}

// DryRun predicts a run: each task's key (exact: keys depend on inputs, never on outputs), whether it
// would hit, its p50, and the run's wall time, work and critical path. It reads the index read-only
// and creates nothing.
func DryRun(ctx context.Context, opts PlanOptions) (*Plan, error) {
	// Filled in place: startKeying reads them too (the workers, the clock).
	if err := opts.Options.fill(); err != nil {
		return nil, err
	}
	o := opts.Options
	if len(o.TaskIDs) == 0 && o.NothingAffected != "" {
		return &Plan{Workers: o.Concurrency, Tasks: []PlanTask{}, CriticalPath: []string{},
			MemoryBudget: MemorySetting{Bytes: o.MemoryBudget, Source: o.MemorySource}, NoTasks: o.NothingAffected}, nil
	}
	k, err := startKeying(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer k.close()
	recent := knownRuns(nil).recentRuns
	if k.memo != nil {
		recent = k.memo.RecentRuns
	}
	p50s, err := memoEstimates(k.dbctx, k.st, o.Workspace, k.nodes, recent)
	if err != nil {
		return nil, err
	}
	hits, entries, manifests, err := planKeys(ctx, k.dbctx, k.keyer, k.nodes, k.workers, o.Force)
	if err != nil {
		return nil, err
	}
	if k.memo != nil {
		k.memo.Keep(keyedTasks(k.nodes, hits), entries, o.Force, k.h)
	}
	plan := &Plan{Workers: o.Concurrency, MemoryBudget: MemorySetting{Bytes: o.MemoryBudget, Source: o.MemorySource}, CriticalPath: []string{}}
	cost := planTasks(plan, opts, k.nodes, hits, p50s)
	markRemoteUnknown(ctx, plan, opts)
	plan.WallMs, plan.CriticalPath = simulate(k.nodes, cost, o.Concurrency, o.MemoryBudget)
	if len(p50s) == 0 && len(cost) > 0 {
		// Every task would count as a median task of 1 ms: a figure from nothing.
		plan.WallMs, plan.WorkMs = 0, 0
		plan.DurationUnknown = noHistory
	}
	plan.Totals = totalsOf(plan.Tasks)
	if opts.KeepManifests {
		plan.Manifests = manifests
	}
	return plan, nil
}

// PlanKeys answers the hand-off of a run of the tasks opts selects, but its file state and stamp:
// the key of each task by task id, as DryRun computes them (through the memo where there is one),
// with what the memo still knows of the index for those tasks (nil when it knows less than all of
// it: see handoff.Index) and which of their hits would restore nothing (Known.Intact), without
// what else a plan reads. vx mcp hands it to the `vx run` child of a runTasks call. The memo
// keeps the keys and those verdicts for the next plan; what it knew of the cache and the history
// stays as it was, since the index did not change for it.
func PlanKeys(ctx context.Context, opts PlanOptions) (*handoff.Handoff, error) {
	if err := opts.Options.fill(); err != nil {
		return nil, err
	}
	k, err := startKeying(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer k.close()
	if _, _, _, err := planKeys(ctx, k.dbctx, k.keyer, k.nodes, k.workers, true); err != nil {
		return nil, err
	}
	h := &handoff.Handoff{Root: opts.Workspace.Root, StateDir: opts.Workspace.CacheDir, Known: handoff.Known{Keys: make(map[string]string, len(k.nodes))}}
	for _, n := range k.nodes {
		h.Keys[n.task.ID] = n.key
	}
	if k.memo != nil {
		tasks := keyedTasks(k.nodes, nil)
		k.memo.KeepKeys(tasks, k.h)
		h.Index = k.memo.HandedIndex(k.dbctx, k.st, tasks)
		h.Intact = k.memo.Intact(tasks, h.Index, k.h)
	}
	return h, nil
}

// openPlanIndex answers the store a plan of opts reads: Options.Store, else the state folder's
// index read-only (the memo's, held open, where there is one), which release lets go of.
func openPlanIndex(ctx context.Context, opts PlanOptions) (st *store.Store, release func(), err error) {
	if opts.Store != nil {
		return opts.Store, func() {}, nil
	}
	dir, shared := opts.Workspace.CacheDir, opts.Workspace.SharedDir
	if opts.Memo != nil {
		st, release, err = opts.Memo.OpenIndex(ctx, dir, shared)
	} else if st, err = store.OpenReadOnlyShared(ctx, dir, shared); err == nil {
		release = func() { st.Close() }
	}
	if err != nil {
		return nil, nil, fmt.Errorf("open the state folder: %w", err)
	}
	return st, release, nil
}

// keying is what a plan computes its keys with: the tasks' nodes, the memo's view, the index
// (read-only), the hasher with its file state loaded, and how many workers hash.
type keying struct {
	keyer
	nodes   []*node
	dbctx   context.Context
	workers int
	close   func()
}

// startKeying readies the keys of a plan of opts, whose options are filled; close lets go of
// what it opened.
func startKeying(ctx context.Context, opts PlanOptions) (k *keying, err error) {
	o := opts.Options
	nodes, err := buildNodes(o.Workspace, o.TaskIDs)
	if err != nil {
		return nil, err
	}
	// A background plan reads what this one would; the view is taken once it did.
	var memo MemoView
	if opts.Memo != nil {
		memo = opts.Memo.View(ctx, o.Workspace, o.Files)
	}
	st, release, err := openPlanIndex(ctx, opts)
	if err != nil {
		return nil, err
	}
	// Point lookups are never worth interrupting; a cancellable context costs two goroutines a
	// query (database/sql's and the driver's).
	dbctx := context.WithoutCancel(ctx)
	hopts := hasher.Options{Workspace: o.Workspace, Getenv: o.Getenv, Debug: o.DebugHash, Now: o.Now, Files: o.Files, Environ: o.Environ}
	if memo != nil {
		hopts = memo.HasherOptions(hopts)
	}
	h := hasher.New(hopts)
	// The workspace's listing (a git call) is taken while the index is read.
	var prefetch sync.WaitGroup
	k = &keying{nodes: nodes, dbctx: dbctx, workers: o.Concurrency, close: func() { prefetch.Wait(); release() }}
	if err := loadFileState(ctx, dbctx, h, st, o.Files, &prefetch); err != nil {
		k.close()
		return nil, err
	}
	if o.DebugHash != nil {
		k.workers = 1 // the hash inputs are printed in the plan's order
		memo = nil
	}
	k.keyer = keyer{h: h, st: st, memo: memo}
	return k, nil
}

// noHistory is why a plan whose tasks never ran predicts no duration.
const noHistory = "no task of the plan has run and passed before, so none has a duration to go by"

// planTasks fills plan's tasks, in dependency order, and its work; it answers the cost of each
// task that would run, for the simulation.
func planTasks(plan *Plan, opts PlanOptions, nodes []*node, hits map[*node]bool, p50s map[string]int64) map[*node]int64 {
	requested := map[string]bool{}
	for _, id := range opts.Requested {
		requested[id] = true
	}
	plan.Tasks = make([]PlanTask, 0, len(nodes))
	cost := make(map[*node]int64, len(nodes))
	for _, n := range sortedByIndex(nodes) {
		pt := PlanTask{TaskID: n.task.ID, ID: n.task.ID, Command: n.task.Command, Cache: store.StatusMiss, Cacheable: n.task.Cache,
			Hash: n.key, DependsOn: nonNil(n.task.DependsOn), Requested: requested[n.task.ID],
			PriorityMs: n.priority, ReserveBytes: n.reserve, ReserveFrom: n.reserveFrom}
		if n.task.IsGroup() {
			// A group hits as a run would report it: when every task it depends on hits.
			hits[n] = allHit(n.deps, func(d *node) bool { return hits[d] })
		}
		if hits[n] {
			pt.Cache = store.StatusHit
		}
		if p, ok := p50s[n.task.ID]; ok {
			p := p
			pt.P50Ms = &p
		}
		if pt.Cache == store.StatusMiss && !n.task.Persistent && !n.task.IsGroup() {
			// A task that never ran counts as the median task (prioritize).
			cost[n] = n.cost
			plan.WorkMs += n.cost
		}
		if why, ok := opts.Affected[n.task.Project]; ok {
			why := why
			pt.Affected = &why
		}
		plan.Tasks = append(plan.Tasks, pt)
	}
	return cost
}

// WriteText prints the plan for people: a line a task (predicted cache status, task id, the key's
// first 12 characters, p50) in columns as wide as their longest value, then the prediction.
func (p *Plan) WriteText(w io.Writer) error {
	if p.NoTasks != "" {
		_, err := fmt.Fprintf(w, "no tasks to run: %s\n", p.NoTasks)
		return err
	}
	statusWidth, idWidth := 0, 0
	for _, t := range p.Tasks {
		statusWidth = max(statusWidth, utf8.RuneCountInString(string(t.Cache)))
		idWidth = max(idWidth, utf8.RuneCountInString(t.TaskID))
	}
	var b strings.Builder
	for _, t := range p.Tasks {
		p50 := "-"
		if t.P50Ms != nil {
			p50 = millis(*t.P50Ms)
		}
		hash := t.Hash
		if len(hash) > 12 {
			hash = hash[:12]
		}
		remote := ""
		if t.Remote != "" {
			remote = "  remote " + t.Remote
		}
		fmt.Fprintf(&b, "%s  %s  %-12s  p50 %s%s\n", pad(string(t.Cache), statusWidth), pad(t.TaskID, idWidth), hash, p50, remote)
	}
	if p.RemoteUnknown != "" {
		fmt.Fprintf(&b, "remote unknown: %s\n", p.RemoteUnknown)
	}
	if p.DurationUnknown != "" {
		fmt.Fprintf(&b, "predicted: wall unknown, work unknown on %d workers (%s); critical path %s\n", p.Workers, p.DurationUnknown,
			strings.Join(p.CriticalPath, " → "))
	} else {
		fmt.Fprintf(&b, "predicted: wall %s, work %s on %d workers; critical path %s\n", millis(p.WallMs), millis(p.WorkMs), p.Workers,
			strings.Join(p.CriticalPath, " → "))
	}
	fmt.Fprintf(&b, "memory: %d MiB (%s)\n", p.MemoryBudget.Bytes>>20, p.MemoryBudget.Source)
	_, err := io.WriteString(w, b.String())
	return err
}

// pad pads s with spaces to width characters.
func pad(s string, width int) string {
	return s + strings.Repeat(" ", max(0, width-utf8.RuneCountInString(s)))
}

func millis(n int64) string { return (time.Duration(n) * time.Millisecond).String() }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// keyer is what planKeys computes keys and hits with: the hasher and the index, through a
// plan's memo where it has one.
type keyer struct {
	h    *hasher.Hasher
	st   *store.Store
	memo MemoView
}

// key answers n's key: the memo's when nothing it is made of moved, else its manifest's.
// The manifest's data is answered too, nil where the memo answered.
func (k keyer) key(ctx context.Context, n *node, depKeys map[string]string) (string, []byte, error) {
	if n.task.IsGroup() {
		return groupManifest(n.task, depKeys).Key()
	}
	if k.memo != nil {
		if key, ok := k.memo.Key(KeyedTask{Task: n.task, Project: n.project}, depKeys); ok {
			return key, nil, nil
		}
	}
	m, err := k.h.Manifest(ctx, n.project, n.task, depKeys)
	if err != nil {
		return "", nil, err
	}
	return m.Key()
}

// hit reports whether key's entry is in the cache whole, and answers the entry when it is.
func (k keyer) hit(dbctx context.Context, key string) (bool, store.Entry) {
	if k.memo != nil {
		if hit, e, ok := k.memo.Hit(key); ok {
			return hit, e
		}
	}
	e, ok, err := k.st.Entry(dbctx, key)
	if err == nil && ok && k.st.CAS().Has(e.LogBlob) && (e.OutputsBlob == "" || k.st.CAS().Has(e.OutputsBlob)) {
		return true, e
	}
	return false, store.Entry{}
}

// planKeys computes every node's key (n.key) on up to workers goroutines, each task once the keys
// it depends on are known, and answers the nodes whose entry is in the cache whole (never when
// force is set, nor for a task that is not cached) with those entries by key, and every manifest
// by its key (none where the memo answered the key).
func planKeys(ctx, dbctx context.Context, k keyer, nodes []*node, workers int, force bool) (map[*node]bool, map[string]store.Entry, map[string][]byte, error) {
	sorted := sortedByIndex(nodes)
	keyed := make(map[*node]chan struct{}, len(sorted))
	for _, n := range sorted {
		keyed[n] = make(chan struct{})
	}
	hit := make([]bool, len(sorted))
	entry := make([]store.Entry, len(sorted))
	errs := make([]error, len(sorted))
	data := make([][]byte, len(sorted))
	// Nodes go to the pool in dependency order, so the first unfinished one always holds a
	// worker with every key it needs: a worker waiting on a dependency never starves it.
	p := pool.New().WithMaxGoroutines(max(1, workers))
	for i, n := range sorted {
		p.Go(func() {
			defer close(keyed[n])
			depKeys := make(map[string]string, len(n.deps))
			for _, d := range n.deps {
				<-keyed[d]
				depKeys[d.task.ID] = d.key
			}
			var err error
			if n.key, data[i], err = k.key(ctx, n, depKeys); err != nil {
				errs[i] = err
				return
			}
			if n.task.Cache && !force {
				hit[i], entry[i] = k.hit(dbctx, n.key)
			}
		})
	}
	p.Wait()
	hits := make(map[*node]bool, len(sorted))
	entries := make(map[string]store.Entry)
	manifests := make(map[string][]byte, len(sorted))
	for i, n := range sorted {
		if errs[i] != nil {
			return nil, nil, nil, errs[i]
		}
		hits[n], manifests[n.key] = hit[i], data[i]
		if hit[i] {
			entries[n.key] = entry[i]
		}
	}
	return hits, entries, manifests, nil
}

func sortedByIndex(nodes []*node) []*node {
	out := append([]*node(nil), nodes...)
	sort.Slice(out, func(i, j int) bool { return out[i].index < out[j].index })
	return out
}
