package runner

import (
	"fmt"
	"maps"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/hasher"
	"github.com/vzn/vx/engine/store"
)

// groupManifest is the manifest of a group task (dependsOn and no command): its id and its
// dependencies' keys, nothing of files or environment, so its key moves exactly when one of
// theirs does, and vx why names the dependency that moved it.
func groupManifest(t *graph.Task, depKeys map[string]string) *hasher.Manifest {
	return &hasher.Manifest{
		Version: hasher.CacheVersion, TaskID: t.ID, Env: map[string]string{}, ExecEnv: map[string]string{},
		Outputs: []string{}, Files: map[string]string{}, Deps: maps.Clone(depKeys),
	}
}

// group ends the attempt of a group task, whose dependencies have all passed (a failed one
// blocks it before it starts): no command, no lock, no cache entry. It reads hit when every
// dependency hit, so that a run of nothing but hits stays one, and miss (ran and passed)
// otherwise; a group of servers runs as they do (serveGroup).
func (a *attempt) group(depKeys map[string]string) outcome {
	key, data, err := groupManifest(a.t, depKeys).Key()
	if err != nil {
		return a.fail(store.StatusFailed, fmt.Sprintf("vx: %v\n", err))
	}
	a.e.Hash, a.o.key, a.o.manifest = key, key, data
	if a.t.Persistent {
		return a.serveGroup(key)
	}
	a.e.Status = store.StatusMiss
	if allHit(a.n.deps, func(d *node) bool { return d.exec.Status == store.StatusHit }) {
		a.e.Status = store.StatusHit
	}
	a.e.ExitCode = intPtr(0)
	a.o.timing.measuredFrom = a.start
	a.o.exec = a.e
	return a.o
}

// allHit reports whether hit holds for every node of deps (true for none).
func allHit(deps []*node, hit func(*node) bool) bool {
	for _, d := range deps {
		if !hit(d) {
			return false
		}
	}
	return true
}

// serveGroup holds a group of servers (a persistent group: it depends on persistent tasks) until
// vx stops it, as it stops any server (every task depending on it ended, or the run was
// stopped): its dependents start at once, and its servers run while it does.
func (a *attempt) serveGroup(key string) outcome {
	a.report(step{n: a.n, to: released, key: key})
	<-a.ctx.Done()
	return a.fail(store.StatusCancelled, "")
}
