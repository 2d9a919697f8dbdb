package stress

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/runner"
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
	f.Add(seed([3]string{"dist/../src.txt", "f", "pwned"}), true)
	f.Add(seed([3]string{"//out/x", "f", "x"}, [3]string{"//src.txt", "f", "pwned"}), true)
	f.Add(seed([3]string{"dist/a", "f", strings.Repeat("\x00", 1<<20)}), false)
	f.Add([]byte("not a tar"), true)

	f.Fuzz(checkRestore)
}

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
		ws := &graph.Workspace{Root: root, CacheDir: filepath.Join(root, ".vx")}
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
				if err != nil {
					break
				}
				of := store.OutputFile{Path: h.Name, Size: h.Size, Mode: uint32(h.Mode) & 0o777, Link: h.Linkname}
				if h.Typeflag == tar.TypeReg && h.Size <= 1<<20 {
					// (A sparse header can claim any size from a few bytes: hash only small files.)
					sum := sha256.New()
					io.Copy(sum, io.LimitReader(tr, 1<<20))
					of.Hash = hex.EncodeToString(sum.Sum(nil))
				}
				files = append(files, of)
			}
		}
		enc, _ := zstd.NewWriter(nil)
		archive := enc.EncodeAll(raw, nil)
		enc.Close()

		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_ = runner.ExtractOutputs(context.Background(), ws, p, task, files, archive)
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
			return nil
		})
	}
}
