package depversions

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// The fixtures are one workspace installed by each package manager: a root with the
// devDependencies typescript and ts-api-utils (whose peer is typescript); packages/app with debug
// (which brings ms 2.1.3), ms ^2.1.3, an alias ms-old → ms@2.0.0, picocolors and the workspace
// package @fx/lib; packages/lib (@fx/lib) with ms 2.0.0 (not hoisted next to app's ms),
// picocolors and semver (7.6.0 brings lru-cache and yallist); packages/tool with only @fx/lib.
// "bump" is the same workspace after semver 7.6.0 → 7.6.3 in lib and typescript 5.4.5 → 5.5.4 at
// the root.
var formats = []string{"npm-v2", "npm-v3", "pnpm-v6", "pnpm-v9", "yarn-v1", "yarn-berry", "bun"}

var dirs = []string{".", "packages/app", "packages/lib", "packages/tool"}

var (
	wantApp = map[string]string{"debug": "4.4.3", "ms": "2.1.3", "ms-old": "npm:ms@2.0.0", "picocolors": "1.1.1"}
	want    = map[string]map[string]map[string]string{
		"base": {
			".":             {"ts-api-utils": "1.3.0", "typescript": "5.4.5"},
			"packages/app":  wantApp,
			"packages/lib":  {"ms": "2.0.0", "picocolors": "1.1.1", "semver": "7.6.0", "lru-cache": "6.0.0", "yallist": "4.0.0"},
			"packages/tool": {},
		},
		"bump": {
			".":             {"ts-api-utils": "1.3.0", "typescript": "5.5.4"},
			"packages/app":  wantApp,
			"packages/lib":  {"ms": "2.0.0", "picocolors": "1.1.1", "semver": "7.6.3"},
			"packages/tool": {},
		},
	}
)

func read(t *testing.T, root string) *Lockfile {
	t.Helper()
	file := Find(root)
	if file == "" {
		t.Fatalf("%s: no lockfile", root)
	}
	l, err := Read(root, file)
	if err != nil {
		t.Fatal(err)
	}
	if l.Unparsed {
		t.Fatalf("%s: unparsed: %v", root, l.Err)
	}
	return l
}

func TestFixtures(t *testing.T) {
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			lockfiles := map[string]*Lockfile{}
			for _, state := range []string{"base", "bump"} {
				root := filepath.Join("testdata", format, state)
				l := read(t, root)
				lockfiles[state] = l
				data, err := os.ReadFile(filepath.Join(root, l.File))
				if err != nil {
					t.Fatal(err)
				}
				if sum := sha256.Sum256(data); l.Hash != hex.EncodeToString(sum[:]) {
					t.Errorf("%s: Hash %s is not the file's SHA-256", state, l.Hash)
				}
				for _, dir := range dirs {
					if got := l.Packages(dir); !maps.Equal(got, want[state][dir]) {
						t.Errorf("%s: Packages(%q) = %v, want %v", state, dir, got, want[state][dir])
					}
				}
			}
			// The bump moves lib's semver and the root's typescript: exactly lib and the root
			// answer differently.
			var changed []string
			for _, dir := range dirs {
				if !maps.Equal(lockfiles["base"].Packages(dir), lockfiles["bump"].Packages(dir)) {
					changed = append(changed, dir)
				}
			}
			if !slices.Equal(changed, []string{".", "packages/lib"}) {
				t.Errorf("projects whose answer changed: %v, want [. packages/lib]", changed)
			}
		})
	}
}

func TestUnknownDir(t *testing.T) {
	l := read(t, filepath.Join("testdata", "pnpm-v9", "base"))
	for _, dir := range []string{"packages/none", "node_modules/debug"} {
		if got := l.Packages(dir); got == nil || len(got) != 0 {
			t.Errorf("Packages(%q) = %#v, want an empty map", dir, got)
		}
	}
	// A dir is cleaned: "./packages/app/" is packages/app.
	if got := l.Packages("./packages/app/"); !maps.Equal(got, wantApp) {
		t.Errorf("Packages(./packages/app/) = %v", got)
	}
}

