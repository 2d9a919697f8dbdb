package runner

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/hasher"
	"github.com/vzn/vx/engine/store"
)

// trustFixture is one project whose build writes dist/o.txt, run once so that its entry exists.
type trustFixture struct {
	*fixture
	p   *graph.Project
	ids []string
	key string
}

func newTrustFixture(t *testing.T, command string) *trustFixture {
	f := newFixture(t)
	p := f.project("p")
	f.task(p, "build", command, func(t *graph.Task) {
		t.Inputs = []string{}
		t.Outputs = []string{"dist/**"}
	})
	f.write("packages/p/build.sh", "original\n")
	ids := []string{"p#build"}
	s, out := f.run(ids, nil)
	if got := statuses(s); got != "p#build=miss" {
		t.Fatalf("first run: %s\n%s", got, out)
	}
	return &trustFixture{fixture: f, p: p, ids: ids, key: s.Tasks[0].Hash}
}

// craft replaces the task's cache entry by one listing files, whose archive holds what add writes.
func (f *trustFixture) craft(files []store.OutputFile, add func(tw *tar.Writer)) {
	f.t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, f.ws.CacheDir, store.Options{})
	if err != nil {
		f.t.Fatal(err)
	}
	defer st.Close()
	e, ok, err := st.Entry(ctx, f.key)
	if err != nil || !ok {
		f.t.Fatalf("entry %s: %v %v", f.key, ok, err)
	}
	e.OutputsBlob = ""
	if add != nil {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		add(tw)
		tw.Close()
		enc, _ := zstd.NewWriter(nil)
		blob := enc.EncodeAll(buf.Bytes(), nil)
		enc.Close()
		if e.OutputsBlob, err = st.CAS().Put(blob); err != nil {
			f.t.Fatal(err)
		}
		e.Size = int64(len(blob)) + 64
	}
	e.Outputs = files
	if err := st.PutEntry(ctx, e); err != nil {
		f.t.Fatal(err)
	}
}

func reg(name, content string) (store.OutputFile, func(*tar.Writer)) {
	f := store.OutputFile{Path: name, Size: int64(len(content)), Mode: 0o644, Hash: hasher.HashBytes([]byte(content))}
	return f, func(tw *tar.Writer) {
		tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Size: f.Size, Mode: 0o644})
		tw.Write([]byte(content))
	}
}

func (f *trustFixture) runExpect(want string) string {
	f.t.Helper()
	s, out := f.run(f.ids, nil)
	if got := statuses(s); got != want {
		f.t.Fatalf("run: %s, want %s\n%s", got, want, out)
	}
	return out
}

// A symlink entry followed by a file under it never writes outside the workspace.
func TestRestoreRefusesSymlinkEscape(t *testing.T) {
	f := newTrustFixture(t, "mkdir -p dist && echo out > dist/o.txt")
	outside := t.TempDir()
	file, add := reg("dist/link/pwned", "pwned")
	f.craft([]store.OutputFile{{Path: "dist/link", Link: outside}, file}, func(tw *tar.Writer) {
		tw.WriteHeader(&tar.Header{Name: "dist/link", Typeflag: tar.TypeSymlink, Linkname: outside})
		add(tw)
	})
	os.RemoveAll(filepath.Join(f.p.AbsDir, "dist"))
	out := f.runExpect("p#build=miss")
	if _, err := os.Stat(filepath.Join(outside, "pwned")); err == nil {
		t.Fatal("the restore wrote through a symlink outside the workspace")
	}
	if !strings.Contains(out, "removed") {
		t.Errorf("no notice of the removed entry:\n%s", out)
	}
	// A link inside the workspace followed by a file under it is refused too: never through a link.
	f.run(f.ids, nil)
	file, add = reg("dist/link/x", "x")
	f.craft([]store.OutputFile{{Path: "dist/link", Link: ".."}, file}, func(tw *tar.Writer) {
		tw.WriteHeader(&tar.Header{Name: "dist/link", Typeflag: tar.TypeSymlink, Linkname: ".."})
		add(tw)
	})
	os.RemoveAll(filepath.Join(f.p.AbsDir, "dist"))
	f.runExpect("p#build=miss")
	if _, err := os.Stat(filepath.Join(f.p.AbsDir, "x")); err == nil {
		t.Fatal("the restore wrote through a symlink inside the workspace")
	}
}

