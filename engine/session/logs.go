package session

import (
	"sync"

	"github.com/vzn/vx/engine/store"
)

// LogPages remembers what the index said of the logs the server pages: their execution's status
// and the log's source, and the blob store that keeps them. A recorded execution's log never
// changes, so a page after the first asks the index no more; a log whose blob is gone (pruned) is
// forgotten (Forget) and its cursors are stale. It keeps at most logPagesKept logs, and starts
// afresh when full.
type LogPages struct {
	mu    sync.Mutex
	known map[LogKey]LogPage
}

// LogKey names one paged log: the task, the run and the log's blob.
type LogKey struct{ TaskID, RunID, Blob string }

// LogPage is what the index said of one paged log.
type LogPage struct {
	Status store.Status
	Source string
	CAS    *store.CAS
}

const logPagesKept = 64

// Get answers what is known of the log k.
func (p *LogPages) Get(k LogKey) (LogPage, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	log, ok := p.known[k]
	return log, ok
}

// Put remembers what the index said of the log k.
func (p *LogPages) Put(k LogKey, log LogPage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.known == nil || len(p.known) >= logPagesKept {
		p.known = map[LogKey]LogPage{}
	}
	p.known[k] = log
}

// Forget lets go of the log k, whose blob is gone.
func (p *LogPages) Forget(k LogKey) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.known, k)
}
