package filestate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

// ErrStale says that a snapshot is older than the disk: a folder or file it vouches for stats
// otherwise now.
var ErrStale = errors.New("the watcher's file state is older than the disk")

// Verify checks the snapshot against the disk as it is now, as an asker that did not make it
// does before trusting it: each watched folder stats as it did before its entries were read (a
// file created, removed or renamed in it moves its stamps), and each file and symlink it holds
// stats as it says (an edit moves the file's). The first path that does not is named, wrapping
// ErrStale. What it cannot see: folders and files the snapshot leaves to the disk (node_modules,
// nested repositories, the state folder), which the asker reads from disk anyway.
func (s *Snapshot) Verify(ctx context.Context) error {
	if len(s.dirs) == 0 || s.dirs["."] == nil {
		return fmt.Errorf("%w: it holds no root folder", ErrStale)
	}
	dirs := make([]string, 0, len(s.dirs))
	for dir := range s.dirs {
		dirs = append(dirs, dir)
	}
	// The folders are checked by a few workers at once: an lstat waits on the kernel, not the CPU.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := min(runtime.GOMAXPROCS(0), maxVerifiers, len(dirs))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			for j := i; j < len(dirs); j += workers {
				if err := s.verifyDir(ctx, dirs[j]); err != nil {
					errs[i] = err
					cancel()
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	return errors.Join(errs...)
}

// maxVerifiers bounds the goroutines Verify checks the folders with.
const maxVerifiers = 8

// verifyDir checks one watched folder and the files it holds against the disk.
func (s *Snapshot) verifyDir(ctx context.Context, dir string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d := s.dirs[dir]
	if d.Info.Mode == 0 {
		return fmt.Errorf("%w: it does not say what %s looked like", ErrStale, dir)
	}
	if err := s.sameOnDisk(dir, d.Info); err != nil {
		return err
	}
	for i := range d.Entries {
		e := &d.Entries[i]
		if e.Opaque || e.Info.Mode.IsDir() {
			continue // left to the disk, or a folder its own Dir vouches for
		}
		if err := s.sameOnDisk(joinRel(dir, e.Name), e.Info); err != nil {
			return err
		}
	}
	return nil
}

// sameOnDisk checks that the root-relative path stats as info says: kind, permissions, size,
// stamps and inode.
func (s *Snapshot) sameOnDisk(rel string, info Info) error {
	abs := s.root
	if rel != "." {
		abs = filepath.Join(s.root, filepath.FromSlash(rel))
	}
	fi, err := os.Lstat(abs)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrStale, rel, err)
	}
	now := InfoOf(fi)
	if now.Mode != info.Mode || now.MtimeNs != info.MtimeNs || now.CtimeNs != info.CtimeNs || now.Ino != info.Ino ||
		(now.Size != info.Size && now.Mode&fs.ModeDir == 0) {
		return fmt.Errorf("%w: %s changed since", ErrStale, rel)
	}
	return nil
}

// joinRel joins a root-relative folder and a name.
func joinRel(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}
