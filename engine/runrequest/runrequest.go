// Package runrequest turns what vx run is asked — its task arguments, --all, --filter, --exclude,
// --affected, the arguments after --, --concurrency, --memory-budget, --force — into the options
// of a run: the selection made, the worker count and memory budget resolved with their sources, or
// the refusal vx run answers. vx run, vx run --dry, vx watch, vx graph and the planTasks and
// runTasks tools all start here; the runner then plans and runs what it answers.
package runrequest

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/profilerec"
	"github.com/vzn/vx/engine/resources"
	"github.com/vzn/vx/engine/runner"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/vxerr"
	"github.com/vzn/vx/engine/workspace"
)

// AffectedBaseEnv names the variable that holds the git ref --affected compares with when it
// names none, over the workspace's affectedBase.
const AffectedBaseEnv = "VX_AFFECTED_BASE"

// Request is what vx run is asked, to run or to plan: the selection its task arguments, --all,
// --filter, --exclude and --affected make, and what a plan depends on besides. The callers resolve
// the filters: --exclude F is the filter !F, and vx run reads the folders they name from its
// working folder (and, in a project's folder, selects that project), where the tools read them
// from the workspace root.
type Request struct {
	workspace.SelectOptions
	// Version is vx's version, recorded with the run.
	Version string
	// Concurrency is --concurrency; 0 means VX_CONCURRENCY, else the number of CPUs.
	Concurrency int
	// MemoryBudget is --memory-budget ("" when not given): see MemoryBudget.
	MemoryBudget string
	// Force runs (and predicts) every task as a miss.
	Force bool
	// Getenv reads VX_CONCURRENCY, env values and secrets; nil means os.Getenv.
	Getenv func(string) string
	// DebugHash receives every hash input (VX_DEBUG_HASH=1); nil for none.
	DebugHash io.Writer
	// Args are the arguments after `--`: appended to the commands of the tasks the selection's
	// task arguments name (never to what they depend on), so part of those tasks' keys.
	Args []string
	// Files is the file state as a watcher knows it; nil scans (see runner.Options.Files).
	Files filestate.Source
	// Memo is a long-lived process's memo of its plans (see runner.PlanMemo); nil for none.
	Memo runner.PlanMemo
	// ExcludeDependencies (vx run --exclude-dependencies) runs only the tasks requested: what they
	// depend on may only be restored from the cache (runner.Options.RestoreOnly), and
	// CheckRestorable refuses a plan in which one of them misses.
	ExcludeDependencies bool
}

// Prepare selects req's tasks in ws and answers the options of a run of them, to which the caller
// adds how the run is shown and recorded, with the affected reasons; or the refusal vx run answers
// (an error with a vxerr code): a selection it cannot make, no task selected (unless git narrowed
// it to none: then the options hold no task and say why, NothingAffected), a worker count that
// is not a positive number, a memory budget that is not a size. vx run and vx run --dry both start here.
func Prepare(ctx context.Context, ws *graph.Workspace, req Request) (runner.PlanOptions, error) {
	defer profilerec.Start(ctx, "select").End()
	getenv := req.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if req.Affected && req.AffectedRef == "" {
		// Over the workspace's affectedBase; a ref asked for (--affected=REF) over both.
		req.AffectedRef = getenv(AffectedBaseEnv)
	}
	selection, err := workspace.Select(ctx, ws, req.SelectOptions)
	if err != nil {
		return runner.PlanOptions{}, err
	}
	if len(selection.TaskIDs) == 0 && selection.NothingAffected == "" {
		return runner.PlanOptions{}, vxerr.Usagef("no task matches %s", describeSelection(req.SelectOptions))
	}
	if len(req.Args) > 0 {
		if len(req.Tasks) == 0 {
			return runner.PlanOptions{}, vxerr.Usagef("the arguments after -- go to the tasks named on the command line, and --all names none: name them (vx run test -- %s)",
				workspace.ShellQuote(req.Args[0]))
		}
		ws = workspace.WithArgs(ws, workspace.NamedTasks(selection, req.SelectOptions), req.Args)
	}
	workers, _, err := resources.Workers(req.Concurrency, getenv)
	if err != nil {
		return runner.PlanOptions{}, err
	}
	budget, budgetSource, err := resources.MemoryBudget(req.MemoryBudget, ws, getenv)
	if err != nil {
		return runner.PlanOptions{}, err
	}
	return runner.PlanOptions{
		Options: runner.Options{
			Workspace: ws, TaskIDs: selection.TaskIDs, Requested: selection.Requested,
			Force: req.Force, Concurrency: workers, Getenv: getenv, DebugHash: req.DebugHash,
			MemoryBudget: budget, MemorySource: budgetSource, NothingAffected: selection.NothingAffected, Files: req.Files,
			RestoreOnly: restoreOnly(req, selection), Version: req.Version,
		},
		Affected: selection.Affected,
		Memo:     req.Memo,
	}, nil
}

