package runner

import (
	"context"

	"github.com/sourcegraph/conc/panics"
)

// refresh is the memo's background plan (Memo.Refresh): done is closed once it ended, cancel
// stops it.
type refresh struct {
	done   chan struct{}
	cancel context.CancelFunc
}

// refreshKey marks the context of a memo's background plan, which must not wait for itself.
type refreshKey struct{}

// Refresh runs plan in the background, unless one runs already or the memo is closed: a plan
// through the memo (PlanDocument, DryRun, PlanKeys with Memo set to m), made once a run wrote the
// index, so that what the cache holds and the history's estimates are read while the agent is
// busy elsewhere, not by its next call. Every plan through the memo waits for it first (it is
// the work that plan would do); Close stops it and waits for it. A panic in plan ends plan only:
// the next call's plan meets it again where it is reported.
func (m *Memo) Refresh(ctx context.Context, plan func(ctx context.Context)) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || m.refresh != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(ctx), refreshKey{}, true))
	r := &refresh{done: make(chan struct{}), cancel: cancel}
	m.refresh = r
	go func() {
		defer close(r.done)
		defer cancel()
		var p panics.Catcher
		p.Try(func() { plan(ctx) })
		m.mu.Lock()
		m.refresh = nil
		m.mu.Unlock()
	}()
}

// awaitRefresh waits for the memo's background plan, if one runs and ctx is not its own.
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
