package main

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/handoff"
	"github.com/vzn/vx/engine/prune"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/taskmutex"
)

// Retention after a run: a run whose store was last pruned longer ago than retentionEvery starts
// `vx cache prune --auto` with the workspace's cacheRetention, detached (its own session, no
// terminal, no descriptor of vx's but the prune lock), and exits without waiting for it. The prune
// lock (a key lock named pruneLock in the store) is taken by the run and handed to the child, so
// that no two prunes of one store run at once and a `vx cache prune` started later waits for it.

const (
	// retentionEvery is how often runs start a retention prune of their store.
	retentionEvery = time.Hour
	// pruneStamp is the file under the store whose time is the last retention prune's start.
	pruneStamp = "prune.stamp"
	// pruneLock names the store's prune lock among its key locks.
	pruneLock = "prune"
	// pruneLockFD is the descriptor the child holds the prune lock on.
	pruneLockFD = 3
)

// autoPrune starts the background retention prune of ws's store when it is due. A store with no
// stamp yet (a new one) gets one: it is first pruned retentionEvery later. Anything that keeps the
// prune from starting is said at debug level only: the run is done.
func (a *app) autoPrune(ws *graph.Workspace) {
	dir := cmp.Or(ws.SharedDir, ws.CacheDir)
	limits, on, err := prune.Retention(ws, dir)
	if err != nil || !on {
		return
	}
	stamp := filepath.Join(dir, pruneStamp)
	fi, err := os.Stat(stamp)
	switch {
	case errors.Is(err, os.ErrNotExist):
		touch(stamp)
		return
	case err != nil || time.Since(fi.ModTime()) < retentionEvery:
		return
	}
	lk, err := taskmutex.Keys(dir, ws.Root).TryLock(pruneLock, "")
	if err != nil {
		return // a prune of this store runs
	}
	defer lk.Unlock()
	touch(stamp)
	if err := startPrune(ws.Root, dir, lk, limits); err != nil {
		a.log.Debug().Err(err).Msg("retention prune not started")
	}
}

// startPrune starts the detached prune child of the store at dir in root, handing it lk.
func startPrune(root, dir string, lk *taskmutex.KeyLock, limits prune.Limits) error {
	f := lk.File()
	if f == nil {
		return errors.New("the prune lock cannot be handed to a child here")
	}
	defer f.Close()
	exe, err := selfPath()
	if err != nil {
		return err
	}
	cmd := &exec.Cmd{Path: exe, Dir: root, ExtraFiles: []*os.File{f}, SysProcAttr: detached(),
		Args: []string{"vx", "cache", "prune", "--cache-dir=" + dir, "--auto", "--lock-fd", strconv.Itoa(pruneLockFD),
			"--max-size", strconv.FormatInt(limits.MaxSize, 10), "--older-than", limits.MaxAge.String()}}
	// A runTasks call's marker is left out: the sweep after the call is for what the run left
	// of its tasks, not for the prune it started.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, handoff.CallMarkerPrefix) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start vx cache prune --auto: %w", err)
	}
	return cmd.Process.Release()
}

// selfPath is the path vx starts itself from: /proc/self/exe on Linux (vx's binary even if its
// file was replaced), else the executable's path.
func selfPath() (string, error) {
	if runtime.GOOS == "linux" {
		return "/proc/self/exe", nil
	}
	return os.Executable()
}

// exists reports whether path can be stat'ed.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// touch sets path's time to now, making it empty where it is missing.
func touch(path string) {
	now := time.Now()
	if err := os.Chtimes(path, now, now); errors.Is(err, os.ErrNotExist) {
		if f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			f.Close()
		}
	}
}

// pruneLock readies a vx cache prune: a prune a run started (--auto) holds the store's prune lock
// on the descriptor it was handed; any other waits for the lock, so that it never runs beside
// another prune and answers what that one left. Without limits, it reads the workspace's
// cacheRetention into req (only where the store has an index: a prune of nothing loads nothing).
// release ends what it took.
func (a *app) pruneLock(cmd *cobra.Command, req *prune.Request, auto bool, lockFD int) (release func(), err error) {
	if auto {
		if lockFD > 0 {
			closeOnExec(lockFD) // held until this process exits
		}
		return func() {}, nil
	}
	root, err := a.workspaceLoader().Root()
	if err != nil {
		return nil, err
	}
	dirs, err := a.workspaceLoader().StoreDirs(cmd.Context())
	if err != nil {
		return nil, err
	}
	dir := cmp.Or(dirs.Shared, dirs.Checkout)
	if !exists(store.IndexPath(dirs.Checkout)) && !exists(store.SharedIndexPath(dir)) {
		return func() {}, nil
	}
	if req.OlderThan == "" && req.MaxSize == "" {
		ws, err := a.load(cmd.Context())
		if err != nil {
			return nil, err
		}
		limits, on, err := prune.Retention(ws, dir)
		if err != nil {
			return nil, err
		}
		if on {
			req.Retention = &limits
		}
	}
	lk, err := taskmutex.Keys(dir, root).Lock(cmd.Context(), pruneLock, "", nil)
	if err != nil {
		return func() {}, nil // a store this process cannot lock in (read-only): prune as before
	}
	return func() { _ = lk.Unlock() }, nil
}
