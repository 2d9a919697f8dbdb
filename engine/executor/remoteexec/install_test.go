package remoteexec

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	pb "github.com/bazelbuild/remote-apis/build/bazel/remote/execution/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/vzn/vx/engine/executor"
	"github.com/vzn/vx/engine/executor/remoteexec/buildbarntest"
	"github.com/vzn/vx/internal/testkit"
)

// TestDetectInstall: the install action of a workspace: its manager from the lockfile (or the
// root's packageManager), its version from packageManager or this machine's manager, exactly the
// files the manager reads, and every node_modules folder as outputs; no lockfile, no install.
func TestDetectInstall(t *testing.T) {
	root := testkit.TempTree(t, map[string]string{
		"package.json":            `{"name": "r", "packageManager": "pnpm@10.34.8+sha512.abc"}`,
		"pnpm-lock.yaml":          "lockfileVersion: '9.0'\n",
		"pnpm-workspace.yaml":     "packages: ['packages/*']\n",
		".npmrc":                  "x=1\n",
		"patches/ms@2.1.3.patch":  "diff\n",
		"packages/a/package.json": "{}",
		"packages/a/src/a.js":     "source, not read by the manager\n",
		"packages/b/package.json": "{}",
		"packages/b/.npmrc":       "y=2\n",
		"README.md":               "no\n",
	})
	spec, err := DetectInstall(root, []string{".", "packages/a", "packages/b"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := []string{".npmrc", "package.json", "packages/a/package.json", "packages/b/.npmrc", "packages/b/package.json",
		"patches/ms@2.1.3.patch", "pnpm-lock.yaml", "pnpm-workspace.yaml"}
	if spec.Manager != "pnpm" || spec.Version != "10.34.8" || spec.Install != "pnpm install --frozen-lockfile" ||
		!slices.Equal(spec.Files, wantFiles) ||
		!slices.Equal(spec.Outputs, []string{"node_modules", "packages/a/node_modules", "packages/b/node_modules"}) {
		t.Fatalf("spec %+v", spec)
	}
	if sh := spec.Shell(); !strings.Contains(sh, "'10.34.8'") || !strings.HasSuffix(sh, "exec pnpm install --frozen-lockfile") {
		t.Fatalf("shell %q", sh)
	}

	npm := testkit.TempTree(t, map[string]string{"package.json": `{"name": "r"}`, "package-lock.json": "{}"})
	spec, err = DetectInstall(npm, []string{"."}, func(m string) (string, error) { return "11.1.0\n", nil })
	if err != nil || spec.Manager != "npm" || spec.Version != "11.1.0" || spec.Install != "npm ci" {
		t.Fatalf("npm: %+v %v", spec, err)
	}
	if _, err := DetectInstall(npm, nil, func(string) (string, error) { return "", errors.New("npm is not on PATH") }); err == nil ||
		!strings.Contains(err.Error(), "packageManager") {
		t.Fatalf("npm without a version: %v", err)
	}
	berry := testkit.TempTree(t, map[string]string{"package.json": `{"packageManager": "yarn@4.6.0"}`, "yarn.lock": "x"})
	if _, err := DetectInstall(berry, nil, nil); err == nil || !strings.Contains(err.Error(), "nodeLinker") {
		t.Fatalf("yarn PnP: %v", err)
	}
	testkit.WriteTree(t, berry, map[string]string{".yarnrc.yml": "nodeLinker: node-modules\n"})
	if spec, err := DetectInstall(berry, nil, nil); err != nil || spec.Install != "yarn install --immutable" {
		t.Fatalf("yarn node-modules: %+v %v", spec, err)
	}
	wrong := testkit.TempTree(t, map[string]string{"package.json": `{"packageManager": "pnpm"}`, "pnpm-lock.yaml": "x"})
	if _, err := DetectInstall(wrong, nil, nil); err == nil || !strings.Contains(err.Error(), "packageManager") {
		t.Fatalf("packageManager without a version: %v", err)
	}
	none := testkit.TempTree(t, map[string]string{"package.json": "{}"})
	if spec, err := DetectInstall(none, nil, nil); spec != nil || err != nil {
		t.Fatalf("no lockfile: %+v %v", spec, err)
	}
}

// TestGraftDir: a folder grafted by digest lands at its path, parents made as needed and kept
// sorted, the rest of the tree unchanged; a path the tree holds already, or under a file, is
// refused.
func TestGraftDir(t *testing.T) {
	file := Digest{Hash: strings.Repeat("a", 64), Size: 3}
	tree, err := BuildTree([]Input{{Path: "packages/b/build.js", Digest: file}, {Path: "packages/b/package.json", Digest: file}, {Path: "z.txt", Digest: file}})
	if err != nil {
		t.Fatal(err)
	}
	nm := Digest{Hash: strings.Repeat("b", 64), Size: 10}
	for _, p := range []string{"node_modules", "packages/b/node_modules", "packages/c/node_modules"} {
		if tree, err = GraftDir(tree, Graft{Path: p, Root: nm}); err != nil {
			t.Fatalf("graft %s: %v", p, err)
		}
	}
	want, err := BuildTree([]Input{{Path: "packages/b/build.js", Digest: file}, {Path: "packages/b/package.json", Digest: file}, {Path: "z.txt", Digest: file}})
	if err != nil {
		t.Fatal(err)
	}
	read := func(tr Tree, d Digest) *pb.Directory {
		msg := &pb.Directory{}
		if err := proto.Unmarshal(tr.Directories[d], msg); err != nil {
			t.Fatal(err)
		}
		return msg
	}
	root := read(tree, tree.Root)
	var names []string
	for _, d := range root.GetDirectories() {
		names = append(names, d.GetName())
	}
	if !slices.Equal(names, []string{"node_modules", "packages"}) || root.GetDirectories()[0].GetDigest().GetHash() != nm.Hash ||
		len(root.GetFiles()) != 1 || tree.Root == want.Root {
		t.Fatalf("root %v", root)
	}
	pk := root.GetDirectories()[1].GetDigest()
	packages := read(tree, Digest{Hash: pk.GetHash(), Size: pk.GetSizeBytes()})
	bd := packages.GetDirectories()[0].GetDigest()
	b := read(tree, Digest{Hash: bd.GetHash(), Size: bd.GetSizeBytes()})
	if len(packages.GetDirectories()) != 2 || len(b.GetFiles()) != 2 || b.GetDirectories()[0].GetName() != "node_modules" {
		t.Fatalf("packages %v, b %v", packages, b)
	}
	for _, bad := range []string{"node_modules", "z.txt/node_modules", "/abs", "../out"} {
		if _, err := GraftDir(tree, Graft{Path: bad, Root: nm}); err == nil {
			t.Errorf("graft %s: want a refusal", bad)
		}
	}
}

// writeFiles lays out files under root.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// installEngine starts a Buildbarn and answers an Executor on it whose PATH holds pnpm.
func installEngine(t *testing.T) (*buildbarntest.Engine, *Executor, context.Context) {
	t.Helper()
	bb := startBuildbarn(t)
	pnpmBin := buildbarntest.Pnpm(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	probe, err := grpc.NewClient("passthrough:///"+bb.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	waitServing(ctx, t, probe, bb)
	ex := pnpmExecutor(t, bb, pnpmBin)
	return bb, ex, ctx
}

// installer answers the install action of the workspace at root (projects in dirs) on ex.
func installer(t *testing.T, ex *Executor, root string, dirs []string) *Installer {
	t.Helper()
	spec, err := DetectInstall(root, dirs, func(m string) (string, error) {
		out, err := exec.Command(m, "--version").Output()
		return string(out), err
	})
	if err != nil || spec == nil {
		t.Fatalf("install of %s: %+v %v", root, spec, err)
	}
	return &Installer{Spec: spec, Root: root, Engine: ex.Engine, Client: ex.Client, CAS: ex.CAS, Platform: ex.Platform, Path: ex.Path, Home: ex.Home}
}

// TestBuildbarnInstallAction: on a real Buildbarn, a pnpm workspace's and an npm workspace's
// frozen installs run as Actions whose node_modules trees (pnpm's links kept) are grafted into a
// task's input root by digest: a node script there requires a sibling package through them and
// a registry package. A second installer is answered from the Action Cache. An install that
// fails fails the task with its log, naming the install action.
func TestBuildbarnInstallAction(t *testing.T) {
	bb, ex, ctx := installEngine(t)
	files := buildbarntest.PnpmWorkspace(3)
	root := testkit.TempTree(t, files)
	writeFiles(t, root, map[string]string{"pnpm-lock.yaml": buildbarntest.PnpmLockfile(t, strings.SplitN(ex.Path, ":", 2)[0], files)})
	dirs := []string{".", "packages/p00", "packages/p01", "packages/p02"}
	ex.Install = installer(t, ex, root, dirs)
	run := func(id, dir, command string, inputs []string) executor.Result {
		t.Helper()
		task := executor.Task{ID: id, Root: root, Dir: filepath.Join(root, dir), Command: command,
			Outputs: []string{"dist/**"}, InputFiles: inputs, Output: &logBuffer{}}
		res, err := ex.Run(ctx, task)
		if err != nil || !res.Passed() {
			t.Fatalf("%s: %+v %v\n%s\n%s", id, res, err, res.Log, bb.Logs())
		}
		return res
	}
	// p01 requires p00's dist (an upstream output, here as an input file) through its node_modules.
	writeFiles(t, root, map[string]string{"packages/p00/dist/index.js": "module.exports = {value: {name: 'p00', deps: {}}};\n"})
	res := run("p01#build", "packages/p01", "node build.js && test -L node_modules/@ws/p00 && ls -a ../../node_modules/.pnpm > dist/store.txt",
		[]string{"packages/p00/dist/index.js", "packages/p01/build.js", "packages/p01/package.json"})
	inst, err := ex.Install.Result(ctx)
	if err != nil || inst.Cached || len(inst.Grafts) != 4 || len(inst.Directories) != 0 {
		// Buildbarn names each folder's root Directory digest: no Tree is read here.
		t.Fatalf("install: %+v %v", inst, err)
	}
	if !strings.Contains(string(res.Log), "built p01") || len(res.RemoteOutputs) != 2 {
		t.Fatalf("p01#build: %s %+v", res.Log, res.RemoteOutputs)
	}
	out, _ := ex.CAS.Get(res.RemoteOutputs[0].Hash)
	if !strings.Contains(string(out), `"registry": true`) { // p01's registry package is is-number
		t.Fatalf("p01's dist: %s", out)
	}
	if !strings.Contains(string(out), `"@ws/p00": "p00<>"`) || !strings.Contains(string(out), `node_modules/.pnpm/is-number@7.0.0/node_modules/is-number/index.js`) {
		t.Fatalf("p01's dist does not come from its sibling and the registry through pnpm's links: %s", out)
	}

	// An engine that names no root Directory digest: the folders' Tree messages are read and give
	// the same digests.
	ar, err := ex.Client.cached(ctx, inst.Action)
	if err != nil || ar == nil {
		t.Fatalf("the install's result: %v %v", ar, err)
	}
	for _, d := range ar.GetOutputDirectories() {
		d.RootDirectoryDigest = nil
	}
	fromTrees := &Installed{}
	if err := ex.Install.grafts(ctx, ar, fromTrees); err != nil || !slices.Equal(fromTrees.Grafts, inst.Grafts) || len(fromTrees.Directories) == 0 {
		t.Fatalf("grafts from the Trees: %v\n%+v\nwant %+v", err, fromTrees.Grafts, inst.Grafts)
	}

	again := installer(t, ex, root, dirs)
	if inst2, err := again.Result(ctx); err != nil || !inst2.Cached || inst2.Action != inst.Action {
		t.Fatalf("second install: want an Action Cache hit of %s, got %+v %v", inst.Action.Hash, inst2, err)
	}

	// A lockfile the package.json files no longer match: the frozen install refuses it, and the
	// task fails with its log, naming the install action.
	writeFiles(t, root, map[string]string{"packages/p02/package.json": `{"name": "@ws/p02", "version": "1.0.0", "dependencies": {"ms": "2.1.2"}}`})
	ex.Install = installer(t, ex, root, dirs)
	task := executor.Task{ID: "p02#build", Root: root, Dir: filepath.Join(root, "packages/p02"), Command: "node build.js",
		Outputs: []string{"dist/**"}, InputFiles: []string{"packages/p02/build.js"}, Output: &logBuffer{}}
	res, err = ex.Run(ctx, task)
	if err != nil || res.Passed() || !strings.Contains(string(res.Log), "the install action `pnpm install --frozen-lockfile`") ||
		!strings.Contains(string(res.Log), "ERR_PNPM_OUTDATED_LOCKFILE") {
		t.Fatalf("failed install: want the task failed with the install's log, got exit %d %v\n%s", res.ExitCode, err, res.Log)
	}
}

// TestBuildbarnNpmInstallAction: an npm workspace's `npm ci` runs as the install action; its
// root node_modules (the workspace packages as links) is grafted, and a task requires a sibling
// and a registry package through it.
func TestBuildbarnNpmInstallAction(t *testing.T) {
	bb, ex, ctx := installEngine(t)
	files := map[string]string{
		"package.json":            `{"name": "r", "private": true, "workspaces": ["packages/*"]}`,
		"packages/a/package.json": `{"name": "a", "version": "1.0.0", "main": "index.js", "dependencies": {"ms": "2.1.3"}}`,
		"packages/a/index.js":     "module.exports = require('ms')('1h');\n",
		"packages/b/package.json": `{"name": "b", "version": "1.0.0", "dependencies": {"a": "1.0.0", "is-number": "7.0.0"}}`,
	}
	root := testkit.TempTree(t, files)
	lock := exec.Command("npm", "install", "--package-lock-only", "--no-audit", "--no-fund")
	lock.Dir = root
	if out, err := lock.CombinedOutput(); err != nil {
		t.Fatalf("npm install --package-lock-only: %v\n%s", err, out)
	}
	ex.Install = installer(t, ex, root, []string{".", "packages/a", "packages/b"})
	task := executor.Task{ID: "b#build", Root: root, Dir: filepath.Join(root, "packages/b"), Outputs: []string{"dist/**"},
		Command:    `mkdir -p dist && test -L ../../node_modules/a && node -e "console.log(require('a'), require('is-number')(5))" > dist/out.txt`,
		InputFiles: []string{"packages/a/index.js", "packages/b/package.json"}, Output: &logBuffer{}}
	res, err := ex.Run(ctx, task)
	if err != nil || !res.Passed() || len(res.RemoteOutputs) != 1 {
		t.Fatalf("b#build: %+v %v\n%s\n%s", res, err, res.Log, bb.Logs())
	}
	if out, _ := ex.CAS.Get(res.RemoteOutputs[0].Hash); string(out) != "3600000 true\n" {
		t.Fatalf("b's output %q", out)
	}
	if inst, _ := ex.Install.Result(ctx); inst.Cached || ex.Install.Spec.Install != "npm ci" {
		t.Fatalf("npm install: %+v", inst)
	}
}

// An install that cannot be made (no version to key it by) refuses every remote task as
// ErrRemoteUnavailable, before anything is sent: the run's one fallback warning, never a task
// run without its node_modules.
func TestInstallErrorRefusesTheTask(t *testing.T) {
	ex := &Executor{Install: &Installer{Err: errors.New("the version of pnpm is not known")}}
	res, err := ex.Run(context.Background(), executor.Task{ID: "a#build", Output: &logBuffer{}})
	if !errors.Is(err, executor.ErrRemoteUnavailable) || !strings.Contains(err.Error(), "node_modules: the version of pnpm") || res.Passed() {
		t.Fatalf("want ErrRemoteUnavailable naming the install, got %+v %v", res, err)
	}
}

// The install is detected once, when the first remote task asks: a workspace without a lockfile
// has none (nothing grafted), and a detection error is every task's refusal.
func TestInstallDetectedOnce(t *testing.T) {
	calls := 0
	none := &Installer{Detect: func() (*InstallSpec, error) { calls++; return nil, nil }}
	for range 2 {
		if inst, err := none.Result(context.Background()); inst != nil || err != nil {
			t.Fatalf("no lockfile: %+v %v", inst, err)
		}
	}
	bad := &Installer{Detect: func() (*InstallSpec, error) { calls++; return nil, errors.New("no version") }}
	for range 2 {
		if _, err := bad.Result(context.Background()); !errors.Is(err, executor.ErrRemoteUnavailable) {
			t.Fatalf("detection error: %v", err)
		}
	}
	if calls != 2 {
		t.Fatalf("Detect called %d times, want once per installer", calls)
	}
}
