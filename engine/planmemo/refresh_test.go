package planmemo

import (
	"context"
	"errors"
	"testing"
)

// A memo runs one background plan at a time; a plan through the memo waits for it; Close stops
// it and waits for it, and none starts after; a plan that panics ends alone.
func TestMemoRefreshLifecycle(t *testing.T) {
	ctx := context.Background()
	m := NewMemo()
	started, release := make(chan struct{}), make(chan struct{})
	finished := false
	m.Refresh(ctx, nil, func(ctx context.Context) {
		close(started)
		<-release
		finished = true
	})
	<-started
	m.Refresh(ctx, nil, func(context.Context) { t.Error("a second refresh ran while the first was under way") })
	close(release)
	m.awaitRefresh(ctx)
	if !finished {
		t.Fatal("awaitRefresh returned before the refresh ended")
	}

	m.Refresh(ctx, nil, func(context.Context) { panic("a plan's panic") })
	m.awaitRefresh(ctx)
	ran := make(chan struct{})
	m.Refresh(ctx, nil, func(context.Context) { close(ran) })
	<-ran // the panic left the memo able to refresh again

	stopped := make(chan struct{})
	started = make(chan struct{})
	m.awaitRefresh(ctx)
	m.Refresh(ctx, nil, func(ctx context.Context) {
		close(started)
		<-ctx.Done()
		close(stopped)
	})
	<-started
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stopped:
	default:
		t.Fatal("Close returned before the refresh it cancelled ended")
	}
	m.Refresh(ctx, nil, func(context.Context) { t.Error("a refresh ran after Close") })
	m.awaitRefresh(ctx)
}

// A refresh given a ready waits for it before it plans, and plans through the memo do not wait
// for it meanwhile; a ready that fails ends it unplanned, and Close stops one still waiting.
func TestMemoRefreshWaitsForReady(t *testing.T) {
	ctx := context.Background()
	m := NewMemo()
	gate, planned := make(chan struct{}), make(chan struct{})
	m.Refresh(ctx, func(ctx context.Context) error {
		select {
		case <-gate:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}, func(context.Context) { close(planned) })
	m.awaitRefresh(ctx) // returns at once: the refresh waits for its ready
	select {
	case <-planned:
		t.Fatal("the refresh planned before its ready answered")
	default:
	}
	m.Refresh(ctx, nil, func(context.Context) { t.Error("a second refresh ran while the first waited") })
	close(gate)
	<-planned
	m.awaitRefresh(ctx)

	m.Refresh(ctx, func(context.Context) error { return errors.New("the watcher cannot vouch") },
		func(context.Context) { t.Error("a refresh planned though its ready failed") })
	m.awaitRefresh(ctx)
	m.waitRefreshEnded()

	waiting := make(chan struct{})
	m.Refresh(ctx, func(ctx context.Context) error {
		close(waiting)
		<-ctx.Done()
		return ctx.Err()
	}, func(context.Context) { t.Error("a refresh planned after Close") })
	<-waiting
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}

// waitRefreshEnded waits until no refresh is under way, planning or not.
func (m *Memo) waitRefreshEnded() {
	m.mu.Lock()
	r := m.refresh
	m.mu.Unlock()
	if r != nil {
		<-r.done
	}
}
