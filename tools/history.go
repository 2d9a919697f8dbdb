package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/engine/mask"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/vxerr"
)

// The history tools (getCacheStats, getRunHistory, explainCacheKey, whyDidThisRerun, getTaskLog,
// getFailures) share what follows: they read the state folder as `vx last` does, never the config
// first, so that a broken config never hides history.

// openState answers the workspace's state folder open for reading, and the release the caller
// calls once done with it: the checkout's index and the shared store; where there is no index it
// answers as an empty one and creates nothing; an index of another version is refused by name.
// The session keeps the open across calls (session.Session.Reader).
func (d *Deps) openState(ctx context.Context) (*store.Store, func(), error) {
	dirs, err := d.loader().StoreDirs(ctx)
	if err != nil {
		return nil, nil, refusal(err)
	}
	st, release, err := d.Session.Reader(dirs.Checkout, dirs.Shared).Acquire(ctx)
	if err != nil {
		var ve *store.VersionError
		var sve *store.SharedVersionError
		if errors.As(err, &ve) || errors.As(err, &sve) {
			return nil, nil, &tool.Refusal{Msg: tool.OneLine("read the state folder: " + err.Error())}
		}
		if store.IsCorrupt(err) {
			return nil, nil, corruptIndex(dirs.Checkout, err)
		}
		return nil, nil, fmt.Errorf("read the state folder: %w", err)
	}
	return st, release, nil
}

// secretsMasker masks the secrets of the workspace's tasks as of the last load of the config that
// succeeded: every tools/call loads it first (the server's lister does), so this is the config as
// it is now, or, while it does not load, as it last did. Logs were masked when stored; this second
// pass covers a secret whose value changed since.
func (d *Deps) secretsMasker() *mask.Masker {
	return d.loader().Masker()
}

// historyError turns an engine error into a tool's: one the agent caused (a run id that names no
// run, an ambiguous prefix, a task with no history) is a one-line refusal; any other is wrapped
// with what was being read.
func historyError(err error, what string) error {
	var ue *vxerr.UsageError
	if errors.As(err, &ue) || tool.IsRefusal(err) {
		return refusal(err)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if store.IsCorrupt(err) {
		return tool.Refusef("read %s: the run history index is damaged (%s): run vx run (it moves the index aside and starts a new one) or move .vx/index.db aside", what, tool.OneLine(err.Error()))
	}
	return fmt.Errorf("read %s: %w", what, err)
}

// corruptIndex refuses a call whose state folder's index is damaged, saying what to do: the next
// vx run sets it aside and starts a new one (its history and cache entries are lost; the blobs
// stay until a prune), or the user moves it aside.
func corruptIndex(dir string, err error) error {
	path := store.IndexPath(dir)
	return tool.Refusef("the run history index %s is damaged (%s): run vx run (it moves the index aside and starts a new one; past runs and cache entries are forgotten) or move it aside yourself (mv %s %s.bad)",
		path, tool.OneLine(err.Error()), path, path)
}

// refusal makes err's message a one-line refusal.
func refusal(err error) error {
	return &tool.Refusal{Msg: tool.OneLine(err.Error())}
}

// taskQuery answers a history question about one task: it checks the task id, opens the state
// folder read-only, asks, and turns the engine's refusals into the tool's, naming what was asked.
func taskQuery[T any](ctx context.Context, d *Deps, taskID, what string, ask func(*store.Store) (T, error)) (T, error) {
	var zero T
	if err := checkTaskID("taskId", taskID); err != nil {
		return zero, err
	}
	st, release, err := d.openState(ctx)
	if err != nil {
		return zero, err
	}
	defer release()
	v, err := ask(st)
	if err != nil {
		return zero, historyError(err, what+" "+taskID)
	}
	return v, nil
}
