package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/vzn/vx/engine/cache"
	"github.com/vzn/vx/engine/executor"
	"github.com/vzn/vx/engine/executor/remoteexec"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/remote"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
	"github.com/vzn/vx/engine/taskenv"
)

// cutoffLookup is a run's second remote lookup (early cutoff): a task the run would send to the
// engine whose own key missed is looked up by its Action's digest in the engine's Action Cache.
// The Action holds the digests of the task's input files, its upstreams' outputs among them, so
// an upstream change that left those outputs byte-identical (a comment edit) leaves the Action,
// and the result its earlier execution left there, unchanged.
type cutoffLookup struct {
	ex *remoteexec.Executor
	// on says the run sends every task that can run remotely (--remote-exec).
	on bool
	// off is set once the engine could not be asked: it is not asked again in the run.
	off atomic.Bool
}

// useCutoff readies the run's lookup by Action digest on the engine ex.
func (r *runState) useCutoff(ex *remoteexec.Executor, on bool) {
	r.cutoff = &cutoffLookup{ex: ex, on: on}
}

// cutoff looks a task whose key missed up by its Action's digest and, on a hit, restores its
// outputs through the cache's checked restore (or, where the run's download mode keeps them
// remote, leaves them in the engine's CAS and says so on the row), stores its entry under key (locally, and in the
// remote cache where the run writes it and the server lets the client write), and ends the
// attempt as a hit whose cacheSource is remote-action. false leaves the task to run.
func (a *attempt) cutoff(key string) (outcome, bool) {
	r := a.r
	c := r.cutoff
	if c == nil || c.off.Load() || r.opts.Force || !r.opts.Cache.RemoteRead() || !a.t.Cache || a.inputs == nil {
		return a.o, false
	}
	var box *taskenv.Box
	t := a.command(&box)
	if !r.runsRemotely(t, c.on) {
		return a.o, false
	}
	found, ok, err := c.ex.Cached(a.ctx, t)
	switch {
	case err == nil:
	case errors.Is(err, executor.ErrRemoteUnavailable):
		// An engine that cannot be asked is not asked again; the run's one warning is the
		// executor's, when it cannot run the task there either.
		c.off.Store(true)
		return a.o, false
	default:
		if a.ctx.Err() == nil {
			r.display.Notice(a.t.ID, fmt.Sprintf("vx: %s: the result its Action digest found could not be read, so it runs: %s", a.t.ID, r.masker.String(err.Error())))
		}
		return a.o, false
	}
	if !ok {
		return a.o, false
	}
	// The Action was made from the files on disk: one that moved since the key was made from it
	// makes a result the key does not describe. The task then runs, as a miss.
	if changed, cerr := a.checkInputs(a.ctx); cerr != nil || len(changed) > 0 {
		return a.o, false
	}
	keep := r.writesCache()
	log := r.masker.Bytes(found.Log)
	kept := t.KeepOutputsRemote
	put := func() (string, error) {
		return r.cache.PutRemote(a.ctx, a.t, key, log, found.Took, found.Outputs, keep)
	}
	if kept {
		put = func() (string, error) { return r.cache.PutRemoteKept(a.ctx, a.t, key, log, found.Took, found.Outputs) }
	}
	logBlob, err := put()
	// Outputs were written (or a restore began): list the project's files again for later tasks.
	a.wrote()
	r.hasher.Wrote(a.p, a.t)
	if err != nil {
		r.display.Notice(a.t.ID, fmt.Sprintf("vx: %s: the result its Action digest found was not restored: %s", a.t.ID, r.masker.String(err.Error())))
		return a.o, false
	}
	files := len(found.Outputs)
	if kept {
		files = 0 // nothing came into the workspace
	}
	o := a.hit(key, cache.Hit{Entry: store.Entry{Duration: found.Took, LogBlob: logBlob}, Source: summary.CacheSourceRemoteAction,
		Log: log, Files: files, OutputsRemote: kept})
	if !keep {
		o.exec.LogSource = logUncached
	}
	return o, true
}

// RemoteUnknown is a plan row's remote status where it cannot be known before the run: the task
// would run on the engine, whose Action Cache is the only remote place its result can be, found
// there by its Action digest alone.
const RemoteUnknown = "unknown"

// remoteUnknownWhy is a plan's reason for the rows whose remote status is RemoteUnknown.
const remoteUnknownWhy = "vx's keys are kept in no remote cache here (the engine lets only its workers write its Action Cache, " +
	"or no other remote cache is set): a task the engine would run is found there only by its Action digest, " +
	"which holds its upstreams' output digests, so only once they are known; a plan never asks the engine"

// markRemoteUnknown says, on the rows of plan whose tasks a run of opts would send to the engine
// and that the plan predicts to miss, that their remote status is unknown, where vx's keys are
// kept in no remote cache (remoteKeysKept). It asks the network nothing when no row is such.
func markRemoteUnknown(ctx context.Context, plan *Plan, opts PlanOptions) {
	ws, mode := opts.Workspace, opts.RemoteExec
	if mode == RemoteExecOff || mode != RemoteExecOn && !wantsRemote(ws) {
		return
	}
	var rows []*PlanTask
	for i := range plan.Tasks {
		pt := &plan.Tasks[i]
		gt, ok := ws.Task(pt.TaskID)
		if ok && pt.Cache == store.StatusMiss && !opts.Force && plannedRemote(ws, gt, mode == RemoteExecOn, opts.Sandbox.Agent) {
			rows = append(rows, pt)
		}
	}
	if len(rows) == 0 || remoteKeysKept(ctx, opts.Options) {
		return
	}
	for _, pt := range rows {
		pt.Remote = RemoteUnknown
	}
	plan.RemoteUnknown = remoteUnknownWhy
}

// plannedRemote reports whether a run would send task t to the engine, as runsRemotely decides
// from what a plan knows: cacheable, not persistent, not opted out, outputs declared inside its
// project, under no sandbox (agent says every task runs under one).
func plannedRemote(ws *graph.Workspace, t *graph.Task, on, agent bool) bool {
	if t.Persistent || !t.Cache || t.IsGroup() || t.RemoteExec != nil && !*t.RemoteExec || t.Sandbox != nil || agent {
		return false
	}
	if remoteexec.Remotable(executor.Task{Outputs: t.Outputs, InputFiles: []string{}}) != "" {
		return false
	}
	return on || t.RemoteExec != nil || ws.Remote != nil && ws.Remote.Execute
}

// remoteKeysKept reports whether a remote cache the run reads may hold entries under vx's keys:
// one is set and reads, and is not a REAPI server that lets only its workers write its Action
// Cache (asked of its capabilities, bounded by its timeout; one that cannot be asked keeps none
// this plan can count on).
func remoteKeysKept(ctx context.Context, opts Options) bool {
	if !ReadsRemoteCache(opts) {
		return false
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	s, err := remote.Resolve(opts.Workspace.RemoteCache, getenv, opts.RemoteCache)
	if err != nil {
		return false
	}
	if s.Protocol != remote.ProtocolREAPI {
		return true
	}
	s.Root = opts.Workspace.Root
	conn, err := remote.DialREAPI(s)
	if err != nil {
		return false
	}
	defer conn.Close()
	writes, err := conn.ClientWritesActionCache(ctx)
	return err == nil && writes
}
