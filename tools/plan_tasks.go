package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/engine/runner"
	"github.com/vzn/vx/engine/runrequest"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/vxerr"
	"github.com/vzn/vx/engine/workspace"
)

// taskSelectionArgs are the arguments runTasks and planTasks share: what `vx run` selects with
// its task arguments, --all, --filter and --affected.
type taskSelectionArgs struct {
	Tasks    taskNames  `json:"tasks" arg:"doc=Names (build) or ids (app#build); deps run too."`
	All      bool       `json:"all" arg:"doc=All tasks of the selected projects."`
	Filter   FilterList `json:"filter" arg:"doc=--filter values: NAME, glob, tag:T, ./PATH, [REF], NAME..., ...NAME, !F."`
	Affected *Affected  `json:"affected" arg:"doc=Changed since the default branch (true) or a ref, plus dependents."`
	Args     []string   `json:"args" arg:"doc=vx run TASKS -- ARGS."`
}

// check refuses what vx run would refuse before looking at the workspace: no task and no all,
// an empty task, a task id missing a half. verb names the tool's action in the refusal.
func (a *taskSelectionArgs) check(verb string) error {
	for i, t := range a.Tasks {
		key := fmt.Sprintf("tasks[%d]", i)
		if strings.TrimSpace(t) == "" {
			return tool.Refusef("argument %q must be a non-empty string", key)
		}
		if strings.Contains(t, "#") {
			if err := checkTaskID(key, t); err != nil {
				return err
			}
		} else if strings.HasPrefix(t, "-") {
			// vx run would read it as a flag: name such a task by its id.
			return tool.Refusef("argument %q must not start with \"-\" (name the task as project#task)", key)
		}
	}
	if len(a.Tasks) == 0 && !a.All {
		return tool.Refusef("name the tasks to %s (tasks: names like build or ids like app#build), or set all: true", verb)
	}
	return nil
}

// selectOptions are the workspace.SelectOptions vx run builds from the same flags.
func (a *taskSelectionArgs) selectOptions() workspace.SelectOptions {
	so := selectOptions(a.Filter, a.Affected)
	so.Tasks, so.All = a.Tasks, a.All
	return so
}

// PlanAnswer is planTasks' answer: the exit status `vx run --dry=json` would end with, and either
// its plan or the message it would refuse with.
type PlanAnswer struct {
	ExitCode int          `json:"exitCode"`
	Plan     *runner.Plan `json:"plan,omitempty"`
	// Counts are the plan's tasks by predicted cache status (hit, miss), all of them, however
	// many the answer lists.
	Counts map[store.Status]int `json:"counts,omitempty"`
	Error  string               `json:"error,omitempty"`
	// Graph names the vx command that draws the plan's graph as a page.
	Graph string `json:"graph,omitempty"`
}

// planTasksArgs are planTasks' arguments: a selection, and the cursor of its task list.
type planTasksArgs struct {
	taskSelectionArgs
	Cursor string `json:"cursor" arg:"nonempty,doc=nextCursor."`
}

// planTasks answers as `vx run <tasks…> --dry=json`, through the same engine function, in process.
func (d *Deps) planTasks() tool.Tool {
	return tool.New(tool.Tool{
		Name:        "planTasks",
		Title:       "Plan a run (dry run)",
		Description: "What would run, and why? vx run --dry=json: counts, each predicted miss (all when few): hash, deps, p50, why affected; wallMs, workMs, criticalPath. runTasks' arguments but force. A refusal answers error.",
		Paged:       true,
		Annotations: readOnly,
	}, func(ctx context.Context, call *tool.Call, args planTasksArgs) (*PlanAnswer, error) {
		if err := args.check("plan"); err != nil {
			return nil, err
		}
		ws, err := d.load(ctx)
		if err != nil {
			return nil, err
		}
		// The filters as given: a tool reads their folders from the workspace root and selects
		// from the whole workspace, where vx run starts from its working folder.
		req := runrequest.Request{SelectOptions: args.selectOptions(), Getenv: d.getenv, Args: args.Args, Files: d.files(ctx, ws), Memo: d.Session.Memo()}
		plan, err := runrequest.PlanDocument(ctx, ws, req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			var coder vxerr.Coder
			if !errors.As(err, &coder) {
				// Not an answer vx run gives as a refusal (an unreadable index, a disk
				// error): the call failed.
				return nil, fmt.Errorf("plan: %w", err)
			}
			return &PlanAnswer{ExitCode: coder.Code(), Error: d.loader().Masker().String(tool.OneLine(err.Error()))}, nil
		}
		if req.Files == nil {
			// The watcher still takes its first look (or none runs): the plan kept nothing for
			// the next call.
			d.planAhead(ctx, req, d.Session.FilesReady)
		}
		ans := &PlanAnswer{ExitCode: vxerr.ExitOK, Plan: plan, Counts: planCounts(plan), Graph: planGraphHint(&args.taskSelectionArgs)}
		call.Window(ctx, args.Cursor, planTaskLists(ans, args.Filter == nil && args.Affected == nil)...)
		return ans, nil
	})
}

// planAhead plans req's selection and arguments in the background through the server's memo
// (planmemo.Memo.Refresh), once ready answers (session.Session.FilesReady: the watcher vouches for
// the file state; nil: at once), loading the workspace then: the next call finds the memo knowing
// the keys, what the cache holds and the estimates, and the loader the workspace, as they are. A
// plan made before the watcher's first look keeps none of it (figures: docs/performance.md, "The
// server's shortcuts: memo, hand-off, child started ahead"). It does nothing without a memo, or
// while another background plan is under way.
func (d *Deps) planAhead(ctx context.Context, req runrequest.Request, ready func(context.Context) error) {
	d.Session.Memo().Refresh(ctx, ready, func(ctx context.Context) {
		ws, err := d.load(ctx)
		if err != nil {
			return
		}
		req.Getenv, req.Files, req.Memo = d.getenv, d.files(ctx, ws), d.Session.Memo()
		_, _ = runrequest.PlanDocument(ctx, ws, req)
	})
}

// taskNames is the tasks argument: task names or project#task ids, each a non-empty string.
type taskNames []string
