package remoteexec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vzn/vx/engine/executor"
	"github.com/vzn/vx/engine/executor/remoteexec/buildbarntest"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/remote"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/internal/testkit"
)

// BenchmarkBuildbarnInstall measures the install action of the generated 30-package pnpm
// workspace on a real Buildbarn, side by side with the same install on this machine:
//   - cold: an Action the Action Cache does not hold (the workspace's .npmrc gets a new comment
//     each iteration), run on the worker and its node_modules trees uploaded;
//   - warm: the same Action again, from a new installer (a new run): one GetActionResult;
//   - local: `pnpm install --frozen-lockfile` here, node_modules removed before each iteration.
//
// The first install of the setup (the worker's pnpm store as the bench found it) is logged.
func BenchmarkBuildbarnInstall(b *testing.B) {
	bb := buildbarntest.Start(b)
	pnpmBin := buildbarntest.Pnpm(b)
	files := buildbarntest.PnpmWorkspace(30)
	files["pnpm-lock.yaml"] = buildbarntest.PnpmLockfile(b, pnpmBin, files)
	root := testkit.TempTree(b, files)
	ex := pnpmExecutor(b, bb, pnpmBin)
	var dirs []string
	for i := range 30 {
		dirs = append(dirs, "packages/"+buildbarntest.PackageName(i))
	}
	ctx := context.Background()
	start := time.Now()
	benchInstall(b, ctx, ex, root, dirs, 0, true)
	b.Logf("first install (setup; engine just started, worker's pnpm store as found): %v", time.Since(start))

	b.Run("cold", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if inst := benchInstall(b, ctx, ex, root, dirs, i+1, false); inst.Cached {
				b.Fatal("a cold install was answered from the Action Cache")
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		for b.Loop() {
			if inst := benchInstall(b, ctx, ex, root, dirs, 0, false); !inst.Cached {
				b.Fatal("a warm install was not answered from the Action Cache")
			}
		}
	})
	b.Run("local", func(b *testing.B) {
		local := testkit.TempTree(b, files)
		for b.Loop() {
			if err := os.RemoveAll(filepath.Join(local, "node_modules")); err != nil {
				b.Fatal(err)
			}
			for _, d := range dirs {
				_ = os.RemoveAll(filepath.Join(local, d, "node_modules"))
			}
			buildbarntest.PnpmRun(b, pnpmBin, local, "install", "--frozen-lockfile")
		}
	})
}

// pnpmExecutor answers an Executor on bb whose PATH holds pnpm (from pnpmBin), closed with tb.
func pnpmExecutor(tb testing.TB, bb *buildbarntest.Engine, pnpmBin string) *Executor {
	tb.Helper()
	s, err := remote.Resolve(&graph.RemoteCache{URL: "grpc://" + bb.Addr}, func(string) string { return "" }, "")
	if err != nil {
		tb.Fatal(err)
	}
	engine, err := remote.DialREAPI(s)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(engine.Close)
	return &Executor{Engine: engine, Client: NewClient(engine.Conn(), engine.Instance(), engine.Metadata(), 30*time.Second),
		CAS: store.NewCAS(tb.TempDir()), Platform: map[string]string{"OSFamily": "linux"},
		Path: pnpmBin + ":/usr/local/bin:/usr/bin:/bin", Home: "/tmp"}
}

// benchInstall runs the install action of root with the .npmrc comment of iteration i, from a new
// installer; wait retries while the engine has no worker yet.
func benchInstall(b *testing.B, ctx context.Context, ex *Executor, root string, dirs []string, i int, wait bool) *Installed {
	if err := os.WriteFile(filepath.Join(root, ".npmrc"), fmt.Appendf(nil, "auto-install-peers=false\n# %d\n", i), 0o644); err != nil {
		b.Fatal(err)
	}
	spec, err := DetectInstall(root, append([]string{"."}, dirs...), nil)
	if err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		in := &Installer{Spec: spec, Root: root, Engine: ex.Engine, Client: ex.Client, CAS: ex.CAS, Platform: ex.Platform, Path: ex.Path, Home: ex.Home}
		inst, err := in.Result(ctx)
		if wait && errors.Is(err, executor.ErrRemoteUnavailable) && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond) // the worker has not registered its platform yet
			continue
		}
		if err != nil || inst.Failed {
			b.Fatalf("install: %v %+v", err, inst)
		}
		return inst
	}
}
