package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/actor/tool/window"
	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/handoff"
	"github.com/vzn/vx/engine/runner"
	"github.com/vzn/vx/engine/runrequest"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
	"github.com/vzn/vx/engine/workspace"
	"github.com/vzn/vx/proc"
)

// eventsDrain bounds how long the events of a finished child are still read: past it, a process
// that escaped the sweep and holds the pipe cannot keep the call open.
const eventsDrain = time.Second

// sweepTimeout bounds the sweep of a call's leftover processes.
const sweepTimeout = 5 * time.Second

// callMarkerPrefix starts the name of the variable put in the environment of the `vx run` child of
// each runTasks call, completed by a token unique to the call. vx run hands its environment to
// every task, and a task to what it starts, so when the call ends every process the run started
// can be found by it, in whichever process group or session it went and to whichever parent it was
// re-parented (the child may have been killed). The name, not only the value, is the call's own, so
// that a `vx mcp` started by a task of another call keeps that call's marker in its runs too.
const callMarkerPrefix = handoff.CallMarkerPrefix

type runTasksArgs struct {
	taskSelectionArgs
	Force   bool `json:"force" arg:"doc=Run even where it would hit."`
	sandbox bool // set from the workspace, never by the agent
}

// runRest is the tool that answers a run's tasks past the first page: getRunHistory with the
// run's id, which reads them from the index rather than running anything again.
const runRest = "getRunHistory"

// RunAnswer is runTasks' answer: vx run's exit status, and its summary or the message it refused
// the run with.
type RunAnswer struct {
	ExitCode int `json:"exitCode"`
	// Summary is `vx run --format json`'s document, as the child printed it: its tasks those that
	// need attention first (see runLists).
	Summary *summary.Summary `json:"summary,omitempty"`
	// Error is the CLI's message when vx run answered no summary (a refusal before the run) or
	// when it ended otherwise than its summary says (the run could not be recorded).
	Error string `json:"error,omitempty"`
	// Next says what to call next when tasks failed: getFailures with the run's id.
	Next string `json:"next,omitempty"`
}

// runTasks runs `vx run <tasks…> --format json` as a child of the server.
func (d *Deps) runTasks() tool.Tool {
	return tool.New(tool.Tool{
		Name:        "runTasks",
		Title:       "Run tasks",
		Description: "Run tasks: vx run --format json, cached. Answers exitCode, the summary: totals, tasks needing attention (all when few), the rest via getRunHistory {runId, cursor: nextCursor}. On failure: getFailures. A refusal answers error, runs nothing.",
		Paged:       true,
		Annotations: tool.Annotations{ReadOnlyHint: ptr(false), DestructiveHint: ptr(false), IdempotentHint: ptr(false),
			OpenWorldHint: ptr(false)},
	}, func(ctx context.Context, call *tool.Call, args runTasksArgs) (*RunAnswer, error) {
		if err := args.check("run"); err != nil {
			return nil, err
		}
		ws, err := d.load(ctx)
		if err != nil {
			return nil, err
		}
		if err := d.allowRun(ctx, ws, &args); err != nil {
			if err = confirmOutside(ctx, call, err); err != nil {
				return nil, err
			}
		}
		// mcp({ sandbox: true }): every task the agent runs is confined (vx run --sandbox-agent).
		args.sandbox = ws.MCP != nil && ws.MCP.Sandbox
		progress := call.Progress
		if !call.Progressing {
			progress = nil
		}
		// The hand-off is made while the child starts (see writeHandoff).
		var makeHandoff func() *handoff.Handoff
		var handed *handoff.Handoff // runChild has waited for makeHandoff when it returns
		if d.mayHandOff(&args) {
			makeHandoff = func() *handoff.Handoff {
				handed = d.handoff(ctx, ws, &args)
				return handed
			}
		}
		ans, err := d.runChildStarted(ctx, ws.Root, &args, makeHandoff, progress, call.Started)
		if err != nil || ans.Summary == nil {
			return ans, err
		}
		if makeHandoff != nil {
			d.refreshMemo(ctx, &args, handed != nil)
		}
		ans.Next = runNext(ans.Summary)
		windowRunAnswer(ctx, call, ans)
		return ans, nil
	})
}

