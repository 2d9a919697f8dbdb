package taskenv

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A PATH folder is readable, and the folders beside it, not the files beside it; nothing beside it
// when its parent is /, $HOME or a top-level folder that is not a system one: the usual PATH
// (/usr/bin:/bin) does not grant /, ~/bin does not grant ~. A PATH folder that is $HOME (or holds
// it) grants its programs only.
func TestPathReadDirs(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home", "me")
	for _, dir := range []string{"bin", ".cargo/bin", ".cargo/registry", "tools/node/bin", "tools/node/lib"} {
		if err := os.MkdirAll(filepath.Join(home, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, mode := range map[string]os.FileMode{".cargo/credentials.toml": 0o600, ".bashrc": 0o644, "prog": 0o755, "tools/node/README": 0o644} {
		if err := os.WriteFile(filepath.Join(home, name), nil, mode); err != nil {
			t.Fatal(err)
		}
	}
	in := func(rel ...string) (out []string) {
		for _, r := range rel {
			out = append(out, filepath.Join(home, r))
		}
		return out
	}
	path := strings.Join(append(in("bin", ".cargo/bin", "tools/node/bin"), home, "/usr/bin", "/bin", "relative/bin"), ":")
	got := pathReadDirs([]string{"HOME=" + home, "PATH=" + path})
	want := slices.Concat(in("bin", ".cargo/bin", ".cargo/bin", ".cargo/registry", "tools/node/bin", "tools/node/bin", "tools/node/lib", "prog"),
		[]string{"/usr/bin"}, entriesOf("/usr", isFolder), []string{"/bin"})
	if !slices.Equal(got, want) {
		t.Errorf("pathReadDirs:\n got %q\nwant %q", got, want)
	}
	for _, dir := range []string{"/", "/home", "/tmp", home, filepath.Dir(home)} {
		if !broadFolder(dir, home) {
			t.Errorf("%s is not a broad folder", dir)
		}
	}
	for _, dir := range []string{"/usr", "/opt", "/usr/local", filepath.Join(home, ".cargo")} {
		if broadFolder(dir, home) {
			t.Errorf("%s is a broad folder", dir)
		}
	}
}
