package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/vzn/vx/engine/atomicfile"
	"github.com/vzn/vx/engine/chrometrace"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/oteltrace"
	"github.com/vzn/vx/engine/profilerec"
	"github.com/vzn/vx/engine/runner"
	"github.com/vzn/vx/engine/summary"
	"github.com/vzn/vx/engine/vxerr"
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

// otelFromEnv is --otel given without a URL: the OTEL_EXPORTER_OTLP_* variables name the endpoint.
const otelFromEnv = "\x00env"

// registerOTel declares --otel[=URL] on f.
func registerOTel(f *pflag.FlagSet, endpoint *string) {
	f.StringVar(endpoint, "otel", "", "export the run as OpenTelemetry traces over OTLP/HTTP to `URL` (default: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318), within 3s; otel: true in vx.workspace.ts does it for every run")
	f.Lookup("otel").NoOptDefVal = otelFromEnv
}

// checkOTel refuses an --otel value the export could not use.
func checkOTel(endpoint, dry string) error {
	if endpoint == "" {
		return nil
	}
	if dry != "" {
		return vxerr.Usagef("--otel: a dry run runs nothing to trace")
	}
	if endpoint == otelFromEnv {
		return nil
	}
	if err := oteltrace.CheckEndpoint(endpoint); err != nil {
		return vxerr.Usagef("%s", err.Error())
	}
	return nil
}

// runOTel is the run's OpenTelemetry export: the collector of what the run marks, from the start
// for --otel, from the config's load for otel: true.
type runOTel struct {
	endpoint string
	col      *profilerec.Collector
}

// startOTel answers ctx carrying the collector of the run's trace when --otel is given (beside
// the profile's recorder, if any), and the export; without --otel, ctx and an export that sends
// nothing until fromConfig turns it on.
func startOTel(ctx context.Context, flag string, profile *runTrace) (context.Context, *runOTel) {
	if flag == "" {
		return ctx, &runOTel{}
	}
	o := &runOTel{endpoint: strings.TrimPrefix(flag, otelFromEnv), col: profilerec.NewCollector(nil)}
	return profilerec.WithRecorder(ctx, profilerec.Tee(profile.recorder(), o.col)), o
}

// fromConfig turns the export on for a workspace that declares otel: true, when --otel did not:
// ctx then carries the collector too, and the config's load, which ran before, is recorded from
// the times loadStart and now.
func (o *runOTel) fromConfig(ctx context.Context, ws *graph.Workspace, profile *runTrace, loadStart time.Time) context.Context {
	if o.col != nil || !ws.OTel {
		return ctx
	}
	o.col = profilerec.NewCollector(nil)
	o.col.Span(profilerec.Span{Name: "config load", Start: loadStart, End: o.col.Now()})
	return profilerec.WithRecorder(ctx, profilerec.Tee(profile.recorder(), o.col))
}

// export sends the run sum summarises, if the export is on; a failure is a warning on stderr,
// never the run's: the export is bounded by oteltrace.DefaultTimeout.
func (o *runOTel) export(ctx context.Context, sum *summary.Summary, stderr io.Writer) {
	if o.col == nil || sum.RunID == "" {
		return
	}
	spans, tasks := o.col.Recorded()
	run := oteltrace.Run{Summary: sum, Spans: spans, Tasks: tasks}
	if _, err := oteltrace.Export(context.WithoutCancel(ctx), run, oteltrace.Options{Endpoint: o.endpoint, Version: version}); err != nil {
		fmt.Fprintf(stderr, "vx: warning: %s\n", err)
	}
}

// recorder is the profile's recorder, nil when the run writes no profile.
func (p *runTrace) recorder() profilerec.Recorder {
	if p.rec == nil {
		return nil
	}
	return p.rec
}
