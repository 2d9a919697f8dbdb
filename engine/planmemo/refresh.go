package planmemo

import (
	"context"

	"github.com/sourcegraph/conc/panics"
)

// refresh is the memo's background plan (Memo.Refresh): planning is closed once it plans (its
// ready answered), done once it ended; cancel stops it.
type refresh struct {
	planning chan struct{}
	done     chan struct{}
	cancel   context.CancelFunc
}

// refreshKey marks the context of a memo's background plan, which must not wait for itself.
type refreshKey struct{}

// Refresh runs plan in the background, unless one runs already or the memo is closed: a plan
// through the memo (runrequest.PlanDocument, DryRun, PlanKeys with Memo set to m), made once a run
// wrote the index, so that what the cache holds and the history's estimates are read while the
// agent is busy elsewhere, not by its next call. Every plan through the memo waits for it first
// (it is the work that plan would do); Close stops it and waits for it. A panic in plan ends plan
// only: the next call's plan meets it again where it is reported.
//
// ready, when not nil, is waited for first: the server's watcher taking its first look, before
// which a plan cannot be kept (it has no snapshot to keep it against). While it waits, plans
// through the memo do not wait for the refresh, and a ready that fails ends it unplanned.
func (m *Memo) Refresh(ctx context.Context, ready func(context.Context) error, plan func(ctx context.Context)) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || m.refresh != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(ctx), refreshKey{}, true))
	r := &refresh{planning: make(chan struct{}), done: make(chan struct{}), cancel: cancel}
	if ready == nil {
		close(r.planning) // before the call returns: a plan after it waits for this one
	}
	m.refresh = r
	go func() {
		defer close(r.done)
		defer cancel()
		var p panics.Catcher
		p.Try(func() {
			if ready != nil {
				if ready(ctx) != nil {
					return
				}
				close(r.planning)
			}
			plan(ctx)
		})
		m.mu.Lock()
		m.refresh = nil
		m.mu.Unlock()
	}()
}

// awaitRefresh waits for the memo's background plan, if one plans and ctx is not its own.
func (m *Memo) awaitRefresh(ctx context.Context) {
	if m == nil || ctx.Value(refreshKey{}) != nil {
		return
	}
	m.mu.Lock()
	r := m.refresh
	m.mu.Unlock()
	if r == nil {
		return
	}
	select {
	case <-r.planning:
	default:
		return // still waiting for its ready
	}
	select {
	case <-r.done:
	case <-ctx.Done():
	}
}

// stopRefresh stops the background plan and waits for it; no other starts after it.
func (m *Memo) stopRefresh() {
	m.mu.Lock()
	m.closed = true
	r := m.refresh
	m.mu.Unlock()
	if r != nil {
		r.cancel()
		<-r.done
	}
}
