package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/vzn/vx/engine/atomicfile"
)

// ErrMissing is a blob that is absent or whose content no longer matches its name. Callers treat it
// as a cache miss, never as a failure.
var ErrMissing = errors.New("blob missing or corrupt")

// emptyHash names the empty blob (an entry of a task that printed nothing holds it as its log): its
// content is known from its name, so it is answered without touching the disk.
var emptyHash = func() string {
	sum := sha256.Sum256(nil)
	return hex.EncodeToString(sum[:])
}()

// CAS is the content-addressed blob store: each blob is named by the SHA-256 of its content and
// kept at cas/<first two hex digits>/<hash>.
//
// A blob is written unsynced (atomicfile.Unsynced): every read checks its content against its
// name, so one that a power cut left torn reads as missing, and its entry misses.
type CAS struct {
	dir string
	// shards holds the shard folders this process made or found, which it does not stat again.
	shards sync.Map
}

// NewCAS returns the blob store rooted at dir (normally <state>/cas).
func NewCAS(dir string) *CAS { return &CAS{dir: dir} }

// Dir is the blob store's folder.
func (c *CAS) Dir() string { return c.dir }

// Path is where the blob named hash lives.
func (c *CAS) Path(hash string) string {
	if len(hash) < 2 {
		return filepath.Join(c.dir, "xx", hash)
	}
	return filepath.Join(c.dir, hash[:2], hash)
}

// Put stores data and answers its name. The blob is written to a temporary file and renamed into
// place, so a reader never sees a partial blob.
func (c *CAS) Put(data []byte) (string, error) {
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	if len(data) == 0 {
		// The empty blob (the log of every task that printed nothing) is whole wherever it is
		// an empty file: it is written only where it is not one.
		if fi, err := os.Lstat(c.Path(hash)); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
			return hash, nil
		}
	}
	// An existing blob is written again rather than trusted: one damaged in place must heal on
	// the next store, or its entry would miss forever.
	err := c.write(c.Path(hash), func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("store blob %s: %w", hash[:12], err)
	}
	return hash, nil
}

// write writes the blob file at path with write, atomically and unsynced, making its shard
// folder first where this process has not seen it.
func (c *CAS) write(path string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	if _, seen := c.shards.Load(dir); !seen {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		c.shards.Store(dir, true)
	}
	wrote := false
	do := func() error {
		return atomicfile.Write(path, func(w io.Writer) error {
			wrote = true
			return write(w)
		}, atomicfile.Unsynced())
	}
	err := do()
	if errors.Is(err, fs.ErrNotExist) && !wrote {
		// The folder was removed since (the store cleared): make it again.
		c.shards.Delete(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		err = do()
	}
	return err
}

// Get reads the blob named hash and checks its content; a missing or corrupt blob is ErrMissing.
func (c *CAS) Get(hash string) ([]byte, error) {
	if hash == "" {
		return nil, ErrMissing
	}
	if hash == emptyHash {
		return []byte{}, nil
	}
	data, err := os.ReadFile(c.Path(hash))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrMissing
	}
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", hash, err)
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != hash {
		return nil, ErrMissing
	}
	return data, nil
}

// GetBounded reads the blob named hash as Get does, but only from a regular file (never through a
// symlink, never a device) of at most max bytes: anything else is ErrMissing.
func (c *CAS) GetBounded(hash string, max int64) ([]byte, error) {
	if hash == "" {
		return nil, ErrMissing
	}
	if hash == emptyHash {
		return []byte{}, nil
	}
	f, err := openNoFollow(c.Path(hash))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotRegular) {
		return nil, ErrMissing
	}
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", hash, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", hash, err)
	}
	if !fi.Mode().IsRegular() || fi.Size() > max {
		return nil, ErrMissing
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", hash, err)
	}
	sum := sha256.Sum256(data)
	if int64(len(data)) > max || hex.EncodeToString(sum[:]) != hash {
		return nil, ErrMissing
	}
	return data, nil
}

// Has reports whether the blob exists (without checking its content).
func (c *CAS) Has(hash string) bool {
	if hash == "" {
		return false
	}
	if hash == emptyHash {
		return true
	}
	_, err := os.Stat(c.Path(hash))
	return err == nil
}

// Size answers the blob's size, 0 when absent.
func (c *CAS) Size(hash string) int64 {
	fi, err := os.Stat(c.Path(hash))
	if err != nil {
		return 0
	}
	return fi.Size()
}

// Remove deletes the blob; an absent blob is not an error.
func (c *CAS) Remove(hash string) error {
	if err := os.Remove(c.Path(hash)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove blob %s: %w", hash, err)
	}
	return nil
}

// BlobInfo describes one file of the blob store.
type BlobInfo struct {
	// Name is the blob's hash, or the temporary file's name for a leftover write.
	Name    string
	Size    int64
	ModTime time.Time
	// Temp marks a leftover temporary file of an interrupted write.
	Temp bool
	path string
}

// Walk lists every blob (and leftover temporary file) of the store.
func (c *CAS) Walk() ([]BlobInfo, error) {
	var out []BlobInfo
	err := filepath.WalkDir(c.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		out = append(out, BlobInfo{Name: d.Name(), Size: fi.Size(), ModTime: fi.ModTime(),
			Temp: isTemp(d.Name()), path: path})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list blobs: %w", err)
	}
	return out, nil
}

// isTemp reports whether a file of the blob store is a leftover temporary file: one of atomicfile's,
// or one named as vx named them before it (.tmp-*).
func isTemp(name string) bool {
	return atomicfile.IsTemp(name) || strings.HasPrefix(name, ".tmp-")
}

// RemoveFile deletes a file Walk listed.
func (c *CAS) RemoveFile(b BlobInfo) error {
	if err := os.Remove(b.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", b.Name, err)
	}
	return nil
}
