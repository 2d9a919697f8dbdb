package npm_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/internal/testkit"
)

// typescriptVersion is the TypeScript the test type-checks configs with: pinned, so that a new
// release cannot change what the test accepts. 7.x is the native compiler (itself a shim and
// platform packages, as vx is).
const typescriptVersion = "7.0.2"

// platforms are the npm platforms vx publishes a binary for (process.platform-process.arch).
var platforms = []string{"linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "win32-x64", "win32-arm64"}

// hostPlatform is this machine's npm platform.
func hostPlatform() string {
	os := runtime.GOOS
	if os == "windows" {
		os = "win32"
	}
	arch := runtime.GOARCH
	if arch == "amd64" {
		arch = "x64"
	}
	return os + "-" + arch
}

// run runs name with args in dir and returns its combined output; a failure ends the test.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	out, err := runErr(dir, env, name, args...)
	if err != nil {
		t.Fatalf("%s %s (in %s): %v\n%s", name, strings.Join(args, " "), dir, err, out)
	}
	return out
}

func runErr(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// tarEntry is one file of a packed tarball.
type tarEntry struct {
	mode int64
	data []byte
}

// readTarball reads every file of an npm tarball, by its path inside the package.
func readTarball(t *testing.T, path string) map[string]tarEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tr := tar.NewReader(gz)
	files := map[string]tarEntry{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		name := strings.TrimPrefix(h.Name, "package/")
		e := tarEntry{mode: h.Mode}
		if name == "package.json" {
			if e.data, err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
		files[name] = e
	}
	return files
}

// manifest is the part of a package.json the test checks.
type manifest struct {
	Name                 string            `json:"name"`
	Version              string            `json:"version"`
	License              string            `json:"license"`
	OS                   []string          `json:"os"`
	CPU                  []string          `json:"cpu"`
	PreferUnplugged      bool              `json:"preferUnplugged"`
	Bin                  map[string]string `json:"bin"`
	Scripts              map[string]string `json:"scripts"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
	PeerDependencies     map[string]string `json:"peerDependencies"`
}

// packed is what npm/build.sh made: the tarballs by package name, in publish order.
type packed struct {
	dir      string
	version  string
	order    []string          // package names, in the order to publish
	tarballs map[string]string // package name → tarball path
}

// build runs npm/build.sh into a temporary folder and checks every tarball it packed. Where
// $VX_NPM_DIST names the folder npm/build.sh has just filled (.ci/run builds it before the tests),
// those tarballs are taken instead of building all six platforms a second time.
func build(t *testing.T) packed {
	t.Helper()
	out := os.Getenv("VX_NPM_DIST")
	if out == "" {
		out = t.TempDir()
		began := time.Now()
		run(t, ".", nil, "bash", "build.sh", "--out", out)
		t.Logf("npm/build.sh (six platforms built, eight packages packed) in %s", time.Since(began).Round(time.Millisecond))
	} else {
		t.Logf("the packages npm/build.sh made in $VX_NPM_DIST (%s)", out)
	}
	order, err := os.ReadFile(filepath.Join(out, "publish-order.txt"))
	if err != nil {
		t.Fatal(err)
	}
	p := packed{dir: out, tarballs: map[string]string{}}
	for _, name := range strings.Fields(string(order)) {
		files := readTarball(t, filepath.Join(out, name))
		var m manifest
		if err := json.Unmarshal(files["package.json"].data, &m); err != nil {
			t.Fatalf("%s: package.json: %v", name, err)
		}
		if p.version == "" {
			p.version = m.Version
		}
		if m.Version != p.version {
			t.Errorf("%s is version %s, the others %s: one version for every package", m.Name, m.Version, p.version)
		}
		if len(m.Scripts) > 0 {
			t.Errorf("%s declares scripts %v: installs must need none (pnpm 10 and --ignore-scripts skip them)", m.Name, m.Scripts)
		}
		p.order = append(p.order, m.Name)
		p.tarballs[m.Name] = filepath.Join(out, name)
		checkPackage(t, m, files, platforms)
	}
	want := []string{}
	for _, pl := range platforms {
		want = append(want, "@vzn/vx-"+pl)
	}
	want = append(want, "@vzn/vx", "@vzn/vx-mcp")
	if !slices.Equal(p.order, want) {
		t.Fatalf("publish order %v, want %v (platform packages first)", p.order, want)
	}
	if got := run(t, ".", nil, "go", "run", "../cmd/vx", "--version"); strings.TrimSpace(got) != "vx "+p.version {
		t.Errorf("packages are version %s, vx says %q: one version", p.version, strings.TrimSpace(got))
	}
	return p
}

// checkPackage checks one packed package's manifest and files; built are the platforms whose
// packages were packed beside it.
func checkPackage(t *testing.T, m manifest, files map[string]tarEntry, built []string) {
	t.Helper()
	if _, ok := files["LICENSE"]; !ok || m.License != "MIT" {
		t.Errorf("%s: license %q, LICENSE packed %v; want MIT and the file", m.Name, m.License, ok)
	}
	switch {
	case m.Name == "@vzn/vx":
		if m.Bin["vx"] != "bin/vx.js" {
			t.Errorf("@vzn/vx bin %v, want vx: bin/vx.js", m.Bin)
		}
		for _, f := range []string{"bin/vx.js", "config/index.d.ts", "config/index.js", "config/index.mjs", "README.md"} {
			if _, ok := files[f]; !ok {
				t.Errorf("@vzn/vx lacks %s", f)
			}
		}
		shim, err := os.ReadFile(filepath.Join("vx", "bin", "vx.js"))
		if err != nil {
			t.Fatal(err)
		}
		for _, pl := range platforms {
			if !strings.Contains(string(shim), fmt.Sprintf("'%s': '@vzn/vx-%s',", pl, pl)) {
				t.Errorf("the shim vx/bin/vx.js does not map %s to @vzn/vx-%s", pl, pl)
			}
		}
		if len(m.OptionalDependencies) != len(built) {
			t.Errorf("@vzn/vx optionalDependencies %v, want one per platform packed (%v)", m.OptionalDependencies, built)
		}
		for _, pl := range built {
			if v := m.OptionalDependencies["@vzn/vx-"+pl]; v != m.Version {
				t.Errorf("@vzn/vx depends on @vzn/vx-%s at %q, want exactly %s", pl, v, m.Version)
			}
		}
	case m.Name == "@vzn/vx-mcp":
		for _, f := range []string{"index.d.ts", "index.js", "index.mjs", "README.md"} {
			if _, ok := files[f]; !ok {
				t.Errorf("@vzn/vx-mcp lacks %s", f)
			}
		}
		if v := m.PeerDependencies["@vzn/vx"]; v != m.Version {
			t.Errorf("@vzn/vx-mcp peer @vzn/vx at %q, want %s", v, m.Version)
		}
	default:
		pl := strings.TrimPrefix(m.Name, "@vzn/vx-")
		os, cpu, _ := strings.Cut(pl, "-")
		if !slices.Equal(m.OS, []string{os}) || !slices.Equal(m.CPU, []string{cpu}) || !m.PreferUnplugged {
			t.Errorf("%s: os %v cpu %v preferUnplugged %v, want [%s] [%s] true", m.Name, m.OS, m.CPU, m.PreferUnplugged, os, cpu)
		}
		exe := "bin/vx"
		if os == "win32" {
			exe = "bin/vx.exe"
		}
		exes := []string{exe}
		if os == "linux" {
			// Each task's supervisor and sandbox, next to vx.
			exes = append(exes, "bin/vx-sandbox")
		}
		for _, exe := range exes {
			e, ok := files[exe]
			if !ok {
				t.Errorf("%s lacks %s", m.Name, exe)
			} else if os != "win32" && e.mode&0o111 == 0 {
				t.Errorf("%s: %s is not executable (mode %o)", m.Name, exe, e.mode)
			}
		}
	}
}

// fixture is a workspace that uses every config field: the workspace and project configs, a
// package.json installing the tarballs, and the tsconfig files to check them with.
func fixture(p packed, pm string) map[string]string {
	deps := map[string]string{
		"@vzn/vx":     "file:" + p.tarballs["@vzn/vx"],
		"@vzn/vx-mcp": "file:" + p.tarballs["@vzn/vx-mcp"],
	}
	// The platform packages come from the tarballs too (offline, nothing is published): npm and
	// pnpm then install the one whose os and cpu match, as they would from the registry.
	overrides := map[string]string{}
	for _, pl := range platforms {
		overrides["@vzn/vx-"+pl] = "file:" + p.tarballs["@vzn/vx-"+pl]
	}
	pkg := map[string]any{"name": "fixture", "private": true, "devDependencies": deps}
	switch pm {
	case "pnpm":
		pkg["pnpm"] = map[string]any{"overrides": overrides}
	case "yarn":
		// Yarn 1 takes a file: resolution as a required package and refuses one of another
		// platform outright, so it gets this platform's only (the rest, offline, are skipped
		// as the optional packages they are).
		host := "@vzn/vx-" + hostPlatform()
		pkg["resolutions"] = map[string]string{host: overrides[host]}
	default: // npm, bun
		pkg["overrides"] = overrides
	}
	pkgJSON, _ := json.MarshalIndent(pkg, "", "  ")
	return map[string]string{
		"package.json":               string(pkgJSON) + "\n",
		"vx.workspace.ts":            workspaceConfig,
		"packages/lib/package.json":  `{ "name": "lib", "version": "1.0.0" }` + "\n",
		"packages/lib/src/lib.txt":   "lib\n",
		"packages/app/package.json":  `{ "name": "app", "version": "1.0.0" }` + "\n",
		"packages/app/src/app.txt":   "app\n",
		"packages/app/vx.project.ts": projectConfig,
		"shared/rules.txt":           "rules\n",
		"tsconfig.json":              tsconfig("nodenext", "nodenext"),
		"tsconfig.bundler.json":      tsconfig("esnext", "bundler"),
	}
}

func tsconfig(module, resolution string) string {
	return `{
  "compilerOptions": { "strict": true, "noEmit": true, "target": "es2022", "module": "` + module + `",
    "moduleResolution": "` + resolution + `", "types": [], "skipLibCheck": false },
  "include": ["vx.workspace.ts", "packages/*/vx.project.ts"]
}
`
}

// workspaceConfig sets every workspace field and every task field (a test checks it does).
const workspaceConfig = `import { defineWorkspace, definePlugin, type Task, type TaskId } from '@vzn/vx/config'
import { mcp, type McpOptions } from '@vzn/vx-mcp'

const mcpOptions: McpOptions = { run: ['build', 'test'], answerChars: 20_000, sandbox: false }

const ci = definePlugin({
  name: 'ci',
  commands: [],
  stage(tasks: Record<TaskId, Task>) {
    for (const t of Object.values(tasks)) t.env = [...(t.env ?? []), 'CI']
    return tasks
  },
})

export default defineWorkspace({
  projects: ['packages/*'],
  plugins: [mcp(mcpOptions), ci],
  globalInputs: ['//shared/rules.txt'],
  remoteCache: {
    url: 'http://127.0.0.1:9', protocol: 'turbo', tokenEnv: 'VX_FIXTURE_CACHE_TOKEN', team: 'team_vx', slug: 'vx',
    mode: 'off', timeout: '2s', signature: { keyEnv: 'VX_FIXTURE_SIGNATURE_KEY' },
  },
  env: ['VX_FIXTURE_GLOBAL'],
  passThroughEnv: ['VX_FIXTURE_PASS_*', '!VX_FIXTURE_PASS_SECRET'],
  envMode: 'strict',
  memoryBudget: '2GiB',
  taskMemory: 64 * 1024 * 1024,
  globalRuntimeInputs: ['echo fixture-runtime'],
  tasks: {
    build: {
      command: 'cat src/*.txt > out.txt',
      description: 'gathers the sources',
      dependsOn: ['^build'],
      inputs: ['$default', '!**/*.md', '//shared/**'],
      outputs: ['out.txt'],
      env: ['NODE_ENV'],
      exec: { env: { STAGE: 'prod', LEVEL: 3, VERBOSE: false, TOKEN: { secret: 'VX_FIXTURE_TOKEN' } } },
      cache: true,
      timeout: '2m',
      persistent: false,
      interactive: false,
      all: true,
      ifScript: false,
      passThroughEnv: ['LANG'],
      envMode: 'strict',
      rewrites: ['package.json'],
      runtimeInputs: ['node -v'],
    },
    test: { command: 'test -s out.txt', dependsOn: ['build'], timeout: 60000 },
    // Declared, never run here: what the sandbox allows is not this test's business.
    dev: { command: 'sleep 1', persistent: true, interruptible: true, cache: false, all: false, sandbox: true,
           readyWhen: { log: 'ready in', port: 5173, timeout: '30s' } },
    e2e: { command: 'true', sandbox: { network: false, read: ['//shared/**'], write: ['out.txt'], required: false }, all: false },
  },
})
`

// projectConfig sets every project field.
const projectConfig = `import { defineProject } from '@vzn/vx/config'

export default defineProject({
  name: 'app',
  tags: ['web'],
  dependsOn: ['lib'],
  tasks: {
    dev: false,
    build: { command: 'cat src/*.txt ../lib/out.txt > out.txt' },
    e2e: { dependsOn: ['build'] },
  },
})
`

// badConfigs are configs tsc must refuse, one per line of bad.ts: a misspelled field or a value
// of the wrong type at each level of the config.
var badConfigs = []string{
	`export const a = defineWorkspace({ projecs: ['packages/*'] })`,
	`export const b = defineWorkspace({ tasks: { build: { comand: 'make' } } })`,
	`export const c = defineWorkspace({ tasks: { build: { cache: 'no' } } })`,
	`export const d = defineWorkspace({ tasks: { build: { timeout: true } } })`,
	`export const e = defineWorkspace({ tasks: { build: { dependsOn: 'build' } } })`,
	`export const f = defineWorkspace({ tasks: { t: { exec: { env: { A: { secrett: 'X' } } } } } })`,
	`export const g = defineWorkspace({ tasks: { t: { exec: { enf: {} } } } })`,
	`export const h = defineWorkspace({ tasks: { t: { sandbox: { network: 'yes' } } } })`,
	`export const i = defineWorkspace({ tasks: { t: { sandbox: { netwrk: true } } } })`,
	`export const j = defineWorkspace({ globalInput: ['x'] })`,
	`export const k = defineWorkspace({ plugins: [{ commands: ['x'] }] })`,
	`export const l = defineProject({ tags: 'web' })`,
	`export const m = defineProject({ tasks: { build: true } })`,
	`export const n = defineProject({ nam: 'app' })`,
	`export const o = mcp({ run: 'all' })`,
	`export const p = mcp({ runn: true })`,
	`export const q = defineWorkspace({ tasks: { t: { readyWhen: { logg: 'x' } } } })`,
	`export const r = defineWorkspace({ globalRuntimeInputs: 'node -v' })`,
}

// TestPackInstallTypecheck packs every package with npm/build.sh, installs the tarballs offline
// into a fresh workspace with npm (and pnpm, yarn and bun, where present), runs vx through the shim,
// type-checks configs that use every field with a pinned TypeScript, checks that misspelled
// fields and wrong types are tsc errors, and that a missing platform package gives the shim's
// error naming it.
func TestPackInstallTypecheck(t *testing.T) {
	for _, tool := range []string{"node", "npm", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s on PATH: the npm packages need it (%v)", tool, err)
		}
	}
	host := hostPlatform()
	if !slices.Contains(platforms, host) {
		t.Skipf("vx publishes no binary for this platform (%s)", host)
	}
	if runtime.GOOS == "windows" {
		t.Skip("the fixture's commands are POSIX shell")
	}
	for _, field := range graph.TaskFields() {
		if !regexp.MustCompile(`\b` + field.Name + `: `).MatchString(workspaceConfig) {
			t.Fatalf("the fixture's vx.workspace.ts does not set the task field %s: it must use every field", field.Name)
		}
	}
	p := build(t)

	// Offline, from the tarballs: nothing of vx is published, and npm's cache stays in ~/.npm.
	ws := t.TempDir()
	testkit.WriteTree(t, ws, fixture(p, "npm"))
	began := time.Now()
	run(t, ws, nil, "npm", "install", "--offline", "--no-audit", "--no-fund")
	t.Logf("npm install --offline in %s", time.Since(began).Round(time.Millisecond))
	for _, pl := range platforms {
		_, err := os.Stat(filepath.Join(ws, "node_modules", "@vzn", "vx-"+pl))
		if installed := err == nil; installed != (pl == host) {
			t.Errorf("@vzn/vx-%s installed: %v, want only this platform's (%s)", pl, installed, host)
		}
	}
	env := []string{"VX_FIXTURE_TOKEN=s3cr3t", "VX_BINARY_PATH="}
	if runtime.GOOS == "linux" {
		// The installed vx finds its task supervisor beside it, in the platform package.
		helper := filepath.Join(ws, "node_modules", "@vzn", "vx-"+host, "bin", "vx-sandbox")
		if got := run(t, ws, env, "npx", "--no", "--", "vx", "info", "--format", "json"); !strings.Contains(got, `"helper": "`+helper) &&
			!strings.Contains(got, `"helper":"`+helper) {
			t.Errorf("npx vx info does not name the supervisor %s:\n%s", helper, got)
		}
	}
	if got := run(t, ws, env, "npx", "--no", "--", "vx", "--version"); strings.TrimSpace(got) != "vx "+p.version {
		t.Errorf("npx vx --version: %q, want vx %s", got, p.version)
	}
	out := run(t, ws, env, "npx", "--no", "--", "vx", "run", "build", "test")
	if !strings.Contains(out, " ok: ") {
		t.Errorf("npx vx run build test:\n%s", out)
	}
	if got, err := os.ReadFile(filepath.Join(ws, "packages", "app", "out.txt")); err != nil || string(got) != "app\nlib\n" {
		t.Errorf("app's build wrote %q (%v), want its source and lib's output", got, err)
	}
	// vx's exit code comes back through the shim.
	hostBinary := filepath.Join(p.dir, "packages", "vx-"+host, "bin", "vx")
	_, direct := runErr(ws, env, hostBinary, "run", "nosuchtask")
	if _, err := runErr(ws, env, "npx", "--no", "--", "vx", "run", "nosuchtask"); exitCode(direct) == 0 || exitCode(err) != exitCode(direct) {
		t.Errorf("vx run nosuchtask exits %d through the shim, %d run directly", exitCode(err), exitCode(direct))
	}
	// A platform package at another version than @vzn/vx: a warning, and vx still runs.
	platformJSON := filepath.Join(ws, "node_modules", "@vzn", "vx-"+host, "package.json")
	orig, err := os.ReadFile(platformJSON)
	if err != nil {
		t.Fatal(err)
	}
	other := strings.Replace(string(orig), `"version": "`+p.version+`"`, `"version": "0.0.1"`, 1)
	testkit.WriteTree(t, ws, map[string]string{"node_modules/@vzn/vx-" + host + "/package.json": other})
	if got := run(t, ws, env, "npx", "--no", "--", "vx", "--version"); !strings.Contains(got, "warning: @vzn/vx is "+p.version+" but @vzn/vx-"+host+" is 0.0.1") || !strings.Contains(got, "vx "+p.version) {
		t.Errorf("vx with a platform package of another version:\n%s", got)
	}
	testkit.WriteTree(t, ws, map[string]string{"node_modules/@vzn/vx-" + host + "/package.json": string(orig)})
	checkRuntime(t, ws)
	tsc := installTypescript(t)
	typecheck(t, tsc, ws)

	// Optional dependencies left out: the shim names the package and the platform.
	bare := t.TempDir()
	testkit.WriteTree(t, bare, fixture(p, "npm"))
	run(t, bare, nil, "npm", "install", "--offline", "--no-audit", "--no-fund", "--omit=optional")
	out, err = runErr(bare, env, "npx", "--no", "--", "vx", "--version")
	if exitCode(err) != 1 || !strings.Contains(out, "@vzn/vx-"+host) || !strings.Contains(out, "("+host+")") || !strings.Contains(out, "VX_BINARY_PATH") {
		t.Errorf("vx without its platform package: exit %d, want 1 and an error naming @vzn/vx-%s and %s:\n%s", exitCode(err), host, host, out)
	}
	// A platform vx publishes no binary for: the shim names it and says how to build one.
	aix := "Object.defineProperty(process, 'platform', { value: 'aix' }); require('./node_modules/@vzn/vx/bin/vx.js')"
	out, err = runErr(bare, env, "node", "-e", aix)
	if arch := strings.TrimPrefix(host, runtime.GOOS+"-"); exitCode(err) != 1 || !strings.Contains(out, "(aix-"+arch+")") || !strings.Contains(out, "go install github.com/vzn/vx/cmd/vx@latest") {
		t.Errorf("vx on aix: exit %d, want 1 and an error naming aix-%s and go install:\n%s", exitCode(err), arch, out)
	}
	// VX_BINARY_PATH runs another binary: here the one npm left out.
	if got := run(t, bare, []string{"VX_BINARY_PATH=" + hostBinary}, "npx", "--no", "--", "vx", "--version"); strings.TrimSpace(got) != "vx "+p.version {
		t.Errorf("VX_BINARY_PATH=%s vx --version: %q", hostBinary, got)
	}
	out, err = runErr(bare, []string{"VX_BINARY_PATH=/nonexistent/vx"}, "npx", "--no", "--", "vx", "--version")
	if exitCode(err) != 1 || !strings.Contains(out, "VX_BINARY_PATH") {
		t.Errorf("VX_BINARY_PATH naming no file: exit %d, want 1 and an error naming VX_BINARY_PATH:\n%s", exitCode(err), out)
	}

	// The other package managers, where this machine has them.
	for _, pm := range []struct {
		name    string
		install []string
		vx      []string
	}{
		{"pnpm", []string{"install", "--offline"}, []string{"exec", "vx"}},
		{"yarn", []string{"install", "--offline", "--non-interactive"}, []string{"-s", "vx"}},
		{"bun", []string{"install"}, []string{"run", "vx"}},
	} {
		if _, err := exec.LookPath(pm.name); err != nil {
			t.Logf("no %s on PATH: the %s install is not tried", pm.name, pm.name)
			continue
		}
		dir := t.TempDir()
		testkit.WriteTree(t, dir, fixture(p, pm.name))
		began := time.Now()
		run(t, dir, []string{"CI=true"}, pm.name, pm.install...)
		t.Logf("%s %s in %s", pm.name, strings.Join(pm.install, " "), time.Since(began).Round(time.Millisecond))
		out := run(t, dir, env, pm.name, append(pm.vx, "run", "build", "test")...)
		if !strings.Contains(out, " ok: ") {
			t.Errorf("%s %s run build test:\n%s", pm.name, strings.Join(pm.vx, " "), out)
		}
		if pm.name == "pnpm" {
			typecheck(t, tsc, dir) // pnpm's strict node_modules: each package sees only its own deps
		}
	}
}