// runNext says what to call when tasks failed: getFailures with the run's id.
func runNext(s *summary.Summary) string {
	if s.Totals.Failed == 0 {
		return ""
	}
	return fmt.Sprintf("%d failed: call getFailures {\"runId\":%q} for their output", s.Totals.Failed, s.RunID)
}

// windowRunAnswer asks for ans within the budget: the summary first, its first page runTasks',
// the rest of its tasks through getRunHistory { runId, cursor }.
func windowRunAnswer(ctx context.Context, call *tool.Call, ans *RunAnswer) {
	next := window.Question{Tool: runRest, Args: runIDArgs(ans.Summary.RunID)}
	call.WindowRequest(ctx, window.Request{Next: next}, runLists(ans.Summary)...)
}

// allowRun applies the workspace's mcp({ run }) before anything runs: false runs nothing; a list
// allows only the task names in it (a task id counts as its name), and all: true only when every
// task it selects has an allowed name.
func (d *Deps) allowRun(ctx context.Context, ws *graph.Workspace, args *runTasksArgs) error {
	if err := refuseUnrunnable(ctx, ws, args); err != nil {
		return err
	}
	policy := ws.MCP
	if len(args.Args) > 0 && (policy == nil || !policy.Args) {
		return tool.Refusef("this workspace's mcp() lets an agent pass no arguments to a task's command (args): " +
			"they can make a test runner load any file; mcp({ args: true }) in vx.workspace.ts allows them")
	}
	if policy == nil || policy.RunAll {
		return nil
	}
	if !policy.CanRun() {
		return tool.Refusef("this workspace's mcp({ run: false }) lets an agent run no task")
	}
	allowed := strings.Join(policy.RunNames, ", ")
	for _, t := range args.Tasks {
		name := t
		if _, n, ok := graph.SplitTaskID(t); ok {
			name = n
		}
		if !policy.Allows(name) {
			return &outsideRun{Refusal: tool.Refusal{Msg: fmt.Sprintf("task %q is not one this workspace's mcp({ run }) lets an agent run (allowed: %s)", t, allowed)},
				question: fmt.Sprintf("Run %s? This workspace's mcp({ run }) lets an agent run only %s without asking.", strings.Join(args.Tasks, ", "), allowed)}
		}
	}
	if !args.All {
		return nil
	}
	sel, err := workspace.Select(ctx, ws, args.selectOptions())
	if err != nil {
		// vx run refuses this selection with its own message; nothing will run.
		return nil
	}
	var outside []string
	for _, id := range sel.Requested {
		if _, name, ok := graph.SplitTaskID(id); ok && !policy.Allows(name) && !slices.Contains(outside, name) {
			outside = append(outside, name)
		}
	}
	if len(outside) > 0 {
		slices.Sort(outside)
		return &outsideRun{Refusal: tool.Refusal{Msg: fmt.Sprintf("all: true selects tasks named %s, which this workspace's mcp({ run }) does not let an agent run "+
			"(allowed: %s): name the tasks instead", strings.Join(outside, ", "), allowed)},
			question: fmt.Sprintf("Run every task named %s (all: true)? This workspace's mcp({ run }) lets an agent run only %s without asking.",
				strings.Join(outside, ", "), allowed)}
	}
	return nil
}

// outsideRun is allowRun's refusal of tasks outside the workspace's mcp({ run }): a host that can
// ask its user asks question, and runs them once the user accepts.
type outsideRun struct {
	tool.Refusal
	question string
}

// Unwrap answers the refusal, which the agent reads where the user is not asked.
func (o *outsideRun) Unwrap() error { return &o.Refusal }

// confirmOutside asks the user to confirm a run allowRun refused as outside mcp({ run }), where the
// host can ask: nil once they accepted. Any other refusal, and this one where the host cannot ask,
// stands.
func confirmOutside(ctx context.Context, call *tool.Call, err error) error {
	var outside *outsideRun
	if !errors.As(err, &outside) || call.Confirm == nil {
		return err
	}
	ok, cerr := call.Confirm(ctx, outside.question)
	if cerr != nil {
		return cerr
	}
	if !ok {
		return tool.Refusef("the user declined: %s", outside.Msg)
	}
	return nil
}

