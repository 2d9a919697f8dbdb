package remoteexec

import (
	"strings"
	"testing"
	"time"
)

// The expected digests below were computed apart from this package, by encoding each message by
// hand (field by field, in field-number order, as the API's canonical form has it) and hashing
// it: they are what any REAPI client builds for the same tree and command.

// TestEmptyTree: an empty input root is the empty Directory, whose digest every engine knows.
func TestEmptyTree(t *testing.T) {
	tree, err := BuildTree(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Digest{"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", 0}
	if tree.Root != want || len(tree.Directories) != 1 {
		t.Fatalf("empty root %+v (%d directories), want %+v", tree.Root, len(tree.Directories), want)
	}
}

// TestTreeDigests: files, an executable, a link kept as a SymlinkNode and nested folders, given
// in no order, make the known Directory digests.
func TestTreeDigests(t *testing.T) {
	inputs := []Input{
		{Path: "src/lib/c.txt", Digest: DigestOf([]byte("c\n"))},
		{Path: "link", Target: "a.txt"},
		{Path: "src/b.sh", Digest: DigestOf([]byte("echo hi\n")), Executable: true},
		{Path: "b.txt", Digest: DigestOf([]byte("b\n"))},
		{Path: "a.txt", Digest: DigestOf([]byte("hello\n"))},
	}
	tree, err := BuildTree(inputs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[Digest]bool{
		{"8898253bbb3d9ef194ec7e09be660159369a3d3dfac1d96fbda4bbc0f38ac90d", 251}: true, // root
		{"cd770f2d4df8172af31a25c2a7099835636a35d100dabacb0ff017e32b5c962c", 157}: true, // src
		{"6503077c63f69edf20906276df67d132253b8b875448c7ccf813fb800d6821d1", 79}:  true, // src/lib
	}
	if tree.Root != (Digest{"8898253bbb3d9ef194ec7e09be660159369a3d3dfac1d96fbda4bbc0f38ac90d", 251}) {
		t.Fatalf("root %+v", tree.Root)
	}
	if len(tree.Directories) != len(want) {
		t.Fatalf("%d directories, want %d", len(tree.Directories), len(want))
	}
	for d, data := range tree.Directories {
		if !want[d] || DigestOf(data) != d {
			t.Fatalf("directory %+v not expected, or not its content's digest", d)
		}
	}
}

func TestTreeRefusesBadPaths(t *testing.T) {
	d := DigestOf([]byte("x"))
	for _, tc := range []struct {
		inputs []Input
		want   string
	}{
		{[]Input{{Path: "/etc/passwd", Digest: d}}, "not a clean path"},
		{[]Input{{Path: "../x", Digest: d}}, "not a clean path"},
		{[]Input{{Path: "a/./b", Digest: d}}, "not a clean path"},
		{[]Input{{Path: "a", Digest: d}, {Path: "a", Digest: d}}, "named twice"},
		{[]Input{{Path: "a", Target: "b"}, {Path: "a/c", Digest: d}}, "which is a file or a link"},
		{[]Input{{Path: "a/c", Digest: d}, {Path: "a", Digest: d}}, "a folder of other inputs"},
	} {
		if _, err := BuildTree(tc.inputs); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: want %q, got %v", tc.inputs, tc.want, err)
		}
	}
}

// TestCommandAndActionDigests: a task's Command and Action make the known digests, whatever the
// order of its environment, outputs and platform.
func TestCommandAndActionDigests(t *testing.T) {
	cmd, err := Command(Spec{Shell: "tsc -p .", Dir: "packages/app",
		Env:      map[string]string{"PATH": "/usr/bin:/bin", "NODE_ENV": "production", "HOME": "/home/vx"},
		Outputs:  []string{"types/index.d.ts", "dist", "dist"},
		Platform: map[string]string{"container-image": "docker://node:22", "OSFamily": "linux"}})
	if err != nil {
		t.Fatal(err)
	}
	a := NewAction(cmd, Digest{"dc959087f21ac72fd3cafa423968f59375d8ee1bb792448e2f2d53829cd10360", 172}, 90*time.Second)
	if want := (Digest{"a4451716e247c6d8192b471492e9c27ef185c17a4f3bf7cd091b75c5ace81fb0", 179}); a.CommandDigest != want {
		t.Fatalf("command %+v, want %+v", a.CommandDigest, want)
	}
	if want := (Digest{"79df10791c0f6d518e46590315384e0eaeea329c746b1030d05dad21115b7d9e", 204}); a.Digest != want {
		t.Fatalf("action %+v, want %+v", a.Digest, want)
	}
	if DigestOf(a.Action) != a.Digest || DigestOf(a.Command) != a.CommandDigest {
		t.Fatal("the digests are not of the bytes answered")
	}
}

func TestCommandRefuses(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{Shell: "x", Env: map[string]string{"HOME": "/h"}}, "explicit PATH"},
		{Spec{Shell: "x", Env: map[string]string{"PATH": "/b"}}, "explicit HOME"},
		{Spec{Shell: "x", Env: map[string]string{"PATH": "/b", "HOME": "/h"}, Dir: "../up"}, "working folder"},
		{Spec{Shell: "x", Env: map[string]string{"PATH": "/b", "HOME": "/h"}, Outputs: []string{"/abs"}}, "output"},
	} {
		if _, err := Command(tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: want %q, got %v", tc.spec, tc.want, err)
		}
	}
}
