package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/vzn/vx/engine/configlock"
	"github.com/vzn/vx/internal/testkit"
)

// frozenTree is a workspace of n packages, each depending on the one before, as vx lock and
// vx run --frozen see it.
func frozenTree(t testing.TB, n int) string {
	files := map[string]string{
		"vx.workspace.ts": "export default { projects: ['packages/*'], cacheScope: 'pr-1', tasks: { build: { command: 'cp -R src dist', dependsOn: ['^build'], outputs: ['dist/**'], timeout: '1m', exec: { retries: 1, env: { K: { secret: 'FROZEN_SECRET' } } } } } }\n",
		"package.json":    `{"name":"root","private":true}`,
	}
	for i := range n {
		deps := ""
		if i > 0 {
			deps = fmt.Sprintf(`,"dependencies":{"p%03d":"*"}`, i-1)
		}
		files[fmt.Sprintf("packages/p%03d/package.json", i)] = fmt.Sprintf(`{"name":"p%03d","scripts":{"build":"x"}%s}`, i, deps)
		files[fmt.Sprintf("packages/p%03d/src/a.js", i)] = "1\n"
	}
	return testkit.TempTree(t, files)
}

// lockFrozen writes vx.lock with the frozen workspace of root, as vx lock does.
func lockFrozen(t testing.TB, root string) {
	t.Helper()
	ws, fr, err := NewLoader(Options{Dir: root, Version: "test"}).Freeze(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := configlock.WriteFrozen(ws, fr); err != nil {
		t.Fatal(err)
	}
}

// TestFrozenIsTheEvaluatedWorkspace: the workspace vx.lock keeps, read in another checkout (another
// absolute root) with no config evaluated, is the evaluated one, field for field.
func TestFrozenIsTheEvaluatedWorkspace(t *testing.T) {
	root := frozenTree(t, 5)
	lockFrozen(t, root)
	moved := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Rename(root, moved); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string { return map[string]string{"FROZEN_SECRET": "s3cr3t"}[k] }
	want, err := NewLoader(Options{Dir: moved, Version: "test", Getenv: env}).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got, err := NewLoader(Options{Dir: moved, Version: "test", Getenv: env}).LoadFrozen()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the frozen workspace differs from the evaluated one:\nfrozen:    %+v\nevaluated: %+v", got, want)
	}
	if got.CacheScope != "pr-1" || len(got.Secrets) != 1 || got.Secrets[0] != "s3cr3t" {
		t.Fatalf("frozen: scope %q, secrets %q", got.CacheScope, got.Secrets)
	}
	if _, err := NewLoader(Options{Dir: moved, Version: "other"}).LoadFrozen(); err == nil {
		t.Fatal("another vx read the frozen workspace")
	}
}

// TestFrozenRefusesAWorkspaceItsTasksDoNotRecord: a lock whose reviewed fingerprints say one
// command while its encoded workspace runs another is refused, naming the task and field.
func TestFrozenRefusesAWorkspaceItsTasksDoNotRecord(t *testing.T) {
	root := frozenTree(t, 2)
	lockFrozen(t, root)
	f, _, err := configlock.Read(root)
	if err != nil {
		t.Fatal(err)
	}
	fp := f.Tasks["p001#build"]
	fp.Command = "cp -R src dist # reviewed"
	f.Tasks["p001#build"] = fp
	data, err := configlock.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, configlock.FileName), data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = NewLoader(Options{Dir: root, Version: "test"}).LoadFrozen()
	want := "vx.lock: --frozen: its workspace is not the one its tasks record (p001#build command; run vx lock)"
	if err == nil || err.Error() != want {
		t.Fatalf("LoadFrozen = %v, want %q", err, want)
	}
}

// BenchmarkFrozenLoad compares getting the workspace of 300 packages three ways, each as a new
// process would: from vx.lock (--frozen), from the loader's kept workspace (resolved.gob), and by
// evaluating the config. The figures are in docs/performance.md.
func BenchmarkFrozenLoad(b *testing.B) {
	root := frozenTree(b, 300)
	if err := os.MkdirAll(filepath.Join(root, ".vx"), 0o755); err != nil {
		b.Fatal(err)
	}
	lockFrozen(b, root)
	load := func(b *testing.B) {
		if _, err := NewLoader(Options{Dir: root, Version: "test"}).Load(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("frozen", func(b *testing.B) {
		for b.Loop() {
			if _, err := NewLoader(Options{Dir: root, Version: "test"}).LoadFrozen(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("kept", func(b *testing.B) {
		load(b)
		for b.Loop() {
			load(b)
		}
	})
	b.Run("evaluated", func(b *testing.B) {
		for b.Loop() {
			if err := os.RemoveAll(filepath.Join(root, ".vx", "config")); err != nil {
				b.Fatal(err)
			}
			load(b)
		}
	})
}