// pnpm 11 and later may write an env document (config dependencies, pnpm itself) before the
// project document; this fixture has picocolors as a config dependency. The graph is the last
// document's.
func TestPnpmTwoDocuments(t *testing.T) {
	l := read(t, filepath.Join("testdata", "pnpm-v9-env"))
	for _, dir := range dirs {
		if got := l.Packages(dir); !maps.Equal(got, want["base"][dir]) {
			t.Errorf("Packages(%q) = %v, want %v", dir, got, want["base"][dir])
		}
	}
}

// pnpm 8 installs a file: dependency on a workspace folder as a package "file:packages/lib"; it
// is not followed, so lib's dependencies are not app's.
func TestPnpmFileDependency(t *testing.T) {
	root := filepath.Join("testdata", "pnpm-v6-file")
	data, err := os.ReadFile(filepath.Join(root, "pnpm-lock.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "file:packages/lib:") {
		t.Fatal("fixture lost its file: package")
	}
	l := read(t, root)
	if got := l.Packages("packages/app"); !maps.Equal(got, wantApp) {
		t.Errorf("Packages(packages/app) = %v, want %v", got, wantApp)
	}
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	if got := Find(dir); got != "" {
		t.Errorf("Find(empty) = %q", got)
	}
	for _, name := range []string{"bun.lockb", "bun.lock", "yarn.lock", "pnpm-lock.yaml", "npm-shrinkwrap.json", "package-lock.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if got := Find(dir); got != name {
			t.Errorf("Find = %q, want %q", got, name)
		}
	}
	// A folder of a lockfile's name is not a lockfile.
	dir = t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "package-lock.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := Find(dir); got != "" {
		t.Errorf("Find = %q, want none", got)
	}
}

func TestReadIOError(t *testing.T) {
	_, err := Read(t.TempDir(), "package-lock.json")
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "read package-lock.json") {
		t.Errorf("err = %v, want a wrapped not-exist naming the file", err)
	}
}

// corrupt makes, from a fixture lockfile, one that no reader can parse.
var corrupt = map[string]func(string) string{
	"npm-v3":     func(s string) string { return s[:len(s)/2] },
	"pnpm-v9":    func(s string) string { return strings.Replace(s, "importers:", "importers: [", 1) },
	"pnpm-v6":    func(s string) string { return strings.Replace(s, "\n  packages/lib:", "\n packages/lib:", 1) },
	"yarn-v1":    func(s string) string { return s[:strings.Index(s, `version "`)+12] },
	"yarn-berry": func(s string) string { return strings.Replace(s, "version: 4.4.3", "version: [4.4.3", 1) },
	"bun":        func(s string) string { return s[:len(s)/2] },
}

func TestCorrupt(t *testing.T) {
	for format, spoil := range corrupt {
		t.Run(format, func(t *testing.T) {
			src := filepath.Join("testdata", format, "base")
			file := Find(src)
			data, err := os.ReadFile(filepath.Join(src, file))
			if err != nil {
				t.Fatal(err)
			}
			root := t.TempDir()
			copyFile(t, filepath.Join(src, "package.json"), filepath.Join(root, "package.json"))
			if err := os.WriteFile(filepath.Join(root, file), []byte(spoil(string(data))), 0o644); err != nil {
				t.Fatal(err)
			}
			l, err := Read(root, file)
			if err != nil {
				t.Fatal(err)
			}
			if !l.Unparsed || l.Err == nil || l.Hash == "" {
				t.Fatalf("Unparsed %v, Err %v, Hash %q; want unparsed with a reason and a hash", l.Unparsed, l.Err, l.Hash)
			}
			if !strings.HasPrefix(l.Err.Error(), "parse "+file+": ") {
				t.Errorf("Err %q does not name the file", l.Err)
			}
			if got := l.Packages("."); got != nil {
				t.Errorf("Packages = %v, want nil", got)
			}
			t.Log(l.Err)
		})
	}
}

