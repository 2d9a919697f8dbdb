package history

import (
	"context"

	"github.com/vzn/vx/engine/hasher"
	"github.com/vzn/vx/engine/store"
)

// ExplainPlanned answers why taskID would run as planned (a dry run's key hash, predicted status
// hit or miss) against the task's latest execution with a key: `vx why`'s answer for a run not
// made yet, with an empty runId. planned holds the dry run's manifests by key (its own and its
// dependencies'); the recorded ones come from the index.
func ExplainPlanned(ctx context.Context, st *store.Store, taskID, hash string, status store.Status, planned map[string][]byte) (*Why, error) {
	w := &Why{TaskID: taskID, Status: status, Hash: hash, Roots: []Root{}, Diff: emptyDiff()}
	if st.Empty() {
		w.Changed, w.Reason = true, "no previous run computed a key for "+taskID
		return w, nil
	}
	recorded := storeManifests(st)
	load := func(ctx context.Context, hash string) (*hasher.Manifest, bool, error) {
		if data, ok := planned[hash]; ok {
			m, err := hasher.ParseManifest(data)
			return m, err == nil, nil
		}
		return recorded(ctx, hash)
	}
	return against(ctx, st, w, store.ExecQuery{TaskID: taskID, Limit: 50}, load)
}

// AllStats answers the statistics of every task of the last runs recorded (at most runs of
// them), by task id: History's per-task statistics, none left out.
func AllStats(ctx context.Context, st *store.Store, runs int) (map[string]TaskStats, error) {
	out := map[string]TaskStats{}
	if st.Empty() {
		return out, nil
	}
	err := st.Snapshot(ctx, func(sn *store.Snapshot) error {
		recent, err := sn.Runs(ctx, store.RunQuery{Limit: ClampLimit(runs)})
		if err != nil || len(recent) == 0 {
			return err
		}
		stats, err := collectStats(ctx, sn, store.Window{Oldest: recent[len(recent)-1].ID, Newest: recent[0].ID})
		for _, s := range stats {
			out[s.TaskID] = s
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
