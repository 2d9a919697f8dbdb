package runner

import (
	"context"
	"sync"

	"github.com/vzn/vx/engine/store"
)

// recorder commits a run's finished executions to the index on a goroutine of its own, so that the
// scheduler hands a batch over and goes on starting tasks rather than waiting on the commit
// (figures: docs/performance.md, "Answers and records"). Batches handed over while a commit is
// under way are merged into the next one: the busier the run, the fewer and larger its commits.
type recorder struct {
	st *store.Store
	// ctx outlives the run's cancellation: what finished is recorded all the same.
	ctx context.Context

	mu      sync.Mutex
	pending store.Batch
	closed  bool
	err     error // the first commit that failed

	wake chan struct{} // a batch is pending, or the recorder is closing
	done chan struct{} // closed when the goroutine has ended
}

func newRecorder(ctx context.Context, st *store.Store) *recorder {
	r := &recorder{st: st, ctx: ctx, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go r.loop()
	return r
}

// add hands a batch over to be committed.
func (r *recorder) add(b store.Batch) {
	if b.Empty() {
		return
	}
	r.mu.Lock()
	r.pending.Executions = append(r.pending.Executions, b.Executions...)
	r.pending.Manifests = append(r.pending.Manifests, b.Manifests...)
	r.pending.Touched = append(r.pending.Touched, b.Touched...)
	if b.TouchedAt.After(r.pending.TouchedAt) {
		r.pending.TouchedAt = b.TouchedAt
	}
	r.mu.Unlock()
	r.signal()
}

func (r *recorder) signal() {
	select {
	case r.wake <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// close commits what is pending, ends the goroutine and answers the first commit that failed.
func (r *recorder) close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.signal()
	<-r.done
	return r.err
}

func (r *recorder) loop() {
	defer close(r.done)
	for range r.wake {
		r.mu.Lock()
		b, closed := r.pending, r.closed
		r.pending = store.Batch{}
		r.mu.Unlock()
		if err := r.st.Record(r.ctx, b); err != nil && r.err == nil {
			r.mu.Lock()
			r.err = err
			r.mu.Unlock()
		}
		if closed {
			return
		}
	}
}