func TestUnsupported(t *testing.T) {
	for _, tc := range []struct{ file, text, reason string }{
		{"bun.lockb", "#!/usr/bin/env bun\nbun-lockfile-format-v0\n\x00\x01", "binary"},
		{"package-lock.json", `{"lockfileVersion": 1, "dependencies": {}}`, "lockfileVersion 1"},
		{"package-lock.json", `{"lockfileVersion": 4, "packages": {}}`, "lockfileVersion 4"},
		{"pnpm-lock.yaml", "lockfileVersion: 5.4\nimporters: {}\n", `"5.4"`},
		{"bun.lock", `{"lockfileVersion": 9, "workspaces": {},}`, "lockfileVersion 9"},
		{"bun.lock", `{"workspaces": {}}`, "no lockfileVersion"},
		{"yarn.lock", "\x00\xff garbage", "line 1"},
	} {
		root := t.TempDir()
		if err := os.WriteFile(filepath.Join(root, tc.file), []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := Read(root, tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if !l.Unparsed || l.Err == nil || !strings.Contains(l.Err.Error(), tc.reason) {
			t.Errorf("%s %q: Unparsed %v, Err %v; want unparsed naming %s", tc.file, tc.text, l.Unparsed, l.Err, tc.reason)
		}
	}
}

// TestScannerMatchesLibrary checks that every YAML fixture reads through the subset scanner, not
// the fallback, and that the scanner and the YAML library build the same graph.
func TestScannerMatchesLibrary(t *testing.T) {
	for _, root := range []string{"pnpm-v6/base", "pnpm-v9/base", "pnpm-v9-env", "pnpm-v6-file", "yarn-berry/base"} {
		file := Find(filepath.Join("testdata", root))
		data, err := os.ReadFile(filepath.Join("testdata", root, file))
		if err != nil {
			t.Fatal(err)
		}
		if err := sameAsLibrary(file, data); err != nil {
			t.Errorf("%s: %v", root, err)
		}
		if file == "pnpm-lock.yaml" {
			_, err = scanPnpm(data)
		} else {
			_, err = scanBerry(data)
		}
		if err != nil {
			t.Errorf("%s: the scanner did not read it: %v", root, err)
		}
	}
}

// An npm workspace with a dependency cycle (a ↔ b), a package reached twice at two versions and a
// link to a workspace package that must not be followed.
const cyclicNpm = `{
  "lockfileVersion": 3,
  "packages": {
    "": {"workspaces": ["pkgs/*"], "dependencies": {"a": "1", "w": "*"}},
    "node_modules/w": {"resolved": "pkgs/w", "link": true},
    "pkgs/w": {"name": "w", "dependencies": {"c": "1", "missing-optional": "1"}},
    "node_modules/a": {"version": "1.0.0", "dependencies": {"b": "1"}},
    "node_modules/b": {"version": "1.0.0", "dependencies": {"a": "1", "c": "2"}},
    "node_modules/b/node_modules/c": {"version": "2.0.0", "dependencies": {"a": "1"}},
    "node_modules/c": {"version": "1.0.0", "dependencies": {"w": "*"}},
    "node_modules/d": {"version": "1.0.0", "dependencies": {"d": "1"}}
  }
}`

func TestCycles(t *testing.T) {
	g, err := parse("package-lock.json", []byte(cyclicNpm), nil)
	if err != nil {
		t.Fatal(err)
	}
	l := &Lockfile{graph: g}
	for dir, want := range map[string]map[string]string{
		".":      {"a": "1.0.0", "b": "1.0.0", "c": "2.0.0"},
		"pkgs/w": {"c": "1.0.0"},
	} {
		for range 2 { // the second answer comes from the memo
			if got := l.Packages(dir); !maps.Equal(got, want) {
				t.Errorf("Packages(%q) = %v, want %v", dir, got, want)
			}
		}
	}
}

func TestVersionsJoined(t *testing.T) {
	const lock = `{"lockfileVersion": 3, "packages": {
		"": {"dependencies": {"a": "1", "ms": "10"}},
		"node_modules/a": {"version": "1.0.0", "dependencies": {"ms": "2"}},
		"node_modules/a/node_modules/ms": {"version": "2.0.0"},
		"node_modules/ms": {"version": "10.0.0"}}}`
	g, err := parse("package-lock.json", []byte(lock), nil)
	if err != nil {
		t.Fatal(err)
	}
	l := &Lockfile{graph: g}
	if got, want := l.Packages("."), map[string]string{"a": "1.0.0", "ms": "10.0.0, 2.0.0"}; !maps.Equal(got, want) {
		t.Errorf("Packages = %v, want %v", got, want)
	}
}

func TestConcurrentPackages(t *testing.T) {
	l := read(t, filepath.Join("testdata", "pnpm-v9", "base"))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			dir := dirs[i%len(dirs)]
			if got := l.Packages(dir); !maps.Equal(got, want["base"][dir]) {
				t.Errorf("Packages(%q) = %v", dir, got)
			}
		})
	}
	wg.Wait()
}

