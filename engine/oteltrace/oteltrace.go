// Package oteltrace exports a run as OpenTelemetry traces over OTLP/HTTP (`vx run --otel[=URL]`,
// `otel: true` in the workspace): a span for the run, one for each task under it, and one for each
// phase of vx's own work under its task (key, lookup, restore, execute, save, lock wait) or under
// the run (config load, select, read index, record run, …).
//
// The spans are made once the run ended, from what it already recorded: the phases its code marks
// through engine/profilerec (the marks `vx run --profile` lays out, collected by a
// profilerec.Collector) and the summary's row of each task (its status, cache source, key, exit
// code, peak RSS). Nothing is instrumented twice, and nothing is sent while the run runs.
//
// The whole export, however many spans, is bounded by one timeout (DefaultTimeout unless the
// caller says otherwise): a collector that cannot be reached costs the run at most that, and the
// caller a warning.
package oteltrace

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/vzn/vx/engine/profilerec"
	"github.com/vzn/vx/engine/summary"
)

// DefaultTimeout bounds an export as a whole: connecting, sending every batch, and shutting the
// exporter down.
const DefaultTimeout = 3 * time.Second

// ServiceName is the service.name of every span vx exports.
const ServiceName = "vx"

// batchSize is how many spans one OTLP request carries at most.
const batchSize = 1000

// Options say where and how a run is exported.
type Options struct {
	// Endpoint is the collector's URL; a URL with no path gets OTLP's /v1/traces. "" leaves it to
	// the OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and OTEL_EXPORTER_OTLP_ENDPOINT variables, else
	// http://localhost:4318/v1/traces, as every OpenTelemetry SDK does.
	Endpoint string
	// Timeout bounds the whole export; 0 means DefaultTimeout.
	Timeout time.Duration
	// Version is vx's version, the spans' service.version.
	Version string
}

// Run is what a run's trace is made of.
type Run struct {
	Summary *summary.Summary
	Spans   []profilerec.Span
	Tasks   []profilerec.Task
}

// Export sends run's spans to the collector opts name, and answers how many it sent. It never
// takes longer than the timeout; an error says what failed, on one line.
func Export(ctx context.Context, run Run, opts Options) (int, error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	clientOpts, err := endpointOptions(opts.Endpoint)
	if err != nil {
		return 0, err
	}
	clientOpts = append(clientOpts, otlptracehttp.WithTimeout(timeout))
	exp, err := otlptracehttp.New(ctx, clientOpts...)
	if err != nil {
		return 0, fmt.Errorf("OpenTelemetry export: %w", err)
	}
	spans, err := Spans(run, opts.Version)
	if err == nil {
		err = exportBatches(ctx, exp, spans)
	}
	if shutErr := exp.Shutdown(ctx); err == nil && shutErr != nil && !errors.Is(shutErr, context.DeadlineExceeded) {
		err = shutErr
	}
	if err != nil {
		if ctx.Err() != nil {
			return 0, fmt.Errorf("OpenTelemetry export: no answer within %s", timeout)
		}
		return 0, fmt.Errorf("OpenTelemetry export: %s", oneLine(err.Error()))
	}
	return len(spans), nil
}

// exportBatches sends spans in requests of batchSize at most.
func exportBatches(ctx context.Context, exp sdktrace.SpanExporter, spans []sdktrace.ReadOnlySpan) error {
	for len(spans) > 0 {
		n := min(len(spans), batchSize)
		if err := exp.ExportSpans(ctx, spans[:n]); err != nil {
			return err
		}
		spans = spans[n:]
	}
	return nil
}

// endpointOptions answers the exporter's options for the endpoint URL ("" for none: the
// variables decide). A URL with no path gets /v1/traces, as OTEL_EXPORTER_OTLP_ENDPOINT does.
func endpointOptions(endpoint string) ([]otlptracehttp.Option, error) {
	if endpoint == "" {
		return nil, nil
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--otel=%s: want an http:// or https:// URL such as http://localhost:4318", endpoint)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	return []otlptracehttp.Option{otlptracehttp.WithEndpointURL(u.String())}, nil
}

// CheckEndpoint refuses an endpoint URL Export could not use, naming it.
func CheckEndpoint(endpoint string) error {
	_, err := endpointOptions(endpoint)
	return err
}

// oneLine is s with its line breaks turned to spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// newResource is the resource every span carries: service vx at its version.
func newResource(version string) *resource.Resource {
	return resource.NewSchemaless(
		attribute.String("service.name", ServiceName),
		attribute.String("service.version", version),
	)
}
