package filestate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/vzn/vx/engine/counters"
	"github.com/vzn/vx/engine/git"
)

// Scan is the Source that asks the file system every time: git ls-files for what git would show
// (a walk outside a git repository), lstat, a walk of the folder. It is safe for concurrent use.
type Scan struct {
	root, stateDir string
	// Counters count its stat calls; nil counts nothing.
	Counters *counters.Counters

	mu sync.Mutex
	// gitOK is nil until the first listing says whether git answers here.
	gitOK *bool
}

// NewScan answers the Scan of the workspace at root (absolute) whose state folder is stateDir.
func NewScan(root, stateDir string) *Scan { return &Scan{root: root, stateDir: stateDir} }

func (s *Scan) abs(rel string) string { return filepath.Join(s.root, filepath.FromSlash(rel)) }

// Visible lists the files of dir that git does not ignore, relative to dir and sorted; outside a
// git repository, every file under dir but .git, node_modules and the state folder.
func (s *Scan) Visible(ctx context.Context, dir string) ([]string, error) {
	abs := s.abs(dir)
	s.mu.Lock()
	gitOK := s.gitOK
	s.mu.Unlock()
	if gitOK == nil || *gitOK {
		files, err := LsFiles(ctx, abs, s.stateDir)
		if err != nil && !errors.Is(err, ErrNotGit) {
			return nil, err // this folder's fault (a missing one): git still answers the others
		}
		ok := err == nil
		s.mu.Lock()
		s.gitOK = &ok
		s.mu.Unlock()
		if ok {
			return files, nil
		}
	}
	return WalkVisible(abs, s.stateDir)
}

// Lstat is os.Lstat of the root-relative path.
func (s *Scan) Lstat(rel string) (fs.FileInfo, error) {
	s.Counters.Stat()
	return os.Lstat(s.abs(rel))
}

// WalkFiles walks the folder base on disk.
func (s *Scan) WalkFiles(base string, fn func(rel string, mode fs.FileMode)) error {
	return WalkDisk(s.root, s.stateDir, base, fn)
}

// WalkDisk calls fn with each file and symlink under the root-relative folder base of root, never
// descending through a symlink, into the root's .git or into stateDir (absolute; "" for none). A
// base that is missing holds nothing.
func WalkDisk(root, stateDir, base string, fn func(rel string, mode fs.FileMode)) error {
	start := filepath.Join(root, filepath.FromSlash(base))
	err := filepath.WalkDir(start, func(abs string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while walked
			}
			return err
		}
		tail := filepath.ToSlash(abs[len(start):]) // "" or "/sub/file"
		rel := base + tail
		if base == "." {
			rel = strings.TrimPrefix(tail, "/")
		}
		if d.IsDir() {
			if abs != start && (rel == ".git" || abs == stateDir) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0 {
			fn(rel, d.Type())
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("walk %s: %w", base, err)
	}
	return nil
}

// ErrNotGit says that a folder is not in a git work tree (or git is missing).
var ErrNotGit = errors.New("not a git work tree")

// LsFiles answers what git would show under dir (absolute): `git ls-files -c -o
// --exclude-standard`, relative to dir, sorted, each once; the state folder is left out. The
// pathspecs, when given, narrow it (each taken literally, relative to dir).
func LsFiles(ctx context.Context, dir, stateDir string, pathspecs ...string) ([]string, error) {
	args := []string{"-c", "core.quotepath=off", "ls-files", "-z", "-c", "-o", "--exclude-standard"}
	if rel, err := filepath.Rel(dir, stateDir); err == nil && stateDir != "" && !strings.HasPrefix(rel, "..") && rel != "." {
		// Untracked blobs of the state folder would cost git a walk and are never inputs.
		args = append(args, "--exclude=/"+filepath.ToSlash(rel)+"/")
	}
	if len(pathspecs) > 0 {
		args = append(args, "--")
		for _, p := range pathspecs {
			args = append(args, ":(literal)"+p)
		}
	}
	out, err := git.Run(ctx, dir, args...)
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) || strings.Contains(err.Error(), "not a git repository") {
			return nil, ErrNotGit
		}
		return nil, fmt.Errorf("list files in %s: %w", dir, err)
	}
	seen := map[string]bool{}
	var files []string
	for _, f := range strings.Split(out, "\x00") {
		// -c and -o can both name a file; a deleted tracked file is filtered when statted.
		if f != "" && !seen[f] {
			seen[f] = true
			files = append(files, f)
		}
	}
	sort.Strings(files)
	return files, nil
}

// WalkVisible lists every file and symlink under dir (absolute) but those under .git,
// node_modules and stateDir, relative to dir and sorted: what a workspace outside git shows.
func WalkVisible(dir, stateDir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir && (d.Name() == ".git" || d.Name() == "node_modules" || path == stateDir) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0 {
			rel, _ := filepath.Rel(dir, path)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk %s: %w", dir, err)
	}
	sort.Strings(files)
	return files, nil
}