// refuseUnrunnable refuses, by name, a run an agent cannot drive, from one selection: one that
// asks for a persistent task (a dev server, a watcher: it would never finish, and an agent cannot
// wait on it; such a task still runs as what another task depends on, stopped when that one
// finishes), or whose selection holds an interactive task (asked for, or one an asked-for task
// depends on: it reads the terminal, and an agent has none).
func refuseUnrunnable(ctx context.Context, ws *graph.Workspace, args *runTasksArgs) error {
	sel, err := workspace.Select(ctx, ws, args.selectOptions())
	if err != nil {
		return nil // vx run refuses this selection with its own message; nothing will run
	}
	var servers, interactive []string
	if len(args.Tasks) > 0 {
		for _, id := range sel.Requested {
			if t, ok := ws.Task(id); ok && t.Persistent {
				servers = append(servers, id)
			}
		}
	}
	for _, id := range sel.TaskIDs {
		if t, ok := ws.Task(id); ok && t.Interactive {
			interactive = append(interactive, id)
		}
	}
	switch {
	case len(servers) > 0:
		return tool.Refusef("%s is persistent (a server or watcher that runs until stopped): an agent cannot wait on it; "+
			"run the tasks that depend on it, which start it and stop it when they finish", strings.Join(servers, ", "))
	case len(interactive) > 0:
		return tool.Refusef("%s is interactive (it reads the terminal): an agent has no terminal to type into; "+
			"a person runs it with vx run", strings.Join(interactive, ", "))
	}
	return nil
}

// handoff makes the keys of the call's selection from the watcher's file state, through the
// server's memo (which makes again only what moved since its last plan), for the child to take with
// that file state (handoff.Handoff); nil, and the child asks the watcher and hashes as any vx run,
// where there is no watcher's file state, the selection is refused (the child says why), or the
// keys would not be the child's: arguments after -- and --sandbox-agent enter keys a plan leaves
// out. The keys read the environment the child starts from.
func (d *Deps) handoff(ctx context.Context, ws *graph.Workspace, args *runTasksArgs) *handoff.Handoff {
	if !d.mayHandOff(args) {
		return nil
	}
	snap, ok := d.files(ctx, ws).(*filestate.Snapshot)
	if !ok || snap == nil {
		return nil
	}
	opts, err := runrequest.Prepare(ctx, ws, runrequest.Request{SelectOptions: args.selectOptions(), Getenv: d.getenv, Files: snap, Memo: d.Session.Memo(), Version: d.Version})
	if err != nil || len(opts.TaskIDs) == 0 {
		return nil
	}
	h, err := runner.PlanKeys(ctx, opts)
	if err != nil {
		return nil
	}
	h.Stamp = d.Session.Memo().HandoffStamp(opts.Workspace, opts.TaskIDs, d.Session.Environ())
	// Where every task is a hit whose outputs are in place, the child needs no file state to
	// run them: it asks the watcher for one should it need it after all.
	if args.Force || len(h.Intact) < len(opts.TaskIDs) {
		h.Files = snap
	}
	return h
}

// refreshMemo plans the call's selection again in the background once its run wrote the index
// (planAhead), as planTasks would: the next call's hand-off then finds the memo knowing what the
// cache holds, and hands that to its child too, where it would otherwise look it up on the call's
// path (figures: docs/performance.md, "The server's shortcuts: memo, hand-off, child started
// ahead"). watched says that the call had the watcher's file state: the plan starts at once, and a
// call after this one waits for it rather than making the same plan beside it; else it waits for
// the watcher (session.Session.FilesReady).
func (d *Deps) refreshMemo(ctx context.Context, args *runTasksArgs, watched bool) {
	ready := d.Session.FilesReady
	if watched {
		ready = nil
	}
	d.planAhead(ctx, runrequest.Request{SelectOptions: args.selectOptions()}, ready)
}

