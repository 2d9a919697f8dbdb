package workspace

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"

	"github.com/klauspost/compress/zstd"

	"github.com/vzn/vx/engine/configlock"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/vxerr"
)

// sourceAbsent is the digest vx.lock records for a source that did not exist (a project's
// vx.project.ts it may add later).
const sourceAbsent = "absent"

// Freeze loads the workspace and answers what vx.lock keeps of it for `vx run --frozen`: the
// digest of every file and folder it was resolved from and the resolved workspace itself. Where
// old (the lock's current frozen section, nil for none) holds the same sources and the same
// workspace, old itself is answered, so that a lock is rewritten only when something changed.
func (l *Loader) Freeze(ctx context.Context, old *configlock.Frozen) (*graph.Workspace, *configlock.Frozen, error) {
	ws, err := l.Load(ctx)
	if err != nil {
		return nil, nil, err
	}
	l.mu.Lock()
	c := l.last
	l.mu.Unlock()
	sources := make(map[string]string, len(c.Stamps))
	for p := range c.Stamps {
		rel, err := filepath.Rel(c.Root, p)
		if err != nil {
			return nil, nil, fmt.Errorf("freeze %s: %w", p, err)
		}
		sources[filepath.ToSlash(rel)] = sourceDigest(p)
	}
	blob, err := encodeFrozen(c, l.opts.Version)
	if err != nil {
		return nil, nil, err
	}
	fr := &configlock.Frozen{Version: l.opts.Version + "/" + resolvedFormat, Sources: sources, Workspace: blob}
	if old != nil && old.Version == fr.Version && reflect.DeepEqual(old.Sources, fr.Sources) {
		if a, errA := decodeFrozen(old.Workspace); errA == nil {
			if b, errB := decodeFrozen(blob); errB == nil && reflect.DeepEqual(a, b) {
				fr = old
			}
		}
	}
	return ws, fr, nil
}

// sourceDigest is a source's digest as vx.lock records it: the SHA-256 of a file's content; of a
// folder, of the names of its sub-folders that hold a package.json or a vx.project.ts (the
// candidate projects a glob finds there), so that outputs written into it change nothing;
// sourceAbsent for a path that does not exist.
func sourceDigest(p string) string {
	fi, err := os.Stat(p)
	if err != nil {
		return sourceAbsent
	}
	if !fi.IsDir() {
		data, err := os.ReadFile(p)
		if err != nil {
			return sourceAbsent
		}
		sum := sha256.Sum256(data)
		return hex.EncodeToString(sum[:])
	}
	entries, _ := os.ReadDir(p)
	h := sha256.New()
	for _, e := range entries {
		if !e.IsDir() || skipDir(e.Name()) {
			continue
		}
		for _, marker := range []string{"package.json", ProjectConfigFileName} {
			if _, err := os.Stat(filepath.Join(p, e.Name(), marker)); err == nil {
				h.Write([]byte(e.Name() + "/" + marker + "\x00"))
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// encodeFrozen encodes c's workspace as vx version keeps it in vx.lock: the loader's own
// encoding (gob, its empty lists kept), every absolute path taken out, compressed (zstd), in
// base64.
func encodeFrozen(c *loaded, version string) (string, error) {
	ws := *c.WS
	ws.Root, ws.CacheDir = "", ""
	ws.Projects = make([]*graph.Project, len(c.WS.Projects))
	for i, p := range c.WS.Projects {
		cp := *p
		cp.AbsDir = ""
		ws.Projects[i] = &cp
	}
	header := &loaded{Version: version, WS: &ws, SecretNames: c.SecretNames}
	var buf bytes.Buffer
	if err := encodeLoaded(gob.NewEncoder(&buf), header); err != nil {
		return "", fmt.Errorf("freeze the workspace: %w", err)
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		return "", fmt.Errorf("freeze the workspace: %w", err)
	}
	defer enc.Close()
	return base64.StdEncoding.EncodeToString(enc.EncodeAll(buf.Bytes(), nil)), nil
}

// maxFrozenBytes bounds the decoded workspace a lock may hold.
const maxFrozenBytes = 1 << 30

// decodeFrozen decodes what encodeFrozen wrote.
func decodeFrozen(blob string) (*loaded, error) {
	packed, err := base64.StdEncoding.DecodeString(blob)
	if err != nil {
		return nil, err
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxFrozenBytes))
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	data, err := dec.DecodeAll(packed, nil)
	if err != nil {
		return nil, err
	}
	return decodeLoaded(gob.NewDecoder(bytes.NewReader(data)))
}

// LoadFrozen answers the workspace vx.lock keeps, evaluating nothing: no esbuild, no goja. It
// refuses, in one line naming the file, a lock that is missing or keeps no workspace, one made by
// another vx, one whose sources (the config, what it imports, each package.json and
// vx.project.ts, the folders the project globs search) changed since it was written, and one
// whose workspace does not hold the task fingerprints the lock lists (an edited encoding).
func (l *Loader) LoadFrozen() (*graph.Workspace, error) {
	root, err := FindRoot(l.opts.Dir)
	if err != nil {
		return nil, err
	}
	f, ok, err := configlock.Read(root)
	if err != nil {
		return nil, err
	}
	if !ok || f.Frozen == nil {
		return nil, frozenErr(configlock.FileName, "missing, or it keeps no workspace to run from (run vx lock and commit it)")
	}
	if f.Frozen.Version != l.opts.Version+"/"+resolvedFormat {
		return nil, frozenErr(configlock.FileName, fmt.Sprintf("written by vx %s, this is vx %s/%s (run vx lock)", f.Frozen.Version, l.opts.Version, resolvedFormat))
	}
	for _, rel := range slices.Sorted(maps.Keys(f.Frozen.Sources)) {
		if sourceDigest(filepath.Join(root, filepath.FromSlash(rel))) != f.Frozen.Sources[rel] {
			return nil, frozenErr(rel, "changed since vx.lock was written (run vx lock, or run without --frozen)")
		}
	}
	c, err := decodeFrozen(f.Frozen.Workspace)
	if err != nil {
		return nil, frozenErr(configlock.FileName, fmt.Sprintf("its workspace does not read: %v (run vx lock)", err))
	}
	ws := c.WS
	ws.Root, ws.CacheDir = root, CacheDir(root, l.opts.getenv)
	for _, p := range ws.Projects {
		p.AbsDir = filepath.Join(root, filepath.FromSlash(p.Dir))
	}
	ws.Index()
	l.placeStore(ws)
	// The fingerprints are what review reads: a workspace that is not theirs is not run.
	if drift := configlock.Drift(f, ws); len(drift) > 0 {
		return nil, frozenErr(configlock.FileName, fmt.Sprintf("its workspace is not the one its tasks record (%s %s; run vx lock)", drift[0].TaskID, drift[0].Field))
	}
	ws.Secrets = secretValues(c.SecretNames, l.opts.getenv)
	return ws, nil
}

// frozenErr is a refusal of vx run --frozen, naming the file it is about.
func frozenErr(file, msg string) error {
	return &vxerr.ConfigError{File: file, Msg: "--frozen: " + msg}
}
