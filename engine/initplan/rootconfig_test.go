package initplan

import (
	"strings"
	"testing"
)

// TestInitRootConfigInputs: a root tsdown.config.ts is an input of the builds that name it or run
// at the root (pnpm -w run …), not of one that does neither; a root vite.config.ts no build reads
// so (in a repository where none runs at the root) is noted with the globalInputs line to add.
func TestInitRootConfigInputs(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"package.json":            `{"name": "r", "workspaces": ["packages/*"], "scripts": {"build:pkg": "tsdown"}}`,
		"tsdown.config.ts":        "export default {}",
		"vite.config.ts":          "export default {}",
		"packages/a/package.json": `{"name": "a", "scripts": {"build": "tsdown --config ../../tsdown.config.ts", "test": "vitest run"}}`,
		"packages/b/package.json": `{"name": "b", "scripts": {"build": "pnpm -w run build:pkg", "test": "vitest run"}}`,
		"packages/c/package.json": `{"name": "c", "scripts": {"build": "tsc", "test": "vitest run"}}`,
	})
	p, files := planFiles(t, dir)
	for _, proj := range []string{"a", "b"} {
		if !strings.Contains(files["packages/"+proj+"/vx.project.ts"]+files["vx.workspace.ts"], "'$default', '//tsdown.config.ts'") {
			t.Errorf("%s's build does not take in the root tsdown config:\n%s\n%s", proj, files["vx.workspace.ts"], files["packages/"+proj+"/vx.project.ts"])
		}
	}
	if strings.Contains(files["packages/c/vx.project.ts"], "tsdown") {
		t.Errorf("c's build takes in tsdown.config.ts:\n%s", files["packages/c/vx.project.ts"])
	}
	if hasNote(p, "globalInputs: ['//tsdown.config.ts']") {
		t.Errorf("a globalInputs note for a config tasks take in: %q", p.Notes)
	}

	// No task names vite.config.ts or runs at the root: a note gives the globalInputs line.
	p, _ = planFiles(t, writeFiles(t, map[string]string{
		"package.json":            `{"name": "r", "workspaces": ["packages/*"]}`,
		"vite.config.ts":          "export default {}",
		"packages/a/package.json": `{"name": "a", "scripts": {"build": "vite build"}}`,
		"packages/c/package.json": `{"name": "c", "scripts": {"build": "vite build"}}`,
	}))
	if !hasNote(p, "globalInputs: ['//vite.config.ts']") {
		t.Errorf("no globalInputs note for vite.config.ts: %q", p.Notes)
	}
}
