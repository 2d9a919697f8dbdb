// Package filestate answers what the workspace's files look like now: which files git would show,
// and each file's kind, size, mode, stamps and, where known, content hash. The hasher and the
// cache ask a Source, of which there are two: Scan asks the file system every time (git ls-files,
// lstat, a walk), and a Snapshot is what a watcher (engine/watch) knew at one moment, kept fresh
// by the OS's file events. A Snapshot travels from the long-lived vx that watches (vx mcp, vx
// watch) to a CLI vx run over a unix socket under the state folder (socket_unix.go), and a run
// that gets none, or any doubt, scans.
package filestate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// Source answers the workspace's file state. Paths are root-relative, with forward slashes.
type Source interface {
	// Visible answers the files git would show under the folder dir ("." for the whole
	// workspace), relative to dir and sorted: tracked, or untracked and not ignored; outside a
	// git repository, every file but those under .git, node_modules and the state folder. A
	// file under node_modules and a nested repository ("sub/"), never inputs, may be left out.
	Visible(ctx context.Context, dir string) ([]string, error)
	// Lstat answers what lstat says of a path. Its Sys() is an *Info where the source knows the
	// file's content hash (Info.Hash), else what os.Lstat gives.
	Lstat(rel string) (fs.FileInfo, error)
	// WalkFiles calls fn with each file and symlink under the folder base (whatever git says of
	// it), never descending through a symlink, into the root's .git or into the state folder.
	WalkFiles(base string, fn func(rel string, mode fs.FileMode)) error
}

// Info is what a file (or folder) looks like: its lstat, a symlink's target, and its content's
// hash where the source knows it.
type Info struct {
	Mode    fs.FileMode
	Size    int64
	MtimeNs int64
	CtimeNs int64
	Ino     uint64
	// Link is a symlink's target.
	Link string
	// Hash is the hex SHA-256 of the content (of "symlink\x00"+Link for a symlink), "" when not
	// known: the asker hashes the file itself.
	Hash string
	// Digest is the content's digest for a key, where known: its git blob id in the
	// repository's object format, tagged with it ("sha1:<hex>"). A watcher records it beside Hash
	// when the content holds no CRLF, which no line-ending rule of git then changes.
	Digest string
}

// SameStat reports whether two infos describe the same file as a stat does: kind, permissions,
// size, stamps and inode.
func (i Info) SameStat(o Info) bool {
	return i.Mode == o.Mode && i.Size == o.Size && i.MtimeNs == o.MtimeNs && i.CtimeNs == o.CtimeNs &&
		i.Ino == o.Ino && i.Link == o.Link
}

// InfoOf answers what fi says of a file: its Info when a Source made it, else its stat (the link
// target and hash left empty).
func InfoOf(fi fs.FileInfo) Info {
	if info, ok := fi.Sys().(*Info); ok {
		return *info
	}
	i := Info{Mode: fi.Mode(), Size: fi.Size(), MtimeNs: fi.ModTime().UnixNano()}
	i.Ino, i.CtimeNs = inodeAndCtime(fi)
	return i
}

// fileInfo is a Snapshot's answer to Lstat.
type fileInfo struct {
	name string
	info *Info
}

func (f fileInfo) Name() string       { return f.name }
func (f fileInfo) Size() int64        { return f.info.Size }
func (f fileInfo) Mode() fs.FileMode  { return f.info.Mode }
func (f fileInfo) ModTime() time.Time { return time.Unix(0, f.info.MtimeNs) }
func (f fileInfo) IsDir() bool        { return f.info.Mode.IsDir() }
func (f fileInfo) Sys() any           { return f.info }

// HashFile answers the hex SHA-256 of a file's content.
func HashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// HashFileDigest answers, from one read of the file at path, the hex SHA-256 of its content
// (HashFile's) and its Digest in the object format: "" when the content holds a CRLF.
func HashFileDigest(path, format string) (sum, digest string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", "", err
	}
	raw, blob := sha256.New(), newObjectHash(format)
	writeBlobHeader(blob, fi.Size())
	var stats TextStats
	n, err := io.Copy(io.MultiWriter(raw, blob, &stats), io.LimitReader(f, fi.Size()+1))
	if err != nil {
		return "", "", fmt.Errorf("read %s: %w", path, err)
	}
	sum = hex.EncodeToString(raw.Sum(nil))
	if n == fi.Size() && stats.CRLF == 0 {
		digest = format + ":" + hex.EncodeToString(blob.Sum(nil))
	}
	return sum, digest, nil
}

// LinkHash answers the hash a symlink with target stands for: its target's text, as git records
// it, never what it points at.
func LinkHash(target string) string {
	sum := sha256.Sum256([]byte("symlink\x00" + target))
	return hex.EncodeToString(sum[:])
}
