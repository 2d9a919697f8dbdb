package actor

import "sync"

// queue is an unbounded FIFO with one consumer. Pushing never blocks, which is
// the point: the reader hands work to the pool and replies to the writer through
// queues so that it keeps reading — and answering pings and cancellations — however
// busy the workers or slow the client.
type queue[T any] struct {
	mu     sync.Mutex
	items  []T
	head   int
	closed bool
	ready  chan struct{} // holds a token when items or the close may be waiting
}

func newQueue[T any]() *queue[T] {
	return &queue[T]{ready: make(chan struct{}, 1)}
}

// push appends v; it reports false (dropping v) once the queue is closed.
func (q *queue[T]) push(v T) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, v)
	q.mu.Unlock()
	q.signal()
	return true
}

// close ends the queue: the consumer gets what is left, then ok=false.
func (q *queue[T]) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

func (q *queue[T]) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// pop blocks until an item is queued and returns the oldest; ok is false when the
// queue is closed and empty.
func (q *queue[T]) pop() (v T, ok bool) {
	for {
		q.mu.Lock()
		if q.head < len(q.items) {
			v = q.items[q.head]
			var zero T
			q.items[q.head] = zero
			q.head++
			if q.head == len(q.items) {
				q.items, q.head = q.items[:0], 0
			}
			q.mu.Unlock()
			return v, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return v, false
		}
		<-q.ready
	}
}

// popAll blocks until items are queued and moves them all into buf (reused);
// ok is false when the queue is closed and empty.
func (q *queue[T]) popAll(buf []T) (_ []T, ok bool) {
	for {
		q.mu.Lock()
		if q.head < len(q.items) {
			buf = append(buf[:0], q.items[q.head:]...)
			clear(q.items)
			q.items, q.head = q.items[:0], 0
			q.mu.Unlock()
			return buf, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return buf[:0], false
		}
		<-q.ready
	}
}