// checkRuntime imports both modules as CommonJS and as ES modules: the functions return their
// argument, and mcp() the plugin object vx's built-in mcp() makes.
func checkRuntime(t *testing.T, ws string) {
	t.Helper()
	const want = `{"same":true,"mcp":{"name":"mcp","commands":["mcp"],"options":{"run":true}},"listed":{"name":"mcp","commands":["mcp"],"options":{"run":["test"]}}}`
	cjs := `const c = require('@vzn/vx/config'), { mcp } = require('@vzn/vx-mcp'); const w = { projects: [] };
console.log(JSON.stringify({ same: c.defineWorkspace(w) === w && c.defineProject(w) === w && c.definePlugin(w) === w, mcp: mcp(), listed: mcp({ run: ['test'] }) }))`
	esm := `import * as c from '@vzn/vx/config'; import { mcp } from '@vzn/vx-mcp'; const w = { projects: [] };
console.log(JSON.stringify({ same: c.defineWorkspace(w) === w && c.defineProject(w) === w && c.definePlugin(w) === w, mcp: mcp(), listed: mcp({ run: ['test'] }) }))`
	if got := run(t, ws, nil, "node", "-e", cjs); strings.TrimSpace(got) != want {
		t.Errorf("require(): %s\nwant %s", got, want)
	}
	if got := run(t, ws, nil, "node", "--input-type=module", "-e", esm); strings.TrimSpace(got) != want {
		t.Errorf("import: %s\nwant %s", got, want)
	}
}

