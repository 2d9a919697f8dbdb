package deploysubset

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPruneRealRepositories prunes checkouts of real monorepos named by VX_PRUNE_REPOS
// ("DIR=PROJECT" pairs, comma-separated), installs each pruned json/ with its manager's frozen
// install (scripts not run), and, where VX_PRUNE_TURBO names a turbo binary, checks that turbo
// prune --docker writes the same files but full/turbo.json. The checkouts are not part of vx,
// so the test runs only when they are named; docs/deploy.md lists the ones it ran on.
func TestPruneRealRepositories(t *testing.T) {
	repos := os.Getenv("VX_PRUNE_REPOS")
	if repos == "" {
		t.Skip("VX_PRUNE_REPOS names no checkout (DIR=PROJECT,...)")
	}
	for _, pair := range strings.Split(repos, ",") {
		dir, project, ok := strings.Cut(pair, "=")
		if !ok {
			t.Fatalf("VX_PRUNE_REPOS: %q is not DIR=PROJECT", pair)
		}
		t.Run(filepath.Base(dir), func(t *testing.T) { checkRealRepository(t, dir, project) })
	}
}

// ignoreScripts is each manager's flag that installs without running packages' scripts.
var ignoreScripts = map[string]string{
	"npm": "--ignore-scripts", "pnpm": "--ignore-scripts", "yarn": "--ignore-scripts",
	"yarn-berry": "--mode=skip-build", "bun": "--ignore-scripts",
}

func checkRealRepository(t *testing.T, dir, project string) {
	out := filepath.Join(t.TempDir(), "vx")
	res, err := Run(context.Background(), Request{Root: dir, Projects: []string{project}, Docker: true, OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %s, %d of %d packages kept, %d files", project, res.Lockfile, res.Packages, res.Total, res.Files)
	if turbo := os.Getenv("VX_PRUNE_TURBO"); turbo != "" {
		theirs := filepath.Join(t.TempDir(), "turbo")
		cmd := exec.Command(turbo, "prune", project, "--docker", "--out-dir", theirs)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "TURBO_TELEMETRY_DISABLED=1", "DO_NOT_TRACK=1")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("turbo prune: %v\n%s", err, b)
		}
		want := slices.DeleteFunc(listFiles(t, theirs), func(f string) bool { return f == "full/turbo.json" })
		if got := listFiles(t, out); !slices.Equal(got, want) {
			t.Errorf("vx prune and turbo prune (but full/turbo.json) differ:\nvx only %q\nturbo only %q",
				minus(got, want), minus(want, got))
		}
	}
	m := managers(managerTools(t, res.PackageManager))[res.PackageManager]
	if m.name == "yarn-berry" { // --immutable compares text, which each Yarn release writes its own way
		m.frozen[1] = berryRelease(t, dir)
	}
	image := t.TempDir()
	copyTree(t, filepath.Join(out, "json"), image)
	run(t, image, append(m.frozen, ignoreScripts[m.name])...)
}

// berryRelease answers the yarn.js of the Yarn release the root package.json's packageManager
// names, installed once into the user's cache folder.
func berryRelease(t *testing.T, dir string) string {
	t.Helper()
	man, err := readManifest(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimPrefix(strings.SplitN(man.PackageManager, "+", 2)[0], "yarn@")
	if version == "" || !strings.HasPrefix(man.PackageManager, "yarn@") {
		version = berryVersion
	}
	base, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Join(base, "vx-test", "deploysubset-yarn-"+version)
	js := filepath.Join(prefix, "node_modules", "@yarnpkg", "cli-dist", "bin", "yarn.js")
	if _, err := os.Stat(js); err == nil {
		return js
	}
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", prefix, "@yarnpkg/cli-dist@"+version)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("install Yarn %s: %v\n%s", version, err, b)
	}
	return js
}

// listFiles answers the files under dir, slash paths relative to it, sorted.
func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := walkFiles(dir, ".", "")
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		rel, _ := filepath.Rel(dir, filepath.Join(dir, f))
		files[i] = filepath.ToSlash(rel)
	}
	slices.Sort(files)
	return files
}

// minus answers the elements of a not in b.
func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
