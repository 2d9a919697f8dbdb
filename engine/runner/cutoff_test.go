package runner

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pb "github.com/bazelbuild/remote-apis/build/bazel/remote/execution/v2"
	"google.golang.org/grpc"

	"github.com/vzn/vx/engine/executor/remoteexec/buildbarntest"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/remote"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
)

// cutoffFixture is a→b sent to the engine at addr, which is the remote cache too: a's build drops
// the comment lines of its source, so a comment edit moves a's key and not its output; b's build
// appends a line to the file mark each time it runs (on the worker) and reads a's output.
func cutoffFixture(t *testing.T, addr, mark string) *fixture {
	f := newFixture(t)
	a := f.project("a")
	f.task(a, "build", `mkdir -p dist && grep -v '^#' src/a.txt > dist/a.txt`, func(t *graph.Task) {
		t.Inputs, t.Outputs = []string{"src/**"}, []string{"dist/**"}
	})
	b := f.project("b", "a")
	f.task(b, "build", `echo ran >> "$MARK" && mkdir -p dist && tr a-z A-Z < ../a/dist/a.txt > dist/b.txt && echo built b`, func(t *graph.Task) {
		t.Inputs, t.Outputs, t.DependsOn = []string{"main.txt"}, []string{"dist/**"}, []string{"a#build"}
		t.Env = []string{"MARK"}
		t.ExecEnv = map[string]graph.EnvValue{"MARK": {Value: mark}}
	})
	f.write("packages/a/src/a.txt", "alpha\n")
	f.write("packages/b/main.txt", "b main\n")
	f.ws.Remote = &graph.RemoteExec{Execute: true, Platform: map[string]string{"OSFamily": "linux"}}
	f.ws.RemoteCache = &graph.RemoteCache{URL: "grpc://" + addr}
	return f
}