// mayHandOff reports whether a call of args may hand its child anything (see handoff).
func (d *Deps) mayHandOff(args *runTasksArgs) bool {
	return d.Session.Memo() != nil && len(args.Args) == 0 && !args.sandbox
}

// childArgs is the `vx run` command line for args, the call's selection first (the child
// records it as the run's command line, without what follows it here for the server's own use);
// handsOff adds the descriptor the hand-off is read from.
func (args *runTasksArgs) childArgs(handsOff bool) []string {
	// check refused a task name that starts with "-", which vx run would read as a flag.
	argv := append([]string{"run"}, args.Tasks...)
	if args.All {
		argv = append(argv, "--all")
	}
	for _, f := range args.Filter {
		argv = append(argv, "--filter="+f)
	}
	if a := args.Affected; a != nil && a.On {
		if a.Ref == "" {
			argv = append(argv, "--affected")
		} else {
			argv = append(argv, "--affected="+a.Ref)
		}
	}
	if args.Force {
		argv = append(argv, "--force")
	}
	if args.sandbox {
		argv = append(argv, "--sandbox-agent")
	}
	argv = append(argv, "--format", "json", "--events-fd", "3")
	if handsOff {
		argv = append(argv, "--handoff-fd", "4")
	}
	if len(args.Args) > 0 {
		argv = append(append(argv, "--"), args.Args...)
	}
	return argv
}

// answer turns what the child printed, and the message it ended on, into the tool's answer.
func (d *Deps) answer(res proc.Result, stdout []byte, msg string) (*RunAnswer, error) {
	msg = d.loader().Masker().String(msg)
	if res.Signal != "" {
		return nil, fmt.Errorf("runTasks: vx run ended by a signal (%s) before it answered; every process it started was stopped", res.Signal)
	}
	ans := &RunAnswer{ExitCode: res.ExitCode}
	// The summary is decoded once (it grows with the tasks; see docs/performance.md, "Answers and
	// records"): what is not a JSON object is no summary, and the message stands instead.
	doc := bytes.TrimSpace(stdout)
	var sum summary.Summary
	var syntax *json.SyntaxError
	err := errors.New("no summary")
	if len(doc) > 0 && doc[0] == '{' {
		err = json.Unmarshal(doc, &sum)
	}
	if err != nil && (len(doc) == 0 || doc[0] != '{' || errors.As(err, &syntax)) {
		ans.Error = msg
		if ans.Error == "" {
			ans.Error = fmt.Sprintf("vx run exited %d with no summary and no message", res.ExitCode)
		}
		return ans, nil
	}
	if err != nil {
		return nil, fmt.Errorf("runTasks: the run summary: %w", err)
	}
	ans.Summary = &sum
	if sum.ExitCode != res.ExitCode {
		ans.Error = msg
	}
	return ans, nil
}

func (d *Deps) stderr() io.Writer {
	if d.Stderr == nil {
		return io.Discard
	}
	return d.Stderr
}

// lastMessage finds the message vx ended on in its stderr: its last "vx: " line, else its last
// line. It is the fallback for a child that wrote no error event.
func lastMessage(stderr []byte) string {
	lines := strings.Split(strings.TrimRight(string(stderr), "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if msg, ok := strings.CutPrefix(lines[i], "vx: "); ok {
			return strings.TrimSpace(msg)
		}
	}
	return strings.TrimSpace(lines[len(lines)-1])
}

// taskMessage is the progress message of one finished task, e.g. "app#test failed (exit code 1), 3/5".
func taskMessage(ev runner.Event) string {
	status := string(ev.Status)
	switch {
	case ev.Status == store.StatusHit:
		status = "hit (restored from the cache)"
	case ev.Status == store.StatusMiss:
		status = "ran (miss)"
	case ev.Status == store.StatusForced:
		status = "ran (forced)"
	case ev.Status == store.StatusFailed && ev.ExitCode != nil:
		status = "failed (exit code " + strconv.Itoa(*ev.ExitCode) + ")"
	case ev.BlockedBy != "":
		status = "blocked by " + ev.BlockedBy
	}
	return fmt.Sprintf("%s %s, %d/%d", ev.TaskID, status, ev.Done, ev.Total)
}
