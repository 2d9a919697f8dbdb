package git

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/vzn/vx/engine/counters"
	"github.com/vzn/vx/proc"
)

// IgnoreChecker answers whether git ignores paths of one work tree through one `git check-ignore
// --stdin` it keeps running: a question costs a write and a read, not a process. It answers as
// git's exclude rules do for each path as a file (its .gitignore files, info/exclude,
// core.excludesFile, a folder excluded above it, a negated pattern); a tracked path is never
// ignored. It is safe for concurrent use; Close ends the process and waits for it.
type IgnoreChecker struct {
	mu  sync.Mutex
	in  *os.File
	out *bufio.Reader
	// outR is the reading end of git's stdout, closed by Close once git has exited.
	outR *io.PipeReader
	// failed is the error of an exchange that went wrong: every later question answers it.
	failed error
	done   chan struct{}
	runErr error
}

// StartIgnoreChecker starts the checker of the work tree holding dir. Its process counts as one
// spawned (counters.From(ctx)).
func StartIgnoreChecker(ctx context.Context, dir string) *IgnoreChecker {
	outR, outW := io.Pipe()
	c := &IgnoreChecker{out: bufio.NewReader(outR), outR: outR, done: make(chan struct{})}
	counters.From(ctx).Spawn()
	// git reads its questions from a pipe of the system's, handed to it as is: a reader of Go's
	// would leave a copying goroutine that a git gone early never lets end.
	inR, inW, err := os.Pipe()
	if err != nil {
		c.runErr = fmt.Errorf("git check-ignore: %w", err)
		c.failed = c.runErr
		_ = outW.Close()
		close(c.done)
		return c
	}
	c.in = inW
	var stderr strings.Builder
	go func() {
		defer close(c.done)
		res, err := proc.Run(context.WithoutCancel(ctx), proc.Spec{
			Path: "git", Args: []string{"check-ignore", "--stdin", "-z", "-v", "--non-matching"}, Dir: dir,
			// GIT_FLUSH: one answer a question, not a buffer's worth at the end.
			Env:   append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C", "GIT_FLUSH=1"),
			Stdin: inR, Stdout: outW, Stderr: &stderr,
		})
		switch {
		case err != nil:
			c.runErr = fmt.Errorf("git check-ignore: %w", err)
		case res.ExitCode > 1: // 1 says that no path asked was ignored
			c.runErr = fmt.Errorf("git check-ignore: exit %d: %s", res.ExitCode, strings.TrimSpace(stderr.String()))
		}
		_ = outW.CloseWithError(errors.Join(c.runErr, io.EOF))
		_ = inR.Close()
	}()
	return c
}

// Ignored answers, for each path (relative to the checker's folder, slash-separated), whether git
// ignores it. An error says that git could not answer (no work tree, git gone): nothing is
// known then, and every later question answers the same error.
func (c *IgnoreChecker) Ignored(paths []string) ([]bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range paths {
		if p == "" || strings.ContainsRune(p, 0) {
			return nil, fmt.Errorf("git check-ignore: %q is not a path", p)
		}
	}
	out := make([]bool, len(paths))
	for start := 0; start < len(paths) && c.failed == nil; {
		// Questions go in batches that a pipe always holds whole (askBytes, or one longer path
		// alone), written at once and then answered: the write never waits for git, which has
		// answered everything before it, so git never waits on an answer nobody reads yet. A
		// restore's files cost one round trip, not one each.
		var batch strings.Builder
		end := start
		for end < len(paths) && (end == start || batch.Len()+len(paths[end])+1 <= askBytes) {
			batch.WriteString(paths[end])
			batch.WriteByte(0)
			end++
		}
		if _, err := io.WriteString(c.in, batch.String()); err != nil {
			c.failed = fmt.Errorf("git check-ignore: ask: %w", err)
			break
		}
		for i := start; i < end; i++ {
			ignored, err := c.answer(paths[i])
			if err != nil {
				// The batch's other answers stay unread: end git's output, so that git, which
				// may be waiting to write them, ends instead (Close waits for it).
				c.failed = err
				_ = c.outR.CloseWithError(err)
				break
			}
			out[i] = ignored
		}
		start = end
	}
	if c.failed != nil {
		return nil, c.failed
	}
	return out, nil
}

// askBytes bounds one batch of questions: POSIX's PIPE_BUF, the least a pipe holds on any system
// (Linux gives a pipe a single page of it when a user's pipes exceed their soft limit).
const askBytes = 4096

// answer reads the record git writes for path: source, line, pattern and path, each NUL-ended;
// an empty pattern is no match, a pattern starting with "!" a match that re-includes it.
func (c *IgnoreChecker) answer(path string) (bool, error) {
	var fields [4]string
	for i := range fields {
		f, err := c.out.ReadString(0)
		if err != nil {
			return false, fmt.Errorf("git check-ignore: read the answer for %s: %w", path, err)
		}
		fields[i] = strings.TrimSuffix(f, "\x00")
	}
	if fields[3] != path {
		return false, fmt.Errorf("git check-ignore: answered for %q, asked about %q", fields[3], path)
	}
	pattern := fields[2]
	return pattern != "" && !strings.HasPrefix(pattern, "!"), nil
}

// Close ends git's input, waits for it to exit and answers what went wrong with it, if anything.
// A question in flight gets its answer first: git answers what it read before its input ended.
func (c *IgnoreChecker) Close() error {
	if c == nil {
		return nil
	}
	if c.in != nil {
		_ = c.in.Close()
	}
	<-c.done
	_ = c.outR.Close()
	return c.runErr
}
