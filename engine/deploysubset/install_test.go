package deploysubset

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vzn/vx/internal/testkit"
)

// The package managers the frozen installs run, installed once into the user's cache folder.
const (
	pnpmVersion  = "10.34.8"
	pnpm8Version = "8.15.9" // writes lockfileVersion 6.0
	yarn1Version = "1.22.22"
	berryVersion = "4.18.1"
	bunVersion   = "1.4.5"
)

// managerTools answers the folder the package managers are installed in (installing them the
// first time); the test is skipped, naming the tool, only when the npm registry is unreachable.
func managerTools(t *testing.T, tool string) string {
	t.Helper()
	registryReachable(t, tool)
	base, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "vx-test", "deploysubset-tools-2")
	toolsOnce.Do(func() {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "pnpm8", "bin", "pnpm.cjs")); err == nil {
			return
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			toolsErr = err
			return
		}
		cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", dir,
			"pnpm@"+pnpmVersion, "pnpm8@npm:pnpm@"+pnpm8Version, "yarn@"+yarn1Version, "@yarnpkg/cli-dist@"+berryVersion, "bun@"+bunVersion)
		if out, err := cmd.CombinedOutput(); err != nil {
			toolsErr = &installError{err, string(out)}
		}
	})
	if toolsErr != nil {
		t.Fatalf("install the package managers into %s: %v", dir, toolsErr)
	}
	return dir
}

var (
	toolsOnce sync.Once
	toolsErr  error
)

type installError struct {
	err error
	out string
}

func (e *installError) Error() string { return e.err.Error() + "\n" + e.out }

// registryReachable skips the test, naming the tool it needs, when npm is not installed or the
// npm registry does not answer.
func registryReachable(t *testing.T, tool string) {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skipf("npm is not installed, so %s cannot be", tool)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skipf("node is not installed, so %s cannot run", tool)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodHead, "https://registry.npmjs.org/ms", nil)
	transport := &http.Transport{Proxy: http.ProxyFromEnvironment, DisableKeepAlives: true}
	defer transport.CloseIdleConnections() // no connection outlives the check (goleak)
	resp, err := (&http.Client{Transport: transport}).Do(req)
	if err != nil {
		t.Skipf("the npm registry is unreachable (%v), so %s cannot install the fixture", err, tool)
	}
	resp.Body.Close()
}

// manager is how a test drives one package manager.
type manager struct {
	name     string
	lockfile string
	wsSpec   string            // the range a workspace dependency is written with
	extra    map[string]string // root files the manager needs
	install  []string          // writes the lockfile
	frozen   []string          // installs from the lockfile, refusing any change to it
	format   string            // text the generated lockfile holds, naming its format's version
}

func managers(tools string) map[string]manager {
	bin := func(n string) string { return filepath.Join(tools, "node_modules", ".bin", n) }
	yarn1 := filepath.Join(tools, "node_modules", "yarn", "bin", "yarn.js")
	berry := filepath.Join(tools, "node_modules", "@yarnpkg", "cli-dist", "bin", "yarn.js")
	pnpm8 := filepath.Join(tools, "node_modules", "pnpm8", "bin", "pnpm.cjs")
	return map[string]manager{
		"npm": {name: "npm", lockfile: "package-lock.json", wsSpec: "*",
			install: []string{"npm", "install", "--no-audit", "--no-fund"},
			frozen:  []string{"npm", "ci", "--no-audit", "--no-fund"}},
		"pnpm": {name: "pnpm", lockfile: "pnpm-lock.yaml", wsSpec: "workspace:*",
			extra:   map[string]string{"pnpm-workspace.yaml": "packages:\n  - apps/*\n  - packages/*\n"},
			install: []string{bin("pnpm"), "install"},
			frozen:  []string{bin("pnpm"), "install", "--frozen-lockfile"}},
		"npm-v2": {name: "npm", lockfile: "package-lock.json", wsSpec: "*",
			install: []string{"npm", "install", "--no-audit", "--no-fund", "--lockfile-version=2"},
			frozen:  []string{"npm", "ci", "--no-audit", "--no-fund"}, format: `"lockfileVersion": 2`},
		"pnpm8": {name: "pnpm", lockfile: "pnpm-lock.yaml", wsSpec: "workspace:*",
			extra:   map[string]string{"pnpm-workspace.yaml": "packages:\n  - apps/*\n  - packages/*\n"},
			install: []string{"node", pnpm8, "install"},
			frozen:  []string{"node", pnpm8, "install", "--frozen-lockfile"}, format: "lockfileVersion: '6.0'"},
		"yarn": {name: "yarn", lockfile: "yarn.lock", wsSpec: "*",
			install: []string{"node", yarn1, "install", "--non-interactive", "--no-progress"},
			frozen:  []string{"node", yarn1, "install", "--non-interactive", "--no-progress", "--frozen-lockfile"}},
		"yarn-berry": {name: "yarn-berry", lockfile: "yarn.lock", wsSpec: "workspace:*",
			extra:   map[string]string{".yarnrc.yml": "nodeLinker: node-modules\nenableTelemetry: false\nenableGlobalCache: true\n"},
			install: []string{"node", berry, "install"},
			frozen:  []string{"node", berry, "install", "--immutable"}},
		"bun": {name: "bun", lockfile: "bun.lock", wsSpec: "workspace:*",
			install: []string{bin("bun"), "install"},
			frozen:  []string{bin("bun"), "install", "--frozen-lockfile"}},
	}
}

