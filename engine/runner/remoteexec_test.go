package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/bazelbuild/remote-apis/build/bazel/remote/execution/v2"

	"github.com/vzn/vx/engine/executor"
	"github.com/vzn/vx/engine/executor/remoteexec"
	"github.com/vzn/vx/engine/executor/remoteexec/buildbarntest"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/mask"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
)

// remoteFixture is a workspace of independent packages whose builds use only sh and coreutils,
// sending its tasks to the engine at addr when remote is set.
func remoteFixture(t *testing.T, addr string, packages int) *fixture {
	f := newFixture(t)
	for i := range packages {
		name := "pkg" + string(rune('a'+i))
		p := f.project(name)
		f.task(p, "build", `mkdir -p dist/nested && { cat src/*.txt; echo "$GREETING"; } | sort > dist/all.txt && cp src/a.txt dist/nested/a.txt && echo built `+name, func(t *graph.Task) {
			t.Inputs, t.Outputs = []string{"src/**"}, []string{"dist/**"}
			t.Env = []string{"GREETING"}
			t.ExecEnv = map[string]graph.EnvValue{"GREETING": {Value: "hello " + name}}
		})
		f.task(p, "test", `echo "src/a.txt:1: expected two, got $(cat src/a.txt)" >&2; exit 1`, func(t *graph.Task) {
			t.Inputs, t.Outputs = []string{"src/**"}, []string{"report/**"}
		})
		f.write("packages/"+name+"/src/a.txt", "one "+name+"\n")
		f.write("packages/"+name+"/src/b.txt", "zwei\n")
	}
	app := f.project("app", "pkga")
	f.task(app, "build", "mkdir -p dist && cat ../pkga/dist/all.txt main.txt > dist/app.txt", func(t *graph.Task) {
		t.Inputs, t.Outputs, t.DependsOn = []string{"main.txt"}, []string{"dist/**"}, []string{"pkga#build"}
	})
	f.write("packages/app/main.txt", "app main\n")
	if addr != "" {
		f.ws.Remote = &graph.RemoteExec{Execute: true, Executor: "grpc://" + addr, Platform: map[string]string{"OSFamily": "linux"}}
	}
	return f
}

