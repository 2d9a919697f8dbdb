package oteltrace_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vzn/vx/internal/testkit"
)

// jaegerVersion is the Jaeger the export is tested against; stress/otel/jaeger pins its module.
const jaegerVersion = "v1.75.0"

// repoRoot is the vx checkout holding this package.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// toolDir is where Jaeger is built: outside the checkout, kept between runs.
func toolDir(t *testing.T) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "vx-test")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// shortBuildLimit bounds a cold build of Jaeger under -short.
const shortBuildLimit = 8 * time.Minute

// buildJaeger builds Jaeger's cmd/jaeger from its module at jaegerVersion once, into the tool
// folder. A build that fails, or cannot end before the test's deadline (or, under -short,
// shortBuildLimit), skips the test with the
// reason: the module comes from the Go module proxy, which the test does not control.
func buildJaeger(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(toolDir(t), "jaeger-"+jaegerVersion)
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-2*time.Minute))
		defer cancel()
	}
	if testing.Short() {
		// CI's run (-short) keeps within its budget: a cold build that needs longer goes on in the
		// next run from Go's build cache.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, shortBuildLimit)
		defer cancel()
	}
	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
	cmd := exec.CommandContext(ctx, "go", "build", "-o", tmp, "github.com/jaegertracing/jaeger/cmd/jaeger")
	cmd.Dir = filepath.Join(repoRoot(), "stress", "otel", "jaeger")
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		if ctx.Err() != nil {
			t.Skipf("building Jaeger %s did not end before the test's deadline (what it compiled stays in Go's build cache for the next run)", jaegerVersion)
		}
		t.Skipf("Jaeger %s's cmd/jaeger does not build from the module proxy: %v\n%s", jaegerVersion, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// buildVX builds vx into the test's temporary folder.
func buildVX(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "vx")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/vzn/vx/cmd/vx")
	cmd.Dir = repoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build vx: %v\n%s", err, out)
	}
	return bin
}

// freePort answers a port on 127.0.0.1 that nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// jaegerConfig is an all-in-one Jaeger on loopback: an OTLP/HTTP receiver, memory storage, the
// query API; no other listener (no metrics, no self-tracing).
const jaegerConfig = `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 1000
  jaeger_query:
    enable_tracing: false
    storage:
      traces: mem
    http:
      endpoint: 127.0.0.1:%d
    grpc:
      endpoint: 127.0.0.1:%d
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`

// jaeger is a running Jaeger: its OTLP/HTTP base URL and its query API's.
type jaeger struct {
	otlp, query string
	client      *http.Client
}

// startJaeger starts Jaeger in its own process group, waits until its query API answers, and
// kills it at the test's end.
func startJaeger(t *testing.T, bin string) *jaeger {
	t.Helper()
	otlpPort, queryPort, grpcPort := freePort(t), freePort(t), freePort(t)
	cfg := filepath.Join(t.TempDir(), "jaeger.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, jaegerConfig, queryPort, grpcPort, otlpPort), 0o644); err != nil {
		t.Fatal(err)
	}
	var log lockedBuffer
	cmd := exec.Command(bin, "--config", cfg)
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		if t.Failed() {
			t.Logf("jaeger's log:\n%s", log.String())
		}
	})
	j := &jaeger{otlp: fmt.Sprintf("http://127.0.0.1:%d", otlpPort), query: fmt.Sprintf("http://127.0.0.1:%d", queryPort),
		client: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		select {
		case <-done:
			t.Fatalf("jaeger exited at start:\n%s", log.String())
		default:
		}
		if _, err := j.get("/api/services"); err == nil {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("jaeger's query API did not answer within 60s:\n%s", log.String())
		}
	}
}

func (j *jaeger) get(path string) ([]byte, error) {
	resp, err := j.client.Get(j.query + path)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", path, resp.Status, b.String())
	}
	return b.Bytes(), nil
}

// The query API's trace document (/api/traces), as far as the test reads it.
type (
	jTraces struct {
		Data []jTrace `json:"data"`
	}
	jTrace struct {
		TraceID   string              `json:"traceID"`
		Spans     []jSpan             `json:"spans"`
		Processes map[string]jProcess `json:"processes"`
	}
	jSpan struct {
		SpanID        string `json:"spanID"`
		OperationName string `json:"operationName"`
		References    []struct {
			RefType string `json:"refType"`
			SpanID  string `json:"spanID"`
		} `json:"references"`
		Tags      []jTag `json:"tags"`
		ProcessID string `json:"processID"`
	}
	jTag struct {
		Key   string `json:"key"`
		Value any    `json:"value"`
	}
	jProcess struct {
		ServiceName string `json:"serviceName"`
	}
)

func (s jSpan) tag(key string) any {
	for _, t := range s.Tags {
		if t.Key == key {
			return t.Value
		}
	}
	return nil
}

func (s jSpan) parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

// trace answers the trace of run runID, once Jaeger has stored it whole (wantSpans spans).
func (j *jaeger) trace(t *testing.T, runID string, wantSpans int) jTrace {
	t.Helper()
	var last string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		body, err := j.get("/api/traces?service=vx&limit=50&lookback=1h")
		if err != nil {
			last = err.Error()
			continue
		}
		var doc jTraces
		if err := json.Unmarshal(body, &doc); err != nil {
			t.Fatalf("the query API's answer: %v\n%s", err, body)
		}
		last = string(body)
		for _, tr := range doc.Data {
			for _, s := range tr.Spans {
				if s.OperationName == "vx run" && s.tag("vx.run.id") == runID && len(tr.Spans) >= wantSpans {
					return tr
				}
			}
		}
	}
	t.Fatalf("no trace of run %s with %d spans in Jaeger; last answer: %.4000s", runID, wantSpans, last)
	return jTrace{}
}