// restoreOnly is what a run of the selection may only restore: under ExcludeDependencies, every
// task it holds but did not request; nil otherwise.
func restoreOnly(req Request, selection *workspace.Selection) map[string]bool {
	if !req.ExcludeDependencies {
		return nil
	}
	requested := map[string]bool{}
	for _, id := range selection.Requested {
		requested[id] = true
	}
	only := map[string]bool{}
	for _, id := range selection.TaskIDs {
		if !requested[id] {
			only[id] = true
		}
	}
	return only
}

// Restorable plans a run of opts that has tasks it may only restore (Options.RestoreOnly), and
// refuses it as CheckRestorable does; a run without any passes unplanned.
func Restorable(ctx context.Context, opts runner.PlanOptions) error {
	if len(opts.RestoreOnly) == 0 {
		return nil
	}
	plan, err := runner.DryRun(ctx, opts)
	if err != nil {
		return err
	}
	return CheckRestorable(plan, opts)
}

// CheckRestorable refuses, under --exclude-dependencies, a plan in which a task that may only be
// restored would miss (where a remote cache is read, only one never cached: the rest are looked up
// there by the run): it names the first such task in dependency order (and how many more there
// are), so that nothing runs. A plan of a run without RestoreOnly passes.
func CheckRestorable(plan *runner.Plan, opts runner.PlanOptions) error {
	var missed []runner.PlanTask
	remote := runner.ReadsRemoteCache(opts.Options)
	for _, t := range plan.Tasks {
		if !opts.RestoreOnly[t.TaskID] || t.Cache == store.StatusHit {
			continue
		}
		if remote && t.Cacheable {
			// The plan sees the local cache only: the run looks it up in the remote one, and
			// fails it, its dependents blocked, where it misses there too.
			continue
		}
		missed = append(missed, t)
	}
	if len(missed) == 0 {
		return nil
	}
	first := missed[0]
	why := "has no cache entry for its key " + shortKey(first.Hash)
	if !first.Cacheable {
		why = "is never cached (cache: false)"
	}
	more := ""
	if len(missed) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(missed)-1)
	}
	return vxerr.Usagef("--exclude-dependencies: the dependency %s %s%s: run it first (vx run %s), or without --exclude-dependencies",
		first.TaskID, why, more, first.TaskID)
}

// shortKey is a key's first 12 characters, as vx run --dry shows it.
func shortKey(key string) string {
	if len(key) > 12 {
		return key[:12]
	}
	return key
}

// PlanDocument answers `vx run --dry=json` for req: its plan, or the refusal vx run answers (an
// error with a vxerr code). vx run --dry and the planTasks tool both answer it.
func PlanDocument(ctx context.Context, ws *graph.Workspace, req Request) (*runner.Plan, error) {
	opts, err := Prepare(ctx, ws, req)
	if err != nil {
		return nil, err
	}
	plan, err := runner.DryRun(ctx, opts)
	if err != nil {
		return nil, err
	}
	if err := CheckRestorable(plan, opts); err != nil {
		return nil, err
	}
	return plan, nil
}

// describeSelection names a selection as vx run's command line would: its tasks or --all, then
// each --filter and --affected.
func describeSelection(so workspace.SelectOptions) string {
	what := strings.Join(so.Tasks, " ")
	if so.All {
		what = "--all"
	}
	for _, f := range so.Filters {
		what += " --filter " + f
	}
	if so.Affected {
		what += " --affected"
	}
	return what
}
