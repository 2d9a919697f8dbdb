package initplan

import (
	"os/exec"
	"strings"
	"testing"
)

// TestInitClimbingFileInputs: a file outside the project that a package script names by a
// relative path, or a script it runs in turn does (eslint/rewrite's build runs `npm run
// build:cts`, which runs `node ../../tools/build-cts.js`; lwc's runs `rollup --config
// ../../../scripts/rollup/rollup.config.js`), becomes an input of the task, with a note; a path
// into another project, a git-ignored file, a folder (`cd ../..`), a file globalInputs already
// takes in and a task that is not cached are left alone.
func TestInitClimbingFileInputs(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		".gitignore":                      "node_modules/\ndist/\ngen/\n",
		"package.json":                    `{"name": "r", "workspaces": ["packages/*", "packages/@s/*"]}`,
		"package-lock.json":               `{"lockfileVersion": 3}`,
		"tools/build-cts.js":              "// writes .d.cts",
		"scripts/rollup/rollup.config.js": "export default {}",
		"gen/made.js":                     "// ignored",
		"packages/a/package.json": `{"name": "a", "scripts": {"build": "rollup -c && npm run build:cts",
			"build:cts": "node ../../tools/build-cts.js dist/index.d.ts", "dev": "node ../../tools/build-cts.js --watch"}}`,
		"packages/b/package.json": `{"name": "b", "dependencies": {"a": "*"}, "scripts": {"build": "cd ../.. && node ../b/x.js && cat ../a/src/x.ts ../../gen/made.js",
			"build:cts": "node -e 1", "dev": "node x --watch"}}`,
		"packages/a/src/x.ts":        "export {}",
		"packages/@s/c/package.json": `{"name": "c", "scripts": {"build": "rollup --config ../../../scripts/rollup/rollup.config.js"}}`,
	})
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	p, files := planFiles(t, dir)
	all := files["vx.workspace.ts"] + files["packages/a/vx.project.ts"] + files["packages/b/vx.project.ts"] + files["packages/@s/c/vx.project.ts"]
	for _, want := range []string{"'//tools/build-cts.js'", "'//scripts/rollup/rollup.config.js'"} {
		if !strings.Contains(all, want) {
			t.Errorf("no input %s:\n%s", want, all)
		}
	}
	if strings.Count(all, "'//tools/build-cts.js'") != 2 {
		t.Errorf("a's build and build:cts take tools/build-cts.js, nothing else does:\n%s", all)
	}
	for _, not := range []string{"'//gen/", "'//packages/", "'//.'", "'//'"} {
		if strings.Contains(all, not) {
			t.Errorf("%s became an input:\n%s", not, all)
		}
	}
	if !hasNote(p, "files outside the project that a task's scripts name by a relative path became its inputs") || !hasNote(p, "//tools/build-cts.js (2 tasks: a#build, a#build:cts)") {
		t.Errorf("notes: %q", p.Notes)
	}

	// with the file in globalInputs already (Nx's sharedGlobals), no task takes it again
	dir = writeFiles(t, map[string]string{
		"package.json":             `{"name": "r", "workspaces": ["packages/*"]}`,
		"nx.json":                  `{"namedInputs": {"default": ["{projectRoot}/**/*", "sharedGlobals"], "sharedGlobals": ["{workspaceRoot}/scripts/rollup.config.js"]}, "targetDefaults": {"build": {"cache": true}}}`,
		"scripts/rollup.config.js": "export default {}",
		"packages/c/package.json":  `{"name": "c", "scripts": {"build": "rollup --config ../../scripts/rollup.config.js"}}`,
	})
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	p, files = planFiles(t, dir)
	if ws := files["vx.workspace.ts"]; strings.Count(ws, "//scripts/rollup.config.js") != 1 || hasNote(p, "became its inputs") {
		t.Errorf("a globalInput taken again:\n%s\n%q", ws, p.Notes)
	}
}
