package stress

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkRunTasks measures runTasks and planTasks against the CLI they stand for, on a generated
// workspace of 50 projects (a dependency chain, one cached build each), every task a cache hit:
//
//	go test -run '^$' -bench RunTasks -benchtime 50x ./stress/
//
// cli-run is `vx run build --format json` as a process; mcp-runTasks the same run through a
// `vx mcp` session (which starts that same process as its child); the difference is what the tool
// adds. cli-dry and mcp-planTasks compare `vx run build --dry=json` with planTasks, which plans in
// the server's process with the workspace already loaded. mcp-pruneCache is a dry-run prune.
func BenchmarkRunTasks(b *testing.B) {
	dir := b.TempDir()
	exe := filepath.Join(dir, "vx")
	root, err := filepath.Abs("..")
	if err != nil {
		b.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", exe, "./cmd/vx")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		b.Skipf("building vx: %v\n%s", err, out)
	}
	ws := filepath.Join(dir, "ws")
	files := map[string]string{
		"vx.workspace.ts": "import { defineWorkspace } from '@vzn/vx/config'\nimport { mcp } from '@vzn/vx-mcp'\n" +
			"export default defineWorkspace({ projects: ['packages/*'], plugins: [mcp()], tasks: {\n" +
			"  build: { command: 'mkdir -p dist && cat src/a.ts > dist/out.js', dependsOn: ['^build'], inputs: ['src/**'], outputs: ['dist/**'] } } })\n",
	}
	const projects = 50
	for i := range projects {
		deps := ""
		if i > 0 {
			deps = fmt.Sprintf(`, "dependencies": {"p%02d": "*"}`, i-1)
		}
		files[fmt.Sprintf("packages/p%02d/package.json", i)] = fmt.Sprintf(`{"name": "p%02d"%s}`, i, deps)
		files[fmt.Sprintf("packages/p%02d/src/a.ts", i)] = fmt.Sprintf("export const n = %d\n", i)
	}
	for name, text := range files {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
		// Aged, so that the stat cache trusts them (a file changed within 2 s is hashed again).
		old := time.Now().Add(-time.Hour)
		if err := os.Chtimes(p, old, old); err != nil {
			b.Fatal(err)
		}
	}
	env := crashEnv()
	vx := func(args ...string) *exec.Cmd {
		cmd := exec.Command(exe, args...)
		cmd.Dir, cmd.Env = ws, env
		return cmd
	}
	for range 2 { // fill the cache, then the stat cache
		if out, err := vx("run", "build").CombinedOutput(); err != nil {
			b.Fatalf("vx run build: %v\n%s", err, out)
		}
	}

	cli := func(args ...string) func(b *testing.B) {
		return func(b *testing.B) {
			for b.Loop() {
				if out, err := vx(args...).Output(); err != nil || !strings.Contains(string(out), `"`) {
					b.Fatalf("vx %v: %v", args, err)
				}
			}
		}
	}
	b.Run("cli-run", cli("run", "build", "--format", "json"))
	b.Run("cli-dry", cli("run", "build", "--dry=json"))

	p := startRaw(b, vx("mcp"))
	defer p.close(b)
	p.call(b, initializeLine)
	p.send(b, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	tool := func(name, args, want string) func(b *testing.B) {
		return func(b *testing.B) {
			line := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, name, args)
			for b.Loop() {
				if reply := p.call(b, line); !strings.Contains(reply, want) {
					b.Fatalf("%s: %.300s", name, reply)
				}
			}
		}
	}
	b.Run("mcp-runTasks", tool("runTasks", `{"tasks":["build"]}`, `\"hits\":50`))
	b.Run("mcp-planTasks", tool("planTasks", `{"tasks":["build"]}`, `\"exitCode\":0`))
	b.Run("mcp-pruneCache", tool("pruneCache", `{}`, `\"dryRun\":true`))
}
