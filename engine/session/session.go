// Package session holds what `vx mcp` keeps between tool calls: the file watcher and the last
// workspace it vouches for, the workspace loader, the plan memo, the state folder's reader, the
// pages of the logs an agent reads, and the `vx run` child started ahead of the next runTasks call.
// cmd/vx opens one per server; Close ends them all, in order.
//
// The split with package tools: the session owns each kept thing's life (when it is made, reused,
// invalidated and closed); the tools decide when to use it. The child started ahead is started
// here (the vx executable, the server's environment, its pipes and kill rules, see StartChild),
// and ordered by the runTasks tool, which writes the order and the hand-off and reads the events
// (package handoff is that protocol). The session imports neither the tools nor the MCP server.
package session

import (
	"errors"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/vzn/vx/engine/planmemo"
	"github.com/vzn/vx/engine/workspace"
)

// Options say what a session keeps.
type Options struct {
	// Loader evaluates the workspace's config, one per server, so that an edited config is seen on
	// the next call.
	Loader *workspace.Loader
	// Exe is the path of the vx executable the `vx run` children run.
	Exe string
	// Environ is the server's environment as a list: the children start from it, and Getenv reads
	// it. nil means os.Environ() at Open.
	Environ []string
	// Memo keeps the last plan for the next call (planmemo.Memo).
	Memo bool
	// KeepChild keeps a `vx run` child started ahead of the next runTasks call (KeepChild).
	KeepChild bool
	// Watcher answers the file state in place of the one StartWatcher starts; nil for that one.
	Watcher Watcher
	// Stderr receives what a child started ahead says of its failure to start; nil discards it.
	Stderr io.Writer
}

// Session is what one `vx mcp` keeps between calls. Its methods are safe for concurrent use.
type Session struct {
	loader  *workspace.Loader
	exe     string
	environ []string
	vars    map[string]string
	stderr  io.Writer
	memo    *planmemo.Memo

	files  files
	reader reader
	logs   LogPages
	child  child

	closeOnce sync.Once
	closeErr  error
}

// Open opens a session for opts. Nothing starts before a call asks for it: the watcher starts on
// StartWatcher, the child on the first runTasks call.
func Open(opts Options) *Session {
	environ := opts.Environ
	if environ == nil {
		environ = os.Environ()
	}
	vars := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	stderr := opts.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	s := &Session{loader: opts.Loader, exe: opts.Exe, environ: environ, vars: vars, stderr: stderr}
	if opts.Memo {
		s.memo = planmemo.NewMemo()
	}
	s.files.init(opts.Watcher)
	s.child.keep = opts.KeepChild
	return s
}

// Loader answers the session's workspace loader.
func (s *Session) Loader() *workspace.Loader { return s.loader }

// Memo answers the session's plan memo; nil when it keeps none.
func (s *Session) Memo() *planmemo.Memo { return s.memo }

// Environ answers the server's environment as a list, which the children start from.
func (s *Session) Environ() []string { return s.environ }

// Getenv reads a variable of the server's environment (Environ).
func (s *Session) Getenv(k string) string { return s.vars[k] }

// Logs answers the pages of the logs the server pages.
func (s *Session) Logs() *LogPages { return &s.logs }

// Close ends what the session keeps, in order: the child started ahead (and any being started),
// the memo's background plan, the watcher and its socket, then the state folder's reader once the
// calls at work are done with it. It may be called again, and answers the first call's error.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		s.closeChild()
		memoErr := s.memo.Close() // nil-safe
		s.files.close()
		s.closeErr = errors.Join(memoErr, s.reader.close())
	})
	return s.closeErr
}
