package session

import (
	"sync"

	"github.com/vzn/vx/engine/store"
)

// reader is the state folder's reader the history tools share, and the folder it reads.
type reader struct {
	mu          sync.Mutex
	r           *store.Reader
	dir, shared string
}

// Reader answers the reader of the state folder dir and the shared store shared ("" for the one
// dir's index records), made on first use and kept across calls (see store.Reader), so that a
// question costs its own queries, not an open of the index. A call for other folders (the config
// moved one) closes the last one's.
func (s *Session) Reader(dir, shared string) *store.Reader {
	r := &s.reader
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.r == nil || r.dir != dir || r.shared != shared {
		if r.r != nil {
			r.r.Close()
		}
		r.r, r.dir, r.shared = store.NewReaderShared(dir, shared), dir, shared
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
