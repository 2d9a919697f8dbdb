package oteltrace

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.uber.org/goleak"

	"github.com/vzn/vx/engine/profilerec"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sampleRun is a run of a miss that failed and a hit, with the phases their code marked.
func sampleRun() Run {
	t0 := time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	exit, local := 2, "local"
	sum := &summary.Summary{RunID: "r1", Status: "failed", ExitCode: 1, StartedAt: t0, Tags: map[string]string{"job": "ci"},
		Tasks: []summary.TaskResult{
			{TaskID: "lib#build", Status: store.StatusHit, Hash: "k1", CacheSource: &local, DurationMs: 5},
			{TaskID: "app#test", Status: store.StatusFailed, Hash: "k2", ExitCode: &exit, PeakRssBytes: 4096, DurationMs: 50},
		}}
	return Run{Summary: sum,
		Spans: []profilerec.Span{
			{Name: "config load", Start: at(0), End: at(10)},
			{Name: "hash", Task: "lib#build", Start: at(20), End: at(21)},
			{Name: "cache lookup", Task: "lib#build", Start: at(21), End: at(22)},
			{Name: "restore", Task: "lib#build", Start: at(22), End: at(25)},
			{Name: "hash", Task: "app#test", Start: at(30), End: at(31)},
			{Name: "cache lookup", Task: "app#test", Start: at(31), End: at(32)},
			{Name: "command", Task: "app#test", Start: at(32), End: at(82)},
			{Name: "record run", Start: at(85), End: at(90)},
		},
		Tasks: []profilerec.Task{
			{ID: "lib#build", Status: "hit", Start: at(20), End: at(25), MeasuredFrom: at(20), Duration: 5 * time.Millisecond},
			{ID: "app#test", Status: "failed", Start: at(30), End: at(83), MeasuredFrom: at(32), Duration: 50 * time.Millisecond},
		}}
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// The run's span holds each task's, which holds its phases, named key, lookup, restore,
// execute; the run's own work sits under the run; each carries what its row says.
func TestSpansParentsAndAttributes(t *testing.T) {
	spans, err := Spans(sampleRun(), "1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]sdktrace.ReadOnlySpan{}
	var phases []string
	for _, s := range spans {
		byName[s.Name()] = s
	}
	root := byName["vx run"]
	if root == nil || root.Parent().IsValid() || root.Status().Code != codes.Error {
		t.Fatalf("no root span with an error status among %d spans", len(spans))
	}
	if a := attrs(root); a[AttrRunID].AsString() != "r1" || a["vx.tag.job"].AsString() != "ci" || a[AttrRunExitCode].AsInt64() != 1 {
		t.Errorf("root attributes %v", a)
	}
	task := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		if s.Parent().SpanID() == root.SpanContext().SpanID() && strings.Contains(s.Name(), "#") {
			task[s.Name()] = s
		}
	}
	app, lib := task["app#test"], task["lib#build"]
	if app == nil || lib == nil {
		t.Fatalf("task spans under the run: %v", task)
	}
	if a := attrs(app); a[AttrCacheStatus].AsString() != "failed" || a[AttrExitCode].AsInt64() != 2 ||
		a[AttrPeakRSSBytes].AsInt64() != 4096 || app.Status().Code != codes.Error {
		t.Errorf("app#test attributes %v, status %v", a, app.Status())
	}
	if a := attrs(lib); a[AttrCacheStatus].AsString() != "hit" || a[AttrCacheSource].AsString() != "local" || a[AttrCacheKey].AsString() != "k1" {
		t.Errorf("lib#build attributes %v", a)
	}
	for _, s := range spans {
		switch s.Parent().SpanID() {
		case app.SpanContext().SpanID():
			phases = append(phases, "app:"+s.Name())
		case lib.SpanContext().SpanID():
			phases = append(phases, "lib:"+s.Name())
		case root.SpanContext().SpanID():
			if !strings.Contains(s.Name(), "#") {
				phases = append(phases, "run:"+s.Name())
			}
		}
		if s.SpanContext().TraceID() != root.SpanContext().TraceID() {
			t.Errorf("%s in another trace", s.Name())
		}
	}
	want := "run:config load lib:key lib:lookup lib:restore app:key app:lookup app:execute run:record run"
	if got := strings.Join(phases, " "); got != want {
		t.Errorf("phases %q, want %q", got, want)
	}
	if !app.StartTime().Equal(sampleRun().Tasks[1].Start) || !root.EndTime().Equal(sampleRun().Spans[7].End) {
		t.Errorf("times: app starts %v, run ends %v", app.StartTime(), root.EndTime())
	}
}

// A collector that takes the connection and never answers costs the export its timeout, and an
// error saying so on one line.
func TestExportSilentCollector(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var wg sync.WaitGroup
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release })}
	wg.Add(1)
	go func() { defer wg.Done(); _ = srv.Serve(l) }()
	defer func() { close(release); srv.Close(); wg.Wait() }()
	_, err = Export(context.Background(), sampleRun(), Options{Endpoint: "http://" + l.Addr().String(), Timeout: 300 * time.Millisecond})
	if err == nil || err.Error() != "OpenTelemetry export: no answer within 300ms" {
		t.Fatalf("err %v, want no answer within 300ms", err)
	}
}

// An endpoint that is not an http(s) URL is refused by name; one with no path gets /v1/traces.
func TestEndpoint(t *testing.T) {
	for _, bad := range []string{"localhost:4318", "ftp://x", "http://"} {
		if err := CheckEndpoint(bad); err == nil || !strings.Contains(err.Error(), "--otel="+bad) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	var got []string
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.Path)
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(l) }()
	for _, u := range []string{"http://" + l.Addr().String(), "http://" + l.Addr().String() + "/custom/traces"} {
		if n, err := Export(context.Background(), sampleRun(), Options{Endpoint: u}); err != nil || n != 11 {
			t.Errorf("%s: %d spans, %v", u, n, err)
		}
	}
	srv.Close()
	<-done
	if strings.Join(got, " ") != "/v1/traces /custom/traces" {
		t.Errorf("paths %v", got)
	}
}