// installTypescript installs the pinned TypeScript, from npm's cache when it has it, and returns
// the path of its tsc; without it (no cache, no registry) the test is skipped, saying so.
func installTypescript(t *testing.T) string {
	t.Helper()
	tools := filepath.Join(t.TempDir(), "tools")
	testkit.WriteTree(t, tools, map[string]string{"package.json": `{ "private": true }` + "\n"})
	began := time.Now()
	if out, err := runErr(tools, nil, "npm", "install", "--prefer-offline", "--no-audit", "--no-fund", "typescript@"+typescriptVersion); err != nil {
		t.Skipf("typescript %s is neither in npm's cache nor reachable on the registry, so no config can be type-checked: %v\n%s", typescriptVersion, err, out)
	}
	t.Logf("typescript %s installed in %s", typescriptVersion, time.Since(began).Round(time.Millisecond))
	return filepath.Join(tools, "node_modules", "typescript", "bin", "tsc")
}

// typecheck checks that the fixture's configs pass tsc and each bad config fails, under both
// module resolutions editors use.
func typecheck(t *testing.T, tsc, ws string) {
	t.Helper()
	for _, project := range []string{"tsconfig.json", "tsconfig.bundler.json"} {
		began := time.Now()
		run(t, ws, nil, "node", tsc, "-p", project)
		t.Logf("tsc -p %s: no error, in %s", project, time.Since(began).Round(time.Millisecond))
	}
	// What vx init writes type-checks too: the configs of its golden plans (engine/initplan/testdata).
	plans, err := filepath.Glob(filepath.Join("..", "engine", "initplan", "testdata", "*.plan.json"))
	if err != nil || len(plans) == 0 {
		t.Fatalf("no golden plans of vx init (%v)", err)
	}
	generated := map[string]string{"init/tsconfig.json": strings.Replace(tsconfig("nodenext", "nodenext"), `["vx.workspace.ts", "packages/*/vx.project.ts"]`, `["**/vx.workspace.ts", "**/vx.project.ts"]`, 1)}
	for _, plan := range plans {
		data, err := os.ReadFile(plan)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Files []struct{ Path, Text string }
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", plan, err)
		}
		for _, f := range doc.Files {
			generated[path.Join("init", strings.TrimSuffix(filepath.Base(plan), ".plan.json"), f.Path)] = f.Text
		}
	}
	testkit.WriteTree(t, ws, generated)
	if out, err := runErr(filepath.Join(ws, "init"), nil, "node", tsc, "-p", "."); err != nil {
		t.Errorf("tsc refuses configs vx init writes (%d files of %d plans): %v\n%s", len(generated)-1, len(plans), err, out)
	}

	bad := "import { defineWorkspace, defineProject } from '@vzn/vx/config'\nimport { mcp } from '@vzn/vx-mcp'\n" + strings.Join(badConfigs, "\n") + "\n"
	testkit.WriteTree(t, ws, map[string]string{
		"bad/bad.ts":        bad,
		"bad/tsconfig.json": strings.Replace(tsconfig("nodenext", "nodenext"), `["vx.workspace.ts", "packages/*/vx.project.ts"]`, `["bad.ts"]`, 1),
	})
	out, err := runErr(filepath.Join(ws, "bad"), nil, "node", tsc, "-p", ".")
	if err == nil {
		t.Fatalf("tsc accepted every bad config")
	}
	for i, line := range badConfigs {
		if !strings.Contains(out, fmt.Sprintf("bad.ts(%d,", i+3)) {
			t.Errorf("tsc found no error in %s\n%s", line, out)
		}
	}
}

