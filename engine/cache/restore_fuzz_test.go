package cache

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/store"
)

// FuzzRestore feeds random archives and listings to the restore a cache hit makes, against a temp
// workspace whose project declares outputs dist/** and //out/**: whatever the archive holds, no
// file outside those outputs is written, changed or removed, nothing panics, and memory stays
// bounded by what the listing declares.
func FuzzRestore(f *testing.F) {
	seed := func(entries ...[3]string) []byte { // name, type (f, l), content or link target
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, e := range entries {
			h := &tar.Header{Name: e[0], Mode: 0o644}
			if e[1] == "l" {
				h.Typeflag, h.Linkname = tar.TypeSymlink, e[2]
			} else {
				h.Typeflag, h.Size = tar.TypeReg, int64(len(e[2]))
			}
			tw.WriteHeader(h)
			tw.Write([]byte(e[2]))
		}
		tw.Close()
		return buf.Bytes()
	}
	f.Add(seed([3]string{"dist/a.txt", "f", "a"}), true)
	f.Add(seed([3]string{"dist/link", "l", "/etc"}, [3]string{"dist/link/passwd", "f", "x"}), true)
	f.Add(seed([3]string{"dist/up", "l", "../.."}, [3]string{"dist/up/src.txt", "f", "x"}), true)
	f.Add(seed([3]string{"dist/nm/app", "l", "../.."}, [3]string{"dist/nm/app/src.txt", "f", "x"}), true)
	f.Add(seed([3]string{"dist/nm/app", "l", "../.."}, [3]string{"dist/x", "l", "nm/app/src.txt"}), true)
	f.Add(seed([3]string{"dist/loop", "l", "."}, [3]string{"dist/y", "l", "loop/../src.txt"}), true)
	f.Add(seed([3]string{"dist/../src.txt", "f", "pwned"}), true)
	f.Add(seed([3]string{"//out/x", "f", "x"}, [3]string{"//src.txt", "f", "pwned"}), true)
	f.Add(seed([3]string{"dist/a", "f", strings.Repeat("\x00", 4<<10)}), false)
	f.Add([]byte("not a tar"), true)
	f.Add(sparseBomb(), false)

	f.Fuzz(checkRestore)
}

