package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/vzn/vx/engine/atomicfile"
)

// cacheFormat versions the bundle cache layout; bump it when the bundle or dep file changes shape.
const cacheFormat = "2"

// bundleCache keeps built bundles in dir by a key over vx's version, the entries and the content
// of every file the bundle was built from. A dep file per phase remembers which files those were,
// so a cached load reads and hashes them without running esbuild. It is used only when the state
// folder already exists: evaluating config never creates .vx/.
//
// The dep file also holds the bundle's own hash, and a bundle that does not match it — cut short,
// damaged, edited — is a miss, bundled again, as any other: a kept file never stands between a
// config and its evaluation.
type bundleCache struct {
	// state is the workspace's state folder, "" for none; dir is state/config.
	state, dir, root, version, phase string
}

type depFile struct {
	Key string `json:"key"`
	// Sum is the SHA-256 of the bundle file's content.
	Sum    string   `json:"sum"`
	Inputs []string `json:"inputs"` // relative to the root, or absolute outside it
}

func bundleSum(code []byte) string {
	sum := sha256.Sum256(code)
	return hex.EncodeToString(sum[:])
}

func (c bundleCache) enabled() bool {
	// No state folder named (a session that caches nothing) is not the current folder.
	if c.state == "" {
		return false
	}
	fi, err := os.Stat(c.state)
	return err == nil && fi.IsDir()
}

func (c bundleCache) depPath() string { return filepath.Join(c.dir, c.phase+".dep.json") }

// key hashes the entries and the current content of inputs; ok is false when an input is gone.
func (c bundleCache) key(entries, inputs []string) (string, bool) {
	h := sha256.New()
	h.Write([]byte("vx-config-bundle\x00" + cacheFormat + "\x00" + c.version + "\x00" + c.phase + "\x00"))
	for _, e := range entries {
		h.Write([]byte("entry\x00" + e + "\x00"))
	}
	for _, in := range inputs {
		data, err := os.ReadFile(in)
		if err != nil {
			return "", false
		}
		sum := sha256.Sum256(data)
		h.Write([]byte("input\x00" + in + "\x00"))
		h.Write(sum[:])
	}
	return hex.EncodeToString(h.Sum(nil)), true
}

// load returns the cached bundle and its inputs (absolute) when nothing changed.
func (c bundleCache) load(entries []string) (code string, inputs []string, ok bool) {
	if !c.enabled() {
		return "", nil, false
	}
	raw, err := os.ReadFile(c.depPath())
	if err != nil {
		return "", nil, false
	}
	var dep depFile
	if json.Unmarshal(raw, &dep) != nil {
		return "", nil, false
	}
	inputs = make([]string, len(dep.Inputs))
	for i, in := range dep.Inputs {
		inputs[i] = c.abs(in)
	}
	key, ok := c.key(entries, inputs)
	if !ok || key != dep.Key {
		return "", nil, false
	}
	data, err := os.ReadFile(filepath.Join(c.dir, key+".js"))
	if err != nil || bundleSum(data) != dep.Sum {
		return "", nil, false
	}
	return string(data), inputs, true
}

// store writes the bundle and then its dep file, each atomically; a failure only costs a rebuild.
func (c bundleCache) store(entries, inputs []string, code string) {
	if !c.enabled() {
		return
	}
	key, ok := c.key(entries, inputs)
	if !ok {
		return
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return
	}
	if old, err := os.ReadFile(c.depPath()); err == nil {
		var dep depFile
		if json.Unmarshal(old, &dep) == nil && dep.Key != key {
			_ = os.Remove(filepath.Join(c.dir, dep.Key+".js"))
		}
	}
	if writeAtomic(filepath.Join(c.dir, key+".js"), []byte(code)) != nil {
		return
	}
	rel := make([]string, len(inputs))
	for i, in := range inputs {
		rel[i] = c.rel(in)
	}
	data, _ := json.Marshal(depFile{Key: key, Sum: bundleSum([]byte(code)), Inputs: rel})
	_ = writeAtomic(c.depPath(), data)
}

func (c bundleCache) abs(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.root, filepath.FromSlash(p))
}

func (c bundleCache) rel(p string) string {
	if r, err := filepath.Rel(c.root, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return p
}

func writeAtomic(path string, data []byte) error {
	return atomicfile.WriteFile(path, data)
}

// metafileInputs lists the absolute paths of the files esbuild read, plus every package.json and
// tsconfig.json between each of them and the root (module resolution and the TypeScript transform
// read those), sorted.
func metafileInputs(metafile, root string) []string {
	var meta struct {
		Inputs map[string]json.RawMessage `json:"inputs"`
	}
	if json.Unmarshal([]byte(metafile), &meta) != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	dirs := map[string]bool{}
	for in := range meta.Inputs {
		if strings.Contains(in, ":") || strings.HasPrefix(in, "<stdin>") || strings.HasPrefix(in, "vx-projects-entry") {
			continue
		}
		p := in
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, filepath.FromSlash(in))
		}
		add(p)
		for d := filepath.Dir(p); !dirs[d]; d = filepath.Dir(d) {
			dirs[d] = true
			for _, name := range []string{"package.json", "tsconfig.json"} {
				if _, err := os.Stat(filepath.Join(d, name)); err == nil {
					add(filepath.Join(d, name))
				}
			}
			if d == root || filepath.Dir(d) == d || !strings.HasPrefix(d, root) {
				break
			}
		}
	}
	sort.Strings(out)
	return out
}
