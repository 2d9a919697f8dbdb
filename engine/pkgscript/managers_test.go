package pkgscript

import (
	"bytes"
	"context"
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

// The package managers the comparisons run, installed once into the user's cache folder (npm is
// the one on PATH).
const (
	pnpmVersion  = "10.34.8"
	yarn1Version = "1.22.22"
	berryVersion = "4.18.1"
	bunVersion   = "1.4.5"
)

var (
	toolsOnce sync.Once
	toolsErr  error
)

// managerTools answers the folder the package managers are installed in (installing them the
// first time); the test is skipped only when npm is missing or the npm registry is unreachable.
func managerTools(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed")
	}
	base, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "vx-test", "pkgscript-tools-1")
	toolsOnce.Do(func() {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@yarnpkg", "cli-dist", "bin", "yarn.js")); err == nil {
			return
		}
		if !registryReachable() {
			toolsErr = errUnreachable
			return
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			toolsErr = err
			return
		}
		cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", dir,
			"pnpm@"+pnpmVersion, "yarn@"+yarn1Version, "@yarnpkg/cli-dist@"+berryVersion, "bun@"+bunVersion)
		if out, err := cmd.CombinedOutput(); err != nil {
			toolsErr = &installError{err, string(out)}
		}
	})
	if toolsErr == errUnreachable {
		t.Skip("the npm registry is unreachable, so the package managers cannot be installed")
	}
	if toolsErr != nil {
		t.Fatalf("install the package managers into %s: %v", dir, toolsErr)
	}
	return dir
}

var errUnreachable = &installError{out: "the npm registry is unreachable"}

type installError struct {
	err error
	out string
}

func (e *installError) Error() string {
	if e.err == nil {
		return e.out
	}
	return e.err.Error() + "\n" + e.out
}

func registryReachable() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodHead, "https://registry.npmjs.org/ms", nil)
	transport := &http.Transport{Proxy: http.ProxyFromEnvironment, DisableKeepAlives: true}
	defer transport.CloseIdleConnections()
	resp, err := (&http.Client{Transport: transport}).Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

// managerBin makes a folder holding only the named manager's program, as a workspace's PATH
// would have it, and answers it.
func managerBin(t *testing.T, tools, manager string) string {
	t.Helper()
	bin := t.TempDir()
	targets := map[string][2]string{
		PNPM:  {"pnpm", filepath.Join(tools, "node_modules", "pnpm", "bin", "pnpm.cjs")},
		Yarn:  {"yarn", filepath.Join(tools, "node_modules", "yarn", "bin", "yarn.js")},
		Berry: {"yarn", filepath.Join(tools, "node_modules", "@yarnpkg", "cli-dist", "bin", "yarn.js")},
		Bun:   {"bun", filepath.Join(tools, "node_modules", "bun", "bin", "bun.exe")},
	}
	if tg, ok := targets[manager]; ok {
		if err := os.Symlink(tg[1], filepath.Join(bin, tg[0])); err != nil {
			t.Fatal(err)
		}
	}
	return bin
}

// showScript prints, one line each, the variables a script of each manager is given (its
// config's excepted) and the arguments it gets, each marked.
const showScript = `env | LC_ALL=C sort | grep -E '^(npm_|INIT_CWD=|NODE=|PNPM_SCRIPT_SRC_DIR=|PROJECT_CWD=|PATH=)' | grep -v '^npm_c[o]nfig_' | sed 's/^/ENV /'; printf 'ARG <%s>\n'`

