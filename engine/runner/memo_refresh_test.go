package runner

import (
	"context"
	"testing"
)

// A memo runs one background plan at a time; a plan through the memo waits for it; Close stops
// it and waits for it, and none starts after; a plan that panics ends alone.
func TestMemoRefreshLifecycle(t *testing.T) {
	ctx := context.Background()
	m := NewMemo()
	started, release := make(chan struct{}), make(chan struct{})
	finished := false
	m.Refresh(ctx, func(ctx context.Context) {
		close(started)
		<-release
		finished = true
	})
	<-started
	m.Refresh(ctx, func(context.Context) { t.Error("a second refresh ran while the first was under way") })
	close(release)
	m.awaitRefresh(ctx)
	if !finished {
		t.Fatal("awaitRefresh returned before the refresh ended")
	}

	m.Refresh(ctx, func(context.Context) { panic("a plan's panic") })
	m.awaitRefresh(ctx)
	ran := make(chan struct{})
	m.Refresh(ctx, func(context.Context) { close(ran) })
	<-ran // the panic left the memo able to refresh again

	stopped := make(chan struct{})
	started = make(chan struct{})
	m.awaitRefresh(ctx)
	m.Refresh(ctx, func(ctx context.Context) {
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
	m.Refresh(ctx, func(context.Context) { t.Error("a refresh ran after Close") })
	m.awaitRefresh(ctx)
}
