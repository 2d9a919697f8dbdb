package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/hasher"
	"github.com/vzn/vx/engine/store"
)

// Service is what a long-lived vx (vx mcp, vx watch) keeps for its workspace: the watcher, and
// the socket under the state folder on which a CLI vx run of the workspace asks it for the file
// state. Close ends both.
type Service struct {
	w        *Watcher
	root     string
	stateDir string
	log      func(string)

	mu sync.Mutex
	// srv is the socket's server, nil while the state folder is missing or another process
	// serves it; outputs is the workspace whose outputs the watcher hashes.
	srv     *filestate.Server
	outputs *graph.Workspace
	said    map[string]bool
	// index is the state folder's index, held open read-only (see holdIndex); indexIno its
	// file's inode when opened.
	index    *store.Store
	indexIno uint64

	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
	wg        sync.WaitGroup
}

// listenEvery is how often a service without its socket tries again (the state folder did not
// exist yet, or another process served it).
const listenEvery = 2 * time.Second

// Serve starts watching the workspace at root (absolute) whose state folder is stateDir, seeding
// the hashes from the index's stat cache, and serves its file state on the socket. ws, when not
// nil, says which outputs to hash (Update changes it). A limit too low for the workspace is said
// on log, with its fix; the watcher then vouches for nothing and every run scans.
func Serve(root, stateDir string, ws *graph.Workspace, log func(string)) (*Service, error) {
	if log == nil {
		log = func(string) {}
	}
	if l := CheckLimits(root, stateDir); !l.OK {
		log(fmt.Sprintf("the file watcher needs %d %s, the limit is %d: %s", l.Needed, l.LimitName, l.Limit, l.Fix))
	}
	opts := Options{Root: root, StateDir: stateDir, Seed: seedFrom(stateDir), Log: log}
	if ws != nil {
		opts.Hashed = OutputsOf(ws)
	}
	w, err := Start(opts)
	if err != nil {
		return nil, err
	}
	s := &Service{w: w, root: root, stateDir: stateDir, log: log, outputs: ws, said: map[string]bool{}, done: make(chan struct{})}
	s.listen()
	s.holdIndex()
	s.wg.Go(s.keepListening)
	return s, nil
}

// holdIndex keeps the index open read-only for the service's life: while a connection is open, a
// run's close of its own is not the last one, which checkpoints the write-ahead log into the index
// and removes it (figures: docs/performance.md, "The server's shortcuts: memo, hand-off, child
// started ahead"); the log is checkpointed as it grows instead, by whichever run's commit crosses
// SQLite's threshold. An index replaced since (reset by another vx version, removed) is let go and
// the new one held.
func (s *Service) holdIndex() {
	ino := inodeOf(store.IndexPath(s.stateDir))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.index != nil && ino == s.indexIno {
		return
	}
	if s.index != nil {
		s.index.Close()
		s.index = nil
	}
	if ino == 0 {
		return
	}
	st, err := store.OpenCheckoutReadOnly(context.Background(), s.stateDir)
	if err != nil {
		return
	}
	s.index, s.indexIno = st, ino
}

// inodeOf answers a file's inode number, 0 when it is missing.
func inodeOf(path string) uint64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return filestate.InfoOf(fi).Ino
}

// seedFrom answers the seed of a watcher's hashes: the stat cache rows of the index under
// stateDir that vouch for a file as it stats now (hasher.Trusted), read once, on first need.
func seedFrom(stateDir string) func(rel string, info filestate.Info) (string, bool) {
	var once sync.Once
	var stats *store.StatCache
	return func(rel string, info filestate.Info) (string, bool) {
		once.Do(func() {
			st, err := store.OpenCheckoutReadOnly(context.Background(), stateDir)
			if err != nil {
				return
			}
			defer st.Close()
			stats, _ = st.FileStats(context.Background())
		})
		row, ok := stats.Get(rel)
		if !ok || !hasher.Trusted(row, info) {
			return "", false
		}
		return row.Hash, true
	}
}

// Watcher answers the service's watcher.
func (s *Service) Watcher() *Watcher { return s.w }

// Snapshot answers the watcher's file state (Watcher.Snapshot).
func (s *Service) Snapshot(ctx context.Context) (*filestate.Snapshot, error) {
	return s.w.Snapshot(ctx)
}

// Update tells the service the workspace as last loaded: the outputs to hash follow its config.
func (s *Service) Update(ws *graph.Workspace) {
	s.mu.Lock()
	same := s.outputs == ws
	s.outputs = ws
	s.mu.Unlock()
	if !same && ws != nil {
		s.w.SetHashed(OutputsOf(ws))
	}
}

// Serving reports whether the service answers on the socket.
func (s *Service) Serving() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.srv != nil
}

// listen serves the socket when the state folder exists and no other process serves it.
func (s *Service) listen() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return
	}
	if _, err := os.Stat(s.stateDir); err != nil {
		return // no run made it yet, and a read never does
	}
	srv, err := filestate.Listen(s.stateDir, s.root, s.w.Snapshot)
	switch {
	case err == nil:
		s.srv = srv
	case errors.Is(err, filestate.ErrServed):
	default:
		if msg := err.Error(); !s.said[msg] {
			s.said[msg] = true
			s.log(msg + "; runs in a terminal scan the workspace themselves")
		}
	}
}

func (s *Service) keepListening() {
	t := time.NewTicker(listenEvery)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
			s.recheck()
			s.listen()
			s.holdIndex()
		}
	}
}

// recheck lets go of a socket someone removed (the state folder cleared): listen makes it again.
func (s *Service) recheck() {
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	if srv == nil {
		return
	}
	if _, err := os.Lstat(filestate.SocketPath(s.stateDir)); err == nil {
		return
	}
	s.mu.Lock()
	s.srv = nil
	s.mu.Unlock()
	_ = srv.Close()
}

// Close stops serving the socket, then watching; every goroutine of the service has ended when
// it returns.
func (s *Service) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *Service) close() error {
	close(s.done)
	s.wg.Wait()
	s.mu.Lock()
	srv, index := s.srv, s.index
	s.srv, s.index = nil, nil
	s.mu.Unlock()
	var err error
	if srv != nil {
		err = srv.Close()
	}
	if index != nil {
		index.Close()
	}
	return errors.Join(err, s.w.Close())
}
