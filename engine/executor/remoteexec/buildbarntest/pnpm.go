package buildbarntest

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/vzn/vx/internal/testkit"
)

// PnpmVersion is the pnpm the install-action tests run, here and on the worker.
const PnpmVersion = "10.34.8"

// Pnpm answers a folder holding a `pnpm` program that every user can run (the worker runs
// actions as nobody when the test runs as root): pnpm PnpmVersion, installed once with npm into
// the tests' tool folder outside the checkout, copied into a folder of the test's own that is
// removed when it ends.
func Pnpm(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed, so pnpm cannot run")
	}
	pkg := filepath.Join(installPnpm(t), "node_modules", "pnpm")
	dir := traversableDir(t)
	if err := copyTree(pkg, filepath.Join(dir, "pnpm")); err != nil {
		t.Fatalf("copy pnpm: %v", err)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "pnpm", "bin", "pnpm.cjs"), filepath.Join(bin, "pnpm")); err != nil {
		t.Fatal(err)
	}
	return bin
}

// installPnpm installs pnpm PnpmVersion with npm into the tool folder the first time, and
// answers the folder.
func installPnpm(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(testkit.ToolDir(t), "remoteexec-pnpm-"+PnpmVersion)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "pnpm", "bin", "pnpm.cjs")); err == nil {
		return dir
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "remoteexec-pnpm-*")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", tmp, "pnpm@"+PnpmVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("install pnpm %s with npm: %v\n%s", PnpmVersion, err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, "node_modules", "pnpm", "bin", "pnpm.cjs")); serr != nil {
			t.Fatal(err) // not another test binary's install finished first
		}
	}
	return dir
}

// copyTree copies the folder from to to: files with their modes made readable by all, links as
// they are.
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, dst)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, info.Mode().Perm()|0o444)
	})
}