// pjPeer adds peerDependencies to a package.json.
func pjPeer(doc string, peers map[string]string) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		panic(err)
	}
	m["peerDependencies"] = peers
	b, _ := json.MarshalIndent(m, "", "  ")
	return string(b) + "\n"
}

// msPatch adds an export to ms@2.1.3, so that a patched install is seen from the app.
const msPatch = `diff --git a/index.js b/index.js
--- a/index.js
+++ b/index.js
@@ -160,3 +160,4 @@ function plural(ms, msAbs, n, name) {
   var isPlural = msAbs >= n * 1.5;
   return Math.round(ms / n) + ' ' + name + (isPlural ? 's' : '');
 }
+module.exports.patchedByVx = true;
`

// leftPadPatch adds an export to left-pad@1.3.0, a dev-only dependency, so that a production
// prune leaves its patch without a package to apply to.
const leftPadPatch = `diff --git a/index.js b/index.js
--- a/index.js
+++ b/index.js
@@ -50,3 +50,4 @@ function leftPad (str, len, ch) {
   // pad ` + "`str`" + `!
   return pad + str;
 }
+module.exports.patchedByVx = true;
`

// fixture is a workspace of six projects: app depends on lib-a, which depends on lib-b (a
// transitive workspace dependency), on ms (patched under pnpm) and, for development only, on
// left-pad and the tooling package; other and lib-c, with kind-of, are not app's. lib-b asks for
// ms by a range holding < and >, and for resolve, which Yarn berry wraps in a builtin patch.
// lib-a has isarray as a peer and a devDependency, which pnpm, npm and bun install as a peer
// once production leaves the devDependencies out.
func fixture(m manager) map[string]string {
	pj := func(name string, deps, dev map[string]string, extra string) string {
		doc := map[string]any{"name": name, "version": "1.0.0", "main": "index.js"}
		if deps != nil {
			doc["dependencies"] = deps
		}
		if dev != nil {
			doc["devDependencies"] = dev
		}
		if extra != "" {
			doc["exports"] = extra
		}
		b, _ := json.MarshalIndent(doc, "", "  ")
		return string(b) + "\n"
	}
	root := map[string]any{"name": "fixture-root", "version": "0.0.0", "private": true}
	if m.name != "pnpm" {
		root["workspaces"] = []string{"apps/*", "packages/*"}
	}
	files := map[string]string{
		"apps/app/package.json": pj("app", map[string]string{"lib-a": m.wsSpec, "ms": "2.1.3"},
			map[string]string{"left-pad": "1.3.0", "tooling": m.wsSpec}, "./index.js"),
		"apps/app/index.js": `const ms = require("ms");
module.exports = { a: require("lib-a"), second: ms("1s"), patched: !!ms.patchedByVx };
`,
		"apps/other/package.json": pj("other", map[string]string{"lib-c": m.wsSpec, "left-pad": "1.3.0"}, nil, ""),
		"apps/other/index.js":     "module.exports = require('lib-c');\n",
		"packages/lib-a/package.json": pjPeer(pj("lib-a", map[string]string{"lib-b": m.wsSpec, "is-odd": "3.0.1"},
			map[string]string{"isarray": "2.0.5"}, ""), map[string]string{"isarray": "2.0.5"}),
		"packages/lib-a/index.js": "module.exports = require('lib-b') + ':' + require('is-odd')(3);\n",
		"packages/lib-b/package.json": pj("lib-b", map[string]string{"is-number": "7.0.0", "ms": ">= 2.1.0 < 3",
			"resolve": "1.22.8"}, nil, ""),
		"packages/lib-b/index.js":       "module.exports = require('is-number')(5) ? 'num' : 'nan';\n",
		"packages/lib-c/package.json":   pj("lib-c", map[string]string{"kind-of": "6.0.3"}, nil, ""),
		"packages/lib-c/index.js":       "module.exports = require('kind-of')(1);\n",
		"packages/tooling/package.json": pj("tooling", nil, nil, ""),
		"packages/tooling/index.js":     "module.exports = 'tooling';\n",
	}
	if m.name == "pnpm" {
		root["pnpm"] = map[string]any{"patchedDependencies": map[string]string{
			"ms@2.1.3": "patches/ms@2.1.3.patch", "left-pad@1.3.0": "patches/left-pad@1.3.0.patch"}}
		files["patches/ms@2.1.3.patch"] = msPatch
		files["patches/left-pad@1.3.0.patch"] = leftPadPatch
	}
	b, _ := json.MarshalIndent(root, "", "  ")
	files["package.json"] = string(b) + "\n"
	for k, v := range m.extra {
		files[k] = v
	}
	return files
}

