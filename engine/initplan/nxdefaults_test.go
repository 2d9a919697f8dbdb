package initplan

import (
	"os/exec"
	"strings"
	"testing"
)

// TestInitNxDefaultOutputs: a build target that names no outputs gets those of Nx's defaults
// (getOutputsForTargetAndConfiguration: dist/{projectRoot}, {projectRoot}/dist, /build, /public)
// that git ignores; public/, tracked here, is left out with a note; a target other than build or
// prepare gets none; dist/{projectRoot}, outside the project, only where something is there
// already or the command names it (Nx caches nothing of it); options.outputPath stands for the defaults; and with
// no inputs the task keys on its dependencies' files (Nx's DEFAULT_INPUTS: default, ^default).
func TestInitNxDefaultOutputs(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		".gitignore":               "node_modules/\ndist/\nbuild/\n",
		"package.json":             `{"name": "r", "workspaces": ["packages/*"]}`,
		"nx.json":                  `{"targetDefaults": {"build": {"cache": true}, "test": {"cache": true}}}`,
		"packages/a/package.json":  `{"name": "a", "scripts": {"build": "tsc", "test": "vitest run"}}`,
		"packages/b/package.json":  `{"name": "b", "dependencies": {"a": "*"}, "scripts": {"build": "tsc", "test": "vitest run"}}`,
		"dist/packages/a/index.js": "built before",
		"packages/c/package.json":  `{"name": "c", "scripts": {"build": "tsc"}, "nx": {"targets": {"build": {"options": {"outputPath": "out/c"}}}}}`,
	})
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	p, files := planFiles(t, dir)
	ws := files["vx.workspace.ts"]
	for _, want := range []string{
		"outputs: ['//dist/packages/a/**', 'dist/**', 'build/**'],",
		"test: { command: 'npm run test', inputs: ['$default', '^default'], ifScript: true },",
	} {
		if !strings.Contains(ws, want) {
			t.Errorf("vx.workspace.ts lacks %q:\n%s", want, ws)
		}
	}
	// b has nothing in dist/packages/b and its command does not name it: the template fits it
	// but for that root path, which b's config leaves out.
	if b := files["packages/b/vx.project.ts"]; !strings.Contains(b, "outputs: ['dist/**', 'build/**']") {
		t.Errorf("b's default outputs:\n%s", b)
	}
	if !hasNote(p, "Nx default outputs outside the project left out") || !hasNote(p, "b#build dist/packages/b") {
		t.Errorf("notes: %q", p.Notes)
	}
	if strings.Contains(ws+files["packages/b/vx.project.ts"], "public") {
		t.Errorf("tracked public/ became an output:\n%s", ws)
	}
	if !strings.Contains(files["packages/c/vx.project.ts"], "'//out/c/**'") {
		t.Errorf("options.outputPath is not c's output:\n%s", files["packages/c/vx.project.ts"])
	}
	if !hasNote(p, "Nx default outputs left out because git does not ignore them") || !hasNote(p, "a#build packages/a/public") {
		t.Errorf("notes: %q", p.Notes)
	}
}

// TestInitNxRootTsconfig: Nx's task hasher takes the compilerOptions of the root tsconfig.base.json,
// else tsconfig.json, into every task's hash whatever its inputs, so that file becomes a
// globalInput (once: not again where sharedGlobals names it already), with a note; the note that a
// tsconfig extends an undeclared root file no longer fires for it.
func TestInitNxRootTsconfig(t *testing.T) {
	base := map[string]string{
		"package.json":             `{"name": "r", "workspaces": ["packages/*"]}`,
		"packages/a/package.json":  `{"name": "a", "scripts": {"build": "tsc"}}`,
		"packages/a/tsconfig.json": `{"extends": "../../tsconfig.json"}`,
		"tsconfig.json":            `{"compilerOptions": {"strict": true}}`,
	}
	cases := []struct {
		name, nx, extra, want string
		noted                 bool
	}{
		{"tsconfig.json", `{"targetDefaults": {"build": {"cache": true, "inputs": ["{projectRoot}/src/**"]}}}`, "", "globalInputs: ['//tsconfig.json'],", true},
		{"base first", `{"targetDefaults": {"build": {"cache": true}}}`, "tsconfig.base.json", "globalInputs: ['//tsconfig.base.json'],", true},
		{"named already", `{"namedInputs": {"default": ["{projectRoot}/**/*", "sharedGlobals"], "sharedGlobals": ["{workspaceRoot}/tsconfig.json"]}}`, "", "globalInputs: ['//tsconfig.json'],", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := map[string]string{"nx.json": c.nx}
			for k, v := range base {
				files[k] = v
			}
			if c.extra != "" {
				files[c.extra] = `{"compilerOptions": {"strict": true}}`
			}
			p, written := planFiles(t, writeFiles(t, files))
			if ws := written["vx.workspace.ts"]; !strings.Contains(ws, c.want) {
				t.Errorf("vx.workspace.ts lacks %q:\n%s", c.want, ws)
			}
			if got := hasNote(p, "Nx hashes the compilerOptions of the root"); got != c.noted {
				t.Errorf("root tsconfig note: %v, want %v: %q", got, c.noted, p.Notes)
			}
			if c.extra == "" && hasNote(p, "tsconfig.json is extended by") {
				t.Errorf("the extends note fired for a declared file: %q", p.Notes)
			}
		})
	}
}