// An entry naming a path that climbs out of the outputs overwrites nothing.
func TestRestoreRefusesPathsOutsideOutputs(t *testing.T) {
	for _, name := range []string{"dist/../build.sh", "build.sh", "//packages/p/build.sh", "../p/build.sh", "/etc/passwd"} {
		t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
			f := newTrustFixture(t, "mkdir -p dist && echo out > dist/o.txt")
			file, add := reg(name, "pwned\n")
			f.craft([]store.OutputFile{file}, add)
			os.RemoveAll(filepath.Join(f.p.AbsDir, "dist"))
			f.runExpect("p#build=miss")
			if data, _ := os.ReadFile(filepath.Join(f.p.AbsDir, "build.sh")); string(data) != "original\n" {
				t.Fatalf("build.sh now reads %q", data)
			}
		})
	}
}

// An archive that lacks what its entry lists is a miss, not a hit with the outputs missing.
func TestRestoreEmptyArchiveIsAMiss(t *testing.T) {
	f := newTrustFixture(t, "mkdir -p dist && echo out > dist/o.txt")
	file, _ := reg("dist/o.txt", "out\n")
	f.craft([]store.OutputFile{file}, func(tw *tar.Writer) {})
	os.RemoveAll(filepath.Join(f.p.AbsDir, "dist"))
	f.runExpect("p#build=miss")
	// No blob at all.
	f.craft([]store.OutputFile{file}, nil)
	os.RemoveAll(filepath.Join(f.p.AbsDir, "dist"))
	f.runExpect("p#build=miss")
	if _, err := os.Stat(filepath.Join(f.p.AbsDir, "dist/o.txt")); err != nil {
		t.Fatal(err)
	}
}

// A file whose content differs from its recorded hash is a miss, and the bad entry is removed.
func TestRestoreChecksHashes(t *testing.T) {
	f := newTrustFixture(t, "mkdir -p dist && echo out > dist/o.txt")
	file, _ := reg("dist/o.txt", "out\n")
	_, add := reg("dist/o.txt", "bad\n")
	f.craft([]store.OutputFile{file}, add)
	os.RemoveAll(filepath.Join(f.p.AbsDir, "dist"))
	f.runExpect("p#build=miss")
	if data, _ := os.ReadFile(filepath.Join(f.p.AbsDir, "dist/o.txt")); string(data) != "out\n" {
		t.Fatalf("dist/o.txt reads %q", data)
	}
	f.runExpect("p#build=hit")
}

// A zstd bomb (tens of MB of zeros behind a tiny blob) stops at what the entry lists: the restore
// allocates a bounded amount.
func TestRestoreBoundsDecompression(t *testing.T) {
	f := newTrustFixture(t, "mkdir -p dist && echo out > dist/o.txt")
	const bomb = 64 << 20
	file, _ := reg("dist/o.txt", "out\n")
	f.craft([]store.OutputFile{file}, func(tw *tar.Writer) {
		tw.WriteHeader(&tar.Header{Name: "dist/o.txt", Typeflag: tar.TypeReg, Size: bomb, Mode: 0o644})
		tw.Write(make([]byte, bomb))
	})
	os.RemoveAll(filepath.Join(f.p.AbsDir, "dist"))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f.runExpect("p#build=miss")
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > bomb/2 {
		t.Fatalf("the restore allocated %d MB for a %d MB bomb", grew>>20, bomb>>20)
	}
}

// A blob that is a symlink (to /dev/urandom) is never read: a miss.
func TestRestoreReadsBlobsOnlyAsRegularFiles(t *testing.T) {
	f := newTrustFixture(t, "mkdir -p dist && echo out > dist/o.txt")
	ctx := context.Background()
	st, err := store.Open(ctx, f.ws.CacheDir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, _, _ := st.Entry(ctx, f.key)
	st.Close()
	path := store.NewCAS(filepath.Join(f.ws.CacheDir, "cas")).Path(e.OutputsBlob)
	os.Remove(path)
	if err := os.Symlink("/dev/urandom", path); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(f.p.AbsDir, "dist"))
	f.runExpect("p#build=miss")
}

