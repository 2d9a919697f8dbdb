package proc

import (
	"context"
	"sync"
)

// hardStopKey is the context key of the hard-stop signal WithHardStop installs.
type hardStopKey struct{}

// WithHardStop returns a copy of parent that stop cancels, as context.WithCancel's does, and that
// also tells every Run under it to skip what is left of its grace period: on stop, each child (and
// for a supervised child or one with KillTree, everything it started) gets SIGKILL at once instead
// of SIGTERM now and SIGKILL after the grace period. It is what a second SIGINT or SIGTERM to vx
// does, and what a `vx run` whose parent died does. A hard stop of an outer context reaches every
// context made from it. Calling stop more than once does nothing more.
func WithHardStop(parent context.Context) (ctx context.Context, stop context.CancelFunc) {
	outer, ok := parent.Value(hardStopKey{}).(context.Context)
	if !ok {
		outer = context.Background()
	}
	hard, stopHard := context.WithCancel(outer)
	ctx, cancel := context.WithCancel(context.WithValue(parent, hardStopKey{}, hard))
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			// The hard stop first, so that a Run woken by the cancellation already sees it.
			stopHard()
			cancel()
		})
	}
}

// hardStopOf returns a channel closed on a hard stop of ctx, or nil (which never fires) when no
// WithHardStop made ctx.
func hardStopOf(ctx context.Context) <-chan struct{} {
	if hard, ok := ctx.Value(hardStopKey{}).(context.Context); ok {
		return hard.Done()
	}
	return nil
}

// isClosed reports whether ch is closed; a nil channel is not.
func isClosed(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
