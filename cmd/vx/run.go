package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/vzn/vx/engine/atomicfile"
	"github.com/vzn/vx/engine/cache"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/logtext"
	"github.com/vzn/vx/engine/runner"
	"github.com/vzn/vx/engine/runout"
	"github.com/vzn/vx/engine/runrequest"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
	"github.com/vzn/vx/engine/taskenv"
	"github.com/vzn/vx/engine/vxerr"
)

const summarizeDefault = "\x00default"

// runFlags are vx run's flags.
type runFlags struct {
	sel                            selectFlags
	all, force, bail, sandboxAgent bool
	concurrency, eventsFD          int
	// handoffFD is --handoff-fd: the descriptor vx mcp writes a runTasks child's hand-off to.
	handoffFD                   int
	summarize, dry, remoteCache string
	memoryBudget                string
	profile                     string // --profile: the run's trace (run_trace.go)
	// passArgs are the arguments after `--`, for the tasks named before it.
	passArgs []string
	habits   habitFlags
	ci       ciFlags // run_ci.go: --retry, --timeout, --tag, --report, --report-file, --agent
	// cacheScope is --cache-scope (run_scope.go).
	cacheScope string
	// frozen is --frozen (run_frozen.go).
	frozen bool
	// noCache is --no-cache, cacheSpec --cache (LAYER:ACCESS,…), and cacheUse what they (and
	// --force) leave the run reading and writing.
	noCache   bool
	cacheSpec string
	cacheUse  cache.Use
	otel      string // --otel[=URL]: the run's OpenTelemetry export (run_trace.go)
	// continueAlways is --continue=always (run_habits.go): a failure's dependents run too.
	continueAlways bool
	// excludeDeps is --exclude-dependencies: only the named tasks run, what they depend on is
	// restored from the cache.
	excludeDeps bool
	// remoteExec and noRemoteExec are --remote-exec and --no-remote-exec.
	remoteExec, noRemoteExec bool
	// download is --download: what of the run's remote work comes back.
	download string
}

func (a *app) runCmd() *cobra.Command {
	var rf runFlags
	cmd := &cobra.Command{
		Use:   "run <tasks…> | --all [-- ARGS…]",
		Short: "Run tasks in dependency order, from the cache where their inputs did not change",
		Long: `Run tasks (names like build, or ids like app#build) and everything they depend on, in
dependency order on a pool of workers. A task whose cache key (command, env, input files, the keys
of its dependencies) has a cache entry is restored instead of run. Task output goes to stderr,
each line prefixed with its task id; the run summary goes to stdout.

Started in a project's folder (or below it), without --filter, vx run works on that project, as if
given --filter NAME: its tasks and what they depend on.

Arguments after -- go to the commands of the tasks named before it, never to what they depend on
(vx run test -- --watch=false -t "adds"), shell-quoted, after the -- that npm run needs; they are
part of those tasks' cache keys.

At a terminal, vx run with no task lists each project#task with its description, to pick one.`,
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			shortLivedGC(a.getenv)
			var eventsOut io.Writer
			if rf.eventsFD > 0 {
				events, openErr := inheritedFile("events-fd", rf.eventsFD)
				if openErr != nil {
					return openErr
				}
				defer events.Close()
				// What vx ends on where its summary does not say it (a refusal, a run it could not
				// record) goes to the reader too, which need not pick it out of stderr: err is
				// RunE's own, what it returns.
				defer func() {
					if msg, ok := a.message(err); ok {
						runout.WriteEvent(events, runout.ErrorEvent(msg))
					}
				}()
				eventsOut = events
			}
			// The hand-off of vx mcp's runTasks (handoff.Handoff): nil reads none.
			var handoff io.Reader
			if rf.handoffFD > 0 {
				f, openErr := inheritedFile("handoff-fd", rf.handoffFD)
				if openErr != nil {
					return openErr
				}
				defer f.Close()
				handoff = f
			}
			args, rf.passArgs = splitAtDash(cmd, args)
			if len(args) == 0 && a.pickable(&rf, os.Stdin) {
				// A person at a terminal who named no task picks one (run_pick.go).
				id, err := a.pickTask(cmd.Context(), &rf, os.Stdin)
				if err != nil {
					return err
				}
				args = []string{id}
			}
			if err := rf.check(args); err != nil {
				return err
			}
			if err := rf.habits.apply(cmd, &rf); err != nil {
				return err
			}
			if err := rf.ci.check(cmd, a.format); err != nil {
				return err
			}
			return a.run(cmd, &rf, args, eventsOut, handoff)
		},
	}
	rf.register(cmd)
	cmd.SetUsageFunc(leafUsage)
	return cmd
}

