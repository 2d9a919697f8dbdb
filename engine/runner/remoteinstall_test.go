package runner

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	pb "github.com/bazelbuild/remote-apis/build/bazel/remote/execution/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/vzn/vx/engine/executor/remoteexec"
	"github.com/vzn/vx/engine/executor/remoteexec/buildbarntest"
	"github.com/vzn/vx/engine/graph"
)

// pnpmFixture is the generated pnpm workspace of n packages (buildbarntest.PnpmWorkspace) with
// its lockfile, each package's build (`node build.js`, after its dependencies' builds) a task,
// sent to the engine at addr with PATH pathList when addr is set.
func pnpmFixture(t *testing.T, n int, lock, addr, pathList string) *fixture {
	f := newFixture(t)
	for name, text := range buildbarntest.PnpmWorkspace(n) {
		f.write(name, text)
	}
	f.write("pnpm-lock.yaml", lock)
	for i := range n {
		var deps, after []string
		for _, d := range buildbarntest.PackageDeps(i) {
			deps = append(deps, buildbarntest.PackageName(d))
			after = append(after, buildbarntest.PackageName(d)+"#build")
		}
		p := f.project(buildbarntest.PackageName(i), deps...)
		f.task(p, "build", "node build.js", func(t *graph.Task) {
			t.Inputs, t.Outputs, t.DependsOn = []string{"build.js", "package.json"}, []string{"dist/**"}, after
		})
	}
	if addr != "" {
		f.ws.Remote = &graph.RemoteExec{Execute: true, Executor: "grpc://" + addr, Platform: map[string]string{"OSFamily": "linux"}, Path: pathList}
	}
	return f
}

// pnpmBuilds answers the build task of every package of an n-package pnpm fixture.
func pnpmBuilds(n int) []string {
	var ids []string
	for i := range n {
		ids = append(ids, buildbarntest.PackageName(i)+"#build")
	}
	return ids
}

// withPath runs a fixture's tasks with this process's environment (node on PATH).
func withPath(o *Options) { o.Getenv = os.Getenv }

