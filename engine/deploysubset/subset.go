// Package deploysubset writes the part of a workspace that named projects need to install and
// build on their own (`vx prune`): their folders and those of every workspace dependency, the root
// files the package manager reads, and the lockfile pruned to exactly the packages they resolve.
//
// Everything is read and checked before anything is written: an unknown project, a lockfile that
// cannot be read or pruned, or an output folder that holds files leaves the disk as it was.
package deploysubset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/vzn/vx/engine/vxerr"
	"github.com/vzn/vx/engine/workspace"
)

// DefaultOutDir is the output folder, relative to the workspace root, when none is named.
const DefaultOutDir = "out"

// Request names what to prune.
type Request struct {
	// Root is the workspace root (absolute).
	Root string
	// Projects are the package names to deploy.
	Projects []string
	// Docker writes json/ (package manifests and install files) and full/ (sources) under the
	// output folder, the pruned lockfile at its top.
	Docker bool
	// Production leaves out devDependencies: of the package manifests, of the workspace
	// closure and of the lockfile.
	Production bool
	// OutDir is the output folder; relative to Root unless absolute; "" means DefaultOutDir.
	OutDir string
}

// Result is what `vx prune` wrote; it is also its --format json document.
type Result struct {
	// OutDir is the output folder (absolute).
	OutDir string `json:"outDir"`
	// PackageManager is the manager whose lockfile was pruned: npm, pnpm, yarn, yarn-berry or bun.
	PackageManager string `json:"packageManager"`
	// Lockfile is the pruned lockfile's name.
	Lockfile string `json:"lockfile"`
	// Projects are the kept workspace packages (the named ones and their workspace
	// dependencies), sorted by name, with their folders.
	Projects []KeptProject `json:"projects"`
	// Packages counts the lockfile's external package entries kept, of Total before.
	Packages int `json:"packages"`
	// Total counts the lockfile's external package entries before pruning.
	Total int `json:"total"`
	// Files counts the files written.
	Files int `json:"files"`
}

// KeptProject is one kept workspace package.
type KeptProject struct {
	// Name is the package's name.
	Name string `json:"name"`
	// Dir is its folder, a slash path relative to the workspace root.
	Dir string `json:"dir"`
}

// Run prunes the workspace at req.Root for req.Projects and writes the subset.
func Run(ctx context.Context, req Request) (*Result, error) {
	if len(req.Projects) == 0 {
		return nil, vxerr.Usagef("name at least one project to prune (vx prune <project>...)")
	}
	ws, err := loadWorkspace(req.Root)
	if err != nil {
		return nil, err
	}
	kept, err := ws.closure(req.Projects, req.Production)
	if err != nil {
		return nil, err
	}
	lf, err := detectLockfile(req.Root, ws.root)
	if err != nil {
		return nil, err
	}
	pruned, err := lf.prune(ws, kept, req.Production)
	var usage *vxerr.UsageError
	if err != nil && !errors.As(err, &usage) { // a refusal names the lockfile already
		return nil, fmt.Errorf("prune %s: %w", lf.name, err)
	}
	if err != nil {
		return nil, err
	}
	out := req.OutDir
	if out == "" {
		out = DefaultOutDir
	}
	if !filepath.IsAbs(out) {
		out = filepath.Join(req.Root, out)
	}
	plan, err := planFiles(ctx, req, ws, kept, lf, pruned, out)
	if err != nil {
		return nil, err
	}
	if err := checkOutDir(out); err != nil {
		return nil, err
	}
	n, err := plan.writeWhole(out)
	if err != nil {
		return nil, err
	}
	res := &Result{OutDir: out, PackageManager: lf.manager, Lockfile: lf.name,
		Packages: pruned.kept, Total: pruned.total, Files: n}
	for _, p := range kept {
		res.Projects = append(res.Projects, KeptProject{Name: p.name, Dir: p.dir})
	}
	sort.Slice(res.Projects, func(i, j int) bool { return res.Projects[i].Name < res.Projects[j].Name })
	return res, nil
}

// checkOutDir refuses an output folder that exists and holds anything, so a prune never mixes
// with an earlier one or overwrites a user's files.
func checkOutDir(out string) error {
	entries, err := os.ReadDir(out)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read output folder %s: %w", out, err)
	}
	if len(entries) > 0 {
		return vxerr.Usagef("output folder %s is not empty: remove it or name another with --out-dir", out)
	}
	return nil
}

// FindRoot answers the workspace root above dir: the folder of vx.workspace.ts, else the nearest
// folder holding pnpm-workspace.yaml or a package.json that declares workspaces, so that a
// repository that has not adopted vx can still be pruned.
func FindRoot(dir string) (string, error) {
	root, err := workspace.FindRoot(dir)
	if err == nil {
		return root, nil
	}
	abs, aerr := filepath.Abs(dir)
	if aerr != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, serr := os.Stat(filepath.Join(d, "pnpm-workspace.yaml")); serr == nil {
			return d, nil
		}
		if m, merr := readManifest(filepath.Join(d, "package.json")); merr == nil && len(m.Workspaces) > 0 {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", err
		}
	}
}