// After a hit the outputs are exactly what the entry lists: a stale file under the output globs is
// removed, and a file outside them is left alone.
func TestHitRemovesStaleOutputs(t *testing.T) {
	f := newTrustFixture(t, "mkdir -p dist && echo out > dist/o.txt")
	f.write("packages/p/dist/extra.txt", "stale")
	f.write("packages/p/notes.txt", "mine")
	f.runExpect("p#build=hit")
	if _, err := os.Stat(filepath.Join(f.p.AbsDir, "dist/extra.txt")); err == nil {
		t.Fatal("a hit left dist/extra.txt")
	}
	if _, err := os.Stat(filepath.Join(f.p.AbsDir, "notes.txt")); err != nil {
		t.Fatal("a hit removed a file outside the outputs")
	}
}

// Symlinks in outputs are archived as symlinks: one inside the task's outputs travels, and a
// symlink loop is one entry, never followed; a task that makes one pointing out of its outputs
// (out of the workspace, or into its sources) is not cached, with the reason.
func TestSymlinkOutputs(t *testing.T) {
	f := newTrustFixture(t, "mkdir -p dist && echo out > dist/o.txt && ln -s . dist/loop && ln -s o.txt dist/alias")
	os.RemoveAll(filepath.Join(f.p.AbsDir, "dist"))
	f.runExpect("p#build=hit")
	if target, err := os.Readlink(filepath.Join(f.p.AbsDir, "dist/loop")); err != nil || target != "." {
		t.Fatalf("dist/loop: %q %v", target, err)
	}
	if target, err := os.Readlink(filepath.Join(f.p.AbsDir, "dist/alias")); err != nil || target != "o.txt" {
		t.Fatalf("dist/alias: %q %v", target, err)
	}
	st, err := store.Open(context.Background(), f.ws.CacheDir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, _, _ := st.Entry(context.Background(), f.key)
	st.Close()
	for _, o := range e.Outputs {
		if strings.Count(o.Path, "loop") > 1 {
			t.Fatalf("the loop was followed: %s", o.Path)
		}
	}
	outside := t.TempDir()
	for target, why := range map[string]string{outside: "an absolute target", "../build.sh": "outside the task's outputs"} {
		g := newFixture(t)
		p := g.project("p")
		g.task(p, "build", "mkdir -p dist && echo out > dist/o.txt && ln -sfn "+target+" dist/out", func(t *graph.Task) {
			t.Inputs = []string{}
			t.Outputs = []string{"dist/**"}
		})
		g.write("packages/p/build.sh", "original\n")
		for range 2 {
			s, out := g.run([]string{"p#build"}, nil)
			if got := statuses(s); got != "p#build=miss" {
				t.Fatalf("a link to %s: %s\n%s", target, got, out)
			}
			if !strings.Contains(out, "not cached: output dist/out is a symlink to "+target+", "+why) {
				t.Fatalf("no reason naming the link to %s:\n%s", target, out)
			}
		}
	}
}

// A restore never writes through a symlinked output folder a user left in place.
func TestRestoreNeverWritesThroughAFolderLink(t *testing.T) {
	// The task itself writes nothing when dist is a link, so only a restore could.
	f := newTrustFixture(t, "test -L dist || (mkdir -p dist && echo out > dist/o.txt)")
	outside := t.TempDir()
	os.RemoveAll(filepath.Join(f.p.AbsDir, "dist"))
	if err := os.Symlink(outside, filepath.Join(f.p.AbsDir, "dist")); err != nil {
		t.Fatal(err)
	}
	if out := f.runExpect("p#build=miss"); !strings.Contains(out, "dist is a symlink") {
		t.Errorf("no notice naming the link:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(outside, "o.txt")); err == nil {
		t.Fatal("the restore wrote through the dist symlink")
	}
}

// Output without newlines is printed in capped pieces: linear in time, bounded in memory, and a
// secret is masked even where the output is split.
func TestOutputWithoutNewlines(t *testing.T) {
	f := newFixture(t)
	p := f.project("p")
	// 8 MB with no newline, the secret at a 64 KiB boundary and at the very end.
	f.task(p, "spew", `head -c 65530 /dev/zero | tr '\0' x; printf '%s' "$TOKEN"; head -c 8000000 /dev/zero | tr '\0' y; printf '%s' "$TOKEN"`, func(t *graph.Task) {
		t.Inputs = []string{}
		t.Cache = false
		t.ExecEnv = map[string]graph.EnvValue{"TOKEN": {Secret: "TOKEN"}}
	})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s, out := f.run([]string{"p#spew"}, nil)
	runtime.ReadMemStats(&after)
	if !s.OK {
		t.Fatalf("run: %s", statuses(s))
	}
	if strings.Contains(out, "hunter2") {
		t.Fatal("the secret was printed where the output was split")
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 200<<20 {
		t.Fatalf("8 MB of output without newlines allocated %d MB", grew>>20)
	}
	if n := strings.Count(out, "p#spew | "); n < 100 {
		t.Fatalf("the output was printed in %d pieces, want it split at a fixed size", n)
	}
}

// A sparse archive entry (its holes are zeros no compressed byte paid for) is never restored,
// whatever size the listing claims.
func TestRestoreRefusesSparseEntries(t *testing.T) {
	f := newTrustFixture(t, "mkdir -p dist && echo out > dist/o.txt")
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "dist/o.txt", Typeflag: tar.TypeReg, Size: 4, Mode: 0o644, Format: tar.FormatGNU})
	tw.Write([]byte("out\n"))
	tw.Close()
	raw := buf.Bytes()
	hdr := raw[:512]
	hdr[156] = tar.TypeGNUSparse
	copy(hdr[386:398], fmt.Sprintf("%011o\x00", 1<<30))
	copy(hdr[398:410], fmt.Sprintf("%011o\x00", 4))
	copy(hdr[483:495], fmt.Sprintf("%011o\x00", 1<<31))
	copy(hdr[148:156], "        ")
	sum := 0
	for _, c := range hdr {
		sum += int(c)
	}
	copy(hdr[148:156], fmt.Sprintf("%06o\x00 ", sum))
	listed := store.OutputFile{Path: "dist/o.txt", Size: 1 << 31, Mode: 0o644, Hash: hasher.HashBytes([]byte("x"))}
	f.craft([]store.OutputFile{listed}, func(tw *tar.Writer) {})
	// craft wrote an empty archive; put the sparse one in its place.
	ctx := context.Background()
	st, err := store.Open(ctx, f.ws.CacheDir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := zstd.NewWriter(nil)
	blob := enc.EncodeAll(raw, nil)
	enc.Close()
	e, _, _ := st.Entry(ctx, f.key)
	e.OutputsBlob, _ = st.CAS().Put(blob)
	st.PutEntry(ctx, e)
	st.Close()
	os.RemoveAll(filepath.Join(f.p.AbsDir, "dist"))
	f.runExpect("p#build=miss")
	if fi, err := os.Stat(filepath.Join(f.p.AbsDir, "dist/o.txt")); err != nil || fi.Size() != 4 {
		t.Fatalf("dist/o.txt after the sparse entry: %v %v", fi, err)
	}
}

// A restored file has its recorded mode exactly, whatever the umask took from it when it was
// created: an executable, a group-writable file (which umask 022 would strip), a private one.
func TestRestoreKeepsModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	modes := map[string]os.FileMode{"run.sh": 0o755, "shared.txt": 0o664, "private.txt": 0o600, "ro.txt": 0o444}
	var cmd strings.Builder
	cmd.WriteString("mkdir -p dist")
	for name, mode := range modes {
		fmt.Fprintf(&cmd, " && echo %s > dist/%s && chmod %o dist/%s", name, name, mode, name)
	}
	f := newTrustFixture(t, cmd.String())
	check := func(when string) {
		for name, mode := range modes {
			fi, err := os.Lstat(filepath.Join(f.p.AbsDir, "dist", name))
			if err != nil || fi.Mode().Perm() != mode {
				t.Errorf("%s: %s is %v (%v), want %v", when, name, fi.Mode().Perm(), err, mode)
			}
		}
	}
	check("after the run")
	os.RemoveAll(filepath.Join(f.p.AbsDir, "dist"))
	f.runExpect("p#build=hit")
	check("after the restore")
}
