// Package workspace finds a vx workspace, evaluates its config and resolves it into a graph, keeping
// what it evaluated so that a later load in the same process costs only a check that nothing changed.
package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/vzn/vx/engine/statedirs"
	"github.com/vzn/vx/engine/vxerr"
)

// ConfigFileName is the workspace config file that marks a workspace root.
const ConfigFileName = "vx.workspace.ts"

// ProjectConfigFileName is the optional per-project config file.
const ProjectConfigFileName = "vx.project.ts"

// ErrNoWorkspace is returned when no ancestor of the directory holds vx.workspace.ts.
var ErrNoWorkspace = errors.New("no vx.workspace.ts in this folder or any folder above it")

// FindRoot returns the nearest ancestor of dir (dir included) holding vx.workspace.ts.
func FindRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("find workspace from %s: %w", dir, err)
	}
	for d := abs; ; {
		if fi, err := os.Stat(filepath.Join(d, ConfigFileName)); err == nil && !fi.IsDir() {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", &vxerr.UsageError{Msg: fmt.Sprintf("%s (looked from %s)", ErrNoWorkspace, abs)}
		}
		d = parent
	}
}

// Options configure a Loader.
type Options struct {
	// Dir is where discovery starts (the -C folder or the working directory).
	Dir string
	// Getenv reads the environment (VX_CACHE_DIR, VX_STATE_DIR, secrets); nil means os.Getenv.
	Getenv func(string) string
	// Console receives what a config prints through console.*; nil means io.Discard. The CLI passes stderr.
	Console io.Writer
	// Version is the vx version; it enters the config bundle cache key.
	Version string
	// Isolate, when set, evaluates the config in a child process whose time and memory bounds
	// the kernel and this process enforce (see Isolation); nil evaluates it in this process,
	// under the bounds the runtime itself samples.
	Isolate *Isolation
	// CacheDirFlag is --cache-dir: the shared store's folder, over VX_CACHE_DIR and the config's
	// cacheDir ("" when not given).
	CacheDirFlag string
}

func (o Options) getenv(k string) string {
	if o.Getenv == nil {
		return os.Getenv(k)
	}
	return o.Getenv(k)
}

// CacheDir returns the checkout's own state folder for a workspace root: $VX_STATE_DIR when set
// (relative to the root when relative), else root/.vx. The shared store is the workspace's
// SharedDir (see Loader.Load and engine/statedirs).
func CacheDir(root string, getenv func(string) string) string {
	return statedirs.Checkout(root, getenv)
}

// StoreDirs answers a workspace's two state folders and what chose each, from the --cache-dir
// flag, the environment and the config's cacheDir (configured, "" for none).
func StoreDirs(root, flag, configured string, getenv func(string) string) statedirs.Dirs {
	return statedirs.Resolve(statedirs.Input{Root: root, Flag: flag, Config: configured, Getenv: getenv})
}

var _ = context.Background

// SelectOptions say which tasks a verb works on. Every verb that selects shares them.
type SelectOptions struct {
	// Tasks are task names ("build") or task ids ("app#build").
	Tasks []string
	// All selects every task of the selected projects.
	All bool
	// Filters are --filter values: a project name, a glob of names, tag:NAME, ./PATH or {PATH}
	// folders (from the workspace root; the CLI rebases them on its working folder), [REF] git
	// ranges, with NAME... / ...NAME (dependencies / dependents, ^ to leave NAME out) and !F to
	// exclude (see docs/cli.md). Several filters add up.
	Filters []string
	// Affected narrows to projects holding files changed since the merge-base with AffectedRef
	// (default: the default branch, else HEAD), uncommitted and untracked files, and their dependents.
	Affected    bool
	AffectedRef string
}

// Selection is the outcome of selecting.
type Selection struct {
	// Projects are the selected project names, sorted.
	Projects []string `json:"projects"`
	// Requested are the task ids asked for, sorted.
	Requested []string `json:"requested"`
	// TaskIDs are Requested plus every task they transitively depend on, in dependency order
	// (a task after all it depends on; ties by id).
	TaskIDs []string `json:"taskIds"`
	// Affected maps each affected project to why (only with --affected).
	Affected map[string]string `json:"affected,omitempty"`
	// NothingAffected says, for a selection narrowed by git (--affected, a [REF] filter) that
	// holds no task (or, asked for no task, no project), since when nothing it names changed:
	// "nothing affected since main".
	NothingAffected string `json:"nothingAffected,omitempty"`
}
