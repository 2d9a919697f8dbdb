package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/runner"
	"github.com/vzn/vx/engine/runrequest"
	"github.com/vzn/vx/engine/summary"
	"github.com/vzn/vx/engine/taskenv"
	"github.com/vzn/vx/engine/vxerr"
	"github.com/vzn/vx/engine/watch"
	"github.com/vzn/vx/engine/watchloop"
)

// watchFlags are vx watch's flags: vx run's that make sense for a watch, declared by vx run's
// own code, and --debounce.
type watchFlags struct {
	sel          selectFlags
	all          bool
	habits       habitFlags
	memoryBudget string
	debounce     time.Duration
	// run is what habits.apply makes of the flags (the worker count, --bail for --continue=never).
	run runFlags
	// passArgs are the arguments after `--`, for the tasks named before it.
	passArgs []string
}

func (a *app) watchCmd() *cobra.Command {
	var wf watchFlags
	cmd := &cobra.Command{
		Use:   "watch <tasks…> | --all [-- ARGS…]",
		Short: "Run tasks, then run again, on every edit, those whose inputs changed",
		Long: `Run tasks (as vx run does, with the same cache, history, sandbox and memory budget), then
watch the workspace's files: after each edit (once the files are quiet for --debounce), run again
the tasks whose cache keys moved, and what depends on them, in dependency order. Files git ignores
and vx's state folder are not watched. An edit that moves a task of the run in progress stops
that run and starts again. A persistent task (a dev server) starts once and keeps running; when
its key moves, vx watch restarts it only if it says interruptible: true. An edited
vx.workspace.ts or vx.project.ts is loaded again. Ctrl-C stops everything, as it stops vx run;
what a stopped task had written and not removed (a build tool's temporary files) is its own and
stays.

Files a task of the run in progress creates move no key until the run ended: a tool that writes
temporary files beside its sources and removes them does not make its run start again. vx watch
names the file an edit changed, not an editor's temporary files beside it.

--concurrency, --continue, --output-logs, --log-order, --memory-budget and the arguments after --
are vx run's.

While vx watch runs, a vx run of the same workspace asks it for the workspace's file state rather
than listing and hashing the files itself, and checks the answer against the disk. A folder vx
watch cannot watch is named, every run scans while it lasts, and vx watch tries again until it
can.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			args, wf.passArgs = splitAtDash(cmd, args)
			if len(args) == 0 && !wf.all {
				return vxerr.Usagef("vx watch: name the tasks to watch, or --all")
			}
			if err := wf.habits.apply(cmd, &wf.run); err != nil {
				return err
			}
			return a.watch(cmd, &wf, args)
		},
	}
	wf.sel.register(cmd)
	f := cmd.Flags()
	f.BoolVar(&wf.all, "all", false, "watch every task of the selected projects, except tasks marked all: false")
	wf.habits.register(cmd)
	memoryBudgetFlag(f, &wf.memoryBudget)
	f.DurationVar(&wf.debounce, "debounce", watchloop.DefaultDebounce, "how long the files must stay quiet after an edit before a run")
	cmd.SetUsageFunc(leafUsage)
	return cmd
}

// watch runs the selection, then again on every edit, until Ctrl-C.
func (a *app) watch(cmd *cobra.Command, wf *watchFlags, args []string) error {
	ctx := cmd.Context()
	ws, err := a.load(ctx)
	if err != nil {
		return err
	}
	so, err := a.selectOptions(ws, &wf.sel)
	if err != nil {
		return err
	}
	if p := a.folderProject(ws); p != nil && len(wf.sel.filters) == 0 {
		so.Filters = append([]string{p.Name}, so.Filters...)
	}
	so.Tasks, so.All = args, wf.all
	req := runrequest.Request{SelectOptions: so, Concurrency: wf.run.concurrency, MemoryBudget: wf.memoryBudget, Getenv: a.getenv, Args: wf.passArgs, Version: version}
	if _, err := runrequest.Prepare(ctx, ws, req); err != nil {
		return err
	}
	status := func(line string) { fmt.Fprintf(a.stderr, "vx watch: %s\n", line) }
	svc, err := watch.Serve(ws.Root, ws.CacheDir, ws, status)
	if err != nil {
		return err
	}
	defer svc.Close()
	if err := svc.Watcher().WaitReady(ctx); err != nil && ctx.Err() != nil {
		return nil
	}
	// A watcher that could not watch a folder has said which and why; it tries again until it
	// can, and each run scans meanwhile.
	status(fmt.Sprintf("watching %d projects (%d folders) for %s; Ctrl-C stops", len(ws.Projects), svc.Watcher().Folders(), describeWatch(args, wf.all)))
	sup := taskSupervisor(a.getenv)
	return watchloop.Watch(ctx, watchloop.Options{
		Loader:  a.workspaceLoader(),
		Request: req,
		Service: svc,
		Configure: func(o *runner.Options) {
			o.Output, o.Terminal, o.Args = a.stderr, isTerminal(a.stderr), os.Args[1:]
			o.Bail, o.Logs = wf.run.bail, wf.habits.logOptions(a.colorOn(a.stderr))
			o.ContinueAlways = wf.run.continueAlways
			o.Notice = func(msg string) { fmt.Fprintf(a.stderr, "vx: %s\n", msg) }
			o.Exec = supervisedExec(sup)
			o.Sandbox = taskenv.SandboxOptions{Supervisor: sup}
		},
		Report: func(sum *summary.Summary) {
			_ = a.emit(sum, func(w io.Writer) error { return writeSummaryText(w, sum, a.colorOn(w)) })
		},
		Status:   status,
		Debounce: wf.debounce,
	})
}

// describeWatch names what vx watch runs, as its command line does.
func describeWatch(tasks []string, all bool) string {
	if all {
		return "--all"
	}
	out := ""
	for i, t := range tasks {
		if i > 0 {
			out += " "
		}
		out += t
	}
	return out
}
