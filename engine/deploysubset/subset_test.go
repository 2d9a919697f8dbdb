package deploysubset

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/vxerr"
	"github.com/vzn/vx/internal/testkit"
)

// npmWorkspace is a workspace with a hand-written package-lock.json: web depends on lib
// (workspace) and on b@2, installed under web's own node_modules since the root holds b@1 for
// api; a@1 depends on c, nested under a, and has p as an optional peer; api is not web's; the
// root depends on the workspace package cfg.
func npmWorkspace() map[string]string {
	lock := map[string]any{
		"name": "root", "lockfileVersion": 3, "requires": true,
		"packages": map[string]any{
			"":                              map[string]any{"name": "root", "workspaces": []string{"apps/*", "packages/*"}, "devDependencies": map[string]string{"d": "1", "cfg": "*"}},
			"packages/cfg":                  map[string]any{"name": "cfg"},
			"node_modules/cfg":              map[string]any{"resolved": "packages/cfg", "link": true},
			"apps/web":                      map[string]any{"name": "web", "dependencies": map[string]string{"lib": "*", "b": "2"}, "devDependencies": map[string]string{"e": "1"}},
			"apps/api":                      map[string]any{"name": "api", "dependencies": map[string]string{"b": "1"}},
			"packages/lib":                  map[string]any{"name": "lib", "dependencies": map[string]string{"a": "1"}},
			"node_modules/web":              map[string]any{"resolved": "apps/web", "link": true},
			"node_modules/api":              map[string]any{"resolved": "apps/api", "link": true},
			"node_modules/lib":              map[string]any{"resolved": "packages/lib", "link": true},
			"node_modules/a":                map[string]any{"version": "1.0.0", "dependencies": map[string]string{"c": "2"}, "peerDependencies": map[string]string{"p": "1"}, "peerDependenciesMeta": map[string]any{"p": map[string]bool{"optional": true}}},
			"node_modules/a/node_modules/c": map[string]any{"version": "2.0.0"},
			"node_modules/c":                map[string]any{"version": "1.0.0"},
			"node_modules/b":                map[string]any{"version": "1.0.0"},
			"apps/web/node_modules/b":       map[string]any{"version": "2.0.0"},
			"node_modules/d":                map[string]any{"version": "1.0.0", "dev": true},
			"node_modules/e":                map[string]any{"version": "1.0.0", "dev": true},
			"node_modules/p":                map[string]any{"version": "1.0.0"},
		},
	}
	data, _ := json.MarshalIndent(lock, "", "  ")
	return map[string]string{
		"package.json":              `{"name": "root", "workspaces": ["apps/*", "packages/*"], "devDependencies": {"d": "1", "cfg": "*"}}`,
		"packages/cfg/package.json": `{"name": "cfg"}`,
		"package-lock.json":         string(data),
		"apps/web/package.json":     "{\n  \"name\": \"web\",\n  \"dependencies\": {\"lib\": \"*\", \"b\": \"2\"},\n  \"devDependencies\": {\"e\": \"1\"},\n  \"main\": \"index.js\"\n}\n",
		"apps/web/index.js":         "module.exports = 1\n",
		"apps/web/node_modules/x/y": "installed, never copied\n",
		"apps/api/package.json":     `{"name": "api", "dependencies": {"b": "1"}}`,
		"packages/lib/package.json": `{"name": "lib", "dependencies": {"a": "1"}}`,
		".npmrc":                    "fund=false\n",
		".gitignore":                "node_modules\n",
		"turbo.json":                "{}\n",
	}
}

