package info

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
)

// Facts are the original's flat facts of vx info, written beside vx's sections: vx's version, the
// workspace root, the cache's folder, entries, bytes and versions, the runs and hits of the last
// 24 hours, and whether the workspace has a package manager's lockfile. The cache's figures are
// 0 and its folder "" while the cache section is not known.
type Facts struct {
	VX            string `json:"vx"`
	WorkspaceRoot string `json:"workspaceRoot"`
	CacheDir      string `json:"cacheDir"`
	CacheEntries  int    `json:"cacheEntries"`
	CacheBytes    int64  `json:"cacheBytes"`
	CacheVersion  string `json:"cacheVersion"`
	SchemaVersion string `json:"schemaVersion"`
	Runs24h       int    `json:"runs24h"`
	Hits24h       int    `json:"hits24h"`
	Lockfile      bool   `json:"lockfile"`
}

// lockfiles are the package managers' lockfiles a workspace root may hold.
var lockfiles = []string{"package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock", "bun.lock", "bun.lockb"}

// hasLockfile reports whether root holds a package manager's lockfile.
func hasLockfile(root string) bool {
	for _, name := range lockfiles {
		if _, err := os.Stat(filepath.Join(root, name)); err == nil {
			return true
		}
	}
	return false
}

// facts answers the document's flat facts from its sections.
func (d *Document) facts() Facts {
	f := Facts{VX: d.Versions.VX, WorkspaceRoot: d.Root, Lockfile: d.lockfile}
	if c, ok := d.Cache.Value.(cacheReport); ok && c.CacheInfo != nil {
		f.CacheDir, f.CacheEntries, f.CacheBytes = c.Dir, c.Entries, c.TotalBytes
		f.CacheVersion, f.SchemaVersion = c.CacheVersion, strconv.Itoa(c.SchemaVersion)
		f.Runs24h, f.Hits24h = c.Runs24h, c.Hits24h
	}
	return f
}

// MarshalJSON writes the document, its attention lines first, with the original's flat facts
// after vx's sections.
func (d Document) MarshalJSON() ([]byte, error) {
	type plain Document
	return json.Marshal(struct {
		plain
		Facts
	}{plain(d), d.facts()})
}
