package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/vzn/vx/engine/profilerec"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
	"github.com/vzn/vx/engine/taskmutex"
)

// A key is executed by one process of the machine at a time (taskmutex.KeyLocks, in the cache
// store's folder, which every checkout sharing the store sees). A task whose lookup missed takes
// its key's lock before it runs, waiting while another process holds it; once it holds it, it looks
// the key up again, since the process it waited for may have stored it, and it keeps the lock
// until its entry is stored. A failed or killed owner stores nothing: the waiter then runs the
// task itself. The key lock is the last lock a task takes, and nothing is waited for while it is
// held: no two runs can wait for each other.

// takesKeyLock reports whether the task's key is claimed before it runs: a cached task whose
// entry the run writes. A task that is not cached, a persistent one, or a run that writes no cache
// entry runs in its own checkout only, which its task lock guards.
func (a *attempt) takesKeyLock() bool {
	return a.t.Cache && !a.t.Persistent && a.r.keys != nil && a.r.writesCache()
}

// claim takes the task's key lock (waiting, in lockWait, while another process executes the key)
// and looks the key up again where the run reads the cache; done says the attempt ended there (a
// hit, cancelled, gave up at the task's timeout), with its outcome in a.o. A nil lock with done
// false means that the task runs without one.
func (a *attempt) claim(key string) (lk *taskmutex.KeyLock, done bool) {
	if !a.takesKeyLock() {
		return nil, false
	}
	lk, err := a.r.keys.TryLock(key, a.t.ID)
	var held *taskmutex.KeyHeldError
	if errors.As(err, &held) {
		lk, err = a.waitForKey(key, held)
		if lk == nil && err == nil {
			return nil, true
		}
	}
	if err != nil {
		// The lock file could not be made (a read-only store): the task runs unclaimed, as it
		// did before key locks.
		a.r.display.Notice(a.t.ID, fmt.Sprintf("vx: %v", err))
		return nil, false
	}
	if a.r.readsCache() {
		if hit, ok := a.lookupIn(key, a.r.cache.GetLocal); ok {
			_ = lk.Unlock()
			a.hit(key, hit)
			return nil, true
		}
	}
	return lk, false
}

// waitForKey waits, for at most the task's timeout, for the key's owner named by held to let it
// go, and takes its lock. A nil lock and error mean that the attempt ended (cancelled, or it gave
// up) with its outcome in a.o; an error, that the lock could not be taken.
func (a *attempt) waitForKey(key string, held *taskmutex.KeyHeldError) (*taskmutex.KeyLock, error) {
	o := held.Owner
	a.report(step{n: a.n, to: lockWait, wait: &summary.WaitedFor{Key: key, PID: o.PID, Checkout: o.Checkout, TaskID: o.TaskID}})
	waitCtx, cancel := a.ctx, context.CancelFunc(func() {})
	if a.t.Timeout > 0 {
		waitCtx, cancel = context.WithTimeout(a.ctx, a.t.Timeout)
	}
	defer cancel()
	began := a.r.opts.Now()
	lk, err := a.r.keys.Lock(waitCtx, key, a.t.ID, nil)
	a.lockEnd = a.r.opts.Now()
	a.o.waited += a.lockEnd.Sub(began)
	profilerec.Record(a.ctx, "key wait", began, a.lockEnd)
	switch {
	case err == nil:
		a.report(step{n: a.n, to: running})
		return lk, nil
	case a.ctx.Err() != nil:
		a.fail(store.StatusCancelled, "")
	case errors.Is(err, context.DeadlineExceeded):
		a.fail(store.StatusFailed, fmt.Sprintf("vx: %s: gave up after waiting %s (its timeout) for %s, which executes its key %s\n",
			a.t.ID, a.t.Timeout, o, taskmutex.ShortKey(key)))
	default:
		return nil, err
	}
	return nil, nil
}

// keyWaitText is what the display says a task waits for: the process executing its key.
func keyWaitText(w *summary.WaitedFor) string {
	o := taskmutex.Owner{PID: w.PID, Checkout: w.Checkout}
	what := o.String() + ", which executes its key " + taskmutex.ShortKey(w.Key)
	if w.TaskID != "" {
		what += " (" + w.TaskID + ")"
	}
	return what
}

// keyWaits keeps what each task of the run waited for, for its row of the summary. Only the
// scheduler's loop touches it.
type keyWaits map[string]*summary.WaitedFor

// fill sets the row of each task that waited in sum.
func (w keyWaits) fill(sum *summary.Summary) {
	for i, t := range sum.Tasks {
		if wf, ok := w[t.TaskID]; ok {
			sum.Tasks[i].WaitedFor = wf
		}
	}
}