// lockPaths answers the "packages" keys of a package-lock.json, sorted.
func lockPaths(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Packages map[string]json.RawMessage `json:"packages"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range doc.Packages {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func TestNpmKeepsWhatNodeResolves(t *testing.T) {
	ws := testkit.TempTree(t, npmWorkspace())
	out := filepath.Join(t.TempDir(), "out")
	if _, err := Run(context.Background(), Request{Root: ws, Projects: []string{"web"}, OutDir: out}); err != nil {
		t.Fatal(err)
	}
	want := []string{"", "apps/web", "apps/web/node_modules/b", "node_modules/a", "node_modules/a/node_modules/c",
		"node_modules/cfg", "node_modules/d", "node_modules/e", "node_modules/lib", "node_modules/web",
		"packages/cfg", "packages/lib"}
	if got := lockPaths(t, filepath.Join(out, "package-lock.json")); !slices.Equal(got, want) {
		t.Fatalf("kept %q\nwant %q", got, want)
	}
	for _, f := range []string{"apps/web/index.js", "packages/lib/package.json", ".npmrc", ".gitignore", "package.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	for _, f := range []string{"apps/api", "apps/web/node_modules", "turbo.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err == nil {
			t.Errorf("%s is written, want it left out", f)
		}
	}
}

func TestProductionLeavesOutDevDependencies(t *testing.T) {
	ws := testkit.TempTree(t, npmWorkspace())
	out := filepath.Join(t.TempDir(), "out")
	if _, err := Run(context.Background(), Request{Root: ws, Projects: []string{"web"}, OutDir: out, Production: true}); err != nil {
		t.Fatal(err)
	}
	got := lockPaths(t, filepath.Join(out, "package-lock.json"))
	if slices.Contains(got, "node_modules/d") || slices.Contains(got, "node_modules/e") {
		t.Fatalf("production keeps a dev dependency: %q", got)
	}
	manifest, err := os.ReadFile(filepath.Join(out, "apps/web/package.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"name\": \"web\",\n  \"dependencies\": {\"lib\": \"*\", \"b\": \"2\"},\n  \"main\": \"index.js\"\n}\n"
	if string(manifest) != want {
		t.Fatalf("production manifest:\n%s\nwant:\n%s", manifest, want)
	}
	lock, _ := os.ReadFile(filepath.Join(out, "package-lock.json"))
	if strings.Contains(string(lock), "devDependencies") {
		t.Fatalf("production lockfile keeps an importer's devDependencies:\n%s", lock)
	}
}

func TestDockerLayout(t *testing.T) {
	ws := testkit.TempTree(t, npmWorkspace())
	out := filepath.Join(t.TempDir(), "out")
	if _, err := Run(context.Background(), Request{Root: ws, Projects: []string{"web"}, OutDir: out, Docker: true}); err != nil {
		t.Fatal(err)
	}
	var files []string
	err := filepath.Walk(out, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			rel, _ := filepath.Rel(out, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	want := []string{"full/.gitignore", "full/.npmrc", "full/apps/web/index.js", "full/apps/web/package.json",
		"full/package.json", "full/packages/cfg/package.json", "full/packages/lib/package.json", "json/.npmrc",
		"json/apps/web/package.json", "json/package-lock.json", "json/package.json", "json/packages/cfg/package.json",
		"json/packages/lib/package.json", "package-lock.json"}
	if !slices.Equal(files, want) {
		t.Fatalf("wrote %q\nwant %q", files, want)
	}
}

// refused runs a prune that must be refused as a usage error naming want, writing nothing.
func refused(t *testing.T, files map[string]string, projects []string, want string) {
	t.Helper()
	ws := testkit.TempTree(t, files)
	before, _ := os.ReadDir(filepath.Join(ws, DefaultOutDir))
	_, err := Run(context.Background(), Request{Root: ws, Projects: projects})
	var usage *vxerr.UsageError
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v, want one line naming %q", err, want)
	}
	if after, _ := os.ReadDir(filepath.Join(ws, DefaultOutDir)); len(after) != len(before) {
		t.Fatalf("a refused prune wrote into out/: %v", after)
	}
}

func TestRefusals(t *testing.T) {
	base := npmWorkspace()
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range base {
			m[a] = b
		}
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	t.Run("unknown project", func(t *testing.T) {
		refused(t, base, []string{"web", "wbe"}, `no workspace package is named "wbe" (did you mean web?)`)
	})
	t.Run("npm v1", func(t *testing.T) {
		refused(t, with("package-lock.json", `{"lockfileVersion": 1, "dependencies": {}}`), []string{"web"},
			"cannot prune package-lock.json: lockfileVersion 1")
	})
	t.Run("pnpm v5", func(t *testing.T) {
		refused(t, with("pnpm-lock.yaml", "lockfileVersion: 5.4\nimporters: {}\n"), []string{"web"},
			`cannot prune pnpm-lock.yaml: lockfileVersion "5.4"`)
	})
	t.Run("bun.lockb", func(t *testing.T) {
		m := with("package-lock.json", "")
		m["bun.lockb"] = "\x00binary"
		refused(t, m, []string{"web"}, "cannot prune bun.lockb")
	})
	t.Run("no lockfile", func(t *testing.T) {
		refused(t, with("package-lock.json", ""), []string{"web"}, "no lockfile")
	})
	t.Run("broken yarn.lock", func(t *testing.T) {
		m := with("package-lock.json", "")
		m["yarn.lock"] = "# yarn lockfile v1\n\nnot an entry\n"
		refused(t, m, []string{"web"}, "cannot prune yarn.lock")
	})
	t.Run("out not empty", func(t *testing.T) {
		refused(t, with("out/keep.txt", "mine\n"), []string{"web"}, "is not empty")
	})
}

// pnpm6Lock is a lockfileVersion 6.0 lockfile: web depends on lib (a link) and on a, whose
// dependency b carries a peer suffix; api's c goes.
const pnpm6Lock = `lockfileVersion: '6.0'

importers:
  .: {}
  apps/web:
    dependencies:
      a:
        specifier: ^1.0.0
        version: 1.0.0
      lib:
        specifier: workspace:*
        version: link:../../packages/lib
  apps/api:
    dependencies:
      c:
        specifier: ^1.0.0
        version: 1.0.0
  packages/lib: {}

packages:
  /a@1.0.0:
    resolution: {integrity: sha512-a}
    dependencies:
      b: 2.0.0(a@1.0.0)
    dev: false
  /b@2.0.0(a@1.0.0):
    resolution: {integrity: sha512-b}
    dev: false
  /c@1.0.0:
    resolution: {integrity: sha512-c}
    dev: false
`

func TestPnpm6(t *testing.T) {
	files := npmWorkspace()
	delete(files, "package-lock.json")
	files["pnpm-lock.yaml"] = pnpm6Lock
	files["pnpm-workspace.yaml"] = "packages:\n  - apps/*\n  - packages/*\n"
	ws := testkit.TempTree(t, files)
	out := filepath.Join(t.TempDir(), "out")
	res, err := Run(context.Background(), Request{Root: ws, Projects: []string{"web"}, OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	lock, err := os.ReadFile(filepath.Join(out, "pnpm-lock.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/a@1.0.0:", "/b@2.0.0(a@1.0.0):", "apps/web:", "packages/lib:"} {
		if !strings.Contains(string(lock), want) {
			t.Errorf("pruned lockfile lacks %s", want)
		}
	}
	if strings.Contains(string(lock), "/c@1.0.0") || strings.Contains(string(lock), "apps/api") {
		t.Errorf("pruned lockfile keeps api's:\n%s", lock)
	}
	if res.Packages != 2 || res.Total != 3 {
		t.Errorf("kept %d of %d packages, want 2 of 3", res.Packages, res.Total)
	}
}

func TestDropTopKey(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"{\n  \"a\": 1,\n  \"devDependencies\": {\"x\": \"1\"},\n  \"b\": 2\n}\n", "{\n  \"a\": 1,\n  \"b\": 2\n}\n"},
		{"{\n  \"a\": 1,\n  \"devDependencies\": {}\n}\n", "{\n  \"a\": 1\n}\n"},
		{"{\"devDependencies\": {}, \"b\": 2}", "{\"b\": 2}"},
		{"{\"devDependencies\": {}}", "{}"},
		{"{\"a\": {\"devDependencies\": 1}}", "{\"a\": {\"devDependencies\": 1}}"},
	} {
		got, _, err := dropTopKey([]byte(c.in), "devDependencies")
		if err != nil || string(got) != c.want {
			t.Errorf("dropTopKey(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
		if !json.Valid(got) {
			t.Errorf("dropTopKey(%q) = %q, not JSON", c.in, got)
		}
	}
}

// TestGitListsTheSources checks that in a git repository a project's files are the ones git
// lists, tracked and untracked, never ignored ones, even in a folder named like a pathspec.
func TestGitListsTheSources(t *testing.T) {
	files := npmWorkspace()
	files[".gitignore"] = "node_modules\ndist\n"
	files["apps/web/dist/bundle.js"] = "built\n"
	files["apps/web/[id]/page.js"] = "route\n"
	ws := testkit.TempRepo(t, files)
	if err := os.WriteFile(filepath.Join(ws, "apps/web/new.js"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(ws, "apps/web/index.js")); err != nil { // deleted, not committed
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	if _, err := Run(context.Background(), Request{Root: ws, Projects: []string{"web"}, OutDir: out}); err != nil {
		t.Fatal(err)
	}
	got, err := walkFiles(out, "apps/web", "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"apps/web/[id]/page.js", "apps/web/new.js", "apps/web/package.json"}
	if !slices.Equal(got, want) {
		t.Fatalf("copied %q\nwant %q", got, want)
	}
}

// bunLockText is a bun.lock: web depends on a, whose optional peer p only api installs, and on
// b, which has its own c nested under it while the hoisted c is api's.
const bunLockText = `{
  "lockfileVersion": 1,
  "workspaces": {
    "": {
      "name": "root",
    },
    "apps/api": {
      "name": "api",
      "dependencies": {
        "c": "1.0.0",
        "p": "1.0.0",
      },
    },
    "apps/web": {
      "name": "web",
      "dependencies": {
        "a": "1.0.0",
        "b": "1.0.0",
      },
    },
  },
  "packages": {
    "a": ["a@1.0.0", "", { "peerDependencies": { "p": "1" }, "optionalPeers": ["p"] }, "sha512-a"],

    "api": ["api@workspace:apps/api"],

    "b": ["b@1.0.0", "", { "dependencies": { "c": "2.0.0" } }, "sha512-b"],

    "c": ["c@1.0.0", "", {}, "sha512-c1"],

    "p": ["p@1.0.0", "", {}, "sha512-p"],

    "web": ["web@workspace:apps/web"],

    "b/c": ["c@2.0.0", "", {}, "sha512-c2"],
  }
}
`

func TestBunKeepsWhatBunResolves(t *testing.T) {
	ws := testkit.TempTree(t, map[string]string{
		"package.json":          `{"name": "root", "workspaces": ["apps/*"]}`,
		"bun.lock":              bunLockText,
		"apps/web/package.json": `{"name": "web", "dependencies": {"a": "1.0.0", "b": "1.0.0"}}`,
		"apps/api/package.json": `{"name": "api", "dependencies": {"c": "1.0.0", "p": "1.0.0"}}`,
	})
	out := filepath.Join(t.TempDir(), "out")
	if _, err := Run(context.Background(), Request{Root: ws, Projects: []string{"web"}, OutDir: out}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(out, "bun.lock"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "lockfileVersion": 1,
  "workspaces": {
    "": {
      "name": "root",
    },
    "apps/web": {
      "name": "web",
      "dependencies": {
        "a": "1.0.0",
        "b": "1.0.0",
      },
    },
  },
  "packages": {
    "a": ["a@1.0.0", "", { "peerDependencies": { "p": "1" }, "optionalPeers": ["p"] }, "sha512-a"],

    "b": ["b@1.0.0", "", { "dependencies": { "c": "2.0.0" } }, "sha512-b"],

    "web": ["web@workspace:apps/web"],

    "b/c": ["c@2.0.0", "", {}, "sha512-c2"],
  }
}
`
	if string(got) != want {
		t.Fatalf("pruned bun.lock:\n%s\nwant:\n%s", got, want)
	}
}

// TestFailedWriteLeavesNothing checks that a write failing part way leaves neither the output
// folder nor the folder it was written in.
func TestFailedWriteLeavesNothing(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	p := plan{"a/first.txt": {data: []byte("x")}, "b/second.txt": {src: filepath.Join(parent, "gone")}}
	if _, err := p.writeWhole(out); err == nil {
		t.Fatal("a plan copying a missing file was written")
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Fatalf("a failed write left %v", entries)
	}
}

// TestWalkSkipsPipes checks that outside git a named pipe in a project is not copied (opening
// it would block the prune).
func TestWalkSkipsPipes(t *testing.T) {
	files := npmWorkspace()
	ws := testkit.TempTree(t, files)
	if err := mkfifo(filepath.Join(ws, "apps/web/pipe")); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	got, err := walkFiles(ws, "apps/web", "")
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(got, "apps/web/pipe") {
		t.Fatalf("walk lists the pipe: %q", got)
	}
}
