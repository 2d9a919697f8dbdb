package runner

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/vzn/vx/engine/git"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/store"
)

// mtimeSlack is how far behind the wall clock a file's mtime may be when it was written by the
// task that just ended.
const mtimeSlack = 100 * time.Millisecond

// undeclaredShown bounds the paths the warning names.
const undeclaredShown = 5

// warnUndeclared warns, in one line, when a cached task that declares no outputs has left new
// git-ignored files in its project folder (a dist/, a .tsbuildinfo): a hit of it will restore
// none of them. It names them and the outputs line to add. took is how long the command ran (by
// the wall clock, whatever clock the run was given); status is the task's outcome, and only a
// successful run is looked at.
func (r *runState) warnUndeclared(ctx context.Context, p *graph.Project, t *graph.Task, took time.Duration, status store.Status) {
	if status != store.StatusMiss || !t.Cache || len(t.Outputs) > 0 {
		return
	}
	// The file system stamps from a coarse clock, a tick or so behind the wall clock.
	left, err := undeclaredOutputs(ctx, p.AbsDir, time.Now().Add(-took-mtimeSlack))
	if err != nil || len(left) == 0 {
		return // outside a git repository, or nothing left: nothing to say
	}
	r.display.notice(t.ID, undeclaredWarning(t.ID, left))
}

// undeclaredWarning is the one-line warning for the git-ignored paths a task left.
func undeclaredWarning(taskID string, left []string) string {
	shown := left
	more := ""
	if len(shown) > undeclaredShown {
		shown, more = shown[:undeclaredShown], fmt.Sprintf(" and %d more", len(left)-undeclaredShown)
	}
	globs := make([]string, len(shown))
	for i, l := range shown {
		if g, dir := strings.CutSuffix(l, "/"); dir {
			globs[i] = "'" + g + "/**'"
		} else {
			globs[i] = "'" + l + "'"
		}
	}
	return fmt.Sprintf("vx: %s declares no outputs but left git-ignored %s%s: a hit restores none of them; add outputs: [%s]",
		taskID, strings.Join(shown, ", "), more, strings.Join(globs, ", "))
}

// undeclaredOutputs lists the git-ignored files and folders ("dist/") in dir, node_modules and
// dot folders aside, written at or after since: one git call and a stat per ignored entry (git
// folds an ignored folder into one entry).
func undeclaredOutputs(ctx context.Context, dir string, since time.Time) ([]string, error) {
	text, err := git.Run(ctx, dir, "ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "--", ".")
	if err != nil {
		return nil, err
	}
	var left []string
	for _, rel := range strings.Split(strings.TrimSpace(text), "\n") {
		first, _, _ := strings.Cut(strings.TrimSuffix(rel, "/"), "/")
		if rel == "" || first == "node_modules" || strings.HasPrefix(first, ".") && first != "." ||
			strings.Contains("/"+rel, "/node_modules/") {
			continue
		}
		fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(path.Clean(rel))))
		if err != nil || fi.ModTime().Before(since) {
			continue
		}
		left = append(left, rel)
	}
	return left, nil
}
