package info

import (
	"context"
	"time"

	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/watch"
)

// watcherReport is the watcher section: the OS's limits against what the workspace needs, and
// whether a vx answers on the workspace's file-state socket now.
func watcherReport(ctx context.Context, root, stateDir string) watch.Report {
	r := watch.Report{Limits: watch.CheckLimits(root, stateDir)}
	_, err := filestate.Ask(ctx, stateDir, root, 200*time.Millisecond)
	r.Serving = err == nil
	return r
}