// sparseBomb is a tar of one old-GNU sparse entry that claims 2 GiB from a few bytes.
func sparseBomb() []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "dist/a", Typeflag: tar.TypeReg, Size: 4, Mode: 0o644, Format: tar.FormatGNU})
	tw.Write([]byte("abcd"))
	tw.Close()
	b := buf.Bytes()
	hdr := b[:512]
	hdr[156] = tar.TypeGNUSparse
	copy(hdr[386:398], fmt.Sprintf("%011o\x00", 1<<30)) // one region of 4 bytes at 1 GiB
	copy(hdr[398:410], fmt.Sprintf("%011o\x00", 4))
	copy(hdr[483:495], fmt.Sprintf("%011o\x00", 1<<31)) // the size it claims
	copy(hdr[148:156], "        ")
	sum := 0
	for _, c := range hdr {
		sum += int(c)
	}
	copy(hdr[148:156], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

// fuzzEncoder is one zstd encoder for every input: making one costs more than a restore.
var fuzzEncoder = sync.OnceValue(func() *zstd.Encoder {
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	return enc
})

// checkRestore restores one archive (raw, a tar stream) into a fresh workspace and checks that
// nothing outside the outputs moved.
func checkRestore(t *testing.T, raw []byte, listHeaders bool) {
	{
		root := t.TempDir()
		sentinels := map[string]string{
			"src.txt":           "original",
			"app/src.txt":       "original",
			"app/build.sh":      "original",
			"app/dist.keep":     "original",
			"other/dist/x.txt":  "original",
			"outside-link-here": "original",
		}
		for rel, content := range sentinels {
			p := filepath.Join(root, rel)
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(content), 0o644)
		}
		// The state folder, where a restore journals, lies outside the workspace the check walks.
		ws := &graph.Workspace{Root: root, CacheDir: t.TempDir()}
		p := &graph.Project{Name: "app", Dir: "app", AbsDir: filepath.Join(root, "app"), Tasks: map[string]*graph.Task{}}
		task := &graph.Task{ID: "app#build", Project: "app", Name: "build", Outputs: []string{"dist/**", "//out/**"}}
		p.Tasks["build"] = task
		ws.Projects = []*graph.Project{p}
		ws.Index()

		// The listing: every header the archive holds, as the archive describes it (so the
		// restore gets past the listing checks and into the writes), or none.
		var files []store.OutputFile
		if listHeaders {
			tr := tar.NewReader(bytes.NewReader(raw))
			for i := 0; i < 64; i++ {
				h, err := tr.Next()
				if err != nil || h.Size > 1<<20 {
					// (Past a large entry the reader would skip its bytes, and a sparse
					// header can claim gigabytes from a few: the listing stops there.)
					break
				}
				of := store.OutputFile{Path: h.Name, Size: h.Size, Mode: uint32(h.Mode) & 0o777, Link: h.Linkname}
				if h.Typeflag == tar.TypeReg {
					sum := sha256.New()
					io.Copy(sum, io.LimitReader(tr, 1<<20))
					of.Hash = hex.EncodeToString(sum.Sum(nil))
				}
				files = append(files, of)
			}
		}
		archive := fuzzEncoder().EncodeAll(raw, nil)

		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_ = extractOutputs(context.Background(), ws, p, task, files, archive)
		runtime.ReadMemStats(&after)

		var declared int64
		for _, of := range files {
			declared += of.Size + 1024
		}
		if grew := int64(after.TotalAlloc - before.TotalAlloc); grew > declared+int64(len(raw))*4+(64<<20) {
			t.Fatalf("the restore allocated %d bytes for a listing of %d", grew, declared)
		}
		for rel, content := range sentinels {
			data, err := os.ReadFile(filepath.Join(root, rel))
			if err != nil || string(data) != content {
				t.Fatalf("%s was changed or removed (%q, %v)", rel, data, err)
			}
		}
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || path == root {
				return nil
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			if _, ok := sentinels[rel]; ok || d.IsDir() && (rel == "app" || rel == "other" || rel == "other/dist") {
				return nil
			}
			inOutputs := rel == "app/dist" || strings.HasPrefix(rel, "app/dist/") || rel == "out" || strings.HasPrefix(rel, "out/")
			if !inOutputs {
				t.Fatalf("the restore wrote %s, outside the declared outputs", rel)
			}
			if d.Type()&fs.ModeSymlink != 0 {
				checkRestoredLink(t, root, rel)
			}
			return nil
		})
	}
}

// checkRestoredLink fails t unless the restored link rel (root-relative) points, as the file system
// resolves it, inside the outputs (app/dist, out) or at a folder of the project (app) that holds
// it.
func checkRestoredLink(t *testing.T, root, rel string) {
	real, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return // dangling, or a loop: it names no file
	}
	realRoot, _ := filepath.EvalSymlinks(root)
	to, err := filepath.Rel(realRoot, real)
	if err != nil {
		t.Fatalf("the restored link %s points at %s", rel, real)
	}
	to = filepath.ToSlash(to)
	inOutputs := to == "app/dist" || strings.HasPrefix(to, "app/dist/") || to == "out" || strings.HasPrefix(to, "out/")
	holds := (to == "app" || strings.HasPrefix(to, "app/")) && strings.HasPrefix(rel, to+"/")
	if !inOutputs && !holds {
		t.Fatalf("the restored link %s reaches %s, outside the outputs and not a folder holding it", rel, to)
	}
}

// extractOutputs restores a cache entry's outputs — the files it lists and the archive (tar.zst)
// holding them — for task t of project p, with every check a hit makes: only paths the task
// declares as outputs, beneath the workspace and never through a symlink, no more bytes than the
// listing says, each file's hash checked; then stale files under the output globs are removed.
// An error wrapping errBadEntry means the entry itself is wrong.
func extractOutputs(ctx context.Context, ws *graph.Workspace, p *graph.Project, t *graph.Task, files []store.OutputFile, archive []byte) error {
	blob := func() ([]byte, error) { return archive, nil }
	j := newJournal(ws.CacheDir, ws.Root, t.ID)
	_, err := extract(ctx, ws, p, t, files, blob, func(string, store.OutputFile) bool { return false }, j, nil)
	return err
}