// TestBuildbarnPnpmWorkspace: a generated 30-package pnpm workspace (workspace:* dependencies,
// registry packages from the npm registry) builds on a real Buildbarn with outputs byte-identical
// to a local build of the same workspace installed locally with the same pnpm: node_modules comes
// from the install action, and nothing of it to this machine. A second checkout with an empty
// .vx and --download=minimal gets every build as a hit by its Action digest, restores only the
// outputs a local task needs (those of the tasks it depends on, directly or not), and the install action is not run again: the Action Cache answers
// it (its entry is the one the first run's execution wrote).
func TestBuildbarnPnpmWorkspace(t *testing.T) {
	bb := buildbarntest.Start(t)
	waitEngine(t, bb)
	pnpmBin := buildbarntest.Pnpm(t)
	const n = 30
	lock := buildbarntest.PnpmLockfile(t, pnpmBin, buildbarntest.PnpmWorkspace(n))
	builds := pnpmBuilds(n)

	local := pnpmFixture(t, n, lock, "", "")
	buildbarntest.PnpmRun(t, pnpmBin, local.root, "install", "--frozen-lockfile")
	sl, out := local.run(builds, withPath)
	if !sl.OK {
		t.Fatalf("local build: %s\n%s", statuses(sl), out)
	}
	pathList := pnpmBin + ":" + defaultRemotePath
	remote := pnpmFixture(t, n, lock, bb.Addr, pathList)
	var notices []string
	sr, out := remote.run(builds, func(o *Options) { withPath(o); o.Notice = func(m string) { notices = append(notices, m) } })
	if !sr.OK || strings.Count(executors(sr), "@remote") != n {
		t.Fatalf("remote build: %s / %s\n%s\n%v\n%s", statuses(sr), executors(sr), out, notices, bb.Logs())
	}
	want, got := outputsOf(t, local), outputsOf(t, remote)
	if len(want) != n {
		t.Fatalf("local outputs: %d files", len(want))
	}
	for rel, data := range want {
		if got[rel] != data {
			t.Fatalf("%s: remote %q, local %q", rel, got[rel], data)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("remote outputs %d files, local %d", len(got), len(want))
	}
	if !strings.Contains(want["packages/p29/dist/index.js"], `"@ws/p28": "p28<@ws/p27,@ws/p26>"`) {
		t.Fatalf("p29's output does not come from its dependencies: %s", want["packages/p29/dist/index.js"])
	}
	if _, err := os.Lstat(filepath.Join(remote.root, "node_modules")); !os.IsNotExist(err) {
		t.Fatalf("the install's node_modules came to this machine: %v", err)
	}

	first := installResult(t, bb, remote)
	second := pnpmFixture(t, n, lock, bb.Addr, pathList)
	// Nothing holds vx's keys remotely here (no remote cache): each build is found by its Action
	// digest (early cutoff), which names the install's node_modules by digest. With
	// --download=minimal nothing comes back but what a local task needs: p02#report (kept on this
	// machine) reads p02's outputs, which read p01's and p00's through node_modules, so those
	// three packages' outputs come back, and none of the 27 others.
	p02 := second.ws.Projects[2]
	second.task(p02, "report", "mkdir -p report && cp dist/index.js report/index.js", func(t *graph.Task) {
		no := false
		t.Outputs, t.DependsOn, t.RemoteExec = []string{"report/**"}, []string{p02.Name + "#build"}, &no
	})
	second.ws.Index()
	report := p02.Name + "#report"
	s2, out := second.run(append(slices.Clone(builds), report), func(o *Options) { withPath(o); o.Download = graph.DownloadMinimal })
	if !s2.OK || strings.Count(statuses(s2), "=hit") != n || !strings.Contains(executors(s2), report+"@local") {
		t.Fatalf("second checkout: %s / %s\n%s", statuses(s2), executors(s2), out)
	}
	for _, row := range s2.Tasks {
		if row.TaskID != report && (row.CacheSource == nil || *row.CacheSource != "remote-action" || !row.OutputsRemote) {
			t.Fatalf("second checkout: %s came from %v (outputs remote: %v), want the engine's Action Cache, kept there",
				row.TaskID, row.CacheSource, row.OutputsRemote)
		}
	}
	landed := outputsOf(t, second)
	var needed []string
	for i := range 3 {
		needed = append(needed, "packages/"+buildbarntest.PackageName(i)+"/dist/index.js")
	}
	if !slices.Equal(slices.Sorted(maps.Keys(landed)), needed) {
		t.Fatalf("minimal: the outputs on disk are %v, want only %v", slices.Sorted(maps.Keys(landed)), needed)
	}
	for _, rel := range needed {
		if landed[rel] != want[rel] {
			t.Fatalf("%s: %q, the local build made %q", rel, landed[rel], want[rel])
		}
	}
	wantP02 := needed[2]
	if data, err := os.ReadFile(filepath.Join(second.root, "packages", p02.Name, "report", "index.js")); err != nil || string(data) != want[wantP02] {
		t.Fatalf("the local task read %q, %v", data, err)
	}
	if again := installResult(t, bb, second); !proto.Equal(first, again) {
		t.Fatalf("the install action ran again:\nfirst  %v\nsecond %v", first, again)
	}

	// A package.json the lockfile no longer matches: the frozen install fails, and so does the
	// task, remotely, with the install's log naming it; it never runs locally instead.
	stale := pnpmFixture(t, n, lock, bb.Addr, pathList)
	stale.write("packages/p00/package.json", `{"name": "@ws/p00", "version": "1.0.0", "main": "dist/index.js", "dependencies": {"ms": "2.1.2"}}`)
	notices = nil
	s3, out := stale.run([]string{"p00#build"}, func(o *Options) { withPath(o); o.Notice = func(m string) { notices = append(notices, m) } })
	if s3.OK || statuses(s3) != "p00#build=failed" || executors(s3) != "p00#build@remote" || len(notices) != 0 ||
		!strings.Contains(out, "the install action `pnpm install --frozen-lockfile`") || !strings.Contains(out, "ERR_PNPM_OUTDATED_LOCKFILE") {
		t.Fatalf("stale lockfile: %s %s %q\n%s", statuses(s3), executors(s3), notices, out)
	}
}

// installResult answers the Action Cache's entry of the install action of f's workspace, made
// as the run makes it.
func installResult(t *testing.T, bb *buildbarntest.Engine, f *fixture) *pb.ActionResult {
	t.Helper()
	var dirs []string
	for _, p := range f.ws.Projects {
		dirs = append(dirs, p.Dir)
	}
	spec, err := remoteexec.DetectInstall(f.root, dirs, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := &remoteexec.Installer{Spec: spec, Root: f.root, Platform: f.ws.Remote.Platform, Path: remoteCommandPath(f.ws.Remote), Home: remoteHome}
	a, _, _, _, err := in.Action()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient("passthrough:///"+bb.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := pb.NewActionCacheClient(conn).GetActionResult(ctx, &pb.GetActionResultRequest{ActionDigest: a.Digest.Proto()})
	if err != nil || res.GetExitCode() != 0 || len(res.GetOutputDirectories()) != n30Outputs(f) {
		t.Fatalf("the install action's cache entry: %v %v", res, err)
	}
	return res
}

// n30Outputs is the number of node_modules folders an install of f makes: the root's and each
// package's.
func n30Outputs(f *fixture) int { return len(f.ws.Projects) + 1 }
