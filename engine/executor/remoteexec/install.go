package remoteexec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// InstallSpec is a workspace's install action: its package manager's frozen install, run at the
// root of an input root that holds exactly the files the manager reads (the lockfile, the root's
// and every project's package.json, the manager's config files and patches), collecting every
// node_modules folder. Its Action is determined by those files, the manager and its version, the
// command's PATH and HOME, and the platform.
type InstallSpec struct {
	// Manager is npm, pnpm, yarn (Yarn 1), yarn-berry (Yarn 2 and later) or bun.
	Manager string
	// Version is the manager's version the worker must report.
	Version string
	// Lockfile is the lockfile's name at the root.
	Lockfile string
	// Install is the install command (`pnpm install --frozen-lockfile`), for messages.
	Install string
	// Files are the input root's files, slash-separated and relative to the workspace root.
	Files []string
	// Outputs are the node_modules folders collected: the root's and every project's.
	Outputs []string
}

// lockfiles are the lockfiles an install action installs from, by manager, in the order one is
// chosen when the root's package.json names no packageManager.
var lockfiles = []struct{ name, manager string }{
	{"pnpm-lock.yaml", "pnpm"}, {"bun.lock", "bun"}, {"bun.lockb", "bun"}, {"yarn.lock", "yarn"},
	{"package-lock.json", "npm"}, {"npm-shrinkwrap.json", "npm"},
}

// installConfigFiles are the root files a package manager reads beside the lockfile and the
// package.json files; installConfigDirs are the root folders of its patches, releases and plugins.
var (
	installConfigFiles = []string{".npmrc", ".yarnrc", ".yarnrc.yml", "pnpm-workspace.yaml", ".pnpmfile.cjs", "bunfig.toml"}
	installConfigDirs  = []string{"patches", ".yarn/patches", ".yarn/releases", ".yarn/plugins"}
)

// DetectInstall answers the install action of the workspace at root (absolute) whose projects
// lie in projectDirs (slash-separated, relative to root, "." for the root); nil when the root
// holds no lockfile. The manager's version is the root package.json's packageManager field, else
// what localVersion answers for the manager (its --version on this machine); an error when
// neither names it, when packageManager names another manager than the lockfile's, or for Yarn's
// Plug'n'Play, whose install makes no node_modules.
func DetectInstall(root string, projectDirs []string, localVersion func(manager string) (string, error)) (*InstallSpec, error) {
	pm, err := rootPackageManager(root)
	if err != nil {
		return nil, err
	}
	spec := lockfileOf(root, pm)
	if spec == nil {
		return nil, nil
	}
	if err := spec.resolveVersion(pm, localVersion); err != nil {
		return nil, err
	}
	if err := spec.checkLinker(root); err != nil {
		return nil, err
	}
	spec.Install = installCommands[spec.Manager]
	if spec.Files, err = installFiles(root, spec.Lockfile, projectDirs); err != nil {
		return nil, err
	}
	spec.Outputs = []string{"node_modules"}
	for _, d := range projectDirs {
		if d != "." && d != "" {
			spec.Outputs = append(spec.Outputs, path.Join(d, "node_modules"))
		}
	}
	slices.Sort(spec.Outputs)
	spec.Outputs = slices.Compact(spec.Outputs)
	return spec, nil
}

// installCommands are the frozen installs, by manager: each refuses a lockfile that does not
// match the package.json files rather than rewriting it.
var installCommands = map[string]string{
	"pnpm":       "pnpm install --frozen-lockfile",
	"npm":        "npm ci",
	"yarn":       "yarn install --frozen-lockfile",
	"yarn-berry": "yarn install --immutable",
	"bun":        "bun install --frozen-lockfile",
}

