package taskenv

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/vzn/vx/engine/git"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/pathglob"
	"github.com/vzn/vx/engine/store"
)

// mtimeSlack is how far behind the wall clock a file's mtime may be when it was written by the
// task that just ended.
const mtimeSlack = 100 * time.Millisecond

// undeclaredShown bounds the paths the warning names.
const undeclaredShown = 5

// Undeclared are the misses of a run whose tasks declare no outputs: once the tasks are done, one
// git call lists the git-ignored entries of all their folders (Check), rather than one call a
// task (a fifth of a small task's miss). The zero value holds none.
type Undeclared struct {
	mu    sync.Mutex
	tasks []undeclaredCheck
}

// undeclaredCheck is one task to look at: the ignored entries of its project's folder written
// since it started are what it left.
type undeclaredCheck struct {
	taskID string
	dir    string // the project folder, root-relative ("." for the root)
	since  time.Time
}

// Note notes, for Check, a cached task that declares no outputs and ran: it
// may have left new git-ignored files in its project folder (a dist/, a .tsbuildinfo), which a hit
// of it will not restore. took is how long the command ran (by the wall clock, whatever clock the
// run was given); status is the task's outcome, and only a successful run is looked at. A task
// whose config says `outputs: []` has said that it leaves nothing to keep, and is not looked at.
func (u *Undeclared) Note(p *graph.Project, t *graph.Task, took time.Duration, status store.Status) {
	if status != store.StatusMiss || !t.Cache || len(t.Outputs) > 0 || t.Origins.Get("outputs").File != "" {
		return
	}
	// The file system stamps from a coarse clock, a tick or so behind the wall clock.
	c := undeclaredCheck{taskID: t.ID, dir: p.Dir, since: time.Now().Add(-took - mtimeSlack)}
	u.mu.Lock()
	u.tasks = append(u.tasks, c)
	u.mu.Unlock()
}

// Check warns through notice, one line a task, of what the noted tasks of ws left: the paths and
// the outputs line to add.
func (u *Undeclared) Check(ctx context.Context, ws *graph.Workspace, notice func(taskID, msg string)) {
	u.mu.Lock()
	checks := u.tasks
	u.tasks = nil
	u.mu.Unlock()
	if len(checks) == 0 || ctx.Err() != nil {
		return
	}
	var dirs []string
	declared := map[string]*pathglob.Set{}
	for _, p := range ws.Projects {
		dirs = append(dirs, p.Dir)
		declared[p.Dir] = declaredOutputs(p)
	}
	left, err := undeclaredOutputs(ctx, ws.Root, dirs, checks, declared)
	if err != nil {
		return // outside a git repository: nothing to say
	}
	for _, c := range checks {
		if len(left[c.taskID]) > 0 {
			notice(c.taskID, undeclaredWarning(c.taskID, left[c.taskID]))
		}
	}
}

// undeclaredOutputs answers, for each check, the git-ignored files and folders ("dist/") of its
// project folder written at or after it started, node_modules and dot folders aside, relative to
// the folder: one git call over the checks' folders and a stat per ignored entry (git folds an
// ignored folder into one entry). dirs are every project folder of the workspace: an entry belongs
// to the innermost one. Where two tasks of a project wrote, an entry is the one's that started
// last before it was written.
// An entry that another task of its project declares as an output (the build's dist/, which its
// test found there) is that task's, not left: declared maps each folder to its tasks' outputs.
func undeclaredOutputs(ctx context.Context, root string, dirs []string, checks []undeclaredCheck, declared map[string]*pathglob.Set) (map[string][]string, error) {
	byDir := map[string][]undeclaredCheck{}
	var specs []string
	for _, c := range checks {
		if byDir[c.dir] == nil {
			specs = append(specs, c.dir)
		}
		byDir[c.dir] = append(byDir[c.dir], c)
	}
	text, err := git.Run(ctx, root, append([]string{"ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "--"}, specs...)...)
	if err != nil {
		return nil, err
	}
	left := map[string][]string{}
	for _, entry := range strings.Split(strings.TrimSpace(text), "\n") {
		dir := innermost(dirs, strings.TrimSuffix(entry, "/"))
		rel, ok := leftEntry(entry, dir, declared[dir])
		if !ok || byDir[dir] == nil {
			continue
		}
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(path.Clean(entry))))
		if err != nil {
			continue
		}
		var owner *undeclaredCheck
		for i, c := range byDir[dir] {
			if !fi.ModTime().Before(c.since) && (owner == nil || c.since.After(owner.since)) {
				owner = &byDir[dir][i]
			}
		}
		if owner != nil {
			left[owner.taskID] = append(left[owner.taskID], rel)
		}
	}
	return left, nil
}

// leftEntry answers an ignored entry of git's relative to its project folder dir, and whether a
// task may have left it: not the folder itself, nothing in node_modules or a dot folder, nothing
// another task of the project declares as its output (outs; a folder: one its globs reach into).
func leftEntry(entry, dir string, outs *pathglob.Set) (string, bool) {
	rel := entry
	if dir != "." {
		rel = strings.TrimPrefix(entry, dir+"/")
	}
	if entry == "" || rel == "" || rel == "/" {
		return "", false // the project folder itself, none of its files tracked
	}
	first, _, _ := strings.Cut(strings.TrimSuffix(rel, "/"), "/")
	if first == "node_modules" || strings.HasPrefix(first, ".") && first != "." || strings.Contains("/"+rel, "/node_modules/") {
		return "", false
	}
	if outs != nil && (outs.Match(strings.TrimSuffix(entry, "/")) || strings.HasSuffix(entry, "/") && outs.Match(entry+"x")) {
		return "", false
	}
	return rel, true
}

// innermost answers the folder of dirs (root-relative, "." the root) that holds the entry rel
// most closely; "" when none does.
func innermost(dirs []string, rel string) string {
	best := ""
	for _, d := range dirs {
		inside := d == "." || rel == d || strings.HasPrefix(rel, d+"/")
		if inside && (best == "" || best == "." || len(d) > len(best)) {
			best = d
		}
	}
	return best
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

// declaredOutputs is the set of every output the tasks of p declare; nil when none does.
func declaredOutputs(p *graph.Project) *pathglob.Set {
	var globs []string
	for _, t := range p.Tasks {
		globs = append(globs, t.Outputs...)
	}
	if len(globs) == 0 {
		return nil
	}
	set, err := pathglob.NewSet(p.Dir, globs)
	if err != nil {
		return nil
	}
	return set
}
