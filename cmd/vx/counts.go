package main

import (
	"context"
	"errors"

	"github.com/vzn/vx/engine/counters"
	"github.com/vzn/vx/engine/runner"
	"github.com/vzn/vx/engine/summary"
)

// countersEnv names the file a run writes its operation counts to (engine/counters), as JSON,
// once it ended: processes spawned, SQLite statements, files opened, stat calls. For the test
// that holds those counts (stress/counts_test.go); unset, nothing is counted.
const countersEnv = "VX_COUNTERS"

// countOps puts the counters on ctx when countersEnv names a file, from the run's start (git asked
// while the config loads is counted too); done writes them there once the run ended.
func (a *app) countOps(ctx context.Context) (counted context.Context, done func() error) {
	path := a.getenv(countersEnv)
	if path == "" {
		return ctx, func() error { return nil }
	}
	c := &counters.Counters{}
	return counters.With(ctx, c), func() error { return writeFileAtomic(path, c.Counts()) }
}

// countedRun is runner.Run, then the counts written (countOps).
func countedRun(ctx context.Context, opts runner.Options, writeCounts func() error) (*summary.Summary, error) {
	sum, err := runner.Run(ctx, opts)
	if werr := writeCounts(); werr != nil {
		return sum, errors.Join(err, werr)
	}
	return sum, err
}