// exitCode is a finished command's exit code, -1 when it did not run.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// A build of some platforms only names only those in @vzn/vx's optionalDependencies (Yarn fails
// an install on one it cannot find), and every package it packs carries the licence.
func TestPartialBuildListsWhatItPacked(t *testing.T) {
	for _, tool := range []string{"node", "npm", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s on PATH: the npm packages need it (%v)", tool, err)
		}
	}
	host := hostPlatform()
	if !slices.Contains(platforms, host) {
		t.Skipf("vx publishes no binary for this platform (%s)", host)
	}
	out := t.TempDir()
	run(t, ".", nil, "bash", "build.sh", "--out", out, "--platforms", host)
	order, err := os.ReadFile(filepath.Join(out, "publish-order.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tgz := range strings.Fields(string(order)) {
		files := readTarball(t, filepath.Join(out, tgz))
		var m manifest
		if err := json.Unmarshal(files["package.json"].data, &m); err != nil {
			t.Fatalf("%s: package.json: %v", tgz, err)
		}
		names = append(names, m.Name)
		checkPackage(t, m, files, []string{host})
	}
	if want := []string{"@vzn/vx-" + host, "@vzn/vx", "@vzn/vx-mcp"}; !slices.Equal(names, want) {
		t.Errorf("packed %v, want %v", names, want)
	}
}
