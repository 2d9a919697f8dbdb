package buildbarntest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vzn/vx/internal/testkit"
)

// registryDeps are the small registry packages (no dependencies of their own) the generated
// workspace's packages use, by name and exact version.
var registryDeps = [][2]string{{"ms", "2.1.3"}, {"is-number", "7.0.0"}, {"left-pad", "1.3.0"}}

// PackageName answers the name of the generated workspace's package i (p00, p01, …), which lives
// in packages/<name> and is published as @ws/<name>.
func PackageName(i int) string { return fmt.Sprintf("p%02d", i) }

// PackageDeps answers the packages package i depends on with workspace:* (the two before it).
func PackageDeps(i int) []int {
	var out []int
	for _, d := range []int{i - 1, i - 2} {
		if d >= 0 {
			out = append(out, d)
		}
	}
	return out
}

// PnpmWorkspace answers the files of a pnpm workspace of n packages (slash path → text), without
// its lockfile: each package depends on the two before it (workspace:*) and on one registry
// package, and its build.js, run with node in its folder, writes dist/index.js from its
// dependencies' dist (through node_modules) and the registry package (the path node resolved
// it to included, so that a different node_modules layout shows).
func PnpmWorkspace(n int) map[string]string {
	files := map[string]string{
		"package.json":        `{"name": "ws-root", "private": true, "packageManager": "pnpm@` + PnpmVersion + `"}` + "\n",
		"pnpm-workspace.yaml": "packages:\n  - packages/*\n",
		".npmrc":              "auto-install-peers=false\n",
	}
	for i := range n {
		name := PackageName(i)
		reg := registryDeps[i%len(registryDeps)]
		deps := []string{fmt.Sprintf("%q: %q", reg[0], reg[1])}
		var requires []string
		for _, d := range PackageDeps(i) {
			dep := "@ws/" + PackageName(d)
			deps = append(deps, fmt.Sprintf("%q: \"workspace:*\"", dep))
			requires = append(requires, fmt.Sprintf("%q: require(%q)", dep, dep))
		}
		files["packages/"+name+"/package.json"] = fmt.Sprintf(`{"name": "@ws/%s", "version": "1.0.0", "main": "dist/index.js", "dependencies": {%s}}`+"\n",
			name, strings.Join(deps, ", "))
		files["packages/"+name+"/build.js"] = fmt.Sprintf(`const fs = require('fs');
const path = require('path');
const reg = require(%[1]q);
const deps = {%[2]s};
const use = {ms: () => reg('2 days'), 'is-number': () => reg('%[3]d'), 'left-pad': () => reg('%[3]d', 5, '0')}[%[1]q];
const value = {name: '%[4]s', registry: use(), resolved: path.relative(process.cwd(), require.resolve(%[1]q)),
  deps: Object.fromEntries(Object.entries(deps).map(([k, v]) => [k, v.value.name + '<' + Object.keys(v.value.deps).join(',') + '>']))};
fs.mkdirSync('dist', {recursive: true});
fs.writeFileSync('dist/index.js', 'module.exports = ' + JSON.stringify({value}, null, 1) + ';\n');
console.log('built %[4]s');
`, reg[0], strings.Join(requires, ", "), i, name)
	}
	return files
}

// PnpmLockfile writes files into a new folder, runs pnpm (in pnpmBin) to resolve its lockfile
// from the npm registry without installing, and answers the lockfile's text.
func PnpmLockfile(t testing.TB, pnpmBin string, files map[string]string) string {
	t.Helper()
	dir := testkit.TempTree(t, files)
	PnpmRun(t, pnpmBin, dir, "install", "--lockfile-only")
	data, err := os.ReadFile(filepath.Join(dir, "pnpm-lock.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// PnpmRun runs pnpm (in pnpmBin) with args in dir on this machine, failing the test with its
// output when it fails.
func PnpmRun(t testing.TB, pnpmBin, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(pnpmBin, "pnpm"), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+pnpmBin+string(os.PathListSeparator)+os.Getenv("PATH"), "CI=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pnpm %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
}
