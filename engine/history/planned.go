package history

import (
	"context"

	"github.com/vzn/vx/engine/hasher"
	"github.com/vzn/vx/engine/store"
)

// Planned explains a dry run's keys, `vx why`'s answer for a run not made yet: each against the
// task's latest execution with a key. It keeps every manifest it reads, so that explaining every
// task of a plan reads and parses each manifest once.
type Planned struct {
	st       *store.Store
	planned  map[string][]byte
	recorded manifestSource
	parsed   map[string]*hasher.Manifest
}

// NewPlanned explains keys planned with the manifests planned (by key: the dry run's own and its
// dependencies'); the recorded ones come from st's index.
func NewPlanned(st *store.Store, planned map[string][]byte) *Planned {
	return &Planned{st: st, planned: planned, recorded: storeManifests(st), parsed: map[string]*hasher.Manifest{}}
}

// Explain answers why taskID would run as planned (its key hash, predicted status hit or miss),
// with an empty runId.
func (p *Planned) Explain(ctx context.Context, taskID, hash string, status store.Status) (*Why, error) {
	w := &Why{TaskID: taskID, Status: status, Hash: hash, Roots: []Root{}, Diff: emptyDiff(), Store: checkoutStore(p.st)}
	if p.st.Empty() {
		w.Changed, w.Reason = true, "no previous run computed a key for "+taskID
		w.Note = w.Reason
		w.original()
		return w, nil
	}
	w, err := against(ctx, p.st, w, store.ExecQuery{TaskID: taskID, Limit: 50}, p.load)
	if err != nil {
		return nil, err
	}
	w.Note = w.Reason
	w.original()
	return w, nil
}

// load answers the manifest of hash, planned or recorded, parsed once.
func (p *Planned) load(ctx context.Context, hash string) (*hasher.Manifest, bool, error) {
	if m, ok := p.parsed[hash]; ok {
		return m, m != nil, nil
	}
	var m *hasher.Manifest
	if data, ok := p.planned[hash]; ok {
		if parsed, err := hasher.ParseManifest(data); err == nil {
			m = parsed
		}
	} else {
		recorded, ok, err := p.recorded(ctx, hash)
		if err != nil {
			return nil, false, err
		}
		if ok {
			m = recorded
		}
	}
	p.parsed[hash] = m
	return m, m != nil, nil
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
		stats, err := windowStats(ctx, sn, store.Window{Oldest: recent[len(recent)-1].ID, Newest: recent[0].ID})
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
