package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/vzn/vx/engine/atomicfile"
	"github.com/vzn/vx/engine/chrometrace"
	"github.com/vzn/vx/engine/profilerec"
	"github.com/vzn/vx/engine/runner"
	"github.com/vzn/vx/engine/summary"
)

// runTrace is the profile `vx run --profile=FILE` records (Chrome trace-event JSON, for
// chrome://tracing and ui.perfetto.dev); not to be confused with VX_CPUPROFILE (profile.go),
// which profiles vx's own Go code.
type runTrace struct {
	path string
	rec  *chrometrace.Recorder
}

// startRunTrace answers ctx carrying the recorder of the run's profile when path names a file,
// and the profile to write once the run ended; without a path, ctx and a profile that writes
// nothing.
func startRunTrace(ctx context.Context, path string) (context.Context, *runTrace) {
	if path == "" {
		return ctx, &runTrace{}
	}
	rec := chrometrace.New(nil)
	return profilerec.WithRecorder(ctx, rec), &runTrace{path: path, rec: rec}
}

// write writes the profile of the run sum summarises, run with opts.
func (p *runTrace) write(sum *summary.Summary, opts runner.Options) error {
	if p.rec == nil {
		return nil
	}
	meta := chrometrace.Meta{RunID: sum.RunID, Args: os.Args[1:], Workers: opts.Concurrency, MemoryBudget: opts.MemoryBudget}
	if err := atomicfile.Write(p.path, func(w io.Writer) error { return p.rec.Write(w, meta) }, atomicfile.Perm(0o644)); err != nil {
		return fmt.Errorf("write the profile %s: %w", p.path, err)
	}
	return nil
}