// run runs argv in dir and fails the test with its output when it fails.
func run(t *testing.T, dir string, argv ...string) string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CI=true", "YARN_ENABLE_IMMUTABLE_INSTALLS=false", "DO_NOT_TRACK=1",
		"npm_config_update_notifier=false", "COREPACK_ENABLE_STRICT=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s in %s: %v\n%s", strings.Join(argv, " "), dir, err, out)
	}
	return string(out)
}

// copyTree copies the files under from into to, over what is there.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if err := os.MkdirAll(filepath.Dir(filepath.Join(to, rel)), 0o755); err != nil {
			return err
		}
		testkit.CopyFile(t, p, filepath.Join(to, rel), fi.Mode().Perm())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPruneFrozenInstall generates each fixture's lockfile by a real install, prunes it for app
// with --docker, then, as a Dockerfile does, installs json/ with the manager's frozen install,
// lays full/ over it and requires app; and the same with --production.
func TestPruneFrozenInstall(t *testing.T) {
	for _, name := range []string{"npm", "npm-v2", "pnpm", "pnpm8", "yarn", "yarn-berry", "bun"} {
		t.Run(name, func(t *testing.T) {
			tools := managerTools(t, name)
			m := managers(tools)[name]
			ws := testkit.TempTree(t, fixture(m))
			run(t, ws, m.install...)
			lock, err := os.ReadFile(filepath.Join(ws, m.lockfile))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"kind-of", "is-odd", "left-pad", m.format} {
				if !strings.Contains(string(lock), want) {
					t.Fatalf("the installed %s does not name %s:\n%s", m.lockfile, want, lock)
				}
			}
			t.Run("docker", func(t *testing.T) { checkDocker(t, ws, m) })
			t.Run("production", func(t *testing.T) { checkProduction(t, ws, m) })
		})
	}
}

const wantApp = `{"a":"num:true","second":1000,"patched":%s}`

func wantOutput(m manager) string {
	return strings.Replace(wantApp, "%s", map[bool]string{true: "true", false: "false"}[m.name == "pnpm"], 1)
}