// outputsOf answers every output file of the fixture's packages by root-relative path.
func outputsOf(t *testing.T, f *fixture) map[string]string {
	out := map[string]string{}
	err := filepath.WalkDir(filepath.Join(f.root, "packages"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(filepath.ToSlash(p), "/dist/") {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(f.root, p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func executors(s *summary.Summary) string {
	var parts []string
	for _, t := range s.Tasks {
		parts = append(parts, t.TaskID+"@"+t.Executor)
	}
	return strings.Join(parts, " ")
}

// TestBuildbarnRemoteRun: a workspace builds on a real Buildbarn with outputs byte-identical to
// a local build, its rows say remote; a failing remote task's log reaches vx last --log and the
// failures; an unreachable engine makes the run fall back to local with one warning.
func TestBuildbarnRemoteRun(t *testing.T) {
	bb := buildbarntest.Start(t)
	waitEngine(t, bb)
	const n = 4
	var builds []string
	for i := range n {
		builds = append(builds, "pkg"+string(rune('a'+i))+"#build")
	}
	builds = append(builds, "app#build") // reads pkga's outputs: grafted into its input root
	local := remoteFixture(t, "", n)
	sl, out := local.run(builds, nil)
	if !sl.OK {
		t.Fatalf("local build: %s\n%s", statuses(sl), out)
	}
	remote := remoteFixture(t, bb.Addr, n)
	var notices []string
	sr, out := remote.run(builds, func(o *Options) { o.Notice = func(m string) { notices = append(notices, m) } })
	if !sr.OK || strings.Count(executors(sr), "@remote") != n+1 {
		t.Fatalf("remote build: %s / %s\n%s\n%v\n%s", statuses(sr), executors(sr), out, notices, bb.Logs())
	}
	want, got := outputsOf(t, local), outputsOf(t, remote)
	if len(want) != 2*n+1 {
		t.Fatalf("local outputs %v", want)
	}
	for rel, data := range want {
		if got[rel] != data {
			t.Fatalf("%s: remote %q, local %q", rel, got[rel], data)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("remote outputs %v, local %v", got, want)
	}
	if !strings.Contains(out, "pkga#build | built pkga") {
		t.Fatalf("the remote log is not the task's output:\n%s", out)
	}
	remote.asLast(sr)
	// A hit restores from the entry the remote run made.
	os.RemoveAll(filepath.Join(remote.root, "packages/pkga/dist"))
	if s, _ := remote.run(builds[:1], nil); statuses(s) != "pkga#build=hit" {
		t.Fatalf("after the remote run: %s", statuses(s))
	}

	sf, _ := remote.run([]string{"pkgb#test"}, nil)
	if sf.OK || executors(sf) != "pkgb#test@remote" {
		t.Fatalf("failing remote test: %s %s", statuses(sf), executors(sf))
	}
	st, err := store.OpenReadOnly(context.Background(), remote.ws.CacheDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e, ok, err := st.Execution(context.Background(), sf.RunID, "pkgb#test")
	if err != nil || !ok || e.Executor != "remote" {
		t.Fatalf("history row: %+v %v %v", e, ok, err)
	}
	log, err := history.Log(context.Background(), st, "pkgb#test", sf.RunID, mask.New())
	if err != nil || !strings.Contains(log.Whole(), "src/a.txt:1: expected two, got one pkgb") {
		t.Fatalf("vx last --log of the failing remote task: %+v %v", log, err)
	}
	failures, err := history.FailedTasks(context.Background(), st, sf.RunID, mask.New())
	if err != nil || len(failures.Failures) != 1 || !strings.Contains(failures.Failures[0].Plain, "src/a.txt:1: expected two") {
		t.Fatalf("the failures of the run: %+v %v", failures, err)
	}

	down := remoteFixture(t, freeLoopback(t), 2)
	notices = nil
	sd, out := down.run([]string{"pkga#build", "pkgb#build"}, func(o *Options) {
		o.Notice = func(m string) { notices = append(notices, m) }
		o.Concurrency = 1
	})
	if !sd.OK || executors(sd) != "pkga#build@local pkgb#build@local" || len(notices) != 1 || !strings.Contains(notices[0], "running tasks locally") {
		t.Fatalf("unreachable engine: %s %s %q\n%s", statuses(sd), executors(sd), notices, out)
	}
}

// waitEngine waits until the engine runs an Action: its worker has registered (until then the
// scheduler refuses the worker's platform).
func waitEngine(t *testing.T, bb *buildbarntest.Engine) {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///"+bb.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, err := remoteexec.Command(remoteexec.Spec{Shell: "true", Env: map[string]string{"PATH": "/bin", "HOME": "/tmp"},
		Platform: map[string]string{"OSFamily": "linux"}})
	if err != nil {
		t.Fatal(err)
	}
	empty, _ := remoteexec.BuildTree(nil)
	a := remoteexec.NewAction(cmd, empty.Root, time.Minute)
	client := remoteexec.NewClient(conn, "", nil, 5*time.Second)
	for {
		_, err := pb.NewContentAddressableStorageClient(conn).BatchUpdateBlobs(ctx, &pb.BatchUpdateBlobsRequest{Requests: []*pb.BatchUpdateBlobsRequest_Request{
			{Digest: a.Digest.Proto(), Data: a.Action}, {Digest: a.CommandDigest.Proto(), Data: a.Command}}})
		if err == nil {
			if _, err = client.Execute(ctx, a, nil); err == nil {
				return
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("no Buildbarn worker registered: %v\n%s", err, bb.Logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// freeLoopback answers a loopback address nobody listens on.
func freeLoopback(t *testing.T) string {
	t.Helper()
	return "127.0.0.1:1"
}

// TestBuildbarnRemoteCancel: a run cancelled while its task executes on a real Buildbarn ends
// cancelled, leaves its operation without a waiter at once, and no operation on the scheduler's
// list once the engine has stopped it (Buildbarn has no CancelOperation: it stops an operation
// nobody waits for after its own delay).
func TestBuildbarnRemoteCancel(t *testing.T) {
	bb := buildbarntest.Start(t)
	waitEngine(t, bb)
	f := remoteFixture(t, bb.Addr, 1)
	f.task(f.ws.Projects[0], "slow", "sleep 600 && mkdir -p dist", func(t *graph.Task) {
		t.Inputs, t.Outputs = []string{"src/**"}, []string{"dist/**"}
	})
	f.ws.Index()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type ran struct {
		s   *summary.Summary
		err error
	}
	done := make(chan ran, 1)
	go func() {
		s, err := Run(ctx, Options{Workspace: f.ws, TaskIDs: []string{"pkga#slow"}, Concurrency: 1})
		done <- ran{s, err}
	}()
	deadline, stop := context.WithTimeout(context.Background(), 3*time.Minute)
	defer stop()
	waitOps(deadline, t, bb, func(ops []buildbarntest.Operation) bool { return len(ops) == 1 && ops[0].Stage == "executing" })
	cancel()
	r := <-done
	if r.err != nil || r.s.Status != store.RunCancelled || statuses(r.s) != "pkga#slow=cancelled" || executors(r.s) != "pkga#slow@remote" {
		t.Fatalf("cancelled run: %v %+v", r.err, r.s)
	}
	ops, err := bb.Operations(deadline)
	if err != nil || len(ops) != 1 || !ops[0].Abandoned {
		t.Fatalf("after the run: want its operation abandoned, got %+v %v", ops, err)
	}
	waitOps(deadline, t, bb, func(ops []buildbarntest.Operation) bool { return len(ops) == 0 })
}

// waitOps waits until the scheduler's operations satisfy ok.
func waitOps(ctx context.Context, t *testing.T, bb *buildbarntest.Engine, ok func([]buildbarntest.Operation) bool) {
	t.Helper()
	for {
		ops, err := bb.Operations(ctx)
		if err == nil && ok(ops) {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("operations %+v %v\n%s", ops, err, bb.Logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestRunsRemotely: which tasks a run sends to the engine. Only a cacheable task that is not
// persistent, not opted out, under no sandbox, with its outputs declared in its project and its
// key's files known, that opts in or is sent by the run or the workspace.
func TestRunsRemotely(t *testing.T) {
	f := newFixture(t)
	p := f.project("p")
	yes, no := true, false
	mk := func(name string, mod func(*graph.Task)) {
		f.task(p, name, "true", func(t *graph.Task) {
			t.Outputs = []string{"dist/**"}
			if mod != nil {
				mod(t)
			}
		})
	}
	mk("plain", nil)
	mk("optin", func(t *graph.Task) { t.RemoteExec = &yes })
	mk("optout", func(t *graph.Task) { t.RemoteExec = &no })
	mk("server", func(t *graph.Task) { t.Persistent, t.RemoteExec = true, &yes })
	mk("uncached", func(t *graph.Task) { t.Cache, t.RemoteExec = false, &yes })
	mk("outside", func(t *graph.Task) { t.Outputs, t.RemoteExec = []string{"//dist/**"}, &yes })
	mk("nooutputs", func(t *graph.Task) { t.Outputs, t.RemoteExec = nil, &yes })
	f.ws.Index()
	r := &runState{opts: Options{Workspace: f.ws}}
	task := func(name string) executor.Task {
		gt, _ := f.ws.Task("p#" + name)
		return executor.Task{ID: gt.ID, Outputs: gt.Outputs, InputFiles: []string{"packages/p/x"}}
	}
	check := func(what string, on bool, want map[string]bool) {
		t.Helper()
		for name, w := range want {
			if got := r.runsRemotely(task(name), on); got != w {
				t.Errorf("%s: %s runs remotely = %v, want %v", what, name, got, w)
			}
		}
	}
	check("by default", false, map[string]bool{"plain": false, "optin": true, "optout": false, "server": false,
		"uncached": false, "outside": false, "nooutputs": false})
	check("--remote-exec", true, map[string]bool{"plain": true, "optout": false})
	f.ws.Remote = &graph.RemoteExec{Execute: true}
	check("remote.execute", false, map[string]bool{"plain": true, "optout": false})
	sandboxed, unknown := task("plain"), task("plain")
	sandboxed.Sandbox, unknown.InputFiles = &graph.Sandbox{}, nil
	if r.runsRemotely(sandboxed, true) || r.runsRemotely(unknown, true) {
		t.Error("a sandboxed task, or one whose key's files are not known, runs remotely")
	}
}
