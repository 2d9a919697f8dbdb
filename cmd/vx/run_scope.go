package main

import (
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/remote"
	"github.com/vzn/vx/engine/vxerr"
)

// cacheScopeUsage is --cache-scope's help.
const cacheScopeUsage = "read and write the remote cache as `SCOPE`: trusted (the default branch's CI), read-only, or a pull request's own name such as pr-123, which reads its own entries and the trusted ones and writes its own only (default: env VX_CACHE_SCOPE, else cacheScope in vx.workspace.ts, else trusted)"

// checkCacheScope refuses a --cache-scope that cannot be a scope, before the workspace loads.
func (rf *runFlags) checkCacheScope() error {
	if rf.cacheScope == "" {
		return nil
	}
	if err := graph.CheckCacheScope(rf.cacheScope); err != nil {
		return vxerr.Usagef("--cache-scope %q: %v", rf.cacheScope, err)
	}
	return nil
}

// resolveCacheScope answers the run's cache scope: --cache-scope, else VX_CACHE_SCOPE, else the
// workspace's cacheScope, else trusted. A VX_CACHE_SCOPE that cannot be a scope ends the run
// before it starts, by name: a run must not write where its job did not mean it to.
func (a *app) resolveCacheScope(rf *runFlags, ws *graph.Workspace) (string, error) {
	name, _, err := remote.ResolveScope(rf.cacheScope, a.getenv, ws.CacheScope)
	if err != nil {
		return "", vxerr.Usagef("%v", err)
	}
	return name, nil
}
