package cache

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/profilerec"
	"github.com/vzn/vx/engine/remote"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
)

// maxUploads bounds the uploads in flight at once; each streams from the local blob store, so
// memory stays small whatever the archives weigh.
const maxUploads = 4

// defaultFlush bounds how long a run waits at its end for the uploads still in flight.
const defaultFlush = 30 * time.Second

// session is one run's use of a remote cache. It owns the background uploads: Close waits for them
// (bounded) and ends every goroutine it started. A failure never fails the run: the first one is
// warned once through Notice, each is counted, and a server that is unavailable (down, slow, 5xx, a
// refused token) is not asked again in this run.
type session struct {
	backend Backend
	cas     *store.CAS
	notice  func(string)
	mask    func(string) string

	ctx    context.Context // the uploads' context, cancelled when the flush runs out
	cancel context.CancelFunc
	sem    chan struct{}
	wg     sync.WaitGroup

	mu      sync.Mutex
	stats   summary.RemoteCacheRun
	down    bool
	pending int

	// readOnly is set once the server refused an upload (remote.ErrWriteRefused); under mu.
	readOnly bool
}

// newSession starts a run's session with backend b (configured by s); notice receives the one
// warning, mask masks secrets in it.
func newSession(ctx context.Context, b Backend, s remote.Settings, cas *store.CAS, notice func(string), mask func(string) string) *session {
	if notice == nil {
		notice = func(string) {}
	}
	if mask == nil {
		mask = func(s string) string { return s }
	}
	uctx, cancel := context.WithCancel(ctx)
	return &session{backend: b, cas: cas, notice: notice, mask: mask, ctx: uctx, cancel: cancel,
		sem: make(chan struct{}, maxUploads), stats: summary.RemoteCacheRun{Protocol: s.Protocol, Mode: s.Mode, Scope: s.Scope}}
}

// writes reports whether the session uploads (mode readwrite).
func (s *session) writes() bool { return s != nil && s.stats.Mode == graph.RemoteReadWrite }

// fetch asks the server for key's entry and brings its blobs into the local store, checked; ok is
// false for a miss, which is what every failure is too.
func (s *session) fetch(ctx context.Context, key string) (remote.Meta, bool) {
	if s == nil || s.isDown() {
		return remote.Meta{}, false
	}
	m, ok, err := s.backend.Fetch(ctx, key, s.cas)
	if err != nil {
		if ctx.Err() == nil {
			s.fail(err)
		}
		return remote.Meta{}, false
	}
	return m, ok
}

// hit counts a fetched entry that restored.
func (s *session) hit() {
	s.mu.Lock()
	s.stats.Hits++
	s.mu.Unlock()
}

// reject counts a fetched entry that did not restore (its outputs are not the task's, or a file's
// content is not its hash), warning once.
func (s *session) reject(err error) { s.fail(errors.Join(remote.ErrCorrupt, err)) }

// upload sends an entry in the background; a no-op unless the mode is readwrite. It never blocks
// on the server: at most maxUploads transfers run, the rest wait their turn. ctx is the task's,
// for its profile's span (the transfer is bound by the session's context).
func (s *session) upload(ctx context.Context, key string, m remote.Meta) {
	if !s.writes() || s.isDown() || s.refusesWrites() {
		return
	}
	s.mu.Lock()
	s.pending++
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() {
			s.mu.Lock()
			s.pending--
			s.mu.Unlock()
		}()
		select {
		case s.sem <- struct{}{}:
		case <-s.ctx.Done():
			return
		}
		defer func() { <-s.sem }()
		if s.isDown() || s.refusesWrites() || s.ctx.Err() != nil {
			return
		}
		defer profilerec.StartBackground(ctx, "upload").End()
		if err := s.backend.Store(s.ctx, key, m, s.cas); err != nil {
			if errors.Is(err, remote.ErrActionCacheReadOnly) {
				s.keepsNoKeys() // the deployment's setting: no warning, no error counted
				return
			}
			if s.ctx.Err() == nil {
				s.fail(err)
			}
			return
		}
		s.mu.Lock()
		s.stats.Uploads++
		s.mu.Unlock()
	}()
}

// close waits for the uploads in flight, at most flush, then abandons the rest; it answers what the
// session did. Every goroutine the session started has ended when it returns.
func (s *session) close(flush time.Duration) *summary.RemoteCacheRun {
	if s == nil {
		return nil
	}
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	timer := time.NewTimer(flush)
	select {
	case <-done:
	case <-timer.C:
		s.mu.Lock()
		s.stats.Abandoned = s.pending
		s.mu.Unlock()
		s.cancel()
		<-done
		if s.stats.Abandoned > 0 {
			s.notice("remote cache: " + strconv.Itoa(s.stats.Abandoned) + " uploads unfinished after " + flush.String() + ": abandoned")
		}
	}
	timer.Stop()
	s.cancel()
	if c, ok := s.backend.(interface{ Close() }); ok {
		c.Close()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	return &st
}

// keepsNoKeys stops the uploads of a server that lets only its workers write its Action Cache.
func (s *session) keepsNoKeys() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.readOnly = true
}

// refusesWrites reports whether the server refused an upload in this run.
func (s *session) refusesWrites() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readOnly
}

func (s *session) isDown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.down
}

// fail counts a failure, warns of the first, and stops using a server that is unavailable.
func (s *session) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Errors++
	unavailable := errors.Is(err, remote.ErrUnavailable)
	if unavailable {
		s.down = true
	}
	if errors.Is(err, remote.ErrWriteRefused) {
		s.readOnly = true
	}
	if s.stats.Warning != "" {
		return
	}
	msg := "remote cache: " + s.mask(err.Error())
	switch {
	case unavailable:
		msg += "; continuing on the local cache for this run"
	case s.readOnly:
		msg += "; reading only for the rest of this run"
	default:
		msg += "; not restored (a miss)"
	}
	s.stats.Warning = msg
	s.notice(msg)
}