func checkDocker(t *testing.T, ws string, m manager) {
	out := filepath.Join(t.TempDir(), "out")
	res, err := Run(context.Background(), Request{Root: ws, Projects: []string{"app"}, Docker: true, OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range res.Projects {
		names = append(names, p.Name)
	}
	if want := []string{"app", "lib-a", "lib-b", "tooling"}; !slices.Equal(names, want) {
		t.Fatalf("kept %v, want %v", names, want)
	}
	lock, err := os.ReadFile(filepath.Join(out, m.lockfile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(lock), "kind-of") || !strings.Contains(string(lock), "is-odd") ||
		!strings.Contains(string(lock), "left-pad") {
		t.Fatalf("pruned %s keeps kind-of or lacks is-odd or left-pad:\n%s", m.lockfile, lock)
	}
	for _, f := range []string{"json/apps/app/package.json", "json/" + m.lockfile, "full/apps/app/index.js",
		"full/packages/lib-b/index.js", "full/package.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("out/%s: %v", f, err)
		}
	}
	for _, f := range []string{"json/apps/app/index.js", "full/apps/other", "full/packages/lib-c", "full/node_modules"} {
		if _, err := os.Stat(filepath.Join(out, f)); err == nil {
			t.Errorf("out/%s is written, want it left out", f)
		}
	}
	image := t.TempDir()
	copyTree(t, filepath.Join(out, "json"), image)
	run(t, image, m.frozen...)
	copyTree(t, filepath.Join(out, "full"), image)
	got := strings.TrimSpace(run(t, filepath.Join(image, "apps", "app"), "node", "-e",
		`process.stdout.write(JSON.stringify(require("app")))`))
	if got != wantOutput(m) {
		t.Fatalf("require(\"app\") = %s, want %s", got, wantOutput(m))
	}
}

func checkProduction(t *testing.T, ws string, m manager) {
	out := filepath.Join(t.TempDir(), "out")
	res, err := Run(context.Background(), Request{Root: ws, Projects: []string{"app"}, Production: true, OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Projects) != 3 {
		t.Fatalf("kept %v, want app, lib-a and lib-b", res.Projects)
	}
	lock, err := os.ReadFile(filepath.Join(out, m.lockfile))
	if err != nil {
		t.Fatal(err)
	}
	// pnpm's patchedDependencies stay whole: they must match the root package.json's.
	if strings.Contains(withoutSection(string(lock), "patchedDependencies:"), "left-pad") ||
		strings.Contains(string(lock), "tooling") {
		t.Fatalf("pruned %s in production keeps a dev dependency:\n%s", m.lockfile, lock)
	}
	// isarray, lib-a's peer, is installed as one by npm, pnpm and bun; Yarn installs no peer.
	peerInstalled := m.name != "yarn" && m.name != "yarn-berry"
	if got := hasEntry(string(lock), "isarray"); got != peerInstalled {
		t.Fatalf("pruned %s in production: isarray kept = %v, want %v:\n%s", m.lockfile, got, peerInstalled, lock)
	}
	run(t, out, m.frozen...)
	got := strings.TrimSpace(run(t, filepath.Join(out, "apps", "app"), "node", "-e",
		`process.stdout.write(JSON.stringify(require("app")))`))
	if got != wantOutput(m) {
		t.Fatalf("require(\"app\") = %s, want %s", got, wantOutput(m))
	}
}

// withoutSection answers a YAML document without the top-level section that starts with head.
func withoutSection(doc, head string) string {
	var out []string
	in := false
	for _, l := range strings.Split(doc, "\n") {
		if l != "" && l[0] != ' ' {
			in = l == head
		}
		if !in {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// hasEntry reports whether a lockfile of any of the five formats holds a package entry for name.
func hasEntry(lock, name string) bool {
	for _, l := range strings.Split(lock, "\n") {
		t := strings.TrimSpace(l)
		for _, p := range []string{name + "@", "/" + name + "@", `"` + name + "@", `'` + name + "@", `"` + name + `": [`, `"node_modules/` + name + `"`} {
			if strings.HasPrefix(t, p) && (strings.HasSuffix(t, ":") || strings.HasSuffix(t, "{") || strings.Contains(t, "[")) {
				return true
			}
		}
	}
	return false
}