// inheritedFile answers the file descriptor fd that the parent passed with --flag, kept from the
// tasks: the pipe is the parent's alone (no task may write fake events, read a hand-off or hold
// either open after vx is gone).
func inheritedFile(flag string, fd int) (*os.File, error) {
	f := os.NewFile(uintptr(fd), flag)
	if f == nil {
		return nil, vxerr.Usagef("--%s %d: not an open file", flag, fd)
	}
	closeOnExec(fd)
	return f, nil
}

// register declares the flags on cmd.
func (rf *runFlags) register(cmd *cobra.Command) {
	rf.sel.register(cmd)
	rf.habits.register(cmd)
	f := cmd.Flags()
	f.BoolVar(&rf.all, "all", false, "run every task of the selected projects, except persistent tasks and tasks marked all: false")
	f.BoolVar(&rf.force, "force", false, "run every task even when its cache entry would hit (the run is still recorded and cached)")
	f.BoolVar(&rf.bail, "bail", false, "start no new task after the first failure")
	memoryBudgetFlag(f, &rf.memoryBudget)
	f.StringVar(&rf.summarize, "summarize", "", "also write the run summary (JSON) to `FILE` (default .vx/runs/<runId>.json)")
	f.Lookup("summarize").NoOptDefVal = summarizeDefault
	f.StringVar(&rf.dry, "dry", "", "run nothing: answer the plan (each task's predicted cache status, hash, p50; predicted wall time) as `FORMAT`, text (the default) or json")
	f.Lookup("dry").NoOptDefVal = "text"
	f.StringVar(&rf.remoteCache, "remote-cache", "", "use the shared remote cache as `MODE`: off, read or readwrite (default: the workspace's remoteCache.mode)")
	f.StringVar(&rf.profile, "profile", "", "also write the run's profile to `FILE`: Chrome trace-event JSON (chrome://tracing, ui.perfetto.dev), a track per worker lane")
	f.IntVar(&rf.eventsFD, "events-fd", 0, "write the run's events (start, each finished task, end, and the error vx ends on) to file descriptor `N`, one JSON line each")
	_ = f.MarkHidden("events-fd")
	f.IntVar(&rf.handoffFD, "handoff-fd", 0, "read the file state and the keys vx mcp planned from file descriptor `N` (handoff.Handoff)")
	_ = f.MarkHidden("handoff-fd")
	f.BoolVar(&rf.sandboxAgent, "sandbox-agent", false, "confine every task as mcp({ sandbox: true }) confines an agent's runs: no network, writes to its outputs only")
	_ = f.MarkHidden("sandbox-agent")
	rf.ci.register(cmd)
	f.StringVar(&rf.cacheScope, "cache-scope", "", cacheScopeUsage)
	f.BoolVar(&rf.frozen, "frozen", false, frozenUsage)
	f.BoolVar(&rf.noCache, "no-cache", false, "run every task, and read and write no cache entry (local or remote)")
	f.StringVar(&rf.cacheSpec, "cache", "", "read and write each cache layer as `LAYERS` says: local:rw,remote:r (access r, w, rw or off; a layer left out is off)")
	registerOTel(f, &rf.otel)
	f.BoolVar(&rf.excludeDeps, "exclude-dependencies", false, "run only the tasks named: restore what they depend on from the cache, and refuse the run, before anything runs, when one of those misses")
	f.BoolVar(&rf.remoteExec, "remote-exec", false, "send every cacheable task that can run remotely to the REAPI engine (remote.executor, else remoteCache.reapi)")
	f.BoolVar(&rf.noRemoteExec, "no-remote-exec", false, "run every task on this machine, whatever remote.execute and exec.remote say")
	f.StringVar(&rf.download, "download", "", "what remote execution brings back: `MODE` all, outputs-of-requested or minimal (default remote.download, else all)")
}

