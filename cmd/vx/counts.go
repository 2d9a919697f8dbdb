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

// countedRun is runner.Run, its operations counted and written to the file countersEnv names
// when it names one.
func (a *app) countedRun(ctx context.Context, opts runner.Options) (*summary.Summary, error) {
	path := a.getenv(countersEnv)
	if path == "" {
		return runner.Run(ctx, opts)
	}
	c := &counters.Counters{}
	sum, err := runner.Run(counters.With(ctx, c), opts)
	if werr := writeFileAtomic(path, c.Counts()); werr != nil {
		return sum, errors.Join(err, werr)
	}
	return sum, err
}