// runVX runs vx in dir and answers its summary's run id and its stderr.
func runVX(t *testing.T, vx, dir string, env []string, args ...string) (runID, stderr string) {
	t.Helper()
	cmd := exec.Command(vx, append([]string{"--format", "json"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	var sum struct {
		RunID string `json:"runId"`
	}
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil || sum.RunID == "" {
		t.Fatalf("vx %v: no summary (%v)\nstdout: %s\nstderr: %s", args, err, out.String(), errb.String())
	}
	return sum.RunID, errb.String()
}

// TestJaeger runs vx with --otel against a real Jaeger and reads the runs back through Jaeger's
// query API: a trace a run, the run's span holding each task's, each task's holding its phases,
// with the cache status, exit code and peak RSS as attributes.
func TestJaeger(t *testing.T) {
	j := startJaeger(t, buildJaeger(t))
	vx := buildVX(t)
	dir := testkit.TempRepo(t, map[string]string{
		"vx.workspace.ts": `export default { projects: ['lib', 'app'], tasks: {
			build: { command: 'sh build.sh', outputs: ['out.txt'] },
			test: { command: 'exit 3', dependsOn: ['build'], cache: false } } }`,
		".gitignore":       ".vx/\nout.txt\n",
		"lib/package.json": `{ "name": "lib" }`,
		"lib/build.sh":     "awk 'BEGIN { s = \"x\"; for (i = 0; i < 26; i++) s = s s; print length(s) }' > /dev/null\necho built > out.txt\n",
		"app/package.json": `{ "name": "app", "dependencies": { "lib": "*" } }`,
		"app/build.sh":     "echo built > out.txt\n",
	})
	env := []string{"VX_CACHE_DIR=" + filepath.Join(t.TempDir(), "state")}

	// A run that builds (misses) and fails a test, sent to the URL given.
	first, stderr := runVX(t, vx, dir, env, "run", "build", "app#test", "--otel="+j.otlp)
	if strings.Contains(stderr, "OpenTelemetry") {
		t.Fatalf("the export warned: %s", stderr)
	}
	tr := j.trace(t, first, 1+3)
	spans := byName(tr)
	root := spans["vx run"]
	if root.parent() != "" || tr.Processes[root.ProcessID].ServiceName != "vx" || root.tag("vx.run.status") != "failed" {
		t.Errorf("the run's span: parent %q, service %q, status %v", root.parent(), tr.Processes[root.ProcessID].ServiceName, root.tag("vx.run.status"))
	}
	test, build := spans["app#test"], spans["lib#build"]
	for _, s := range []jSpan{test, build, spans["app#build"]} {
		if s.parent() != root.SpanID {
			t.Errorf("%s's parent is %q, want the run's span %s", s.OperationName, s.parent(), root.SpanID)
		}
	}
	if test.tag("vx.cache.status") != "failed" || test.tag("vx.exit_code") != float64(3) || test.tag("error") != true {
		t.Errorf("app#test's tags: %v", test.Tags)
	}
	if build.tag("vx.cache.status") != "miss" || !positive(build.tag("vx.peak_rss_bytes")) || build.tag("vx.cache.key") == "" {
		t.Errorf("lib#build's tags: %v", build.Tags)
	}
	if got := children(tr, build.SpanID); !containsAll(got, "key", "lookup", "execute", "save") {
		t.Errorf("lib#build's phases %v, want key, lookup, execute, save", got)
	}
	if got := children(tr, root.SpanID); !containsAll(got, "config load", "lib#build", "app#test") {
		t.Errorf("the run's children %v", got)
	}

	// A run that hits, sent where OTEL_EXPORTER_OTLP_ENDPOINT says.
	second, _ := runVX(t, vx, dir, append(env, "OTEL_EXPORTER_OTLP_ENDPOINT="+j.otlp), "run", "lib#build", "--otel")
	tr = j.trace(t, second, 1+1)
	spans = byName(tr)
	hit := spans["lib#build"]
	if hit.parent() != spans["vx run"].SpanID || hit.tag("vx.cache.status") != "hit" || hit.tag("vx.cache.source") != "local" {
		t.Errorf("the hit's span: parent %q, tags %v", hit.parent(), hit.Tags)
	}
	if got := children(tr, hit.SpanID); !containsAll(got, "key", "lookup", "restore") {
		t.Errorf("the hit's phases %v, want key, lookup, restore", got)
	}
	for _, s := range tr.Spans {
		if s.parent() == hit.SpanID && s.OperationName == "execute" {
			t.Errorf("a hit executed: %v", s)
		}
	}
}

func byName(tr jTrace) map[string]jSpan {
	m := map[string]jSpan{}
	for _, s := range tr.Spans {
		m[s.OperationName] = s
	}
	return m
}

func children(tr jTrace, parent string) []string {
	var names []string
	for _, s := range tr.Spans {
		if s.parent() == parent {
			names = append(names, s.OperationName)
		}
	}
	return names
}

func containsAll(have []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

func positive(v any) bool {
	f, ok := v.(float64)
	return ok && f > 0
}

// lockedBuffer is a buffer a child's two streams write to at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