// workspaceFor lays out a workspace of one package, a, for the manager, with pre and post scripts
// around vars, and answers its root and a's folder.
func workspaceFor(t *testing.T, tools, manager string) (root, dir string) {
	t.Helper()
	pkg := `{"name":"@s/a","version":"1.2.3","config":{"port":8080,"on":true},"engines":{"node":">=18"},` +
		`"scripts":{"prevars":"echo PRE $npm_lifecycle_event","vars":` + jsonString(showScript) + `,"postvars":"echo POST $npm_lifecycle_event"}}`
	files := map[string]string{
		"package.json":            `{"name":"root","version":"0.0.0","private":true,"workspaces":["packages/*"]}`,
		"packages/a/package.json": pkg,
	}
	switch manager {
	case PNPM:
		files["pnpm-workspace.yaml"] = "packages:\n  - packages/*\n"
	case Berry:
		files[".yarnrc.yml"] = "nodeLinker: node-modules\nenableTelemetry: false\nenableGlobalCache: false\n"
	}
	root, err := filepath.EvalSymlinks(testkit.TempTree(t, files))
	if err != nil {
		t.Fatal(err)
	}
	if manager == Berry {
		berry := filepath.Join(tools, "node_modules", "@yarnpkg", "cli-dist", "bin", "yarn.js")
		run(t, root, baseEnv(t, ""), "node", berry, "install")
	}
	return root, filepath.Join(root, "packages", "a")
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

// baseEnv is the environment the manager and the direct run both start from: a home of the
// test's own (no user's .npmrc), and PATH holding the manager's folder and the system's.
func baseEnv(t *testing.T, bin string) []string {
	path := "/usr/local/bin:/usr/bin:/bin"
	if bin != "" {
		path = bin + ":" + path
	}
	return []string{"HOME=" + t.TempDir(), "PATH=" + path, "npm_config_update_notifier=false", "YARN_ENABLE_TELEMETRY=0"}
}

// run runs a program in dir and answers what it printed on stdout.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s%s", name, args, err, out.String(), errb.String())
	}
	return out.String()
}

// marked keeps the lines a script printed (the manager's own lines left out), less the variables
// the manager sets that a direct run does not reproduce.
func marked(out string, skip []string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "ENV ") && !strings.HasPrefix(l, "ARG ") && !strings.HasPrefix(l, "PRE ") && !strings.HasPrefix(l, "POST ") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(l, "ENV "), "=")
		if strings.HasPrefix(l, "ENV ") && slices.Contains(skip, name) {
			continue
		}
		lines = append(lines, l)
	}
	return lines
}

// TestMatchesManagers runs one script through each real package manager and directly, as
// Resolve plans it, and compares what the script saw: its variables (PATH and every npm_* but
// the manager's config), its arguments (with spaces, quotes, $, a glob, an empty one and a --),
// and its pre and post scripts, in order.
func TestMatchesManagers(t *testing.T) {
	tools := managerTools(t)
	args := ` a 'b c' "d'e" '$x' '*' '' it\'s`
	cases := []struct {
		manager, command string
		// skip are variables the manager points at files of its own making (Yarn's temporary
		// folder of shims), which a direct run has no equal of.
		skip []string
	}{
		{NPM, "npm run vars --" + args + " -- --y", nil},
		{NPM, "npm run-script -s vars", nil},
		{PNPM, "pnpm run vars" + args + " -- --y", nil},
		{PNPM, "pnpm vars" + args, nil},
		{Yarn, "yarn run vars" + args + " -- --y", []string{"PATH"}},
		{Yarn, "yarn vars -- x", []string{"PATH"}},
		{Berry, "yarn run vars", []string{"PATH", "npm_execpath", "npm_node_execpath"}},
		{Bun, "bun run vars" + args + " -- --y", nil},
	}
	for _, c := range cases {
		t.Run(c.command, func(t *testing.T) {
			root, dir := workspaceFor(t, tools, c.manager)
			env := baseEnv(t, managerBin(t, tools, c.manager))
			plan, why := Resolve(Task{Command: c.command, Dir: dir, Root: root, Env: env})
			if why != "" {
				t.Fatalf("Resolve: runs through the manager: %s", why)
			}
			if plan.Manager != c.manager {
				t.Errorf("manager: %s, want %s", plan.Manager, c.manager)
			}
			want := marked(run(t, dir, env, "sh", "-c", c.command), c.skip)
			got := marked(run(t, dir, plan.Env, "sh", "-c", plan.Shell), c.skip)
			if !slices.Equal(got, want) {
				t.Errorf("what the script saw differs\ndirect:\n%s\n%s:\n%s", strings.Join(got, "\n"), c.manager, strings.Join(want, "\n"))
			}
			if len(want) < 6 {
				t.Errorf("the script printed too little to compare:\n%s", strings.Join(want, "\n"))
			}
		})
	}
}
