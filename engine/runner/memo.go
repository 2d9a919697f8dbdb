package runner

import (
	"context"

	"github.com/vzn/vx/engine/cache"
	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/handoff"
	"github.com/vzn/vx/engine/hasher"
	"github.com/vzn/vx/engine/resources"
	"github.com/vzn/vx/engine/store"
)

// PlanMemo is what a long-lived process (vx mcp, vx watch) keeps of its plans for the next
// (engine/planmemo's Memo): a plan through it computes again only what moved. Its methods accept
// a nil memo, which reuses and keeps nothing.
type PlanMemo interface {
	// View waits for the memo's background plan (unless ctx is that plan's) and answers its view
	// for a plan of ws over files; nil (reuse nothing, keep nothing) without a watcher's snapshot.
	View(ctx context.Context, ws *graph.Workspace, files filestate.Source) MemoView
	// OpenIndex answers a read-only store of the state folder dir, which release lets go of.
	OpenIndex(ctx context.Context, dir, shared string) (st *store.Store, release func(), err error)
}

// KeyedTask is a task of a plan as a memo sees it: the task, its project, its key (once made)
// and whether its entry is in the cache whole (in a plan that looked it up).
type KeyedTask struct {
	Task    *graph.Task
	Project *graph.Project
	Key     string
	Hit     bool
}

// MemoView is one plan's reading of a PlanMemo: what it may reuse, and where it keeps what it
// made for the next plan.
type MemoView interface {
	// HasherOptions answers o with what the plan's hasher may take as read (the lockfile).
	HasherOptions(o hasher.Options) hasher.Options
	// Key answers the memo's key of t when nothing it is made of moved: its dependencies' keys
	// (depKeys, as computed now) are the ones it was made with, and its files did not change.
	Key(t KeyedTask, depKeys map[string]string) (string, bool)
	// Hit answers the memo's cache status of key, with the entry of a hit; ok is false when
	// the memo does not know it.
	Hit(key string) (hit bool, e store.Entry, ok bool)
	// RecentRuns answers the history's recent command runs of ids (a task with none absent):
	// the memo's where it knows them, st's for the rest.
	RecentRuns(ctx context.Context, st *store.Store, ids []string) (map[string][]store.CommandRun, error)
	// Keep keeps a plan's keys, hits with their entries (not those of a forced plan) and
	// estimates for the next, with what h read.
	Keep(tasks []KeyedTask, entries map[string]store.Entry, force bool, h *hasher.Hasher)
	// KeepKeys keeps a plan's keys for the next, with what h read.
	KeepKeys(tasks []KeyedTask, h *hasher.Hasher)
	// HandedIndex answers what the memo knows of the index for a run of tasks, reading from st
	// what it does not; nil when it knows less than all of it.
	HandedIndex(ctx context.Context, st *store.Store, tasks []KeyedTask) *handoff.Index
	// Intact answers, by task id, the tasks whose entry in index would restore nothing (hashes
	// answering the outputs' contents); nil when it cannot tell.
	Intact(tasks []KeyedTask, index *handoff.Index, hashes cache.FileHasher) map[string]handoff.IntactHit
}

// keyedTasks answers nodes as a memo sees them; hits says which are hits.
func keyedTasks(nodes []*node, hits map[*node]bool) []KeyedTask {
	out := make([]KeyedTask, len(nodes))
	for i, n := range nodes {
		out[i] = KeyedTask{Task: n.task, Project: n.project, Key: n.key, Hit: hits[n]}
	}
	return out
}

// RecentRuns answers the history's recent command runs of ids (a task with none absent): known's
// where it has the task (a nil list: it never ran), st's for the rest; queried is what was
// answered for each id, nil for one that never ran.
func RecentRuns(ctx context.Context, st *store.Store, ids []string, known map[string][]store.CommandRun) (out, queried map[string][]store.CommandRun, err error) {
	queried = make(map[string][]store.CommandRun, len(ids))
	out = make(map[string][]store.CommandRun, len(ids))
	var missing []string
	for _, id := range ids {
		if runs, ok := known[id]; ok {
			queried[id] = runs
			if runs != nil {
				out[id] = runs
			}
		} else {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		more, err := st.RecentCommandRuns(ctx, missing, resources.EstimateWindow)
		if err != nil {
			return nil, nil, err
		}
		for _, id := range missing {
			queried[id] = more[id] // nil: it never ran, which the next plan need not ask again
			if runs, ok := more[id]; ok {
				out[id] = runs
			}
		}
	}
	return out, queried, nil
}

// knownRuns is the history a vx mcp handed a run (handoff.Index.Runs), for the run's estimates.
type knownRuns map[string][]store.CommandRun

// recentRuns answers the runs of ids: the handed ones, st's for the rest.
func (k knownRuns) recentRuns(ctx context.Context, st *store.Store, ids []string) (map[string][]store.CommandRun, error) {
	if k == nil {
		return st.RecentCommandRuns(ctx, ids, resources.EstimateWindow)
	}
	out, _, err := RecentRuns(ctx, st, ids, k)
	return out, err
}
