package deploysubset

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/vzn/vx/engine/git"
)

// planned is one file of the output: copied from src, or written from data.
type planned struct {
	src  string // absolute; "" when data is set
	data []byte
}

// plan is every file of the output by slash path relative to the output folder.
type plan map[string]planned

// installFiles are root files the package manager reads to install: they go beside the package
// manifests (json/ with --docker) and the sources.
var installFiles = []string{".npmrc", ".yarnrc.yml", ".yarnrc", "bunfig.toml", ".pnpmfile.cjs", "pnpm-workspace.yaml"}

// installDirs are root folders the package manager reads to install (Yarn's own release and
// plugins, and its patches).
var installDirs = []string{".yarn/releases", ".yarn/plugins", ".yarn/patches"}

// sourceFiles are root files only the sources need.
var sourceFiles = []string{".gitignore", ".gitattributes", "vx.workspace.ts", "vx.lock"}

// planFiles lays out the output: with docker, json/ (manifests and install files), full/ (the
// sources) and the lockfile at the top (and in json/); without, all of it in the output folder.
func planFiles(ctx context.Context, req Request, ws *pmWorkspace, kept []*pkg, lf *lockfile,
	pruned *prunedLock, out string) (plan, error) {
	p := plan{}
	full, jsonDir := "", ""
	if req.Docker {
		full, jsonDir = "full", "json"
	}
	put := func(rel string, f planned, both bool) {
		p[path.Join(full, rel)] = f
		if req.Docker && both {
			p[path.Join(jsonDir, rel)] = f
		}
	}
	lister, err := newLister(ctx, req.Root, out)
	if err != nil {
		return nil, err
	}
	for _, k := range kept {
		files, err := lister.list(k.dir)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			put(f, planned{src: filepath.Join(req.Root, filepath.FromSlash(f))}, false)
		}
	}
	for _, k := range append([]*pkg{ws.root}, kept...) {
		f, err := manifestFile(req.Root, k.dir, req.Production)
		if err != nil {
			return nil, err
		}
		put(path.Join(k.dir, "package.json"), f, true)
	}
	if err := planRootFiles(req.Root, ws, pruned, put); err != nil {
		return nil, err
	}
	lock := planned{data: pruned.data}
	p[lf.name] = lock
	if req.Docker {
		p[path.Join(jsonDir, lf.name)] = lock
		if _, err := os.Stat(filepath.Join(req.Root, "pnpm-workspace.yaml")); err == nil {
			p["pnpm-workspace.yaml"] = planned{src: filepath.Join(req.Root, "pnpm-workspace.yaml")}
		}
	}
	return p, nil
}

// planRootFiles adds the root's install files and folders, the patches the workspace names, and
// the files only the sources need.
func planRootFiles(root string, ws *pmWorkspace, pruned *prunedLock, put func(string, planned, bool)) error {
	exists := func(rel string) bool {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
		return err == nil
	}
	for _, f := range installFiles {
		if exists(f) {
			put(f, planned{src: filepath.Join(root, f)}, true)
		}
	}
	for _, d := range installDirs {
		files, err := walkFiles(root, d, "")
		if err != nil {
			return err
		}
		for _, f := range files {
			put(f, planned{src: filepath.Join(root, filepath.FromSlash(f))}, true)
		}
	}
	patches, err := patchFiles(root, ws, pruned)
	if err != nil {
		return err
	}
	for _, f := range patches {
		if !exists(f) {
			return fmt.Errorf("patch %s named by the workspace is missing", f)
		}
		put(f, planned{src: filepath.Join(root, filepath.FromSlash(f))}, true)
	}
	for _, f := range sourceFiles {
		if exists(f) {
			put(f, planned{src: filepath.Join(root, f)}, false)
		}
	}
	return nil
}

// patchFiles answers the patch files the lockfile, the root package.json and
// pnpm-workspace.yaml name, refusing one outside the root.
func patchFiles(root string, ws *pmWorkspace, pruned *prunedLock) ([]string, error) {
	set := map[string]bool{}
	for _, f := range pruned.files {
		set[f] = true
	}
	for _, m := range []map[string]string{ws.root.man.PatchedDependencies, ws.root.man.Pnpm.PatchedDependencies} {
		for _, f := range m {
			set[f] = true
		}
	}
	if data, err := os.ReadFile(filepath.Join(root, "pnpm-workspace.yaml")); err == nil {
		var doc struct {
			PatchedDependencies map[string]string `yaml:"patchedDependencies"`
		}
		if yaml.Unmarshal(data, &doc) == nil {
			for _, f := range doc.PatchedDependencies {
				set[f] = true
			}
		}
	}
	var files []string
	for f := range set {
		clean := path.Clean(filepath.ToSlash(f))
		if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
			return nil, fmt.Errorf("patch %s lies outside the workspace", f)
		}
		files = append(files, clean)
	}
	sort.Strings(files)
	return files, nil
}

