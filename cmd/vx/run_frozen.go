package main

import (
	"context"

	"github.com/vzn/vx/engine/configlock"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/mask"
	"github.com/vzn/vx/engine/profilerec"
)

// frozenUsage is --frozen's help.
const frozenUsage = "run from the workspace vx.lock keeps, evaluating no config; refuse when vx.lock is missing or a config file, package.json or project folder changed since vx lock wrote it"

// writeLock writes vx.lock with the workspace --frozen runs from, keeping the lock's own frozen
// section where nothing in it changed.
func (a *app) writeLock(ctx context.Context) (*configlock.Report, error) {
	loader := a.workspaceLoader()
	var old *configlock.Frozen
	if root, err := loader.Root(); err == nil {
		// An unreadable lock is replaced whole, as configlock.Write replaces it.
		if f, ok, err := configlock.Read(root); err == nil && ok {
			old = f.Frozen
		}
	}
	ws, fr, err := loader.Freeze(ctx, old)
	if ws != nil {
		a.masker = mask.New(ws.Secrets...)
	}
	if err != nil {
		return nil, err
	}
	return configlock.WriteFrozen(ws, fr)
}

// loadForRun is the workspace vx run works on: vx.lock's under --frozen, else the config's.
func (a *app) loadForRun(ctx context.Context, rf *runFlags) (*graph.Workspace, error) {
	if !rf.frozen {
		return a.load(ctx)
	}
	defer profilerec.Start(ctx, "frozen load").End()
	ws, err := a.workspaceLoader().LoadFrozen()
	if ws != nil {
		a.masker = mask.New(ws.Secrets...)
	}
	return ws, err
}
