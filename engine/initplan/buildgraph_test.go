package initplan

import (
	"os/exec"
	"strings"
	"testing"
)

// TestInitScriptsBuildGraph: in scripts mode, compile waits for ^compile where a workspace
// dependency is used built (its main points into its git-ignored lib/), compile declares
// tsconfig's outDir and the ignored paths main/types/files name, never a files entry holding
// tracked files (src), and format:fix and a prettier --write script are cache: false.
func TestInitScriptsBuildGraph(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		".gitignore":                  "node_modules/\nlib/\ntypes/\n",
		"package.json":                `{"name": "r", "workspaces": ["packages/*"]}`,
		"package-lock.json":           `{"lockfileVersion": 3, "packages": {}}`,
		"packages/core/package.json":  `{"name": "core", "main": "./lib/index.js", "types": "./types/index.d.ts", "files": ["lib", "types", "src"], "scripts": {"compile": "tsc", "format:fix": "prettier -w .", "tidy": "prettier --write src"}}`,
		"packages/core/tsconfig.json": `{"compilerOptions": {"outDir": "./lib", "declarationDir": "types"}}`,
		"packages/core/src/index.ts":  "export const a = 1",
		"packages/app/package.json":   `{"name": "app", "dependencies": {"core": "*"}, "scripts": {"compile": "tsc", "format:fix": "prettier -w .", "tidy": "prettier --write src"}}`,
		"packages/app/tsconfig.json":  `{"compilerOptions": {"outDir": "lib"}}`,
	})
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	if out, err := exec.Command("git", "-C", dir, "add", ".").CombinedOutput(); err != nil {
		t.Fatalf("git add: %v: %s", err, out)
	}
	p, files := planFiles(t, dir)
	all := files["vx.workspace.ts"] + files["packages/app/vx.project.ts"] + files["packages/core/vx.project.ts"]
	for _, want := range []string{
		"dependsOn: ['^compile']",
		"outputs: ['lib/**', 'types/**']",
		"'format:fix': { command: 'npm run format:fix', cache: false",
		"tidy: { command: 'npm run tidy', cache: false",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("config lacks %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "src/**") {
		t.Errorf("a files entry of tracked files became an output:\n%s", all)
	}
	if !hasNote(p, "cache: false for scripts that rewrite sources") {
		t.Errorf("notes: %q", p.Notes)
	}
}
