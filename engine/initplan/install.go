package initplan

import (
	"path/filepath"
	"strings"
)

// vxPackages are the npm packages a config written by vx init imports: @vzn/vx (the vx command and
// @vzn/vx/config's types) and @vzn/vx-mcp (mcp()).
const vxPackages = "@vzn/vx @vzn/vx-mcp"

// installStep is the command that adds vx to the repository's dev dependencies with its package
// manager, so that the team and CI run the version its lockfile pins and editors type the config:
// "" without a root package.json, or when it already lists @vzn/vx. vx init never edits
// package.json itself; the step says how.
func installStep(r *repo) string {
	if r.rootPkg == nil {
		return ""
	}
	for _, deps := range []map[string]string{r.rootPkg.DevDependencies, r.rootPkg.Dependencies} {
		if _, ok := deps["@vzn/vx"]; ok {
			return ""
		}
	}
	return addDev(r) + vxPackages
}

// addDev is the package manager's command that adds root dev dependencies, up to the packages.
func addDev(r *repo) string {
	switch r.pm {
	case "pnpm":
		if exists(filepath.Join(r.root, "pnpm-workspace.yaml")) {
			return "pnpm add -D -w " // pnpm refuses a root dependency without -w
		}
		return "pnpm add -D "
	case "yarn":
		if len(r.globs) > 0 && yarnClassic(r) {
			return "yarn add -D -W " // Yarn 1 refuses a workspace root dependency without -W
		}
		return "yarn add -D "
	case "bun":
		return "bun add -d "
	}
	return "npm install -D "
}

// unpublishedSteps say, as shell comments after the install step, how to get vx before its
// packages are on the npm registry (where the install step fails): its packages built for this
// machine's platform (as Node names it, as @vzn/vx's optionalDependencies pick it) in a clone of
// vx by npm/build.sh and added from its npm/dist, or its programs installed with go install. Each
// indented line, its "#" taken away, is a shell command as written.
func unpublishedSteps(r *repo) []string {
	return []string{
		"# before @vzn/vx is on the npm registry, build its packages for this platform in a clone of vx and add them from there:",
		`#   p=$(node -p "process.platform+'-'+process.arch"); bash npm/build.sh --platforms $p   # in the clone`,
		"#   d=/path/to/vx/npm/dist; " + addDev(r) + "$d/vzn-vx-[0-9]*.tgz $d/vzn-vx-mcp-*.tgz $d/vzn-vx-$p-*.tgz",
		"# or, without the packages: CGO_ENABLED=0 go install github.com/vzn/vx/cmd/...@latest (in a clone of vx: CGO_ENABLED=0 go install ./cmd/vx ./cmd/vx-sandbox)",
	}
}

// yarnClassic reports whether the repository uses Yarn 1: packageManager says yarn@1, or says no
// version and there is no .yarnrc.yml (which only Yarn 2 and later read).
func yarnClassic(r *repo) bool {
	if pm := r.rootPkg.PackageManager; strings.HasPrefix(pm, "yarn@") {
		return strings.HasPrefix(pm, "yarn@1.")
	}
	return !exists(filepath.Join(r.root, ".yarnrc.yml"))
}

// installedFiles are the files the install step changes, to commit with the config: package.json
// and the package manager's lockfile.
func installedFiles(r *repo) []string {
	lockfile := map[string]string{"npm": "package-lock.json", "pnpm": "pnpm-lock.yaml", "yarn": "yarn.lock", "bun": "bun.lock"}[r.pm]
	for _, lf := range lockfiles {
		if lf.pm == r.pm && exists(filepath.Join(r.root, lf.file)) {
			lockfile = lf.file
			break
		}
	}
	return []string{"package.json", lockfile}
}