// memoryBudgetFlag declares --memory-budget, vx run's and vx watch's, on f.
func memoryBudgetFlag(f *pflag.FlagSet, budget *string) {
	f.StringVar(budget, "memory-budget", "", "how much memory the running tasks may reserve together, each its recent peak RSS, as `SIZE` (e.g. 6GiB; default: env VX_MEMORY_BUDGET, else memoryBudget in vx.workspace.ts, else the cgroup's memory limit or the machine's memory)")
}

// check refuses flag values vx run cannot use, before the workspace loads.
func (rf *runFlags) check(args []string) error {
	if len(args) == 0 && !rf.all {
		return vxerr.Usagef("name the tasks to run, or --all")
	}
	if rf.dry != "" && rf.dry != "json" && rf.dry != "text" {
		return vxerr.Usagef("--dry=%s: want json or text", rf.dry)
	}
	if rf.dry != "" && rf.profile != "" {
		return vxerr.Usagef("--profile: a dry run runs nothing to profile")
	}
	if !graph.IsRemoteMode(rf.remoteCache) {
		return vxerr.Usagef("--remote-cache=%s: want off, read or readwrite", rf.remoteCache)
	}
	if err := rf.checkCacheScope(); err != nil {
		return err
	}
	if err := rf.checkCache(); err != nil {
		return err
	}
	if err := rf.checkExcludeDeps(args); err != nil {
		return err
	}
	return checkOTel(rf.otel, rf.dry)
}

// checkExcludeDeps refuses --exclude-dependencies where the run would read no cache to restore
// the dependencies from, or names no task to run without them.
func (rf *runFlags) checkExcludeDeps(args []string) error {
	switch {
	case !rf.excludeDeps:
		return nil
	case len(args) == 0:
		return vxerr.Usagef("--exclude-dependencies with --all: name the tasks to run without their dependencies")
	case rf.force || rf.noCache:
		return vxerr.Usagef("--exclude-dependencies restores the dependencies from the cache, which --force and --no-cache do not read: give one")
	case rf.cacheSpec != "" && !rf.cacheUse.LocalRead() && !rf.cacheUse.RemoteRead():
		return vxerr.Usagef("--exclude-dependencies restores the dependencies from the cache, which --cache=%s does not read", rf.cacheSpec)
	}
	return nil
}

// checkCache reads --no-cache, --cache and --remote-cache (an alias of --cache's remote layer)
// into rf.cacheUse and the remote mode; two of them at once are refused.
func (rf *runFlags) checkCache() error {
	switch {
	case rf.noCache && rf.cacheSpec != "":
		return vxerr.Usagef("--no-cache and --cache: give one")
	case rf.remoteCache != "" && (rf.noCache || rf.cacheSpec != ""):
		return vxerr.Usagef("--remote-cache with --no-cache or --cache: give one (--cache=local:rw,remote:r says both layers)")
	case rf.noCache:
		rf.cacheUse, rf.remoteCache = cache.NoCache, graph.RemoteOff
	case rf.cacheSpec != "":
		use, mode, err := cache.ParseUse(rf.cacheSpec)
		if err != nil {
			return err
		}
		rf.cacheUse, rf.remoteCache = use, mode
	}
	return nil
}

