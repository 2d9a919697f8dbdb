package session

import (
	"sync"

	"github.com/vzn/vx/engine/store"
)

// reader is the state folder's reader the history tools share, and the folder it reads.
type reader struct {
	mu  sync.Mutex
	r   *store.Reader
	dir string
}

// Reader answers the reader of the state folder dir, made on first use and kept across calls (see
// store.Reader), so that a question costs its own queries, not an open of the index. A call for
// another folder (the config moved the state folder) closes the last one's.
func (s *Session) Reader(dir string) *store.Reader {
	r := &s.reader
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.r == nil || r.dir != dir {
		if r.r != nil {
			r.r.Close()
		}
		r.r, r.dir = store.NewReader(dir), dir
	}
	return r.r
}

// close closes the reader, once the calls at work are done with it.
func (r *reader) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.r == nil {
		return nil
	}
	err := r.r.Close()
	r.r = nil
	return err
}