// markFile answers a file path the engine's actions (run as nobody when the test runs as root)
// may append to, and a function counting the lines written there.
func markFile(t *testing.T) (string, func() int) {
	t.Helper()
	dir, err := os.MkdirTemp("", "vx-cutoff-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(dir, "runs")
	return mark, func() int {
		data, _ := os.ReadFile(mark)
		return strings.Count(string(data), "ran\n")
	}
}

// sources answers each task's "status/cacheSource" of s.
func sources(s *summary.Summary) string {
	var parts []string
	for _, t := range s.Tasks {
		src := ""
		if t.CacheSource != nil {
			src = *t.CacheSource
		}
		parts = append(parts, t.TaskID+"="+string(t.Status)+"/"+src+"@"+t.Executor)
	}
	return strings.Join(parts, " ")
}

// TestBuildbarnEarlyCutoff: on a real Buildbarn whose clients may write the Action Cache, a comment
// edit in a's source moves a's key and b's, not a's output: a executes again, b is a hit by its
// Action digest (cacheSource remote-action) that the worker never ran, its outputs restored and its
// entry kept under its key (the next run hits it locally, another checkout in the remote cache);
// vx why b names the cutoff and the upstream that moved; a plan says nothing of a remote status
// it can know by key.
func TestBuildbarnEarlyCutoff(t *testing.T) {
	bb := buildbarntest.Start(t)
	waitEngine(t, bb)
	mark, runs := markFile(t)
	f := cutoffFixture(t, bb.Addr, mark)
	ids := []string{"a#build", "b#build"}
	var notices []string
	notice := func(o *Options) { o.Notice = func(m string) { notices = append(notices, m) } }
	s, out := f.run(ids, notice)
	if !s.OK || executors(s) != "a#build@remote b#build@remote" || runs() != 1 {
		t.Fatalf("first run: %s, b ran %d times\n%s\n%v\n%s", sources(s), runs(), out, notices, bb.Logs())
	}
	f.write("packages/a/src/a.txt", "# a comment\nalpha\n")
	plan, err := DryRun(context.Background(), PlanOptions{Options: Options{Workspace: f.ws, TaskIDs: ids, Concurrency: 2}})
	if err != nil || plan.Tasks[1].Cache != store.StatusMiss || plan.Tasks[1].Remote != "" || plan.RemoteUnknown != "" {
		t.Fatalf("plan where clients write the Action Cache: %+v %v", plan, err)
	}
	s, out = f.run(ids, notice)
	if !s.OK || sources(s) != "a#build=miss/@remote b#build=hit/remote-action@" || runs() != 1 || len(notices) != 0 {
		t.Fatalf("after a comment edit: %s, b ran %d times\n%s\n%v\n%s", sources(s), runs(), out, notices, bb.Logs())
	}
	if data, err := os.ReadFile(filepath.Join(f.root, "packages/b/dist/b.txt")); err != nil || string(data) != "ALPHA\n" {
		t.Fatalf("b's restored output: %q %v", data, err)
	}
	st, err := store.OpenReadOnly(context.Background(), f.ws.CacheDir)
	if err != nil {
		t.Fatal(err)
	}
	why, err := history.Explain(context.Background(), st, "b#build", "")
	st.Close()
	if err != nil || !why.Cutoff || !why.Changed || why.Status != store.StatusHit {
		t.Fatalf("vx why b: %+v %v", why, err)
	}
	t.Logf("vx why b: %s", why.Reason)
	for _, want := range []string{"a#build", "src/a.txt", "byte-identical", "Action digest"} {
		if !strings.Contains(why.Reason, want) {
			t.Fatalf("vx why b: %q lacks %q", why.Reason, want)
		}
	}
	os.RemoveAll(filepath.Join(f.root, "packages/b/dist"))
	if s, _ := f.run(ids, nil); sources(s) != "a#build=hit/local@ b#build=hit/local@" || runs() != 1 {
		t.Fatalf("the next run: %s (b ran %d times)", sources(s), runs())
	}
	// The cutoff hit's entry went to the remote cache under b's key too: another checkout hits it
	// there by key.
	other := cutoffFixture(t, bb.Addr, mark)
	other.write("packages/a/src/a.txt", "# a comment\nalpha\n")
	if s, _ := other.run(ids, nil); sources(s) != "a#build=hit/remote@ b#build=hit/remote@" || runs() != 1 {
		t.Fatalf("another checkout: %s (b ran %d times)", sources(s), runs())
	}
}

// TestBuildbarnWorkersOnlyActionCache: behind a frontend that lets only the worker write the
// Action Cache, the engine says so (update_enabled false), a run keeps no key of vx's there and
// warns of nothing, a second checkout with an empty .vx hits both tasks by their Action digests
// with no execution on the worker, and its plan says their remote status is unknown.
func TestBuildbarnWorkersOnlyActionCache(t *testing.T) {
	bb := buildbarntest.StartWith(t, buildbarntest.Options{WorkersOnlyAC: true})
	waitEngine(t, bb)
	conn, err := remote.DialREAPI(remote.Settings{URL: "grpc://" + bb.Addr, Protocol: remote.ProtocolREAPI, Timeout: remote.DefaultTimeout})
	if err != nil {
		t.Fatal(err)
	}
	writes, err := conn.ClientWritesActionCache(context.Background())
	conn.Close()
	if err != nil || writes {
		t.Fatalf("the frontend lets clients write its Action Cache: %v %v", writes, err)
	}
	mark, runs := markFile(t)
	ids := []string{"a#build", "b#build"}
	first := cutoffFixture(t, bb.Addr, mark)
	var notices []string
	s, out := first.run(ids, func(o *Options) { o.Notice = func(m string) { notices = append(notices, m) } })
	if !s.OK || executors(s) != "a#build@remote b#build@remote" || runs() != 1 || len(notices) != 0 ||
		s.RemoteCache == nil || s.RemoteCache.Errors != 0 || s.RemoteCache.Warning != "" {
		t.Fatalf("first checkout: %s, b ran %d times, %+v\n%s\n%v\n%s", sources(s), runs(), s.RemoteCache, out, notices, bb.Logs())
	}

	second := cutoffFixture(t, bb.Addr, mark)
	second.ws.Index()
	plan, err := DryRun(context.Background(), PlanOptions{Options: Options{Workspace: second.ws, TaskIDs: ids, Concurrency: 2}})
	if err != nil || len(plan.Tasks) != 2 || plan.Tasks[0].Remote != RemoteUnknown || plan.Tasks[1].Remote != RemoteUnknown ||
		!strings.Contains(plan.RemoteUnknown, "Action digest") {
		t.Fatalf("plan of the second checkout: %+v %v", plan, err)
	}
	var text strings.Builder
	if err := plan.WriteText(&text); err != nil || !strings.Contains(text.String(), "b#build") ||
		!strings.Contains(text.String(), "remote unknown") {
		t.Fatalf("plan text: %q %v", text.String(), err)
	}
	executed := strings.Count(bb.Logs(), "ExecuteResponse:") // the worker logs each action it runs
	s, out = second.run(ids, nil)
	if !s.OK || sources(s) != "a#build=hit/remote-action@ b#build=hit/remote-action@" || runs() != 1 ||
		strings.Count(bb.Logs(), "ExecuteResponse:") != executed {
		t.Fatalf("second checkout: %s, b ran %d times\n%s\n%s", sources(s), runs(), out, bb.Logs())
	}
	if data, err := os.ReadFile(filepath.Join(second.root, "packages/b/dist/b.txt")); err != nil || string(data) != "ALPHA\n" {
		t.Fatalf("b's restored output: %q %v", data, err)
	}
}

// capsServer is an engine's Capabilities service alone, saying whether clients may write its
// Action Cache: all a plan asks.
type capsServer struct {
	pb.UnimplementedCapabilitiesServer
	update bool
}

func (c capsServer) GetCapabilities(context.Context, *pb.GetCapabilitiesRequest) (*pb.ServerCapabilities, error) {
	return &pb.ServerCapabilities{CacheCapabilities: &pb.CacheCapabilities{DigestFunctions: []pb.DigestFunction_Value{pb.DigestFunction_SHA256},
		ActionCacheUpdateCapabilities: &pb.ActionCacheUpdateCapabilities{UpdateEnabled: c.update}}}, nil
}

// serveCaps serves capsServer{update} on loopback until the test ends and answers its address.
func serveCaps(t *testing.T, update bool) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	pb.RegisterCapabilitiesServer(srv, capsServer{update: update})
	done := make(chan struct{})
	go func() {
		_ = srv.Serve(l)
		close(done)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	return l.Addr().String()
}

// TestPlanRemoteUnknown: a plan says remote: unknown on the rows the engine would run and that
// miss here where vx's keys are kept in no remote cache (an engine whose capabilities say clients
// may not write its Action Cache, or none set but the executor), never where they may be (the
// engine lets clients write, a bazel-remote cache), nor on rows that run locally or hit.
func TestPlanRemoteUnknown(t *testing.T) {
	readOnly, writable := serveCaps(t, false), serveCaps(t, true)
	plan := func(f *fixture, mod func(*Options)) *Plan {
		t.Helper()
		o := Options{Workspace: f.ws, TaskIDs: []string{"a#build", "b#build"}, Concurrency: 2}
		if mod != nil {
			mod(&o)
		}
		f.ws.Index()
		p, err := DryRun(context.Background(), PlanOptions{Options: o})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	rows := func(p *Plan) string { return p.Tasks[0].Remote + "," + p.Tasks[1].Remote }
	f := cutoffFixture(t, readOnly, "/tmp/unused")
	if got := rows(plan(f, nil)); got != "unknown,unknown" {
		t.Errorf("engine whose workers alone write the Action Cache: %q", got)
	}
	if got := rows(plan(f, func(o *Options) { o.RemoteExec = RemoteExecOff })); got != "," {
		t.Errorf("--no-remote-exec: %q", got)
	}
	f.ws.RemoteCache = &graph.RemoteCache{URL: "grpc://" + writable}
	if got := rows(plan(f, nil)); got != "," {
		t.Errorf("engine that lets clients write: %q", got)
	}
	f.ws.RemoteCache = &graph.RemoteCache{URL: "http://127.0.0.1:1", Protocol: remote.ProtocolBazel}
	f.ws.Remote.Executor = "grpc://" + readOnly
	if got := rows(plan(f, nil)); got != "," {
		t.Errorf("a bazel-remote cache keeps the keys: %q", got)
	}
	f.ws.RemoteCache = nil
	no := false
	f.ws.Projects[0].Tasks["build"].RemoteExec = &no
	if p := plan(f, nil); rows(p) != ",unknown" || p.RemoteUnknown == "" {
		t.Errorf("no remote cache, a runs locally: %q %q", rows(p), p.RemoteUnknown)
	}
}
