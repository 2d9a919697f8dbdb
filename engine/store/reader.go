package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
)

// Reader keeps one read-only open of a state folder for a long-lived process (the MCP server),
// so that a question costs its own queries, not an open of the index (a connection, its pragmas,
// the version check, every statement prepared again): a getTaskLog read page by page asks some
// 900 questions of one log. Each Acquire checks, by a stat and one pragma, that the open still
// reads what OpenReadOnly would open now, and opens again when it does not: an index created
// since (the open was of an absent one), replaced (reset, set aside as unreadable, restored by a
// CI cache), changed under an immutable open (a read-only folder), or stamped with another schema
// version in place. Its methods are safe for concurrent use.
type Reader struct {
	dir string
	// shared is the shared store's folder named by the caller; "" reads the one the checkout's
	// index records.
	shared string

	mu     sync.Mutex
	cur    *readerOpen
	closed bool
}

// readerOpen is one open of the index, shared by the questions that acquired it; the last
// release of a retired one closes it.
type readerOpen struct {
	st   *Store
	file os.FileInfo // the index file as opened; nil when there was none
	// sharedFile is the shared index file as opened; nil when there was none.
	sharedFile os.FileInfo
	refs       int
	retired    bool
}

// NewReader returns a Reader of the state folder dir. It opens nothing until the first Acquire.
func NewReader(dir string) *Reader { return &Reader{dir: dir} }

// NewReaderShared returns a Reader of the state folder dir and the shared store shared ("" for
// the one the checkout's index records).
func NewReaderShared(dir, shared string) *Reader { return &Reader{dir: dir, shared: shared} }

// ErrReaderClosed is Acquire's answer after Close.
var ErrReaderClosed = errors.New("the state folder's reader is closed")

// Acquire answers the state folder open for reading, as OpenReadOnly answers it, and release,
// which the caller calls once done with the store (never Close it).
func (r *Reader) Acquire(ctx context.Context) (st *Store, release func(), err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, nil, ErrReaderClosed
	}
	if r.cur != nil && !r.current(ctx, r.cur) {
		r.retire(r.cur)
		r.cur = nil
	}
	if r.cur == nil {
		// Stat first: an index replaced between the stat and the open is seen as changed by
		// the next Acquire, never missed.
		file, statErr := os.Stat(IndexPath(r.dir))
		if statErr != nil && !errors.Is(statErr, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("open %s: %w", IndexPath(r.dir), statErr)
		}
		st, err := OpenReadOnlyShared(ctx, r.dir, r.shared)
		if err != nil {
			return nil, nil, err
		}
		if st.Empty() {
			file = nil
		}
		r.cur = &readerOpen{st: st, file: file, sharedFile: sharedStat(st)}
	}
	o := r.cur
	o.refs++
	var once sync.Once
	return o.st, func() { once.Do(func() { r.release(o) }) }, nil
}

// sharedStat answers the shared index file st opened, nil when it opened none.
func sharedStat(st *Store) os.FileInfo {
	if st.sh == nil {
		return nil
	}
	fi, err := os.Stat(SharedIndexPath(st.sharedDir))
	if err != nil {
		return nil
	}
	return fi
}

// current reports whether o still reads what an open now would: the checkout's index and the
// shared one.
func (r *Reader) current(ctx context.Context, o *readerOpen) bool {
	if r.shared == "" && o.st.recordedShared(ctx) != o.st.sharedDir && o.st.recordedShared(ctx) != "" {
		return false
	}
	shared, err := os.Stat(SharedIndexPath(o.st.sharedDir))
	switch {
	case err != nil || o.sharedFile == nil:
		if !(err != nil && o.sharedFile == nil) {
			return false
		}
	case !os.SameFile(shared, o.sharedFile):
		return false
	}
	file, err := os.Stat(IndexPath(r.dir))
	switch {
	case err != nil || o.file == nil:
		// No index then and none now is the same empty answer; anything else opens again.
		return err != nil && o.file == nil && errors.Is(err, os.ErrNotExist)
	case !os.SameFile(file, o.file) || !file.ModTime().Equal(o.file.ModTime()) || file.Size() != o.file.Size():
		return false
	}
	stmt, err := o.st.prepared(ctx, `PRAGMA user_version`)
	if err != nil {
		return false
	}
	var version int
	return stmt.QueryRowContext(ctx).Scan(&version) == nil && (version == o.st.version || version == 0 && o.st.version == 1)
}

// retire takes o out of use: closed now when no question holds it, else by its last release.
func (r *Reader) retire(o *readerOpen) {
	o.retired = true
	if o.refs == 0 {
		o.st.Close()
	}
}

func (r *Reader) release(o *readerOpen) {
	r.mu.Lock()
	defer r.mu.Unlock()
	o.refs--
	if o.retired && o.refs == 0 {
		o.st.Close()
	}
}

// Close closes the open index once the questions that hold it release it; Acquire refuses
// from now on.
func (r *Reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.cur != nil {
		r.retire(r.cur)
		r.cur = nil
	}
	return nil
}