func TestRefToRelative(t *testing.T) {
	for _, tc := range []struct{ ref, name, v9, v6 string }{
		{"1.0.0", "a", "a@1.0.0", "/a@1.0.0"},
		{"1.3.0(typescript@5.4.5)", "ts-api-utils", "ts-api-utils@1.3.0(typescript@5.4.5)", "/ts-api-utils@1.3.0(typescript@5.4.5)"},
		{"1.0.0(@types/node@20.0.0)", "a", "a@1.0.0(@types/node@20.0.0)", "/a@1.0.0(@types/node@20.0.0)"},
		{"link:../lib", "lib", "", ""},
		{"ms@2.0.0", "ms-old", "ms@2.0.0", "/ms-old@ms@2.0.0"},
		{"/ms@2.0.0", "ms-old", "/ms@2.0.0", "/ms@2.0.0"},
		{"@scope/real@1.0.0", "alias", "@scope/real@1.0.0", "@scope/real@1.0.0"},
		{"https://codeload.github.com/o/r/tar.gz/abc", "r", "r@https://codeload.github.com/o/r/tar.gz/abc", "https://codeload.github.com/o/r/tar.gz/abc"},
		{"file:packages/lib", "@fx/lib", "@fx/lib@file:packages/lib", "file:packages/lib"},
	} {
		if got := refToRelative9(tc.ref, tc.name); got != tc.v9 {
			t.Errorf("refToRelative9(%q, %q) = %q, want %q", tc.ref, tc.name, got, tc.v9)
		}
		if got := refToRelative6(tc.ref, tc.name); got != tc.v6 {
			t.Errorf("refToRelative6(%q, %q) = %q, want %q", tc.ref, tc.name, got, tc.v6)
		}
	}
}

func TestPnpmKeyVersion(t *testing.T) {
	for _, tc := range []struct{ key, real, version string }{
		{"/@scope/a@1.0.0(b@2.0.0)", "@scope/a", "1.0.0"},
		{"a@1.0.0(b@2.0.0)(c@3.0.0)", "a", "1.0.0"},
		{"file:packages/lib", "", "file:packages/lib"},
		{"@fx/lib@file:packages/lib", "@fx/lib", "file:packages/lib"},
		{"github.com/o/r/abc", "", "github.com/o/r/abc"},
		{"r@https://codeload.github.com/o/r/tar.gz/abc", "r", "https://codeload.github.com/o/r/tar.gz/abc"},
	} {
		real, version := pnpmKeyVersion(tc.key)
		if real != tc.real || version != tc.version {
			t.Errorf("pnpmKeyVersion(%q) = %q, %q; want %q, %q", tc.key, real, version, tc.real, tc.version)
		}
	}
}

func TestBunPath(t *testing.T) {
	for key, want := range map[string][]string{
		"ms":              {"ms"},
		"debug/ms":        {"debug", "ms"},
		"@fx/lib/ms":      {"@fx/lib", "ms"},
		"app/@types/node": {"app", "@types/node"},
		"@a/b/@c/d/e":     {"@a/b", "@c/d", "e"},
		"@broken":         {"@broken"},
	} {
		if got := bunPath(key); !reflect.DeepEqual(got, want) {
			t.Errorf("bunPath(%q) = %q, want %q", key, got, want)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
