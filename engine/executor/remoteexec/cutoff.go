package remoteexec

import (
	"context"
	"fmt"
	"time"

	pb "github.com/bazelbuild/remote-apis/build/bazel/remote/execution/v2"

	"github.com/vzn/vx/engine/executor"
)

// ActionHit is a result the engine's Action Cache holds for a task's Action: the Action's digest,
// the command's log (stdout then stderr) and its outputs, brought into the local blob store by
// digest (each checked as it was written) unless the task keeps them remote
// (executor.Task.KeepOutputsRemote), paths relative to the workspace root; Took is how long
// the command ran on its worker (0 when the engine did not say).
type ActionHit struct {
	Action  Digest
	Log     []byte
	Outputs []executor.RemoteOutput
	Took    time.Duration
}

// Cached asks the engine's Action Cache for the result of t's Action (its Command, input root and
// platform, as Run would send them) without uploading or executing anything but the run's
// install action, whose output tree the input root names. The Action holds the
// digests of its input files, the outputs of the tasks it depends on among them: a task whose
// own key moved only because an upstream's key did, while that upstream's outputs stayed
// byte-identical, has the same Action, so the result its earlier execution left is found here.
// ok is false when the cache holds no result, or one of a command that did not pass, or t makes
// no Action; an error is an engine that could not be asked (executor.ErrRemoteUnavailable) or a
// result that could not be read (both a miss for the run).
func (e *Executor) Cached(ctx context.Context, t executor.Task) (ActionHit, bool, error) {
	// The Action names the install's node_modules by digest: the install is asked for (found in
	// the Action Cache once it ran); one that fails leaves Run to say so.
	inst, failed, err := e.installed(ctx, t)
	if failed != nil || err != nil {
		return ActionHit{}, false, nil
	}
	a, _, projectRel, err := e.action(t, inst)
	if err != nil {
		return ActionHit{}, false, nil // no Action to look up: Run says why, or runs the task here
	}
	ar, err := e.Client.cached(ctx, a.Digest)
	if err != nil || ar == nil || ar.GetExitCode() != 0 {
		return ActionHit{}, false, err
	}
	hit := ActionHit{Action: a.Digest}
	md := ar.GetExecutionMetadata()
	if start, end := md.GetExecutionStartTimestamp(), md.GetExecutionCompletedTimestamp(); start != nil && end != nil {
		hit.Took = max(0, end.AsTime().Sub(start.AsTime()))
	}
	for _, d := range []*pb.Digest{ar.GetStdoutDigest(), ar.GetStderrDigest()} {
		data, err := e.read(ctx, d)
		if err != nil {
			return ActionHit{}, false, fmt.Errorf("the log of %s: %w", t.ID, err)
		}
		hit.Log = append(hit.Log, data...)
	}
	if hit.Outputs, err = e.outputs(ctx, ar, projectRel, t.KeepOutputsRemote); err != nil {
		return ActionHit{}, false, fmt.Errorf("the outputs of %s: %w", t.ID, err)
	}
	return hit, true, nil
}
