package initplan

import (
	"strings"
	"testing"
)

// TestInitPeerDefaults holds the rows of docs/init.md's table of peer defaults that no other test
// pins: a Turborepo task naming nothing (no outputs, inputs from the package, no dependsOn, cached,
// strict env, only where the script exists), and an Nx target that nothing makes cacheable.
func TestInitPeerDefaults(t *testing.T) {
	_, files := planFiles(t, writeFiles(t, map[string]string{
		"package.json":            `{"name": "r", "workspaces": ["packages/*"], "packageManager": "pnpm@9.0.0"}`,
		"turbo.json":              `{"tasks": {"build": {}}}`,
		"packages/a/package.json": `{"name": "a", "scripts": {"build": "tsc"}}`,
		"packages/b/package.json": `{"name": "b", "scripts": {"build": "tsc"}}`,
	}))
	if ws := files["vx.workspace.ts"]; !strings.Contains(ws, "build: { command: 'pnpm run build', ifScript: true },") || strings.Contains(ws, "envMode") {
		t.Errorf("a bare turbo task is not a bare vx task:\n%s", ws)
	}

	_, files = planFiles(t, writeFiles(t, map[string]string{
		"package.json":        `{"name": "r"}`,
		"nx.json":             `{}`,
		"libs/a/project.json": `{"name": "a", "targets": {"lint": {"command": "eslint {projectRoot}/src"}}}`,
	}))
	if a := files["libs/a/vx.project.ts"]; !strings.Contains(a, "lint: { command: 'cd ../.. && eslint libs/a/src', cache: false },") {
		t.Errorf("an Nx target nothing makes cacheable:\n%s", a)
	}
}

// TestInitNoLockfileNote: with no lockfile, vx init says that no key holds the external packages'
// versions (eslint/rewrite's .npmrc says package-lock = false: there never is one).
func TestInitNoLockfileNote(t *testing.T) {
	p, _ := planFiles(t, writeFiles(t, map[string]string{
		"package.json":            `{"name": "r", "workspaces": ["packages/*"]}`,
		"packages/a/package.json": `{"name": "a", "scripts": {"build": "tsc"}}`,
		"packages/b/package.json": `{"name": "b", "scripts": {"build": "tsc"}}`,
	}))
	if !hasNote(p, "no lockfile: scripts run with npm") || !hasNote(p, "no key holds the versions of external packages") {
		t.Errorf("notes: %q", p.Notes)
	}
}