// rootPackageManager reads the packageManager field of the root's package.json ("" when absent).
func rootPackageManager(root string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, "package.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read package.json: %w", err)
	}
	var m struct {
		PackageManager any `json:"packageManager"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return "", fmt.Errorf("package.json: %w", err)
	}
	switch v := m.PackageManager.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	}
	return "", errors.New("package.json: packageManager is not a string")
}

// lockfileOf answers the spec of the lockfile at root (nil for none): the one of the manager pm
// names when it names one, else the first of lockfiles present.
func lockfileOf(root, pm string) *InstallSpec {
	want, _, _ := strings.Cut(pm, "@")
	for _, l := range lockfiles {
		if want != "" && l.manager != want {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(root, l.name)); err == nil && fi.Mode().IsRegular() {
			return &InstallSpec{Manager: l.manager, Lockfile: l.name}
		}
	}
	return nil
}

// resolveVersion sets the manager's version from pm (name@version[+hash]) or localVersion, and
// tells Yarn 1 from its successors.
func (s *InstallSpec) resolveVersion(pm string, localVersion func(string) (string, error)) error {
	name, version, _ := strings.Cut(pm, "@")
	version, _, _ = strings.Cut(version, "+")
	switch {
	case pm != "" && (name != s.Manager || version == ""):
		return fmt.Errorf("package.json's packageManager %q does not name a version of %s, whose lockfile %s the root holds", pm, s.Manager, s.Lockfile)
	case version == "" && localVersion != nil:
		v, err := localVersion(s.Manager)
		if err != nil {
			return fmt.Errorf("the version of %s (for the install action over %s): set packageManager in package.json, or put %s on PATH: %w", s.Manager, s.Lockfile, s.Manager, err)
		}
		version = strings.TrimSpace(v)
	}
	if version == "" || strings.ContainsAny(version, " \t\n'\"$`\\") {
		return fmt.Errorf("the version of %s (for the install action over %s) is not known: set packageManager in package.json", s.Manager, s.Lockfile)
	}
	s.Version = version
	if s.Manager == "yarn" {
		if major, err := strconv.Atoi(strings.SplitN(version, ".", 2)[0]); err == nil && major >= 2 {
			s.Manager = "yarn-berry"
		}
	}
	return nil
}

// checkLinker refuses Yarn 2's Plug'n'Play: its install makes a .pnp.cjs that names the
// machine's own cache, not node_modules folders.
func (s *InstallSpec) checkLinker(root string) error {
	if s.Manager != "yarn-berry" {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(root, ".yarnrc.yml"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read .yarnrc.yml: %w", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == "nodeLinker" && strings.Trim(strings.TrimSpace(v), `"'`) == "node-modules" {
			return nil
		}
	}
	return errors.New("yarn's Plug'n'Play install makes no node_modules: set nodeLinker: node-modules in .yarnrc.yml for remote execution")
}

// installFiles answers the files of an install's input root that exist: the lockfile, the root's
// and each project's package.json and .npmrc, the manager's config files, and the files of its
// patch, release and plugin folders; sorted, each once.
func installFiles(root, lockfile string, projectDirs []string) ([]string, error) {
	want := []string{lockfile, "package.json"}
	want = append(want, installConfigFiles...)
	for _, d := range projectDirs {
		if d != "." && d != "" {
			want = append(want, path.Join(d, "package.json"), path.Join(d, ".npmrc"))
		}
	}
	var files []string
	for _, f := range want {
		if err := checkPath(f); err != nil {
			return nil, err
		}
		if fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(f))); err == nil && (fi.Mode().IsRegular() || fi.Mode()&fs.ModeSymlink != 0) {
			files = append(files, f)
		}
	}
	for _, d := range installConfigDirs {
		found, err := filesUnder(root, d)
		if err != nil {
			return nil, err
		}
		files = append(files, found...)
	}
	slices.Sort(files)
	return slices.Compact(files), nil
}

// filesUnder answers the regular files and links under the root-relative folder dir (none when
// it does not exist).
func filesUnder(root, dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(filepath.Join(root, filepath.FromSlash(dir)), func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0 {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("install files under %s: %w", dir, err)
	}
	return out, nil
}

// Shell is the install action's command: it checks that the worker's manager is the version the
// workspace asks for (a worker without it, or with another, fails the action saying so), then
// runs the frozen install.
func (s *InstallSpec) Shell() string {
	bin, _, _ := strings.Cut(s.Install, " ")
	return fmt.Sprintf(`v=$(%[1]s --version 2>/dev/null) || { echo "vx: %[1]s is not on the worker's PATH ($PATH)" >&2; exit 127; }
[ "$v" = '%[2]s' ] || { echo "vx: the worker's %[1]s is $v; the workspace asks for %[2]s" >&2; exit 1; }
exec %[3]s`, bin, s.Version, s.Install)
}
