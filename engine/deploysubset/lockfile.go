package deploysubset

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vzn/vx/engine/vxerr"
)

// lockfile is the workspace's lockfile and the pruner of its format.
type lockfile struct {
	name    string // the file's name at the root
	manager string // npm, pnpm, yarn, yarn-berry, bun
	data    []byte
	pruner  func(data []byte, ws *pmWorkspace, kept []*pkg, production bool) (*prunedLock, error)
}

// prunedLock is a pruned lockfile and what it needs beside it.
type prunedLock struct {
	data []byte
	// kept and total count the external package entries kept and there were.
	kept, total int
	// files are root files (slash paths) the pruned lockfile refers to, such as patches.
	files []string
}

func (l *lockfile) prune(ws *pmWorkspace, kept []*pkg, production bool) (*prunedLock, error) {
	return l.pruner(l.data, ws, kept, production)
}

// lockfileNames are the lockfiles vx prunes, in the order one is chosen when the root
// package.json's packageManager does not say.
var lockfileNames = []struct{ name, manager string }{
	{"pnpm-lock.yaml", "pnpm"}, {"bun.lock", "bun"}, {"yarn.lock", "yarn"}, {"package-lock.json", "npm"},
	{"npm-shrinkwrap.json", "npm"},
}

// detectLockfile finds and reads the workspace's lockfile.
func detectLockfile(root string, rootPkg *pkg) (*lockfile, error) {
	want := ""
	if pm := rootPkg.man.PackageManager; pm != "" {
		want, _, _ = strings.Cut(pm, "@")
	}
	var found *lockfile
	for _, c := range lockfileNames {
		data, err := os.ReadFile(filepath.Join(root, c.name))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", c.name, err)
		}
		if found == nil || c.manager == want && found.manager != want {
			found = &lockfile{name: c.name, manager: c.manager, data: data}
		}
	}
	if found == nil {
		if _, err := os.Stat(filepath.Join(root, "bun.lockb")); err == nil {
			return nil, vxerr.Usagef("cannot prune bun.lockb, a binary lockfile: run `bun install --save-text-lockfile` to write bun.lock")
		}
		return nil, vxerr.Usagef("no lockfile at %s (pnpm-lock.yaml, bun.lock, yarn.lock or package-lock.json): install once to write one", root)
	}
	switch found.manager {
	case "pnpm":
		found.pruner = prunePnpm
	case "npm":
		found.pruner = pruneNpm
	case "bun":
		found.pruner = pruneBun
	case "yarn":
		if bytes.Contains(found.data, []byte("\n__metadata:")) {
			found.manager, found.pruner = "yarn-berry", pruneBerry
		} else {
			found.pruner = pruneYarn1
		}
	}
	return found, nil
}

// refuse is the error for a lockfile vx cannot prune, naming it and why.
func refuse(name, format string, args ...any) error {
	return vxerr.Usagef("cannot prune %s: %s", name, fmt.Sprintf(format, args...))
}
