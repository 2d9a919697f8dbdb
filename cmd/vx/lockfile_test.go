package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// copyTree copies the folder src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func gitCommitAll(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "x"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=vx", "-c", "user.email=vx@example.com"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// runStatuses runs `vx run build` and answers each task's status, and vx's stderr.
func runStatuses(t *testing.T, dir string) (map[string]string, string) {
	t.Helper()
	cmd := vxCommand(t, dir, "run", "build", "--format", "json")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("vx run build: %v\n%s", err, stderr.String())
	}
	var sum struct {
		Tasks []struct{ TaskID, Status string }
	}
	if err := json.Unmarshal(out, &sum); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, task := range sum.Tasks {
		got[task.TaskID] = task.Status
	}
	return got, stderr.String()
}

// A lockfile edit moves exactly the keys of the projects whose resolved packages changed, and vx
// why names each package with both versions; the root package.json's own dependencies belong to
// every project; a lockfile vx cannot parse stands whole for every package, with one warning. For
// each format, on lockfiles the package managers wrote (engine/depversions/testdata): app and lib
// depend on different external packages, lib alone on semver, the root on typescript.
func TestLockfileInTheKey(t *testing.T) {
	t.Parallel()
	for _, format := range []struct{ dir, file string }{
		{"npm-v2", "package-lock.json"}, {"npm-v3", "package-lock.json"}, {"pnpm-v6", "pnpm-lock.yaml"}, {"pnpm-v9", "pnpm-lock.yaml"},
		{"yarn-v1", "yarn.lock"}, {"yarn-berry", "yarn.lock"}, {"bun", "bun.lock"},
	} {
		t.Run(format.dir, func(t *testing.T) {
			t.Parallel()
			fixtures := filepath.Join("..", "..", "engine", "depversions", "testdata", format.dir)
			dir := t.TempDir()
			copyTree(t, filepath.Join(fixtures, "base"), dir)
			ws := "import { defineWorkspace } from '@vzn/vx/config'\n" +
				"export default defineWorkspace({ projects: ['packages/*'], tasks: { build: { command: 'echo built' } } })\n"
			os.WriteFile(filepath.Join(dir, "vx.workspace.ts"), []byte(ws), 0o644)
			os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(".vx/\nnode_modules/\n"), 0o644)
			gitCommitAll(t, dir)
			lock := filepath.Join(dir, format.file)

			if got, errs := runStatuses(t, dir); got["@fx/lib#build"] != "miss" {
				t.Fatalf("first run: %v\n%s", got, errs)
			}
			if got, _ := runStatuses(t, dir); got["@fx/lib#build"] != "hit" || got["app#build"] != "hit" {
				t.Fatalf("second run: %v", got)
			}

			// semver 7.6.0 → 7.6.3 in the lockfile only: lib alone resolves it. (Yarn classic keys
			// an entry by the range package.json asks for: there only the resolved version moves.)
			data, _ := os.ReadFile(lock)
			from, to := []byte("7.6.0"), []byte("7.6.3")
			if format.dir == "yarn-v1" {
				from, to = []byte(`version "7.6.0"`), []byte(`version "7.6.3"`)
			}
			os.WriteFile(lock, bytes.ReplaceAll(data, from, to), 0o644)
			got, _ := runStatuses(t, dir)
			if got["@fx/lib#build"] != "miss" || got["app#build"] != "hit" || got["tool#build"] != "hit" {
				t.Fatalf("after a lockfile change of lib's semver: %v", got)
			}
			var why struct {
				Reason string
				Diff   struct {
					Packages []struct{ Name, Before, After string }
				}
			}
			json.Unmarshal(cliJSON(t, dir, "why", "@fx/lib#build"), &why)
			if len(why.Diff.Packages) != 1 || why.Diff.Packages[0] != (struct{ Name, Before, After string }{"semver", "7.6.0", "7.6.3"}) {
				t.Fatalf("vx why names %+v (%s), want semver 7.6.0 → 7.6.3", why.Diff.Packages, why.Reason)
			}

			// The bump also moves the root's typescript: every project's key moves.
			copyTree(t, filepath.Join(fixtures, "bump"), dir)
			got, _ = runStatuses(t, dir)
			for id, status := range got {
				if status != "miss" {
					t.Errorf("after the root's typescript moved, %s was a %s", id, status)
				}
			}
			json.Unmarshal(cliJSON(t, dir, "why", "app#build"), &why)
			if len(why.Diff.Packages) != 1 || why.Diff.Packages[0].Name != "typescript" {
				t.Fatalf("vx why app#build names %+v, want typescript alone", why.Diff.Packages)
			}

			// A lockfile vx cannot parse: one warning naming it, and its content in every key.
			os.WriteFile(lock, []byte("{ this is not a lockfile"), 0o644)
			got, errs := runStatuses(t, dir)
			if strings.Count(errs, format.file) != 1 || !strings.Contains(errs, "its whole content enters every task's key") {
				t.Errorf("warnings for an unparsable %s:\n%s", format.file, errs)
			}
			for id, status := range got {
				if status != "miss" {
					t.Errorf("after the lockfile broke, %s was a %s", id, status)
				}
			}
		})
	}
}