// emitSummary prints the run's summary as --format says; for a runTasks child (one with an events
// stream), whose summary the server decodes and no one reads, the JSON is compact: a quarter of
// the time to write, and less to read.
func (a *app) emitSummary(sum *summary.Summary, forServer bool) error {
	if a.format == "json" && forServer {
		enc := json.NewEncoder(a.stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(sum); err != nil {
			return fmt.Errorf("write json: %w", err)
		}
		return nil
	}
	return a.emit(sum, func(w io.Writer) error { return writeSummaryText(w, sum, a.colorOn(w)) })
}

// run plans or runs the selection the flags and args name.
func (a *app) run(cmd *cobra.Command, rf *runFlags, args []string, eventsOut io.Writer, handoff io.Reader) error {
	ctx, profile := startRunTrace(cmd.Context(), rf.profile)
	ctx, otel := startOTel(ctx, rf.otel, profile)
	ctx, writeCounts := a.countOps(ctx)
	fileState := a.startFileState(ctx, handoff, rf.dry == "")
	defer fileState.close()
	loadStart := time.Now()
	ws, err := a.loadForRun(ctx, rf)
	if err != nil {
		return err
	}
	if rf.dry == "" {
		ctx = otel.fromConfig(ctx, ws, profile, loadStart)
	}
	so, err := a.selectOptions(ws, &rf.sel)
	if err != nil {
		return err
	}
	// In a project's folder, vx run is about that project, as turbo's is; an explicit
	// --filter says otherwise. Silent, as turbo is: docs/cli.md says so.
	if p := a.folderProject(ws); p != nil && len(rf.sel.filters) == 0 {
		so.Filters = append([]string{p.Name}, so.Filters...)
	}
	so.Tasks, so.All = args, rf.all
	req := runrequest.Request{SelectOptions: so, Concurrency: rf.concurrency, MemoryBudget: rf.memoryBudget, Force: rf.force, Getenv: a.getenv, Version: version}
	// A run that reads no layer plans, and runs, every task as a miss.
	req.Force = req.Force || !rf.cacheUse.LocalRead() && !rf.cacheUse.RemoteRead()
	req.Args = rf.passArgs
	if a.getenv("VX_DEBUG_HASH") == "1" {
		req.DebugHash = a.stderr
	}
	req.Files = fileState.of(ws)
	req.ExcludeDependencies = rf.excludeDeps
	if rf.dry != "" {
		plan, err := runrequest.PlanDocument(ctx, ws, req)
		if err != nil {
			return err
		}
		if rf.dry == "json" {
			return writeJSON(a.stdout, plan)
		}
		return a.emit(plan, plan.WriteText)
	}
	prepared, err := runrequest.Prepare(ctx, ws, req)
	if err != nil {
		return err
	}
	if err := runrequest.Restorable(ctx, prepared); err != nil {
		return err
	}
	opts, err := a.runOptions(cmd, rf, ws, prepared.Options, fileState, eventsOut)
	if err != nil {
		return err
	}
	// A reader that went away (the vx mcp of a runTasks call died, `vx run | head`) must
	// not kill vx before it stopped its tasks and recorded the run: writes fail instead.
	brokenPipe := make(chan os.Signal, 1)
	signal.Notify(brokenPipe, syscall.SIGPIPE)
	defer signal.Stop(brokenPipe)
	sum, runErr := countedRun(ctx, opts, writeCounts)
	// The run made the state folder if it was missing: the config it loaded is kept there now.
	a.workspaceLoader().Keep()
	if sum == nil {
		return runErr
	}
	if err := profile.write(sum, opts); err != nil {
		return err
	}
	otel.export(ctx, sum, a.stderr)
	if cmd.Flags().Changed("summarize") {
		path := rf.summarize
		if path == summarizeDefault {
			path = defaultSummaryPath(ws.CacheDir, sum)
		}
		if err := writeFileAtomic(path, sum); err != nil {
			return err
		}
	}
	// A report that could not be written does not hide the summary; vx ends on it after.
	reportOnStdout, reportErr := a.afterRun(context.WithoutCancel(ctx), &rf.ci, ws, sum, eventsOut != nil)
	if err := a.emitRunSummary(&rf.ci, sum, eventsOut != nil, reportOnStdout); err != nil {
		return err
	}
	a.autoPrune(ws)
	if reportErr != nil {
		return reportErr
	}
	if runErr != nil {
		return runErr
	}
	if !sum.OK {
		return &vxerr.FailureError{}
	}
	return nil
}

// runOptions completes the runner's options Prepare made with what this process and its flags
// decide: the file state handed over, the display, the supervisor and sandbox, the cache's
// layers and scope, and vx run's CI flags.
func (a *app) runOptions(cmd *cobra.Command, rf *runFlags, ws *graph.Workspace, opts runner.Options, fileState *fileStateAsk, eventsOut io.Writer) (runner.Options, error) {
	var stale bool
	opts.Known, stale = fileState.handed(opts, &a.log)
	if stale {
		opts.Files = nil
	}
	opts.Early = fileState.earlyFor(ws)
	opts.Bail, opts.Output, opts.Terminal, opts.Args = rf.bail, a.stderr, isTerminal(a.stderr), a.recordedArgs()
	opts.Notice = func(msg string) { fmt.Fprintf(a.stderr, "vx: %s\n", msg) }
	opts.Events = eventsOut
	opts.Logs = rf.habits.logOptions(a.colorOn(a.stderr))
	sup := taskSupervisor(a.getenv)
	opts.Exec = supervisedExec(sup)
	opts.Sandbox = taskenv.SandboxOptions{Supervisor: sup, Agent: rf.sandboxAgent}
	opts.RemoteCache = rf.remoteCache
	var err error
	if opts.CacheScope, err = a.resolveCacheScope(rf, ws); err != nil {
		return opts, err
	}
	rf.ci.apply(cmd, &opts, ws, a.getenv, eventsOut != nil)
	opts.Cache = rf.cacheUse
	opts.ContinueAlways = rf.continueAlways
	switch {
	case rf.remoteExec && rf.noRemoteExec:
		return opts, vxerr.Usagef("--remote-exec with --no-remote-exec: give one")
	case rf.remoteExec:
		opts.RemoteExec = runner.RemoteExecOn
	case rf.noRemoteExec:
		opts.RemoteExec = runner.RemoteExecOff
	}
	if rf.download != "" {
		if err := graph.CheckDownload("--download", rf.download); err != nil {
			return opts, vxerr.Usagef("%v", err)
		}
		opts.Download = rf.download
	}
	return opts, nil
}

// leafUsage prints the usage of a command without subcommands, aliases or examples as cobra does,
// with its flags through flagUsages.
func leafUsage(c *cobra.Command) error {
	if c.HasAvailableSubCommands() || len(c.Aliases) > 0 || c.HasExample() {
		return (&cobra.Command{}).UsageFunc()(c) // cobra's own
	}
	w := c.OutOrStderr()
	fmt.Fprintf(w, "Usage:\n  %s", c.UseLine())
	if c.HasAvailableLocalFlags() {
		fmt.Fprintf(w, "\n\nFlags:\n%s", strings.TrimRightFunc(flagUsages(c.LocalFlags()), unicode.IsSpace))
	}
	if c.HasAvailableInheritedFlags() {
		fmt.Fprintf(w, "\n\nGlobal Flags:\n%s", strings.TrimRightFunc(flagUsages(c.InheritedFlags()), unicode.IsSpace))
	}
	_, err := fmt.Fprintln(w)
	return err
}

// flagUsages is fs.FlagUsages() with a string flag whose value may be left out shown as
// --name[=VALUE], VALUE the name its usage gives in backquotes. pflag shows it as
// --name VALUE[="v"], v being what the flag is set to when the value is left out: for --dry the
// word text, for --affected and --summarize vx's sentinel, which reads as blanks.
func flagUsages(fs *pflag.FlagSet) string {
	shown := pflag.NewFlagSet("", pflag.ContinueOnError)
	shown.SortFlags = fs.SortFlags
	fs.VisitAll(func(f *pflag.Flag) {
		if f.NoOptDefVal == "" || f.Value.Type() != "string" {
			shown.AddFlag(f)
			return
		}
		name, usage := pflag.UnquoteUsage(f)
		g := *f
		// A value of no type puts no name between --name and [=NoOptDefVal].
		g.Value, g.Usage, g.NoOptDefVal = untypedValue{}, usage, name
		shown.AddFlag(&g)
	})
	return shown.FlagUsages()
}

// untypedValue stands in for a flag's value where pflag reads only its type.
type untypedValue struct{}

func (untypedValue) String() string   { return "" }
func (untypedValue) Set(string) error { return nil }
func (untypedValue) Type() string     { return "" }

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// writeFileAtomic writes doc as JSON through a temporary file and a rename.
func writeFileAtomic(path string, doc any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := atomicfile.Write(path, func(w io.Writer) error { return writeJSON(w, doc) }); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func ms(n int64) string {
	return (time.Duration(n) * time.Millisecond).String()
}

// defaultSummaryPath is where --summarize writes s: .vx/runs/<runId>.json, or for a run with
// nothing to run (no id) .vx/runs/no-tasks.json.
func defaultSummaryPath(cacheDir string, s *summary.Summary) string {
	name := s.RunID
	if name == "" {
		name = "no-tasks"
	}
	return filepath.Join(cacheDir, "runs", name+".json")
}

func writeSummaryText(w io.Writer, s *summary.Summary, color bool) error {
	if s.NoTasks != "" {
		_, err := fmt.Fprintf(w, "no tasks to run: %s\n", s.NoTasks)
		return err
	}
	t := s.Totals
	verdict := s.Status
	if color {
		verdict = ansiGreen + verdict + ansiReset
		if !s.OK {
			verdict = ansiRed + s.Status + ansiReset
		}
	}
	fmt.Fprintf(w, "run %s %s: %d tasks, %d hit, %d miss", s.RunID, verdict, t.Tasks, t.Hits, t.Misses)
	if t.Forced > 0 {
		fmt.Fprintf(w, " (%d forced)", t.Forced)
	}
	fmt.Fprintf(w, ", %d failed", t.Failed)
	if t.Blocked > 0 {
		fmt.Fprintf(w, ", %d blocked", t.Blocked)
	}
	if t.Skipped > 0 {
		fmt.Fprintf(w, ", %d skipped", t.Skipped)
	}
	if t.Cancelled > 0 {
		fmt.Fprintf(w, ", %d cancelled", t.Cancelled)
	}
	fmt.Fprintf(w, " in %s", ms(t.WallMs))
	if t.SavedMs > 0 {
		fmt.Fprintf(w, " (saved %s)", ms(t.SavedMs))
	}
	fmt.Fprintln(w)
	if len(s.Tags) > 0 {
		fmt.Fprintf(w, "  tags: %s\n", tagsText(s.Tags))
	}
	if rc := s.RemoteCache; rc != nil {
		fmt.Fprintf(w, "  remote cache (%s, %s", rc.Protocol, rc.Mode)
		if rc.Scope != "" {
			fmt.Fprintf(w, ", scope %s", rc.Scope)
		}
		fmt.Fprintf(w, "): %d hit, %d uploaded, %d errors", rc.Hits, rc.Uploads, rc.Errors)
		if rc.Abandoned > 0 {
			fmt.Fprintf(w, ", %d uploads abandoned", rc.Abandoned)
		}
		fmt.Fprintln(w)
	}
	for _, task := range s.Tasks {
		switch task.Status {
		case store.StatusFailed:
			code := "no exit code"
			if task.ExitCode != nil {
				code = fmt.Sprintf("exit code %d", *task.ExitCode)
			}
			if len(task.NotReady) > 0 {
				code += ", not ready"
			}
			fmt.Fprintf(w, "  failed    %s (%s)\n", task.TaskID, code)
			for _, v := range task.SandboxViolations {
				fmt.Fprintf(w, "            sandbox: %s\n", v)
			}
		case store.StatusTimedOut:
			fmt.Fprintf(w, "  timed out %s after %s\n", task.TaskID, ms(task.DurationMs))
		case store.StatusBlocked:
			notReady := ""
			if len(task.NotReady) > 0 {
				notReady = ", which was not ready"
			}
			fmt.Fprintf(w, "  blocked   %s by %s%s\n", task.TaskID, deref(task.BlockedBy), notReady)
		case store.StatusMiss:
			if task.Flaky {
				fmt.Fprintf(w, "  flaky     %s (passed on attempt %d)\n", task.TaskID, task.Attempts)
			}
		}
		if task.NotCachedReason != "" {
			fmt.Fprintf(w, "  not cached %s: %s\n", task.TaskID, logtext.Escape(task.NotCachedReason))
		}
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// shortLivedGC lets a vx run's heap grow to four times what is live before the collector runs (as
// esbuild's command does), under a soft limit of 1 GiB: a run is one short process, which trades a
// higher peak for fewer collections (figures: docs/performance.md, "Process start and config
// evaluation"). $GOGC or $GOMEMLIMIT, when set, win. vx mcp keeps Go's defaults: it lives for a
// session.
func shortLivedGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(300)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(1 << 30)
	}
}
