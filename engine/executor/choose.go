package executor

import (
	"context"
	"errors"
	"sync"
)

// The executors a task can run on, as the summary, history and runTasks rows name them.
const (
	ExecutorLocal  = "local"
	ExecutorRemote = "remote"
)

// Errors a remote executor answers when a task's result cannot come from it. Running the task
// locally instead is always safe: neither leaves a result the run counts.
var (
	// ErrRemoteUnavailable is an engine that cannot run the task: unreachable, overloaded, or
	// refusing its Action (a platform no worker has).
	ErrRemoteUnavailable = errors.New("remote execution unavailable")
	// ErrRemoteLost is an execution whose result did not come back (its operation lost).
	ErrRemoteLost = errors.New("remote execution lost")
)

// Chooser is the Executor a run uses: it runs each task on Remote when Remote is set and
// UseRemote says the task may run there, else on Local. The first time Remote answers
// ErrRemoteUnavailable or ErrRemoteLost, the Chooser warns once (Warn), runs that task on Local,
// and runs every later task of the run on Local too: a fallback is visible, never a wrong result.
// Result.Executor names where each task ran.
type Chooser struct {
	Local, Remote Executor
	// UseRemote says whether a task may run remotely (declared outputs, not persistent, not
	// opted out); nil means every task may.
	UseRemote func(Task) bool
	// Warn receives the one warning of a fallback.
	Warn func(string)

	mu  sync.Mutex
	off bool
}

// Run runs t where the Chooser says, falling back to Local as the type's doc says.
func (c *Chooser) Run(ctx context.Context, t Task) (Result, error) {
	if c.Remote != nil && !c.remoteOff() && (c.UseRemote == nil || c.UseRemote(t)) {
		res, err := c.Remote.Run(ctx, t)
		if !errors.Is(err, ErrRemoteUnavailable) && !errors.Is(err, ErrRemoteLost) {
			res.Executor = ExecutorRemote
			return res, err
		}
		if ctx.Err() != nil {
			return res, err
		}
		c.fallBack(err)
	}
	res, err := c.Local.Run(ctx, t)
	res.Executor = ExecutorLocal
	return res, err
}

func (c *Chooser) remoteOff() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.off
}

// fallBack turns remote execution off for the run, warning the first time.
func (c *Chooser) fallBack(err error) {
	c.mu.Lock()
	first := !c.off
	c.off = true
	c.mu.Unlock()
	if first && c.Warn != nil {
		c.Warn("remote execution: " + err.Error() + "; running tasks locally for the rest of this run")
	}
}
