package pkgscript

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vzn/vx/internal/testkit"
)

// TestNPMQuoteMatchesNPM quotes arguments as npm's own escape.sh does, asked through node.
func TestNPMQuoteMatchesNPM(t *testing.T) {
	escape := "/usr/lib/node_modules/npm/node_modules/@npmcli/promise-spawn/lib/escape.js"
	if out, err := exec.Command("npm", "root", "-g").Output(); err == nil {
		escape = filepath.Join(strings.TrimSpace(string(out)), "npm", "node_modules", "@npmcli", "promise-spawn", "lib", "escape.js")
	}
	if _, err := os.Stat(escape); err != nil {
		t.Skipf("npm's escape.js is not installed: %v", err)
	}
	args := []string{"", "a", "b c", "d'e", "'", "''", "'x'", "x'", "$x", "*", "a\tb", "--y=1", "é", "~", "#", "a\\b", "\"q\"", "it's'"}
	in, _ := json.Marshal(args)
	out, err := exec.Command("node", "-e", `const e=require(process.argv[1]);console.log(JSON.stringify(JSON.parse(process.argv[2]).map(e.sh)))`, escape, string(in)).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var want []string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	for i, a := range args {
		if got := npmQuote(a); got != want[i] {
			t.Errorf("npmQuote(%q) = %q, npm writes %q", a, got, want[i])
		}
	}
}