// manifestFile is a package.json for the output: copied, or without devDependencies in
// production.
func manifestFile(root, dir string, production bool) (planned, error) {
	src := filepath.Join(root, filepath.FromSlash(dir), "package.json")
	if !production {
		return planned{src: src}, nil
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return planned{}, fmt.Errorf("read %s: %w", src, err)
	}
	out, _, err := dropTopKey(data, "devDependencies")
	if err != nil {
		return planned{}, fmt.Errorf("read %s: %w", src, err)
	}
	return planned{data: out}, nil
}

// lister lists a folder's files: through git (tracked and untracked, not ignored) in a
// repository, else by walking it without node_modules.
type lister struct {
	ctx    context.Context
	root   string
	out    string // the output folder, relative to root ("" when outside), never listed
	useGit bool
}

func newLister(ctx context.Context, root, out string) (*lister, error) {
	l := &lister{ctx: ctx, root: root}
	if rel, err := filepath.Rel(root, out); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		l.out = filepath.ToSlash(rel)
	}
	if top, err := git.Run(ctx, root, "rev-parse", "--show-toplevel"); err == nil && strings.TrimSpace(top) != "" {
		l.useGit = true
	}
	return l, nil
}

// list answers the files under dir, slash paths relative to the root, sorted.
func (l *lister) list(dir string) ([]string, error) {
	if !l.useGit {
		return walkFiles(l.root, dir, l.out)
	}
	stdout, err := git.Run(l.ctx, l.root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--full-name", "--", ":(literal)"+dir)
	if err != nil {
		return nil, fmt.Errorf("list the files of %s: %w", dir, err)
	}
	prefix, err := git.Run(l.ctx, l.root, "rev-parse", "--show-prefix")
	if err != nil {
		return nil, fmt.Errorf("list the files of %s: %w", dir, err)
	}
	prefix = strings.TrimSpace(prefix)
	var files []string
	for _, f := range strings.Split(stdout, "\x00") {
		f = strings.TrimPrefix(f, prefix)
		if f == "" || l.out != "" && strings.HasPrefix(f, l.out+"/") {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(l.root, filepath.FromSlash(f))); err != nil || fi.IsDir() {
			continue // deleted in the work tree, or a submodule
		}
		files = append(files, f)
	}
	sort.Strings(files)
	return files, nil
}

// walkFiles answers the files under dir (relative to root), without node_modules, .git, .vx
// and the skipped folder; none when dir does not exist.
func walkFiles(root, dir, skip string) ([]string, error) {
	var files []string
	base := filepath.Join(root, filepath.FromSlash(dir))
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && p == base {
				return fs.SkipAll
			}
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch {
			case p == base:
			case d.Name() == "node_modules", d.Name() == ".git", d.Name() == ".vx", rel == skip:
				return fs.SkipDir
			}
			return nil
		}
		if d.Type()&^fs.ModeSymlink != 0 {
			return nil // a pipe, socket or device is no source, and opening a pipe would block
		}
		files = append(files, rel)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list the files of %s: %w", dir, err)
	}
	return files, nil
}

// writeWhole writes the plan into a new folder beside out, then renames it to out (empty or
// absent, as checkOutDir saw), so that a failure part way leaves no output folder behind.
func (p plan) writeWhole(out string) (int, error) {
	parent := filepath.Dir(out)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return 0, fmt.Errorf("make %s: %w", parent, err)
	}
	tmp, err := os.MkdirTemp(parent, ".vx-prune-*")
	if err != nil {
		return 0, fmt.Errorf("make a folder beside %s: %w", out, err)
	}
	n, err := p.write(tmp)
	if err == nil {
		err = os.Chmod(tmp, 0o755)
	}
	if err == nil {
		if rmErr := os.Remove(out); rmErr != nil && !os.IsNotExist(rmErr) {
			err = fmt.Errorf("replace the empty %s: %w", out, rmErr)
		}
	}
	if err == nil {
		err = os.Rename(tmp, out)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return 0, err
	}
	return n, nil
}

// write writes the plan under out and answers how many files it wrote.
func (p plan) write(out string) (int, error) {
	names := make([]string, 0, len(p))
	for n := range p {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		dst := filepath.Join(out, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return 0, fmt.Errorf("write %s: %w", dst, err)
		}
		if err := p[n].writeTo(dst); err != nil {
			return 0, fmt.Errorf("write %s: %w", dst, err)
		}
	}
	return len(names), nil
}

// writeTo writes one planned file at dst: its data, or a copy of its source keeping the mode (a
// symbolic link is copied as a link).
func (f planned) writeTo(dst string) error {
	if f.src == "" {
		return os.WriteFile(dst, f.data, 0o644)
	}
	fi, err := os.Lstat(f.src)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(f.src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	}
	in, err := os.Open(f.src)
	if err != nil {
		return err
	}
	defer in.Close()
	o, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(o, in); err != nil {
		o.Close()
		return err
	}
	return o.Close()
}

// jsonString quotes s as JavaScript's JSON.stringify does (no HTML escapes).
func jsonString(s string) string {
	var b bytes.Buffer
	_ = writeString(&b, s) // a string always encodes
	return b.String()
}