// TestPNPMQuote quotes as the shlex package pnpm uses (its cases, as pnpm appends arguments).
func TestPNPMQuote(t *testing.T) {
	for in, want := range map[string]string{"": "''", "a": "a", "a-b=c:d,e.f/g@h%+": "a-b=c:d,e.f/g@h%+", "b c": "'b c'",
		"d'e": `'d'"'"'e'`, "'x": `"'"'x'`, "x'": `'x'"'"`, "a''b": `'a'"''"'b'`, "é": "'é'", "$x": "'$x'"} {
		if got := pnpmQuote(in); got != want {
			t.Errorf("pnpmQuote(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSimpleWords reads a command as sh would, and refuses what sh would expand or interpret.
func TestSimpleWords(t *testing.T) {
	for in, want := range map[string][]string{
		`npm run build`:                 {"npm", "run", "build"},
		`npm run build -- 'a b' "c\"d"`: {"npm", "run", "build", "--", "a b", `c"d`},
		`pnpm x it\'s "a'b"c`:           {"pnpm", "x", "it's", "a'bc"},
		`npm run a#b --x=y`:             {"npm", "run", "a#b", "--x=y"},
	} {
		got, err := simpleWords(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("simpleWords(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{`npm run a && npm run b`, `npm run a | tee x`, `npm run a > log`, `npm run $X`, `npm run "$X"`,
		`npm run a *`, `X=1 npm run a`, `npm run a # c`, "npm run a\nnpm run b", `npm run 'a`, "npm run `x`", `npm run ~/a`, `npm run a;`} {
		if got, err := simpleWords(in); err == nil {
			t.Errorf("simpleWords(%s) = %q, want it refused", in, got)
		}
	}
}

// TestNeedsTheManager runs through the manager what a direct run could not run as the manager
// would, naming why; and what it can, directly.
func TestNeedsTheManager(t *testing.T) {
	scripts := map[string]string{
		"build": "tsc -p .", "calls": "tsc && npm run other", "pcalls": "pnpm -r build", "ycalls": "echo x; yarn lint",
		"bcalls": "bun x.ts", "conf": "node x.js --port $npm_config_port", "exec": "node $npm_execpath run x",
		"prehooked": "echo pre", "hooked": "echo main", "posthooked": "npm run after", "other": "true",
		"bunny": "node bun-check.js && echo @yarnpkg/x npm-run-all",
	}
	pkg, _ := json.Marshal(map[string]any{"name": "a", "version": "1.0.0", "scripts": scripts})
	root, err := filepath.EvalSymlinks(testkit.TempTree(t, map[string]string{"package.json": string(pkg)}))
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	for _, name := range []string{"npm", "pnpm", "node", "bun"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=" + bin, "HOME=" + t.TempDir()}
	cases := []struct{ command, runner, why string }{
		{"npm run build", "", ""},
		{"npm run -s build -- --watch", RunnerDirect, ""},
		{"npm run bunny", "", ""},
		{"npm run build", RunnerManager, "the workspace sets scripts.runner: 'package-manager'"},
		{"npm run calls", "", "its script calls calls npm"},
		{"npm run pcalls", "", "its script pcalls calls pnpm"},
		{"npm run ycalls", "", "its script ycalls calls yarn"},
		{"npm run bcalls", "", "its script bcalls calls bun"},
		{"npm run conf", "", "its script conf reads the manager's config ($npm_config_*)"},
		{"npm run exec", "", "its script exec runs the manager ($npm_execpath)"},
		{"npm run hooked", "", "its script posthooked calls npm"},
		{"npm run missing", "", `its package.json has no script "missing"`},
		{"npm run build --if-present", "", "npm would read --if-present as its own option"},
		{"npm run build && echo done", "", "its command is not a package manager running one script"},
		{"npm install", "", "its npm command runs no script"},
		{"pnpm install", "", "pnpm install is a command of pnpm"},
		{"pnpm show", "", "pnpm show is a command of pnpm"},
		{"pnpm --filter a build", "", "its pnpm command has options"},
		{"bun build", "", "only bun run is read as running a script"},
		{"yarn build", "", "yarn is not on the task's PATH"},
		{"make build", "", "its command is not a package manager running one script"},
	}
	for _, c := range cases {
		_, why := Resolve(Task{Command: c.command, Dir: root, Root: root, Env: env, Runner: c.runner})
		if why != c.why {
			t.Errorf("%s (runner %q): %q, want %q", c.command, c.runner, why, c.why)
		}
	}
}

// TestPrePostByManager runs the pre and post scripts where each manager does: npm, Yarn 1 and
// bun always; pnpm by its enable-pre-post-scripts setting; Yarn berry never.
func TestPrePostByManager(t *testing.T) {
	pkg := `{"name":"a","scripts":{"prebuild":"echo pre","build":"echo main","postbuild":"echo post"}}`
	cases := []struct {
		manager string
		files   map[string]string
		env     []string
		want    int // scripts run
	}{
		{NPM, nil, nil, 3},
		{NPM, map[string]string{".npmrc": "ignore-scripts=true\n"}, nil, -1},
		{PNPM, nil, nil, 3},
		{PNPM, map[string]string{".npmrc": "enable-pre-post-scripts=false\n"}, nil, 1},
		{PNPM, map[string]string{"pnpm-workspace.yaml": "packages: ['.']\nenablePrePostScripts: false\n"}, nil, 1},
		{PNPM, nil, []string{"npm_config_enable_pre_post_scripts=false"}, 1},
		{PNPM, map[string]string{"pnpm/package.json": `{"version":"7.33.0"}`}, nil, 1},
		{Yarn, nil, nil, 3},
		{Berry, map[string]string{".yarnrc.yml": "nodeLinker: node-modules\n"}, nil, 1},
		{Berry, map[string]string{".yarnrc.yml": "enableTelemetry: false\n"}, nil, -1},
		{Bun, nil, nil, 3},
	}
	for _, c := range cases {
		files := map[string]string{"package.json": pkg, "pnpm/package.json": `{"version":"10.1.0"}`, "pnpm/bin/pnpm.cjs": "#!/bin/sh\n"}
		for k, v := range c.files {
			files[k] = v
		}
		root, err := filepath.EvalSymlinks(testkit.TempTree(t, files))
		if err != nil {
			t.Fatal(err)
		}
		bin := t.TempDir()
		for _, name := range []string{"npm", "yarn", "node", "bun"} {
			if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chmod(filepath.Join(root, "pnpm", "bin", "pnpm.cjs"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(root, "pnpm", "bin", "pnpm.cjs"), filepath.Join(bin, "pnpm")); err != nil {
			t.Fatal(err)
		}
		command := map[string]string{NPM: "npm run build", PNPM: "pnpm build", Yarn: "yarn build", Berry: "yarn build", Bun: "bun run build"}[c.manager]
		env := append([]string{"PATH=" + bin, "HOME=" + t.TempDir()}, c.env...)
		plan, why := Resolve(Task{Command: command, Dir: root, Root: root, Env: env})
		if c.want < 0 {
			if why == "" {
				t.Errorf("%s %v: runs directly, want it through the manager", c.manager, c.files)
			}
			continue
		}
		if why != "" {
			t.Errorf("%s %v: %s", c.manager, c.files, why)
			continue
		}
		out, err := exec.Command("sh", "-c", plan.Shell).Output()
		if err != nil {
			t.Fatalf("%s: %v", plan.Shell, err)
		}
		want := map[int]string{1: "main\n", 3: "pre\nmain\npost\n"}[c.want]
		if string(out) != want {
			t.Errorf("%s %v: printed %q, want %q", c.manager, c.files, out, want)
		}
	}
}
